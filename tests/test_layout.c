/* SPDX-License-Identifier: Apache-2.0 */
/* test_layout.c - core/nn/layout.c: the wiring's transposes between channel
 * planes and token rows (and the fused sum, and batch-1 expansion) equal
 * the plain index formulas, for odd sizes (tails of the 16-pixel blocks)
 * and any thread count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>

#include "core/nn/layout.h"

static float *seq(int64_t n, float base)
{
    float *p = malloc((size_t)n * sizeof *p);
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++)
        p[i] = base + (float)i * 0.25f;
    return p;
}

static void test_tokens_to_planes(void **state)
{
    (void)state;
    const int64_t B = 2, HW = 37, C = 5;
    float *x = seq(B * HW * C, 1.0f), *y = malloc((size_t)(B * HW * C) * sizeof *y);
    assert_non_null(y);
    for (int nt = 1; nt <= 3; nt++) {
        samc_layout_tokens_to_planes(nt, x, B, HW, C, y);
        for (int64_t b = 0; b < B; b++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t i = 0; i < HW; i++)
                    assert_true(y[(b * C + c) * HW + i] == x[(b * HW + i) * C + c]);
    }
    free(x), free(y);
}

static void test_planes_to_tokens(void **state)
{
    (void)state;
    const int64_t B = 3, HW = 21, C = 4;
    float *x = seq(B * C * HW, -3.0f), *add = seq(B * C * HW, 0.5f), *y = malloc((size_t)(B * HW * C) * sizeof *y);
    assert_non_null(y);
    for (int nt = 1; nt <= 3; nt++)
        for (int with_add = 0; with_add < 2; with_add++)
            for (int b1 = 0; b1 < 2; b1++) { /* b1: a batch-1 source expanded to B */
                samc_layout_planes_to_tokens(nt, x, b1 ? 1 : B, with_add ? add : NULL, B, HW, C, y);
                for (int64_t b = 0; b < B; b++)
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t i = 0; i < HW; i++) {
                            const int64_t s = ((b1 ? 0 : b) * C + c) * HW + i;
                            const float want = with_add ? x[s] + add[(b * C + c) * HW + i] : x[s];
                            assert_true(y[(b * HW + i) * C + c] == want);
                        }
            }
    free(x), free(add), free(y);
}

static void test_add(void **state)
{
    (void)state;
    float *y = seq(1000, 2.0f), *x = seq(1000, -1.0f);
    samc_layout_add(3, y, x, 1000);
    for (int i = 0; i < 1000; i++)
        assert_true(y[i] == (2.0f + (float)i * 0.25f) + (-1.0f + (float)i * 0.25f));
    free(y), free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_to_planes),
        cmocka_unit_test(test_planes_to_tokens),
        cmocka_unit_test(test_add),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
