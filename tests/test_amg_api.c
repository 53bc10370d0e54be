/* SPDX-License-Identifier: Apache-2.0 */
/* test_amg_api.c - include/samc_amg.h on the model of fixtures/amg/amg_a_nocrop.h5:
 * a batch of prompts in one decoder pass gives what each prompt gives alone,
 * a batch of images what each image gives when set alone, the generator the
 * dump's records (count, order, RLE) and its JSON the official record keys;
 * bad parameters and requests are refused with a message naming them. The
 * full comparison with the official generator is the parity task (CTest
 * parity_*_amg_*). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/amg/amg_coco_rle.h"
#include "core/amg/amg_generate.h"
#include "core/amg/amg_rle.h"
#include "core/api/api_internal.h"
#include "parity/dump.h"
#include "parity/parity.h"
#include "util/fault_impl.h"
#include "samc.h"
#include "samc_amg.h"
#include "util/testutil.h"

typedef struct fx {
    samc_predictor *p;
    samc_dump *d;
    uint8_t *img;
    int h, w;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    char *path = tu_src_path("fixtures/amg/amg_a_nocrop.h5");
    samc_error e = {0};
    int nd;
    int64_t dims[4];
    if (!f || samc_predictor_load(path, NULL, &f->p, &e) || samc_dump_open(path, &f->d, &e) ||
        samc_dump_read_u8(f->d, "/inputs/image_u8", &f->img, &nd, dims, &e)) {
        fprintf(stderr, "setup: %s\n", e.msg);
        free(path);
        return -1;
    }
    f->h = (int)dims[0], f->w = (int)dims[1];
    assert_int_equal(samc_predictor_set_impl(f->p, "ref", &e), SAMC_OK);
    free(path);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    samc_predictor_free(f->p);
    samc_dump_close(f->d);
    free(f->img);
    free(f);
    return 0;
}

static double max_abs_diff(const float *a, const float *b, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)a[i] - b[i]));
    return m;
}

static const float pts[5][2] = {{20, 30}, {128, 96}, {200, 40}, {60, 170}, {250, 190}};

/* B prompts in one pass against B single predictions. */
static void test_predict_batch_equals_single(void **state)
{
    fx *f = *state;
    samc_error e = {0};
    assert_int_equal(samc_predictor_set_image(f->p, f->img, f->h, f->w, &e), SAMC_OK);
    int32_t lab[5] = {1, 1, 0, 1, 1};
    samc_batch_request rq = {.batch = 5, .n_points = 1, .point_coords = &pts[0][0], .point_labels = lab,
                             .multimask_output = 1, .return_logits = 1};
    samc_batch_masks bm;
    assert_int_equal(samc_predictor_predict_batch(f->p, &rq, &bm, &e), SAMC_OK);
    assert_int_equal(bm.batch, 5);
    assert_int_equal(bm.num_masks, 3);
    const int64_t hw = (int64_t)f->h * f->w, ls = (int64_t)bm.low_res_size * bm.low_res_size;
    for (int b = 0; b < 5; b++) {
        samc_predict_request one = {.point_coords = pts[b], .point_labels = &lab[b], .n_points = 1,
                                    .multimask_output = 1, .return_logits = 1};
        samc_masks m;
        assert_int_equal(samc_predictor_predict(f->p, &one, &m, &e), SAMC_OK);
        assert_true(max_abs_diff(m.masks, bm.masks + b * 3 * hw, 3 * hw) <= 1e-4);
        assert_true(max_abs_diff(m.iou, bm.iou + b * 3, 3) <= 1e-6);
        assert_true(max_abs_diff(m.low_res, bm.low_res + b * 3 * ls, 3 * ls) <= 1e-4);
        samc_masks_free(&m);
    }
    /* boxes and a mask input for every prompt, single mask */
    const float boxes[8] = {10, 10, 120, 100, 100, 50, 240, 180};
    float *mask_in = calloc((size_t)(2 * ls), sizeof *mask_in);
    memcpy(mask_in, bm.low_res, (size_t)ls * sizeof *mask_in);
    memcpy(mask_in + ls, bm.low_res + 3 * ls, (size_t)ls * sizeof *mask_in);
    samc_batch_request rb = {.batch = 2, .n_points = 1, .point_coords = &pts[0][0], .point_labels = lab,
                             .boxes = boxes, .mask_input = mask_in, .return_logits = 1};
    samc_batch_masks bb;
    assert_int_equal(samc_predictor_predict_batch(f->p, &rb, &bb, &e), SAMC_OK);
    assert_int_equal(bb.num_masks, 1);
    for (int b = 0; b < 2; b++) {
        samc_predict_request one = {.point_coords = pts[b], .point_labels = &lab[b], .n_points = 1,
                                    .box = boxes + 4 * b, .mask_input = mask_in + b * ls, .return_logits = 1};
        samc_masks m;
        assert_int_equal(samc_predictor_predict(f->p, &one, &m, &e), SAMC_OK);
        assert_true(max_abs_diff(m.masks, bb.masks + b * hw, hw) <= 1e-4);
        assert_true(max_abs_diff(m.iou, bb.iou + b, 1) <= 1e-6);
        samc_masks_free(&m);
    }
    free(mask_in);
    samc_batch_masks_free(&bb);
    samc_batch_masks_free(&bm);
}

