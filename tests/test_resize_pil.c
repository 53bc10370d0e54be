/* SPDX-License-Identifier: Apache-2.0 */
/* test_resize_pil.c - Pillow's BICUBIC and BILINEAR resizes, bit for bit, on
 * cases written by tools/make_pil_cases.py with Pillow 9.4
 * (tests/data/pil_bicubic.bin, pil_bilinear.bin): up, down, mixed,
 * unchanged axes, extreme aspect ratios. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/nn/resize_pil.h"
#include "util/testutil.h"

static void check_cases(const char *file, samc_pil_filter filter)
{
    char *path = tu_src_path(file);
    uint8_t *buf = NULL;
    size_t n = 0, at = 0;
    assert_int_equal(tu_read_file(path, &buf, &n), 0);
    int cases = 0;
    while (at + 16 <= n) {
        int32_t d[4];
        memcpy(d, buf + at, 16);
        at += 16;
        const size_t in = (size_t)d[0] * d[1] * 3, outn = (size_t)d[2] * d[3] * 3;
        assert_true(at + in + outn <= n);
        uint8_t *got = malloc(outn);
        assert_int_equal(samc_resize_pil_rgb(buf + at, d[0], d[1], d[2], d[3], filter, got), SAMC_OK);
        assert_memory_equal(got, buf + at + in, outn);
        free(got);
        at += in + outn;
        cases++;
    }
    assert_int_equal(cases, 5);
    free(buf);
    free(path);
}

static void test_pil_bicubic(void **s)
{
    (void)s;
    check_cases("tests/data/pil_bicubic.bin", SAMC_PIL_BICUBIC);
}

static void test_pil_bilinear(void **s)
{
    (void)s;
    check_cases("tests/data/pil_bilinear.bin", SAMC_PIL_BILINEAR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_pil_bicubic), cmocka_unit_test(test_pil_bilinear)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
