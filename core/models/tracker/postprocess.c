/* SPDX-License-Identifier: Apache-2.0 */
/* postprocess.c - @postprocess, a row of the tracker: the low-res masks to
 * the image (SAM2Transforms.postprocess_masks; hole and sprinkle filling
 * come before it) or to the video resolution (SAM2VideoPredictor.
 * _get_orig_video_res_output, with _apply_non_overlapping_constraints when
 * the config asks for it). */
#include <math.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/sam_heads.h"
#include "core/nn/connected_components.h"

enum { POSTPROCESS, N_ROWS };

static samc_isolated_body iso_postprocess;
static samc_status ex_postprocess(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);

static const samc_layer_def rows[N_ROWS] = {
    [POSTPROCESS] = {.pattern = "@postprocess", .table = SAMC_OPS_TRACKER,
                     .body = SAMC_BODY(samc_tracker_ops, postprocess), .parity = true, .isolated = iso_postprocess,
                     .example = ex_postprocess},
};
/* Its instance is the tracker (no weights of its own). */
const samc_part_def samc_postprocess_part = {"postprocess", rows, N_ROWS, NULL};

static const char *const slot_names[] = {"0"};

/* _apply_non_overlapping_constraints: keep each pixel only for the object
 * with the highest score there; others are clamped to <= -10. */
static void apply_non_overlap(float *m, int n, int64_t hw)
{
    if (n <= 1)
        return;
    for (int64_t i = 0; i < hw; i++) {
        int best = 0;
        for (int k = 1; k < n; k++)
            if (m[k * hw + i] > m[best * hw + i])
                best = k;
        for (int k = 0; k < n; k++)
            if (k != best)
                m[k * hw + i] = fminf(m[k * hw + i], -10.0f);
    }
}

samc_status samc_tracker_postprocess(samc_exec *x, const samc_tracker_model *tr, const samc_tensor *low, int H, int W,
                                     samc_tensor *out, samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, tr, &rows[POSTPROCESS], 0);
    const samc_tracker_ops *ops = L->ops;
    const int64_t shape[4] = {low->shape[0], low->shape[1], H, W};
    samc_status st = samc_tensor_alloc_uninit(out, 4, shape, err); /* every pixel is interpolated */
    const samc_tensor *outs[] = {out};
    if (!st)
        st = samc_layer_done(x, L, &samc_no_scope, ops->postprocess(samc_layer_ctx(x, L), low, H, W, out), err, 1,
                             slot_names, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

/* _apply_non_overlapping_constraints as a decision point: each pixel kept
 * for the object with the highest logit there (the others clamped). */
static void non_overlap(samc_exec *x, const samc_layer *L, const samc_scope *sc, samc_tensor *m)
{
    const int n = (int)m->shape[0];
    const int64_t hw = m->shape[2] * m->shape[3];
    samc_decision d = {.kind = SAMC_DECISION_NON_OVERLAP, .module = L->name, .values = m->data,
                       .n = n * hw, .n_masks = n, .hw = hw};
    if (sc)
        samc_exec_decide(x, sc, &d);
    apply_non_overlap(m->data, n, hw);
}

samc_status samc_tracker_postprocess_video(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                           const samc_tensor *low, int H, int W, bool non_overlap_masks,
                                           samc_tensor *out, samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, tr, &rows[POSTPROCESS], 0);
    const samc_tracker_ops *ops = L->ops;
    samc_status st = samc_tensor_allocv(out, err, 4, low->shape[0], (int64_t)1, (int64_t)H, (int64_t)W);
    if (!st && low->shape[2] == H && low->shape[3] == W) /* _get_orig_video_res_output: no resize at that size */
        memcpy(out->data, low->data, (size_t)samc_numel(out) * sizeof(float));
    else if (!st)
        st = samc_layer_done(x, L, NULL, ops->postprocess(samc_layer_ctx(x, L), low, H, W, out), err, 0, NULL, NULL);
    if (!st && non_overlap_masks)
        non_overlap(x, L, sc, out);
    const samc_tensor *outs[] = {out};
    if (!st && sc)
        samc_layer_emit(x, L, sc, 1, slot_names, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

/* ---- isolated runners ------------------------------------------------------- */

/* Image: SAM2Transforms.postprocess_masks (hole and sprinkle filling with
 * the task's predictor options, then the resize). Video: the resize to the video resolution, with the
 * non-overlap constraint when the config asks for it. */
static samc_status iso_postprocess(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    const samc_tracker_model *tr = L->self;
    samc_tensor low = {0};
    samc_status st = samc_io_tensor(in, in->video ? "any_res_masks" : "masks", "0", &low, err);
    if (!st && low.ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "@postprocess input must be 4-D");
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && in->video) {
        samc_tensor r = {0};
        if (!(st = samc_tracker_postprocess_video(x, tr, NULL, &low, in->video_h, in->video_w,
                                                  tr->cfg.video.non_overlap_masks, &r, err)))
            *y = r;
    } else if (!st) {
        const double h = samc_io_scalar_or(in, "1.0", NULL, -1), w = samc_io_scalar_or(in, "1.1", NULL, -1);
        if (h < 1 || w < 1)
            st = samc_fail(err, SAMC_ERR_KEY, "@postprocess: the original size (in/1.0, in/1.1) is missing");
        samc_tensor r = {0};
        if (!st && (in->max_hole_area > 0 || in->max_sprinkle_area > 0) &&
            (st = samc_fill_holes_image_predictor(&low, 0.0f, in->max_hole_area, in->max_sprinkle_area)))
            st = samc_fail(err, st, "@postprocess: hole filling failed");
        if (!st && !(st = samc_tracker_postprocess(x, tr, &low, (int)h, (int)w, &r, err)))
            *y = r;
    }
    samc_tensor_release(&low);
    return st;
}

/* ---- op-test inputs ------------------------------------------------------------ */

/* Both variants: the image predictor's (masks, original size) and the video
 * predictor's (any_res_masks, the video size); in->video picks one. */
static samc_status ex_postprocess(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                  samc_error *err)
{
    (void)index;
    const int64_t s4 = 4 * (int64_t)((const samc_tracker_model *)self)->emb;
    SAMC_INPUT_RANDOM("masks", -20, 20, 4, (int64_t)1, (int64_t)3, s4, s4);
    SAMC_INPUT_RANDOM("any_res_masks", -20, 20, 4, (int64_t)2, (int64_t)1, s4, s4);
    in->video_h = full ? 720 : 90, in->video_w = full ? 1280 : 160;
    samc_status st = samc_inputs_scalar(in, "1.0", full ? 768 : 96, err);
    return st ? st : samc_inputs_scalar(in, "1.1", full ? 1024 : 128, err);
}
