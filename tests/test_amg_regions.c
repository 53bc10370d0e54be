/* SPDX-License-Identifier: Apache-2.0 */
/* test_amg_regions.c - core/amg/amg_regions (remove_small_regions with
 * cv2.connectedComponentsWithStats(8)'s component order) against the
 * official function run on OpenCV 4.6, from tests/data/amg/amg_cases.json
 * (tools/make_amg_testdata.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_regions.h"
#include "core/nn/connected_components.h"
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

static void test_hashed_masks(void **state)
{
    const cJSON *c;
    int changed_count = 0, total = 0;
    cJSON_ArrayForEach(c, amg_get(amg_get(g_cases, "regions"), "hashed"))
    {
        const int h = amg_int(c, "h"), w = amg_int(c, "w");
        uint8_t *m = malloc((size_t)h * w);
        amg_hash_mask(m, h, w, (uint32_t)amg_int(c, "seed"), amg_num(c, "density"),
                      amg_int(c, "block"), amg_num(c, "noise"));
        const bool holes = strcmp(amg_get(c, "mode")->valuestring, "holes") == 0;
        bool changed = false;
        assert_int_equal(samc_amg_remove_small_regions(
                             m, h, w, amg_num(c, "area"),
                             holes ? SAMC_AMG_REGIONS_HOLES : SAMC_AMG_REGIONS_ISLANDS, &changed,
                             NULL),
                         SAMC_OK);
        assert_int_equal(changed, cJSON_IsTrue(amg_get(c, "changed")));
        int64_t n_set = 0;
        for (int64_t p = 0; p < (int64_t)h * w; p++)
            n_set += m[p];
        assert_int_equal(n_set, amg_int(c, "n_set"));
        assert_true(amg_digest_u8(m, (int64_t)h * w) == amg_json_digest(c, "digest"));
        changed_count += changed, total++;
        free(m);
    }
    assert_true(changed_count > 5 && changed_count < total - 5);
}

/* Two single-pixel islands, both below the area: the survivor is cv2's label
 * 1, the island whose 2x2 block comes first (row 1 col 0), not the first
 * pixel in raster order (row 0 col 3). */
static void test_tie_follows_cv2_order(void **state)
{
    const cJSON *t = amg_get(amg_get(g_cases, "regions"), "tie");
    const int h = amg_int(t, "h"), w = amg_int(t, "w");
    uint8_t m[64] = {0};
    const cJSON *p;
    cJSON_ArrayForEach(p, amg_get(t, "set")) m[cJSON_GetArrayItem(p, 0)->valueint * w +
                                               cJSON_GetArrayItem(p, 1)->valueint] = 1;
    bool changed = false;
    assert_int_equal(samc_amg_remove_small_regions(m, h, w, amg_num(t, "area"),
                                                   SAMC_AMG_REGIONS_ISLANDS, &changed, NULL),
                     SAMC_OK);
    assert_true(changed);
    uint8_t want[64] = {0};
    cJSON_ArrayForEach(p, amg_get(t, "kept")) want[cJSON_GetArrayItem(p, 0)->valueint * w +
                                                   cJSON_GetArrayItem(p, 1)->valueint] = 1;
    assert_memory_equal(m, want, (size_t)h * w);
    assert_int_equal(want[1 * w + 0], 1);
}

/* Components as amg_regions orders them (ascending samc_connected_components
 * label), each as (area, left, top): cv2's stats rows 1..n-1. */
static int64_t component_stats(const uint8_t *m, int h, int w, int64_t *out)
{
    const int64_t n = (int64_t)h * w;
    int32_t *labels = malloc((size_t)n * sizeof *labels), *counts = malloc((size_t)n * 4);
    int64_t *st = malloc((size_t)n * 3 * sizeof *st); /* per label - 1: area, left, top */
    assert_int_equal(samc_connected_components(m, h, w, labels, counts), SAMC_OK);
    for (int64_t l = 0; l < n; l++)
        st[3 * l] = 0;
    for (int64_t p = 0; p < n; p++) {
        if (labels[p] == 0)
            continue;
        int64_t *s = st + 3 * (int64_t)(labels[p] - 1);
        if (s[0] == 0) /* raster scan: the first pixel seen has the top row */
            s[0] = counts[p], s[1] = p % w, s[2] = p / w;
        s[1] = p % w < s[1] ? p % w : s[1];
    }
    int64_t k = 0;
    for (int64_t l = 0; l < n; l++)
        if (st[3 * l] > 0) {
            memcpy(out + 3 * k, st + 3 * l, 3 * sizeof *out);
            k++;
        }
    free(labels), free(counts), free(st);
    return k;
}

static void test_component_order_is_cv2s(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, amg_get(amg_get(g_cases, "regions"), "cv2_order"))
    {
        const int h = amg_int(c, "h"), w = amg_int(c, "w");
        uint8_t *m = malloc((size_t)h * w);
        int64_t *stats = malloc((size_t)h * w * 3 * sizeof *stats);
        amg_hash_mask(m, h, w, (uint32_t)amg_int(c, "seed"), amg_num(c, "density"),
                      amg_int(c, "block"), amg_num(c, "noise"));
        const int64_t n = component_stats(m, h, w, stats);
        assert_int_equal(n, amg_int(c, "n_components"));
        assert_true(amg_digest_i64(stats, 3 * n) == amg_json_digest(c, "digest"));
        if (cJSON_GetObjectItem(c, "stats")) {
            int64_t k = 0, *want = amg_i64_array(amg_get(c, "stats"), &k);
            assert_memory_equal(stats, want, (size_t)k * sizeof *want);
            free(want);
        }
        free(m), free(stats);
    }
}

static void test_bad_arguments(void **state)
{
    uint8_t m[4] = {0};
    bool changed = true;
    samc_error e = {0};
    assert_int_equal(samc_amg_remove_small_regions(m, 0, 4, 3, SAMC_AMG_REGIONS_HOLES, &changed,
                                                   &e),
                     SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "mask size 0x4");
    assert_false(changed);
    e = (samc_error){0};
    assert_int_equal(samc_amg_remove_small_regions(m, 2, 2, 3, (samc_amg_regions_mode)5, &changed,
                                                   &e),
                     SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "mode must be holes or islands");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hashed_masks),
        cmocka_unit_test(test_tie_follows_cv2_order),
        cmocka_unit_test(test_component_order_is_cv2s),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
