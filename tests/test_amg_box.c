/* SPDX-License-Identifier: Apache-2.0 */
/* test_amg_box.c - core/amg/amg_stability (stability score with the official
 * int16/int32 counts and float32 thresholds) and core/amg/amg_box (mask boxes,
 * the crop-edge filter, uncropping) against the official sam2/utils/amg.py
 * values in tests/data/amg/amg_cases.json (tools/make_amg_testdata.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_box.h"
#include "core/amg/amg_stability.h"
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

static void test_stability_scores(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, amg_get(amg_get(g_cases, "stability"), "scores"))
    {
        const int h = amg_int(c, "h"), w = amg_int(c, "w");
        float *v = malloc((size_t)h * w * sizeof *v);
        amg_hash_values(v, (int64_t)h * w, (uint32_t)amg_int(c, "seed"), (float)amg_num(c, "scale"),
                        (float)amg_num(c, "quant"));
        const float s = samc_amg_stability_score(v, h, w, amg_num(c, "mask_threshold"),
                                                 amg_num(c, "offset"));
        const cJSON *want = amg_get(c, "score");
        if (cJSON_IsNull(want))
            assert_true(isnan(s));
        else
            assert_true((double)s == want->valuedouble);
        free(v);
    }
}

static void test_threshold_compare(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, amg_get(amg_get(g_cases, "stability"), "compare"))
    {
        const float v = (float)amg_num(c, "value");
        const double t = amg_num(c, "thresh");
        assert_int_equal(samc_amg_logit_in_mask(v, t), cJSON_IsTrue(amg_get(c, "gt")));
        assert_int_equal(samc_amg_keep_by_stability(v, t) || !(t > 0),
                         cJSON_IsTrue(amg_get(c, "ge")) || !(t > 0));
        if (t > 0)
            assert_int_equal(samc_amg_keep_by_iou(v, t), cJSON_IsTrue(amg_get(c, "gt")));
    }
    /* a threshold of 0 disables the filter, NaN included */
    assert_true(samc_amg_keep_by_iou(NAN, 0.0) && samc_amg_keep_by_stability(NAN, 0.0));
    assert_false(samc_amg_keep_by_stability(NAN, 0.5));
}

static void test_mask_boxes(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, amg_get(amg_get(g_cases, "box"), "masks"))
    {
        const int h = amg_int(c, "h"), w = amg_int(c, "w");
        uint8_t *m = malloc((size_t)h * w);
        amg_hash_mask(m, h, w, (uint32_t)amg_int(c, "seed"), amg_num(c, "density"),
                      amg_int(c, "block"), amg_num(c, "noise"));
        int64_t box[4], n = 0;
        samc_amg_mask_box(m, h, w, box);
        int64_t *want = amg_i64_array(amg_get(c, "box"), &n);
        assert_memory_equal(box, want, sizeof box);
        free(want), free(m);
    }
}

static void test_near_crop_edge(void **state)
{
    const cJSON *c;
    int near = 0, total = 0;
    cJSON_ArrayForEach(c, amg_get(amg_get(g_cases, "box"), "near_edge"))
    {
        int64_t n = 0, *cb = amg_i64_array(amg_get(c, "crop"), &n);
        int64_t *box = amg_i64_array(amg_get(c, "box"), &n);
        const samc_amg_crop crop = {(int)cb[0], (int)cb[1], (int)cb[2], (int)cb[3], 0};
        const bool got = samc_amg_box_near_crop_edge(box, &crop, amg_int(c, "orig_w"),
                                                     amg_int(c, "orig_h"));
        assert_int_equal(got, cJSON_IsTrue(amg_get(c, "near")));
        near += got, total++;
        free(cb), free(box);
    }
    assert_true(near > 20 && near < total - 20); /* both answers are exercised */
}

static void test_uncrop(void **state)
{
    const cJSON *u = amg_get(amg_get(g_cases, "box"), "uncrop_points");
    int64_t n = 0, m = 0;
    double *pts = amg_f64_array(amg_get(u, "points"), &n);
    double *want = amg_f64_array(amg_get(u, "out"), &m);
    const samc_amg_crop crop = {amg_int(u, "x0"), amg_int(u, "y0"), 0, 0, 1};
    for (int64_t k = 0; k < n / 2; k++) {
        float xy[2] = {(float)pts[2 * k], (float)pts[2 * k + 1]};
        samc_amg_uncrop_point(xy, &crop);
        assert_true((double)xy[0] == want[2 * k] && (double)xy[1] == want[2 * k + 1]);
    }
    free(pts), free(want);

    const uint8_t cm[6] = {1, 0, 1, 0, 1, 1}; /* 2 x 3 crop at (1, 2) of 4 x 5 */
    const samc_amg_crop c2 = {1, 2, 4, 4, 1};
    uint8_t full[20];
    samc_amg_uncrop_mask(cm, &c2, 4, 5, full);
    const uint8_t want_full[20] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0};
    assert_memory_equal(full, want_full, 20);
    int64_t box[4] = {1, 2, 3, 4};
    samc_amg_uncrop_box(box, &c2);
    assert_true(box[0] == 2 && box[1] == 4 && box[2] == 4 && box[3] == 6);
    float xywh[4];
    samc_amg_box_xywh(box, xywh);
    assert_true(xywh[0] == 2 && xywh[1] == 4 && xywh[2] == 2 && xywh[3] == 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stability_scores), cmocka_unit_test(test_threshold_compare),
        cmocka_unit_test(test_mask_boxes),       cmocka_unit_test(test_near_crop_edge),
        cmocka_unit_test(test_uncrop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
