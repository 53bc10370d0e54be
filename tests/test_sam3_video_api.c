/* SPDX-License-Identifier: Apache-2.0 */
/* test_sam3_video_api.c - include/samc_sam3.h's video session and
 * predict_inst end to end, against the official outputs of the committed
 * fixtures (fixtures/sam3_video, loaded as models: their weights, config
 * and vocabulary): the text prompt of tiny_vt_loop.h5 (request 0) and its
 * propagation in both directions (request 1) and the clicks refining an
 * object (request 2) give every frame's ids, probabilities, boxes and masks
 * of the dump, with fast and ref; predict_inst's three prompts of tiny_vi_inst.h5 give its
 * masks, IoUs and low-res logits (rel <= 1e-4). Then the refusals: a SAM 2
 * model, a SAM 3 model without its tracker half, frames and points outside
 * the video, an empty prompt, calls from inside the callback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "parity/dump.h"
#include "samc_sam3.h"
#include "util/testutil.h"

#define LOOP "fixtures/sam3_video/tiny_vt_loop.h5"
#define INST "fixtures/sam3_video/tiny_vi_inst.h5"

/* A dump as the model (the predict_inst dump carries no vocabulary: the official one). */
static samc_model *load(const char *rel)
{
    char *p = tu_src_path(rel), *voc = tu_src_path("tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz");
    samc_model_params mp = samc_model_default_params();
    mp.vocab = strstr(rel, "inst") ? voc : NULL;
    samc_model *m = NULL;
    samc_error e = {0};
    if (samc_model_load(p, &mp, &m, &e))
        fail_msg("load %s: %s", rel, e.msg);
    free(p), free(voc);
    assert_int_equal(samc_model_family(m), SAMC_FAMILY_SAM3);
    return m;
}

static samc_dump *open_dump(const char *rel)
{
    char *p = tu_src_path(rel);
    samc_dump *d = NULL;
    samc_error e = {0};
    assert_int_equal(samc_dump_open(p, &d, &e), SAMC_OK);
    free(p);
    return d;
}

typedef struct expect {
    samc_dump *d;
    char group[128];            /* "/outputs/requests/<k>" */
    int request, yields;        /* the request; propagate: the next yield's index */
    bool propagate;
    int calls;
    samc_sam3_tracker *t;       /* for the re-entrancy check */
} expect;

/* One reported frame against its /outputs group: ids, probabilities and
 * boxes within 1e-4, every mask pixel equal. */
static samc_status check_frame(void *user, const samc_sam3_frame *f)
{
    expect *x = user;
    char g[192], path[256];
    if (x->propagate)
        snprintf(g, sizeof g, "%s/yields/%d", x->group, x->yields++);
    else
        snprintf(g, sizeof g, "%s", x->group);
    x->calls++;
    samc_error e = {0};
    if (x->t) /* a call on the session from inside its callback is refused */
        assert_int_equal(samc_sam3_tracker_remove_object(x->t, 0, &e), SAMC_ERR_ARG);
    double fi = -1;
    if (x->propagate)
        assert_int_equal(samc_dump_attr_num(x->d, g, "frame_index", &fi, NULL, &e), SAMC_OK);
    else {
        char in[64];
        snprintf(in, sizeof in, "/inputs/requests/%d", x->request);
        assert_int_equal(samc_dump_attr_num(x->d, in, "frame_index", &fi, NULL, &e), SAMC_OK);
    }
    assert_int_equal(f->frame, (int)fi);
    samc_tensor ids = {0}, probs = {0}, boxes = {0}, masks = {0};
    snprintf(path, sizeof path, "%s/out_obj_ids", g);
    assert_int_equal(samc_dump_read(x->d, path, &ids, &e), SAMC_OK);
    snprintf(path, sizeof path, "%s/out_probs", g);
    assert_int_equal(samc_dump_read(x->d, path, &probs, &e), SAMC_OK);
    snprintf(path, sizeof path, "%s/out_boxes_xywh", g);
    assert_int_equal(samc_dump_read(x->d, path, &boxes, &e), SAMC_OK);
    snprintf(path, sizeof path, "%s/out_binary_masks", g);
    assert_int_equal(samc_dump_read(x->d, path, &masks, &e), SAMC_OK);
    assert_int_equal(f->n, (int)ids.shape[0]);
    assert_int_equal(f->h, (int)masks.shape[1]);
    assert_int_equal(f->w, (int)masks.shape[2]);
    for (int i = 0; i < f->n; i++) {
        assert_int_equal(f->obj_ids[i], (int)ids.data[i]);
        assert_true(fabs(f->probs[i] - probs.data[i]) <= 1e-4 * fmax(1.0, fabs(probs.data[i])));
        for (int c = 0; c < 4; c++)
            assert_true(fabs(f->boxes[4 * i + c] - boxes.data[4 * i + c]) <= 1e-4);
    }
    int64_t diff = 0;
    for (int64_t p = 0; p < (int64_t)f->n * f->h * f->w; p++)
        diff += f->masks[p] != (masks.data[p] != 0.0f);
    assert_int_equal(diff, 0);
    samc_tensor_release(&ids), samc_tensor_release(&probs), samc_tensor_release(&boxes), samc_tensor_release(&masks);
    return SAMC_OK;
}

