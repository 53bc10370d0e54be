/* SPDX-License-Identifier: Apache-2.0 */
/* test_amg_rle.c - core/amg/amg_rle (column-major uncompressed RLE, as
 * mask_to_rle_pytorch / rle_to_mask / area_from_rle) and core/amg/amg_coco_rle
 * (pycocotools' rleToString / rleFrString) against the official functions'
 * outputs, an independent re-statement of rleToString and published vectors,
 * all in tests/data/amg/amg_cases.json (tools/make_amg_testdata.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_coco_rle.h"
#include "core/amg/amg_rle.h"
#include "core/base/error.h"
#include "util/amg_inputs.h"
#include "util/testutil.h"

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

static const cJSON *rle_section(const char *key)
{
    return amg_get(amg_get(g_cases, "rle"), key);
}

static void check_counts(const samc_amg_rle *r, const cJSON *c)
{
    assert_int_equal(r->n, amg_int(c, "n_counts"));
    assert_true(amg_digest_i64(r->counts, r->n) == amg_json_digest(c, "counts_digest"));
    if (cJSON_GetObjectItem(c, "counts")) {
        int64_t m = 0, *want = amg_i64_array(amg_get(c, "counts"), &m);
        assert_memory_equal(r->counts, want, (size_t)m * sizeof *want);
        free(want);
    }
    assert_int_equal(samc_amg_rle_area(r), amg_int(c, "area"));
}

static void test_mask_rle_round_trip(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, rle_section("masks"))
    {
        const int h = amg_int(c, "h"), w = amg_int(c, "w");
        uint8_t *m = malloc((size_t)h * w), *back = malloc((size_t)h * w);
        amg_hash_mask(m, h, w, (uint32_t)amg_int(c, "seed"), amg_num(c, "density"),
                      amg_int(c, "block"), amg_num(c, "noise"));
        samc_amg_rle r;
        assert_int_equal(samc_amg_mask_to_rle(m, h, w, &r, NULL), SAMC_OK);
        assert_true(r.h == h && r.w == w);
        check_counts(&r, c);
        assert_int_equal(samc_amg_rle_to_mask(&r, back, NULL), SAMC_OK);
        assert_memory_equal(m, back, (size_t)h * w);
        char *s = NULL;
        assert_int_equal(samc_amg_rle_to_coco_string(&r, &s, NULL), SAMC_OK);
        assert_string_equal(s, amg_get(c, "coco")->valuestring);
        samc_amg_rle d;
        assert_int_equal(samc_amg_rle_from_coco_string(s, h, w, &d, NULL), SAMC_OK);
        assert_int_equal(d.n, r.n);
        assert_memory_equal(d.counts, r.counts, (size_t)r.n * sizeof *r.counts);
        free(s), samc_amg_rle_free(&r), samc_amg_rle_free(&d), free(m), free(back);
    }
}

static void test_uncrop_rle(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, rle_section("uncrop"))
    {
        int64_t k = 0, *cb = amg_i64_array(amg_get(c, "crop"), &k);
        const samc_amg_crop crop = {(int)cb[0], (int)cb[1], (int)cb[2], (int)cb[3], 1};
        const int ch = crop.y1 - crop.y0, cw = crop.x1 - crop.x0;
        uint8_t *m = malloc((size_t)ch * cw);
        amg_hash_mask(m, ch, cw, (uint32_t)amg_int(c, "seed"), 0.5, 2, 0.0);
        samc_amg_rle r;
        assert_int_equal(samc_amg_mask_to_rle_uncrop(m, &crop, amg_int(c, "orig_h"),
                                                     amg_int(c, "orig_w"), &r, NULL),
                         SAMC_OK);
        int64_t n = 0, *want = amg_i64_array(amg_get(c, "counts"), &n);
        assert_int_equal(r.n, n);
        assert_memory_equal(r.counts, want, (size_t)n * sizeof *want);
        free(want), free(cb), free(m), samc_amg_rle_free(&r);
    }
}

static void test_coco_published(void **state)
{
    const cJSON *v = rle_section("coco_vectors"), *c;
    cJSON_ArrayForEach(c, amg_get(v, "pairs"))
    {
        int64_t n = 0, *counts = amg_i64_array(amg_get(c, "counts"), &n), total = 0;
        for (int64_t i = 0; i < n; i++)
            total += counts[i];
        samc_amg_rle r = {1, (int)total, n, counts}, d;
        char *s = NULL;
        assert_int_equal(samc_amg_rle_to_coco_string(&r, &s, NULL), SAMC_OK);
        assert_string_equal(s, amg_get(c, "string")->valuestring);
        assert_int_equal(samc_amg_rle_from_coco_string(s, 1, (int)total, &d, NULL), SAMC_OK);
        assert_memory_equal(d.counts, counts, (size_t)n * sizeof *counts);
        free(s), samc_amg_rle_free(&r), samc_amg_rle_free(&d);
    }
    /* pycocotools' testZeroLeadingRLE: a real string with zero-length runs */
    const cJSON *z = amg_get(v, "zero_leading");
    const char *zs = amg_get(z, "string")->valuestring;
    samc_amg_rle d;
    assert_int_equal(samc_amg_rle_from_coco_string(zs, amg_int(z, "h"), amg_int(z, "w"), &d, NULL),
                     SAMC_OK);
    check_counts(&d, z);
    char *s = NULL;
    assert_int_equal(samc_amg_rle_to_coco_string(&d, &s, NULL), SAMC_OK);
    assert_string_equal(s, zs);
    free(s), samc_amg_rle_free(&d);
    /* testInvalidRLECounts: counts that do not fit the size are refused */
    const cJSON *bad = amg_get(v, "invalid");
    samc_error e = {0};
    assert_int_equal(samc_amg_rle_from_coco_string(amg_get(bad, "string")->valuestring,
                                                   amg_int(bad, "h"), amg_int(bad, "w"), &d, &e),
                     SAMC_ERR_FORMAT);
    tu_assert_contains(e.msg, "COCO RLE string: count 428 decodes to -27343");
    assert_null(d.counts);
}

