/* SPDX-License-Identifier: Apache-2.0 */
/* test_amg_grid.c - core/amg/amg_grid (point grids, crop boxes) and
 * core/amg/amg_params (defaults, bad parameters) against the official
 * sam2/utils/amg.py values in tests/data/amg/amg_cases.json
 * (tools/make_amg_testdata.py). Grids must be bit-identical (float64). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_grid.h"
#include "core/amg/amg_params.h"
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

static const cJSON *section(const char *a, const char *b)
{
    const cJSON *s = amg_get(g_cases, a);
    return b ? amg_get(s, b) : s;
}

static void test_full_grids(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, section("grid", "full"))
    {
        const int n = amg_int(c, "n");
        int64_t m = 0;
        double *want = amg_f64_array(amg_get(c, "points"), &m);
        double *got = malloc((size_t)m * sizeof *got);
        assert_int_equal(m, 2 * n * n);
        assert_int_equal(samc_amg_build_point_grid(n, got, NULL), SAMC_OK);
        assert_memory_equal(got, want, (size_t)m * sizeof *got);
        free(want), free(got);
    }
}

/* Larger grids: the x coordinates of the first row (the linspace), exactly. */
static void test_grid_sides(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, section("grid", "side"))
    {
        const int n = amg_int(c, "n");
        int64_t m = 0;
        double *want = amg_f64_array(amg_get(c, "x"), &m);
        double *got = malloc((size_t)2 * n * n * sizeof *got);
        assert_int_equal(samc_amg_build_point_grid(n, got, NULL), SAMC_OK);
        for (int i = 0; i < n; i++) {
            assert_true(got[2 * i] == want[i]);
            assert_true(got[2 * (i * n) + 1] == want[i]); /* y of row i */
        }
        free(want), free(got);
    }
}

static void test_layer_sides(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, section("grid", "layers"))
    {
        int64_t m = 0;
        int64_t *want = amg_i64_array(amg_get(c, "sides"), &m);
        int got[SAMC_AMG_MAX_CROP_LAYERS + 1];
        assert_int_equal(samc_amg_layer_points_per_side(amg_int(c, "n"), amg_int(c, "layers"),
                                                        amg_int(c, "scale"), got, NULL),
                         SAMC_OK);
        for (int64_t i = 0; i < m; i++)
            assert_int_equal(got[i], want[i]);
        free(want);
    }
    samc_error e = {0};
    int sides[4];
    assert_int_equal(samc_amg_layer_points_per_side(4, 3, 2, sides, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "leaves crop layer 3 without points");
}

static void test_crop_points(void **state)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, section("grid", "crop_points"))
    {
        const int n = amg_int(c, "n");
        int64_t m = 0;
        double *want = amg_f64_array(amg_get(c, "points"), &m);
        double *grid = malloc((size_t)2 * n * n * sizeof *grid);
        float *pts = malloc((size_t)2 * n * n * sizeof *pts);
        assert_int_equal(samc_amg_build_point_grid(n, grid, NULL), SAMC_OK);
        samc_amg_grid_to_crop_points(grid, (int64_t)n * n, amg_int(c, "w"), amg_int(c, "h"), pts);
        for (int64_t i = 0; i < m; i++)
            assert_true((double)pts[i] == want[i]);
        free(want), free(grid), free(pts);
    }
}

static void check_crop_case(const cJSON *c)
{
    const int h = amg_int(c, "h"), w = amg_int(c, "w"), layers = amg_int(c, "layers");
    const int64_t n = samc_amg_crop_count(layers);
    samc_amg_crop *boxes = malloc((size_t)n * sizeof *boxes);
    samc_error e = {0};
    const samc_status st = samc_amg_crop_boxes(h, w, layers, amg_num(c, "ratio"), boxes, &e);
    if (!cJSON_IsTrue(amg_get(c, "valid"))) {
        assert_int_equal(st, SAMC_ERR_ARG);
        tu_assert_contains(e.msg, "some of them empty");
        free(boxes);
        return;
    }
    assert_int_equal(st, SAMC_OK);
    assert_int_equal(n, amg_int(c, "n_boxes"));
    int64_t *flat = malloc((size_t)n * 5 * sizeof *flat);
    for (int64_t k = 0; k < n; k++) {
        const int64_t v[5] = {boxes[k].x0, boxes[k].y0, boxes[k].x1, boxes[k].y1, boxes[k].layer};
        memcpy(flat + 5 * k, v, sizeof v);
    }
    assert_true(amg_digest_i64(flat, 5 * n) == amg_json_digest(c, "digest"));
    if (cJSON_GetObjectItem(c, "boxes")) {
        int64_t m = 0;
        int64_t *want = amg_i64_array(amg_get(c, "boxes"), &m);
        assert_int_equal(m, 5 * n);
        assert_memory_equal(flat, want, (size_t)m * sizeof *flat);
        free(want);
    }
    free(flat), free(boxes);
}