/* set_image_batch + predict_batch against set_image + predict_batch. */
static void test_image_batch(void **state)
{
    fx *f = *state;
    samc_error e = {0};
    const int h2 = f->h / 2, w2 = f->w / 2;
    uint8_t *half = malloc((size_t)h2 * w2 * 3);
    for (int y = 0; y < h2; y++)
        memcpy(half + (size_t)y * w2 * 3, f->img + ((size_t)(y + 10) * f->w + 20) * 3, (size_t)w2 * 3);
    const uint8_t *imgs[2] = {f->img, half};
    const int hs[2] = {f->h, h2}, ws[2] = {f->w, w2};
    samc_image_batch *ib = NULL;
    assert_int_equal(samc_image_batch_set(f->p, 2, imgs, hs, ws, &ib, &e), SAMC_OK);
    assert_int_equal(samc_image_batch_count(ib), 2);
    int32_t lab[2] = {1, 1};
    samc_batch_request rq = {.batch = 2, .n_points = 1, .point_coords = &pts[0][0], .point_labels = lab,
                             .multimask_output = 1, .return_logits = 1};
    for (int i = 0; i < 2; i++) {
        samc_batch_masks a, b;
        assert_int_equal(samc_image_batch_predict(f->p, ib, i, &rq, &a, &e), SAMC_OK);
        assert_int_equal(samc_predictor_set_image(f->p, imgs[i], hs[i], ws[i], &e), SAMC_OK);
        assert_int_equal(samc_predictor_predict_batch(f->p, &rq, &b, &e), SAMC_OK);
        assert_int_equal(a.height, hs[i]);
        assert_true(max_abs_diff(a.masks, b.masks, (int64_t)2 * 3 * hs[i] * ws[i]) == 0);
        samc_batch_masks_free(&a), samc_batch_masks_free(&b);
    }
    samc_batch_masks m;
    assert_int_equal(samc_image_batch_predict(f->p, ib, 2, &rq, &m, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "outside the batch");
    samc_image_batch_free(ib);
    free(half);
}

static void test_predict_batch_bad(void **state)
{
    fx *f = *state;
    samc_error e = {0};
    assert_int_equal(samc_predictor_set_image(f->p, f->img, f->h, f->w, &e), SAMC_OK);
    int32_t lab[2] = {1, 7};
    samc_batch_masks m;
    samc_batch_request rq = {.batch = 0, .n_points = 1, .point_coords = &pts[0][0], .point_labels = lab};
    assert_int_equal(samc_predictor_predict_batch(f->p, &rq, &m, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "batch size 0");
    memset(&e, 0, sizeof e);
    rq.batch = 2;
    assert_int_equal(samc_predictor_predict_batch(f->p, &rq, &m, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "prompt 1 of the batch");
    tu_assert_contains(e.msg, "label 7");
}

/* fixtures/amg/amg_a_nocrop.h5's generator arguments (fixtures/README.md). */
static samc_amg_params fixture_a_params(void)
{
    samc_amg_params p = samc_amg_default_params();
    p.points_per_side = 5, p.points_per_batch = 16;
    p.pred_iou_thresh = 0.553, p.stability_score_thresh = 0.2858, p.stability_score_offset = 0.25;
    p.output_mode = SAMC_AMG_UNCOMPRESSED_RLE;
    return p;
}

static void on_progress(void *user, const samc_amg_progress *pr)
{
    samc_amg_progress *last = user;
    assert_true(pr->points_done > last->points_done && pr->points_done <= pr->points_total);
    *last = *pr;
}

/* A progress callback calling back into the predictor being used: refused
 * with a status, the generator unharmed (issue 23). */
typedef struct reenter {
    samc_predictor *p;
    const uint8_t *img;
    int h, w, calls, refused;
} reenter;

static void reenter_progress(void *user, const samc_amg_progress *pr)
{
    (void)pr;
    reenter *r = user;
    samc_error e = {0};
    r->refused += samc_predictor_set_image(r->p, r->img, r->h, r->w, &e) == SAMC_ERR_ARG && strstr(e.msg, "callback");
    r->calls++;
}

static void test_progress_reentry_refused(void **state)
{
    fx *f = *state;
    samc_error e = {0};
    samc_amg_params p = fixture_a_params();
    samc_amg_result r;
    reenter re = {f->p, f->img, f->h, f->w, 0, 0};
    assert_int_equal(samc_amg_generate_masks(f->p, f->img, f->h, f->w, &p, reenter_progress, &re, &r, &e), SAMC_OK);
    assert_true(re.calls > 0);
    assert_int_equal(re.refused, re.calls);
    samc_amg_result_free(&r);
}

static void test_defaults(void **state)
{
    (void)state;
    const samc_amg_params p = samc_amg_default_params();
    assert_int_equal(p.points_per_side, 32);
    assert_int_equal(p.points_per_batch, 64);
    assert_true(p.pred_iou_thresh == 0.8 && p.stability_score_thresh == 0.95 && p.stability_score_offset == 1.0);
    assert_true(p.mask_threshold == 0.0 && p.box_nms_thresh == 0.7 && p.crop_nms_thresh == 0.7);
    assert_true(p.crop_n_layers == 0 && p.crop_overlap_ratio == 512.0 / 1500.0 && p.crop_n_points_downscale_factor == 1);
    assert_true(p.min_mask_region_area == 0 && p.output_mode == SAMC_AMG_BINARY_MASK);
    assert_true(!p.use_m2m && p.multimask_output && !p.point_grids);
}

/* The generator's records against the dump's /outputs (RLE counts, order). */
static void test_generate_matches_dump(void **state)
{
    fx *f = *state;
    samc_error e = {0};
    samc_amg_params p = fixture_a_params();
    samc_amg_progress last = {0};
    samc_amg_result r;
    assert_int_equal(samc_amg_generate_masks(f->p, f->img, f->h, f->w, &p, on_progress, &last, &r, &e), SAMC_OK);
    assert_true(last.points_done == 25 && last.points_total == 25 && last.n_crops == 1);
    int32_t *counts = NULL, *offs = NULL, *area = NULL;
    int64_t nc, no, na;
    assert_int_equal(samc_dump_read_i32(f->d, "/outputs/segmentation_counts", &counts, &nc, &e), SAMC_OK);
    assert_int_equal(samc_dump_read_i32(f->d, "/outputs/segmentation_offsets", &offs, &no, &e), SAMC_OK);
    assert_int_equal(samc_dump_read_i32(f->d, "/outputs/area", &area, &na, &e), SAMC_OK);
    assert_int_equal(r.n, na);
    for (int64_t m = 0; m < r.n; m++) {
        assert_int_equal(r.masks[m].n_counts, offs[m + 1] - offs[m]);
        for (int64_t i = 0; i < r.masks[m].n_counts; i++)
            assert_int_equal(r.masks[m].counts[i], counts[offs[m] + i]);
        assert_int_equal(r.masks[m].area, area[m]);
        assert_null(r.masks[m].binary);
        assert_null(r.masks[m].coco_counts);
    }
    /* the JSON records, with the official keys */
    char *text = NULL;
    assert_int_equal(samc_amg_to_json(&r, &text, &e), SAMC_OK);
    cJSON *arr = cJSON_Parse(text);
    assert_int_equal(cJSON_GetArraySize(arr), (int)r.n);
    static const char *const keys[] = {"segmentation", "area", "bbox", "predicted_iou", "point_coords",
                                       "stability_score", "crop_box"};
    for (int k = 0; k < 7; k++)
        assert_non_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, 0), keys[k]));
    const cJSON *seg = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, 0), "segmentation");
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(seg, "counts"), 1)->valueint, counts[1]);
    cJSON_Delete(arr), free(text);
    samc_amg_result_free(&r);
    /* coco_rle and binary_mask: the same masks in the other forms */
    p.output_mode = SAMC_AMG_COCO_RLE;
    assert_int_equal(samc_amg_generate_masks(f->p, f->img, f->h, f->w, &p, NULL, NULL, &r, &e), SAMC_OK);
    assert_int_equal(r.n, na);
    assert_non_null(r.masks[0].coco_counts);
    char *dir = tu_mkdtemp("amg_json"), *path = tu_join(dir, "masks.json");
    assert_int_equal(samc_amg_write_json(&r, path, &e), SAMC_OK);
    uint8_t *data = NULL;
    size_t n = 0;
    assert_int_equal(tu_read_file(path, &data, &n), 0);
    cJSON *back = cJSON_ParseWithLength((const char *)data, n);
    seg = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(back, 0), "segmentation");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(seg, "counts")->valuestring, r.masks[0].coco_counts);
    cJSON_Delete(back), free(data);
    samc_amg_result_free(&r);
    p.output_mode = SAMC_AMG_BINARY_MASK;
    assert_int_equal(samc_amg_generate_masks(f->p, f->img, f->h, f->w, &p, NULL, NULL, &r, &e), SAMC_OK);
    int64_t ones = 0;
    for (int64_t i = 0; i < (int64_t)f->h * f->w; i++)
        ones += r.masks[0].binary[i];
    assert_int_equal(ones, area[0]);
    samc_amg_result_free(&r);
    tu_rmtree(dir), free(dir), free(path);
    free(counts), free(offs), free(area);
}