static void expect_bad_string(const char *s, int h, int w, const char *msg)
{
    samc_amg_rle d;
    samc_error e = {0};
    assert_int_equal(samc_amg_rle_from_coco_string(s, h, w, &d, &e), SAMC_ERR_FORMAT);
    tu_assert_contains(e.msg, msg);
    assert_null(d.counts);
}

static void test_bad_inputs(void **state)
{
    expect_bad_string("0p", 1, 1, "character 0x70 at offset 1");
    expect_bad_string("0 ", 1, 1, "character 0x20");
    expect_bad_string("0P", 1, 1, "cut off by the end");
    expect_bad_string("0PPPPPPPPPPPPPPP1", 1, 1, "more than 12 groups");
    expect_bad_string("0O", 4, 4, "decodes to -1"); /* second count -1 */
    expect_bad_string("5", 2, 2, "count 0 (5) is negative or runs past the 2x2 mask");
    expect_bad_string("3", 2, 2, "counts sum to 3; a 2x2 mask needs 4");
    expect_bad_string("", 2, 2, "counts sum to 0");
    int64_t neg[2] = {3, -1}, big[2] = {2, 9};
    samc_amg_rle r = {2, 2, 2, neg};
    uint8_t m[4];
    samc_error e = {0};
    assert_int_equal(samc_amg_rle_to_mask(&r, m, &e), SAMC_ERR_FORMAT);
    tu_assert_contains(e.msg, "is negative or runs past");
    r.counts = big;
    samc_error_clear(&e);
    assert_int_equal(samc_amg_rle_to_mask(&r, m, &e), SAMC_ERR_FORMAT);
    samc_amg_rle out;
    samc_error_clear(&e);
    assert_int_equal(samc_amg_mask_to_rle(m, 0, 4, &out, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "mask size 0x4");
    const samc_amg_crop crop = {2, 0, 5, 1, 1};
    samc_error_clear(&e);
    assert_int_equal(samc_amg_mask_to_rle_uncrop(m, &crop, 2, 4, &out, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "is not inside 2x4");
}

static void test_edge_masks(void **state)
{
    const uint8_t zeros[6] = {0}, ones[6] = {1, 1, 1, 1, 1, 1}, first[6] = {1, 0, 0, 0, 0, 0};
    samc_amg_rle r;
    assert_int_equal(samc_amg_mask_to_rle(zeros, 2, 3, &r, NULL), SAMC_OK);
    assert_true(r.n == 1 && r.counts[0] == 6);
    samc_amg_rle_free(&r);
    assert_int_equal(samc_amg_mask_to_rle(ones, 2, 3, &r, NULL), SAMC_OK);
    assert_true(r.n == 2 && r.counts[0] == 0 && r.counts[1] == 6);
    samc_amg_rle_free(&r);
    /* column-major: pixel (0, 0) then (1, 0) then (0, 1) ... */
    const uint8_t col[6] = {0, 1, 0, 1, 0, 0}; /* 2 x 3: (0,1) and (1,0) set */
    assert_int_equal(samc_amg_mask_to_rle(col, 2, 3, &r, NULL), SAMC_OK);
    assert_true(r.n == 3 && r.counts[0] == 1 && r.counts[1] == 2 && r.counts[2] == 3);
    samc_amg_rle_free(&r);
    assert_int_equal(samc_amg_mask_to_rle(first, 2, 3, &r, NULL), SAMC_OK);
    assert_true(r.n == 3 && r.counts[0] == 0 && r.counts[1] == 1 && r.counts[2] == 5);
    samc_amg_rle_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mask_rle_round_trip), cmocka_unit_test(test_uncrop_rle),
        cmocka_unit_test(test_coco_published),      cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_edge_masks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