static void test_crop_boxes(void **state)
{
    const cJSON *c;
    int valid = 0, invalid = 0;
    cJSON_ArrayForEach(c, section("crops", NULL))
    {
        check_crop_case(c);
        cJSON_IsTrue(amg_get(c, "valid")) ? valid++ : invalid++;
    }
    assert_true(valid > 100 && invalid > 10);
    samc_amg_crop b[5];
    samc_error e = {0};
    assert_int_equal(samc_amg_crop_boxes(96, 128, 1, 1.0, b, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "crop_overlap_ratio is 1");
}

/* ---- parameters ---------------------------------------------------------- */

static void expect_bad(const samc_amg_params *p, int h, int w, samc_status want, const char *msg)
{
    samc_error e = {0};
    assert_int_equal(samc_amg_params_check(p, h, w, &e), want);
    tu_assert_contains(e.msg, msg);
}

static void test_params_defaults(void **state)
{
    samc_amg_params p;
    samc_amg_params_default(&p);
    assert_int_equal(p.points_per_side, 32);
    assert_int_equal(p.points_per_batch, 64);
    assert_true(p.crop_overlap_ratio == 512.0 / 1500.0);
    assert_true(p.multimask_output && !p.use_m2m);
    samc_error e = {0};
    assert_int_equal(samc_amg_params_check(&p, 480, 640, &e), SAMC_OK);
    p.crop_n_layers = 3;
    assert_int_equal(samc_amg_params_check(&p, 480, 640, &e), SAMC_OK);
}

static void test_params_bad(void **state)
{
    samc_amg_params p, d;
    samc_amg_params_default(&d);
    p = d, p.points_per_side = 0;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "give exactly one of points_per_side");
    p = d, p.points_per_side = 100000;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "points_per_side is 100000; expected 1 to 1024");
    p = d, p.points_per_side = -3;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "points_per_side is -3");
    p = d, p.pred_iou_thresh = 1.5;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "pred_iou_thresh is 1.5; expected a value in [0, 1]");
    p = d, p.stability_score_thresh = -0.1;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "stability_score_thresh is -0.1");
    p = d, p.box_nms_thresh = 0.0 / 0.0;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "box_nms_thresh is");
    p = d, p.crop_nms_thresh = 2;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "crop_nms_thresh is 2");
    p = d, p.stability_score_offset = -1;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "stability_score_offset is -1");
    p = d, p.mask_threshold = 1.0 / 0.0;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "mask_threshold is inf");
    p = d, p.points_per_batch = 0;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "points_per_batch is 0");
    p = d, p.min_mask_region_area = -5;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "min_mask_region_area is -5");
    p = d, p.crop_n_points_downscale_factor = 0;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "crop_n_points_downscale_factor is 0");
    p = d, p.output_mode = (samc_amg_output_mode)7;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "output_mode 7");
}

static void test_params_crops_and_sizes(void **state)
{
    samc_amg_params p, d;
    samc_amg_params_default(&d);
    p = d, p.crop_n_layers = 5; /* 7 rows cannot hold 64 crops */
    expect_bad(&p, 7, 300, SAMC_ERR_ARG, "crop_n_layers 5 is too many for a 7x300 image");
    p = d, p.crop_n_layers = 9;
    expect_bad(&p, 4000, 4000, SAMC_ERR_ARG, "crop_n_layers is 9; expected 0 to 8");
    p = d, p.crop_n_layers = 2, p.crop_n_points_downscale_factor = 8;
    expect_bad(&p, 1000, 1000, SAMC_ERR_ARG, "leaves crop layer 2 without points");
    p = d, p.crop_n_layers = 1, p.crop_overlap_ratio = 1.0;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "crop_overlap_ratio is 1");
    p = d, p.points_per_side = 1024, p.crop_n_layers = 3;
    expect_bad(&p, 4000, 4000, SAMC_ERR_ARG, "point prompts over all crops");
    p = d;
    expect_bad(&p, 10, 40000, SAMC_ERR_UNSUPPORTED, "overflows beyond 32767 columns");
    expect_bad(&p, 0, 10, SAMC_ERR_ARG, "image size 0x10");
}

static void test_params_grids(void **state)
{
    samc_amg_params p;
    samc_amg_params_default(&p);
    const double xy[4] = {0.25, 0.5, 1.0, 0.0}, bad_xy[2] = {0.5, 1.5};
    const samc_amg_grid grids[2] = {{xy, 2}, {bad_xy, 1}};
    p.point_grids = grids, p.n_point_grids = 1;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "give exactly one of points_per_side");
    p.points_per_side = 0;
    samc_error e = {0};
    assert_int_equal(samc_amg_params_check(&p, 100, 100, &e), SAMC_OK);
    p.crop_n_layers = 1;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "point_grids has 1 grids; crop_n_layers 1 needs");
    p.n_point_grids = 2;
    expect_bad(&p, 100, 100, SAMC_ERR_ARG, "point_grids[1] point 0 has coordinate 1.5");
}

static void test_output_mode_parse(void **state)
{
    samc_amg_output_mode m;
    assert_int_equal(samc_amg_output_mode_parse("coco_rle", &m, NULL), SAMC_OK);
    assert_int_equal(m, SAMC_AMG_COCO_RLE);
    samc_error e = {0};
    assert_int_equal(samc_amg_output_mode_parse("rle", &m, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "output_mode 'rle'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_grids),        cmocka_unit_test(test_grid_sides),
        cmocka_unit_test(test_layer_sides),       cmocka_unit_test(test_crop_points),
        cmocka_unit_test(test_crop_boxes),        cmocka_unit_test(test_params_defaults),
        cmocka_unit_test(test_params_bad),        cmocka_unit_test(test_params_crops_and_sizes),
        cmocka_unit_test(test_params_grids),      cmocka_unit_test(test_output_mode_parse),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