static void expect_refused(fx *f, const samc_amg_params *p, int h, int w, const char *needle)
{
    samc_error e = {0};
    samc_amg_result r;
    assert_int_equal(samc_amg_generate_masks(f->p, f->img, h, w, p, NULL, NULL, &r, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, needle);
    assert_int_equal(r.n, 0);
}

static void test_bad_params(void **state)
{
    fx *f = *state;
    samc_amg_params p = fixture_a_params();
    p.points_per_side = 0;
    expect_refused(f, &p, f->h, f->w, "give exactly one of points_per_side");
    p.points_per_side = 5000;
    expect_refused(f, &p, f->h, f->w, "points_per_side is 5000");
    p = fixture_a_params(), p.pred_iou_thresh = 1.5;
    expect_refused(f, &p, f->h, f->w, "pred_iou_thresh is 1.5");
    p = fixture_a_params(), p.stability_score_thresh = -0.1;
    expect_refused(f, &p, f->h, f->w, "stability_score_thresh");
    p = fixture_a_params(), p.box_nms_thresh = NAN;
    expect_refused(f, &p, f->h, f->w, "box_nms_thresh");
    p = fixture_a_params(), p.points_per_batch = 0;
    expect_refused(f, &p, f->h, f->w, "points_per_batch is 0");
    p = fixture_a_params(), p.crop_n_layers = 3; /* a 4x4 image: 8 crops per side, some empty */
    expect_refused(f, &p, 4, 4, "crop_n_layers 3 is too many for a 4x4 image");
}

/* A record of a 16x16 image from a mask (its counts, area, box). */
static samc_amg_mask make_mask(const uint8_t *m)
{
    samc_amg_rle rle = {0};
    assert_int_equal(samc_amg_mask_to_rle(m, 16, 16, &rle, NULL), SAMC_OK);
    samc_amg_mask out = {.height = 16, .width = 16, .n_counts = rle.n, .counts = rle.counts,
                         .area = samc_amg_rle_area(&rle)};
    return out;
}

static void square(uint8_t *m, int y0, int x0, int side)
{
    for (int y = y0; y < y0 + side; y++)
        memset(m + y * 16 + x0, 1, (size_t)side);
}

/* postprocess_small_regions: a holed copy of a clean mask loses the NMS to
 * it (score 0 vs 1); a mask with a stray pixel is kept, cleaned. */
static void test_postprocess_small_regions(void **state)
{
    (void)state;
    uint8_t a[256] = {0}, b[256] = {0}, c[256] = {0};
    square(a, 2, 2, 6), square(b, 2, 2, 6), square(c, 9, 9, 5);
    a[4 * 16 + 4] = 0;  /* a one-pixel hole */
    c[0 * 16 + 15] = 1; /* a one-pixel island */
    samc_amg_result r = {.n = 3, .masks = calloc(3, sizeof(samc_amg_mask))};
    r.masks[0] = make_mask(a), r.masks[1] = make_mask(b), r.masks[2] = make_mask(c);
    r.masks[2].bbox[2] = 15; /* as generate() gives it: the island widens the box */
    samc_error e = {0};
    assert_int_equal(samc_amg_postprocess_small_regions(&r, 4, 0.7, &e), SAMC_OK);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.masks[0].area, 36); /* the clean square (score 1) first */
    assert_int_equal(r.masks[1].area, 25); /* the island removed, box updated */
    assert_true(r.masks[1].bbox[0] == 9 && r.masks[1].bbox[1] == 9 && r.masks[1].bbox[2] == 4 &&
                r.masks[1].bbox[3] == 4);
    samc_amg_result_free(&r);
    assert_int_equal(samc_amg_postprocess_small_regions(&r, -1, 0.7, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "min_area");
}

/* samc_mask_to_coco_rle: pycocotools' string of any mask, read back by the
 * COCO decoder to the same pixels; bad sizes refused. */
static void test_mask_to_coco_rle(void **state)
{
    (void)state;
    samc_error e;
    char *s = NULL;
    const uint8_t zeros[4] = {0};
    assert_int_equal(samc_mask_to_coco_rle(zeros, 2, 2, &s, &e), SAMC_OK);
    assert_string_equal(s, "4"); /* one run of 4 zeros: pycocotools' rleToString([4]) */
    samc_free(s);
    enum { H = 5, W = 7 };
    uint8_t mask[H * W], back[H * W];
    for (int i = 0; i < H * W; i++)
        mask[i] = (uint8_t)((i * 7 + i / 3) % 5 < 2);
    assert_int_equal(samc_mask_to_coco_rle(mask, H, W, &s, &e), SAMC_OK);
    samc_amg_rle rle = {0};
    assert_int_equal(samc_amg_rle_from_coco_string(s, H, W, &rle, &e), SAMC_OK);
    assert_int_equal(samc_amg_rle_to_mask(&rle, back, &e), SAMC_OK);
    assert_memory_equal(mask, back, sizeof mask);
    samc_amg_rle_free(&rle);
    samc_free(s);
    assert_int_equal(samc_mask_to_coco_rle(mask, 0, W, &s, &e), SAMC_ERR_ARG);
    assert_null(s);
    assert_int_equal(samc_mask_to_coco_rle(NULL, H, W, &s, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "mask"));
}

static void count_candidate(void *user, const samc_amg_candidate *c)
{
    (void)c;
    ++*(int64_t *)user;
}

/* The generator upscales only the masks that pass the IoU filter (with
 * m2m: only the refined ones) unless an observer asks for every candidate:
 * the records and the filters' counts are those of the run that upscales
 * every mask (the parity runs' observer), with and without m2m, and the IoU
 * filter really dropped some candidates (so both the kept and the dropped
 * planes were exercised). */
static void test_upscale_only_kept(void **state)
{
    fx *f = *state;
    for (int m2m = 0; m2m < 2; m2m++) {
        samc_amg_params p = fixture_a_params();
        p.use_m2m = m2m;
        samc_amg_output all, kept;
        int64_t observed = 0;
        samc_error e = {0};
        const samc_amg_hooks observe = {.candidate = count_candidate, .user = &observed};
        samc_exec *x = samc__predictor_exec(f->p);
        const samc_sam2_model *m = samc__predictor_sam2(f->p);
        assert_int_equal(samc_amg_generate(x, m, f->img, f->h, f->w, &p, &observe, &all, &e), SAMC_OK);
        assert_int_equal(samc_amg_generate(x, m, f->img, f->h, f->w, &p, NULL, &kept, &e), SAMC_OK);
        assert_int_equal(observed, all.counts.candidates);
        assert_true(all.counts.iou > 0 && all.counts.iou < all.counts.candidates);
        assert_memory_equal(&all.counts, &kept.counts, sizeof all.counts);
        assert_int_equal(all.n, kept.n);
        assert_true(all.n > 0);
        for (int64_t i = 0; i < all.n; i++) {
            const samc_amg_record *a = &all.records[i], *b = &kept.records[i];
            assert_memory_equal(a->box, b->box, sizeof a->box);
            assert_true(a->predicted_iou == b->predicted_iou && a->stability_score == b->stability_score);
            assert_int_equal(a->rle.n, b->rle.n);
            assert_memory_equal(a->rle.counts, b->rle.counts, (size_t)a->rle.n * sizeof *a->rle.counts);
        }
        samc_amg_output_free(&all), samc_amg_output_free(&kept);
    }
}

/* The amg parity task is not vacuous: a fault planted in the mask decoder
 * (the test-only "fault" implementation, here a gross one: 1e-2 of the
 * output's scale) fails it, first at that layer, and the records' rows fail
 * too. */
static void test_parity_catches_fault(void **state)
{
    (void)state;
    tu_fault_size = 1e-2;
    assert_int_equal(samc_impl_register(&tu_fault_impl, NULL), SAMC_OK);
    char *path = tu_src_path("fixtures/amg/amg_b_crops.h5");
    const char *ovr[1] = {"sam_mask_decoder.transformer.layers.1=fault"};
    samc_parity_opts o = {.impl = "ref", .overrides = ovr, .n_overrides = 1};
    samc_parity_report rep;
    samc_error e = {0};
    assert_int_equal(samc_parity_run(path, &o, &rep, &e), SAMC_OK);
    assert_true(rep.n_fail > 0);
    assert_string_equal(rep.rows[rep.first_fail].module, "sam_mask_decoder.transformer.layers.1");
    bool outputs_fail = false;
    for (int i = 0; i < rep.n_rows; i++)
        outputs_fail |= !strncmp(rep.rows[i].module, "/outputs", 8) && rep.rows[i].state == SAMC_PARITY_FAIL;
    assert_true(outputs_fail);
    samc_parity_report_free(&rep);
    free(path);
    samc_impl_unregister(&tu_fault_impl);
    tu_fault_size = 1e-4;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predict_batch_equals_single),
        cmocka_unit_test(test_image_batch),
        cmocka_unit_test(test_predict_batch_bad),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_generate_matches_dump),
        cmocka_unit_test(test_progress_reentry_refused),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_postprocess_small_regions),
        cmocka_unit_test(test_upscale_only_kept),
        cmocka_unit_test(test_parity_catches_fault),
        cmocka_unit_test(test_mask_to_coco_rle),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