static void run_loop(const char *impl)
{
    samc_model *m = load(LOOP);
    samc_dump *d = open_dump(LOOP);
    samc_error e = {0};
    uint8_t *rgb = NULL;
    int nd = 0;
    int64_t dims[4];
    char *text = NULL;
    double frame = 0;
    assert_int_equal(samc_dump_read_u8(d, "/inputs/frames_u8", &rgb, &nd, dims, &e), SAMC_OK);
    assert_int_equal(samc_dump_attr_str(d, "/inputs/requests/0", "text", &text, &e), SAMC_OK);
    assert_int_equal(samc_dump_attr_num(d, "/inputs/requests/0", "frame_index", &frame, NULL, &e), SAMC_OK);
    samc_sam3_tracker_params tp = samc_sam3_tracker_default_params();
    tp.impl = impl, tp.n_threads = 2;
    samc_sam3_tracker *t = NULL;
    if (samc_sam3_tracker_new_frames(m, &tp, rgb, (int)dims[0], (int)dims[1], (int)dims[2], &t, &e))
        fail_msg("new_frames: %s", e.msg);
    assert_string_equal(samc_sam3_tracker_impl(t), impl);
    assert_int_equal(samc_sam3_tracker_num_frames(t), (int)dims[0]);
    assert_int_equal(samc_sam3_tracker_height(t), (int)dims[1]);
    assert_int_equal(samc_sam3_tracker_width(t), (int)dims[2]);
    assert_null(samc_sam3_tracker_frame_path(t, 0));

    expect x = {.d = d, .group = "/outputs/requests/0", .t = t};
    if (samc_sam3_tracker_add_prompt(t, (int)frame, text, NULL, 1, check_frame, &x, &e))
        fail_msg("add_prompt: %s", e.msg);
    assert_int_equal(x.calls, 1);
    x = (expect){.d = d, .group = "/outputs/requests/1", .propagate = true, .t = t};
    if (samc_sam3_tracker_propagate(t, SAMC_SAM3_BOTH, -1, -1, check_frame, &x, &e))
        fail_msg("propagate: %s", e.msg);
    char more[96];
    snprintf(more, sizeof more, "/outputs/requests/1/yields/%d", x.yields);
    assert_false(samc_dump_exists(d, more)); /* every official yield, no more */
    printf("%s: add_prompt and %d propagated frames equal the official outputs\n", impl, x.yields);

    /* request 2: a positive and a negative click refining object 2 on frame 1
     * (normalised in the dump, pixels here) */
    samc_tensor pts = {0};
    int32_t *lab = NULL;
    int64_t np = 0;
    double obj = -1, cf = -1;
    assert_int_equal(samc_dump_read(d, "/inputs/requests/2/points", &pts, &e), SAMC_OK);
    assert_int_equal(samc_dump_read_i32(d, "/inputs/requests/2/point_labels", &lab, &np, &e), SAMC_OK);
    assert_int_equal(samc_dump_attr_num(d, "/inputs/requests/2", "obj_id", &obj, NULL, &e), SAMC_OK);
    assert_int_equal(samc_dump_attr_num(d, "/inputs/requests/2", "frame_index", &cf, NULL, &e), SAMC_OK);
    for (int64_t i = 0; i < np; i++)
        pts.data[2 * i] *= (float)dims[2], pts.data[2 * i + 1] *= (float)dims[1];
    x = (expect){.d = d, .group = "/outputs/requests/2", .request = 2, .t = t};
    if (samc_sam3_tracker_add_points(t, (int)cf, (int)obj, pts.data, lab, (int)np, check_frame, &x, &e))
        fail_msg("add_points: %s", e.msg);
    assert_int_equal(x.calls, 1);
    const float pt[2] = {32.0f, 22.0f};
    const int32_t one[1] = {1}, bad[1] = {3};
    /* refusals: outside the video, outside the frame, bad labels, no prompt */
    assert_int_equal(samc_sam3_tracker_add_points(t, 99, 9, pt, one, 1, NULL, NULL, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "outside the video");
    const float out[2] = {64.5f, 10.0f};
    assert_int_equal(samc_sam3_tracker_add_points(t, 1, 9, out, one, 1, NULL, NULL, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "must lie in the 64 x 48 frame");
    assert_int_equal(samc_sam3_tracker_add_points(t, 1, 9, pt, bad, 1, NULL, NULL, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_sam3_tracker_add_prompt(t, 0, NULL, NULL, 1, NULL, NULL, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_sam3_tracker_add_prompt(t, 0, "", NULL, 1, NULL, NULL, &e), SAMC_ERR_ARG);
    const float box[4] = {10, 10, 5, 20}; /* x1 < x0 */
    assert_int_equal(samc_sam3_tracker_add_prompt(t, 0, NULL, box, 1, NULL, NULL, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_sam3_tracker_remove_object(t, 12345, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_sam3_tracker_propagate(t, (samc_sam3_direction)7, -1, -1, NULL, NULL, &e), SAMC_ERR_ARG);
    samc_sam3_tracker_reset(t);
    assert_int_equal(samc_sam3_tracker_propagate(t, SAMC_SAM3_FORWARD, -1, -1, NULL, NULL, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "no prompts");
    samc_sam3_tracker_free(t);
    samc_tensor_release(&pts);
    free(rgb), free(text), free(lab);
    samc_dump_close(d);
    samc_model_free(m);
}

static void test_loop_fast(void **state)
{
    (void)state;
    run_loop("fast");
}

static void test_loop_ref(void **state)
{
    (void)state;
    run_loop("ref");
}

static double rel(const float *out, const float *ref, int64_t n)
{
    double ma = 0, sc = 0;
    for (int64_t i = 0; i < n; i++)
        ma = fmax(ma, fabs((double)out[i] - ref[i])), sc = fmax(sc, fabs((double)ref[i]));
    return ma / (sc > 1e-12 ? sc : 1e-12);
}

static void test_predict_inst(void **state)
{
    (void)state;
    samc_model *m = load(INST);
    samc_dump *d = open_dump(INST);
    samc_error e = {0};
    uint8_t *rgb = NULL;
    int nd = 0;
    int64_t dims[4];
    assert_int_equal(samc_dump_read_u8(d, "/inputs/image_u8", &rgb, &nd, dims, &e), SAMC_OK);
    samc_sam3_processor *p = NULL;
    assert_int_equal(samc_sam3_processor_new(m, NULL, &p, &e), SAMC_OK);
    samc_predict_request rq = {.n_points = 0, .multimask_output = 1, .return_logits = 1};
    samc_masks mk;
    assert_int_equal(samc_sam3_processor_predict_inst(p, &rq, &mk, &e), SAMC_ERR_ARG); /* no image yet */
    assert_int_equal(samc_sam3_processor_set_image(p, rgb, (int)dims[0], (int)dims[1], &e), SAMC_OK);
    for (int k = 0; k < 3; k++) {
        char g[64], path[128];
        snprintf(g, sizeof g, "/inputs/prompts/%d", k);
        samc_tensor pc = {0}, box = {0}, mi = {0}, masks = {0}, iou = {0}, low = {0};
        int32_t *labels = NULL;
        int64_t n = 0;
        double mm = 1;
        snprintf(path, sizeof path, "%s/point_coords", g);
        assert_int_equal(samc_dump_read(d, path, &pc, &e), SAMC_OK);
        snprintf(path, sizeof path, "%s/point_labels", g);
        assert_int_equal(samc_dump_read_i32(d, path, &labels, &n, &e), SAMC_OK);
        snprintf(path, sizeof path, "%s/box", g);
        if (samc_dump_exists(d, path))
            assert_int_equal(samc_dump_read(d, path, &box, &e), SAMC_OK);
        snprintf(path, sizeof path, "%s/mask_input", g);
        if (samc_dump_exists(d, path))
            assert_int_equal(samc_dump_read(d, path, &mi, &e), SAMC_OK);
        assert_int_equal(samc_dump_attr_num(d, g, "multimask_output", &mm, NULL, &e), SAMC_OK);
        rq = (samc_predict_request){.point_coords = n ? pc.data : NULL, .point_labels = n ? labels : NULL,
                                    .n_points = (int)n, .box = box.data, .mask_input = mi.data,
                                    .multimask_output = mm != 0, .return_logits = 1};
        if (samc_sam3_processor_predict_inst(p, &rq, &mk, &e))
            fail_msg("predict_inst %d: %s", k, e.msg);
        snprintf(path, sizeof path, "/outputs/%d/masks", k);
        assert_int_equal(samc_dump_read(d, path, &masks, &e), SAMC_OK);
        snprintf(path, sizeof path, "/outputs/%d/iou_predictions", k);
        assert_int_equal(samc_dump_read(d, path, &iou, &e), SAMC_OK);
        snprintf(path, sizeof path, "/outputs/%d/low_res_masks", k);
        assert_int_equal(samc_dump_read(d, path, &low, &e), SAMC_OK);
        assert_int_equal(mk.num_masks, (int)iou.shape[0]);
        assert_int_equal(mk.height, (int)dims[0]);
        assert_int_equal(mk.width, (int)dims[1]);
        const double rm = rel(mk.masks, masks.data, samc_numel(&masks)), ri = rel(mk.iou, iou.data, mk.num_masks);
        const double rl = rel(mk.low_res, low.data, samc_numel(&low));
        printf("predict_inst %d: %d mask(s), rel masks %.3g, iou %.3g, low-res %.3g\n", k, mk.num_masks, rm, ri, rl);
        assert_true(rm <= 1e-4 && ri <= 1e-4 && rl <= 1e-4);
        samc_masks_free(&mk);
        samc_tensor_release(&pc), samc_tensor_release(&box), samc_tensor_release(&mi);
        samc_tensor_release(&masks), samc_tensor_release(&iou), samc_tensor_release(&low);
        free(labels);
    }
    samc_sam3_processor_free(p);
    free(rgb);
    samc_dump_close(d);
    samc_model_free(m);
}

/* The image model of the SAM 3 image fixtures has no tracker half: the
 * session and predict_inst refuse it; a SAM 2 model is the other family. */
static void test_refusals(void **state)
{
    (void)state;
    samc_error e = {0};
    const uint8_t rgb[2 * 8 * 8 * 3] = {0};
    samc_sam3_tracker *t = NULL;
    samc_model *img = load("fixtures/sam3/tiny_s2_text_boxes.h5");
    assert_int_equal(samc_sam3_tracker_new_frames(img, NULL, rgb, 2, 8, 8, &t, &e), SAMC_ERR_UNSUPPORTED);
    tu_assert_contains(e.msg, "no tracker half");
    assert_null(t);
    samc_sam3_processor *p = NULL;
    assert_int_equal(samc_sam3_processor_new(img, NULL, &p, &e), SAMC_OK);
    assert_int_equal(samc_sam3_processor_set_image(p, rgb, 8, 8, &e), SAMC_OK);
    const float pt[2] = {4, 4};
    const int32_t lab[1] = {1};
    samc_predict_request rq = {.point_coords = pt, .point_labels = lab, .n_points = 1, .multimask_output = 1};
    samc_masks mk;
    assert_int_equal(samc_sam3_processor_predict_inst(p, &rq, &mk, &e), SAMC_ERR_UNSUPPORTED);
    tu_assert_contains(e.msg, "no tracker half");
    samc_sam3_processor_free(p);
    samc_model_free(img);

    char *ck = tu_src_path("fixtures/ckpt/tiny_c_f32.pt"), *cfg = tu_src_path("fixtures/ckpt/tiny_c_f32.config.json");
    samc_model_params mp = samc_model_default_params();
    mp.config = cfg;
    samc_model *sam2 = NULL;
    assert_int_equal(samc_model_load(ck, &mp, &sam2, &e), SAMC_OK);
    assert_int_equal(samc_sam3_tracker_new_frames(sam2, NULL, rgb, 2, 8, 8, &t, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "SAM 2");
    assert_int_equal(samc_sam3_tracker_new(sam2, NULL, "/nonexistent-frames-dir", &t, &e), SAMC_ERR_IO);
    samc_model_free(sam2);
    free(ck), free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loop_fast),
        cmocka_unit_test(test_loop_ref),
        cmocka_unit_test(test_predict_inst),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
