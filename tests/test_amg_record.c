/* SPDX-License-Identifier: Apache-2.0 */
/* test_amg_record.c - core/amg/amg_record: the generator's output record as
 * JSON (issue 11: uncompressed counts, COCO string, bbox, area), checked on a
 * hand-made record: keys and values as SAM2AutomaticMaskGenerator.generate()
 * writes them (counts, string and XYWH box as the official mask_to_rle_pytorch,
 * tools/coco_rle.py and batched_mask_to_box + box_xyxy_to_xywh give them for
 * this mask), float32 values read back exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_box.h"
#include "core/amg/amg_record.h"
#include "util/testutil.h"

/* A 4 x 5 image; crop (1, 0)-(4, 4); mask pixels (1,1), (2,1), (2,2). */
static samc_amg_record make_record(void)
{
    static const uint8_t m[20] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0};
    samc_amg_record r = {.predicted_iou = 0.8000000715f, .stability_score = 0.95f,
                         .point = {2.5f, 1.0000001f}, .crop = {1, 0, 4, 4, 1}};
    assert_int_equal(samc_amg_mask_to_rle(m, 4, 5, &r.rle, NULL), SAMC_OK);
    samc_amg_mask_box(m, 4, 5, r.box);
    return r;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static void assert_floats(const cJSON *a, const float *want, int n)
{
    assert_int_equal(cJSON_GetArraySize(a), n);
    for (int i = 0; i < n; i++)
        assert_true(cJSON_GetArrayItem(a, i)->valuedouble == (double)want[i]);
}

static void test_record_json(void **state)
{
    samc_amg_record r = make_record();
    cJSON *o = NULL;
    assert_int_equal(samc_amg_record_json(&r, false, &o, NULL), SAMC_OK);
    /* round trip through text, as a user reads the file */
    char *text = cJSON_PrintUnformatted(o);
    cJSON *back = cJSON_Parse(text);
    const cJSON *seg = cJSON_GetObjectItemCaseSensitive(back, "segmentation");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(seg, "counts");
    const int want_counts[] = {5, 2, 3, 1, 9}; /* column-major: (1,1) (2,1) | (2,2) */
    assert_int_equal(cJSON_GetArraySize(counts), 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(cJSON_GetArrayItem(counts, i)->valueint, want_counts[i]);
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(seg, "size");
    assert_true(cJSON_GetArrayItem(size, 0)->valueint == 4 &&
                cJSON_GetArrayItem(size, 1)->valueint == 5);
    cJSON *oc = NULL; /* output_mode coco_rle: the same record, the counts as rleToString */
    assert_int_equal(samc_amg_record_json(&r, true, &oc, NULL), SAMC_OK);
    const cJSON *coco = cJSON_GetObjectItemCaseSensitive(oc, "segmentation");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(coco, "counts")->valuestring, "523O6");
    assert_true(num(oc, "area") == 3);
    cJSON_Delete(oc);
    assert_true(num(back, "area") == 3);
    const float bbox[4] = {1, 1, 1, 1}, crop[4] = {1, 0, 3, 4}, pt[2] = {2.5f, 1.0000001f};
    assert_floats(cJSON_GetObjectItemCaseSensitive(back, "bbox"), bbox, 4);
    assert_floats(cJSON_GetObjectItemCaseSensitive(back, "crop_box"), crop, 4);
    assert_floats(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(back, "point_coords"), 0),
                  pt, 2);
    assert_true((float)num(back, "predicted_iou") == 0.8000000715f);
    assert_true((float)num(back, "stability_score") == 0.95f);
    free(text), cJSON_Delete(back), cJSON_Delete(o), samc_amg_rle_free(&r.rle);
}

static void test_record_json_bad_rle(void **state)
{
    samc_amg_record r = make_record();
    r.rle.counts[0] = 6; /* sums to 21 for a 4 x 5 mask */
    cJSON *o = NULL;
    samc_error e = {0};
    assert_int_equal(samc_amg_record_json(&r, false, &o, &e), SAMC_ERR_FORMAT);
    assert_null(o);
    tu_assert_contains(e.msg, "runs past the 4x5 mask");
    samc_amg_rle_free(&r.rle);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_json),
        cmocka_unit_test(test_record_json_bad_rle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
