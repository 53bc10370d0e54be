/* SPDX-License-Identifier: Apache-2.0 */
/* test_amg_nms.c - core/amg/amg_sort (torch 1.13's unstable descending sort,
 * ties included) and core/amg/amg_nms (torchvision 0.14's CPU nms and
 * batched_nms, both paths) against torch / torchvision outputs in
 * tests/data/amg/amg_cases.json (tools/make_amg_testdata.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_nms.h"
#include "core/amg/amg_sort.h"
#include "util/amg_inputs.h"

static cJSON *g_cases;

static int setup(void **state)
{
    g_cases = amg_load_cases();
    return 0;
}

static int teardown(void **state)
{
    cJSON_Delete(g_cases);
    return 0;
}

/* sort_keys of tools/make_amg_testdata.py. */
static void sort_keys(const cJSON *c, float *k, int64_t n)
{
    const char *pattern = amg_get(c, "pattern")->valuestring;
    const int levels = amg_int(c, "levels"), nan_every = amg_int(c, "nan_every");
    for (int64_t i = 0; i < n; i++) {
        if (strcmp(pattern, "ascending") == 0)
            k[i] = (float)i;
        else if (strcmp(pattern, "descending") == 0)
            k[i] = (float)(n - i);
        else if (strcmp(pattern, "organ") == 0)
            k[i] = fmodf((float)(i < n - 1 - i ? i : n - 1 - i), (float)levels);
        else {
            k[i] = amg_hval((uint64_t)i, (uint32_t)amg_int(c, "seed"));
            if (levels > 0)
                k[i] = floorf(k[i] * (float)levels);
        }
        if (nan_every && i % nan_every == 0)
            k[i] = NAN;
    }
}

static void test_sort_like_torch(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, amg_get(g_cases, "sort"))
    {
        const int64_t n = amg_int(c, "n");
        float *keys = malloc((size_t)n * sizeof *keys);
        int64_t *order = malloc((size_t)n * sizeof *order);
        sort_keys(c, keys, n);
        assert_int_equal(samc_amg_argsort_desc(keys, n, order, NULL), SAMC_OK);
        assert_true(amg_digest_i64(order, n) == amg_json_digest(c, "digest"));
        if (cJSON_GetObjectItem(c, "order")) {
            int64_t m = 0, *want = amg_i64_array(amg_get(c, "order"), &m);
            assert_memory_equal(order, want, (size_t)n * sizeof *order);
            free(want);
        }
        free(keys), free(order);
    }
    int64_t dummy;
    samc_error e = {0};
    assert_int_equal(samc_amg_argsort_desc(NULL, 0, &dummy, NULL), SAMC_OK);
    assert_int_equal(samc_amg_argsort_desc(NULL, -1, &dummy, &e), SAMC_ERR_ARG);
}

static void check_keep(const cJSON *c, const int64_t *keep, int64_t n_keep)
{
    assert_int_equal(n_keep, amg_int(c, "n_keep"));
    assert_true(amg_digest_i64(keep, n_keep) == amg_json_digest(c, "digest"));
    if (cJSON_GetObjectItem(c, "keep")) {
        int64_t m = 0, *want = amg_i64_array(amg_get(c, "keep"), &m);
        assert_int_equal(m, n_keep);
        assert_memory_equal(keep, want, (size_t)m * sizeof *keep);
        free(want);
    }
}

static void test_batched_nms_hashed(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, amg_get(amg_get(g_cases, "nms"), "hashed"))
    {
        const int64_t n = amg_int(c, "n");
        const int seed = amg_int(c, "seed"), levels = amg_int(c, "levels");
        float *boxes = malloc((size_t)n * 4 * sizeof *boxes), *scores = malloc((size_t)n * 4);
        int64_t *keep = malloc((size_t)n * sizeof *keep), n_keep = -1;
        amg_hash_boxes(boxes, n, (uint32_t)seed, amg_num(c, "extent"), amg_num(c, "max_size"));
        for (int64_t i = 0; i < n; i++) {
            scores[i] = amg_hval((uint64_t)i, (uint32_t)seed + 1000);
            if (levels > 0)
                scores[i] = floorf(scores[i] * (float)levels) / (float)levels;
        }
        assert_int_equal(samc_amg_batched_nms(boxes, scores, n, amg_num(c, "thr"), keep, &n_keep,
                                              NULL),
                         SAMC_OK);
        check_keep(c, keep, n_keep);
        free(boxes), free(scores), free(keep);
    }
}

static void test_batched_nms_explicit(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, amg_get(amg_get(g_cases, "nms"), "explicit"))
    {
        int64_t n = 0, m = 0;
        double *s = amg_f64_array(amg_get(c, "scores"), &n);
        float boxes[16], scores[4];
        int64_t k = 0, keep[4], n_keep = 0;
        const cJSON *b, *v;
        cJSON_ArrayForEach(b, amg_get(c, "boxes")) cJSON_ArrayForEach(v, b) boxes[k++] =
            (float)v->valuedouble;
        for (int64_t i = 0; i < n; i++)
            scores[i] = (float)s[i];
        assert_int_equal(samc_amg_batched_nms(boxes, scores, n, amg_num(c, "thr"), keep, &n_keep,
                                              NULL),
                         SAMC_OK);
        int64_t *want = amg_i64_array(amg_get(c, "keep"), &m);
        assert_int_equal(n_keep, m);
        assert_memory_equal(keep, want, (size_t)m * sizeof *keep);
        free(s), free(want);
    }
}

static void test_iou_and_empty(void **state)
{
    const float a[4] = {0, 0, 10, 10}, b[4] = {0, 0, 10, 3}, p[4] = {5, 5, 5, 5};
    assert_true(samc_amg_box_iou(a, b) == 0.3f);
    assert_true(isnan(samc_amg_box_iou(p, p))); /* 0 / 0: never > a threshold */
    int64_t keep[1], n_keep = 7;
    assert_int_equal(samc_amg_batched_nms(NULL, NULL, 0, 0.7, keep, &n_keep, NULL), SAMC_OK);
    assert_int_equal(n_keep, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_like_torch),
        cmocka_unit_test(test_batched_nms_hashed),
        cmocka_unit_test(test_batched_nms_explicit),
        cmocka_unit_test(test_iou_and_empty),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
