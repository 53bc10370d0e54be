/* SPDX-License-Identifier: Apache-2.0 */
/* video_infer.c - per-frame work of the video predictor: the one-frame
 * feature cache, single-frame inference and the resize to video resolution. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/memory.h"
#include "core/models/tracker/sam_heads.h"
#include "core/models/tracker/track_step.h"
#include "core/models/tracker/video_internal.h"
#include "core/nn/connected_components.h"

samc_status samc_video_preprocess_frame(samc_video *v, int t, samc_tensor *out, samc_error *err)
{
    const uint8_t *rgb = NULL;
    int h = 0, w = 0; /* a video file's frame comes resized by its loader */
    samc_status st = v->src.preprocess
                         ? samc_frames_get_input(v->frames, t, v->tr->cfg.image_size, &rgb, &h, &w, err)
                         : samc_fail(err, SAMC_ERR_UNSUPPORTED, "this model has no @preprocess record");
    return st ? st : v->src.preprocess(v->src.user, v->x, t, rgb, h, w, out, err);
}

samc_status samc__video_features(samc_video *v, int t, const samc_frame_features **f, samc_error *err)
{
    if (v->cached_t != t) {
        samc_frame_features_release(&v->cached);
        v->cached_t = -1;
        const uint8_t *rgb = NULL;
        int h = 0, w = 0;
        samc_status st = samc_frames_get_input(v->frames, t, v->tr->cfg.image_size, &rgb, &h, &w, err);
        if (!st)
            st = v->src.encode(v->src.user, v->x, t, rgb, h, w, &v->cached, err);
        if (st)
            return st;
        v->cached.orig_h = v->H, v->cached.orig_w = v->W;
        v->cached_t = t;
    }
    *f = &v->cached;
    return SAMC_OK;
}

samc_status samc__video_infer(samc_video *v, video_obj *o, int t, bool is_init, int n_points, const float *coords,
                              const int32_t *labels, const samc_tensor *mask, bool reverse, bool run_mem,
                              const samc_tensor *prev_logits, samc_frame_out *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    const samc_frame_features *f = NULL;
    samc_status st = samc__video_features(v, t, &f, err);
    if (st)
        return st;
    const samc_scope sc = {t, o->id};
    samc_track_in in = {.frame_idx = t, .is_init_cond_frame = is_init, .f = f, .n_points = n_points,
                        .point_coords = coords, .point_labels = labels, .mask_inputs = mask,
                        .cond = &o->cond, .non_cond = &o->non_cond, .num_frames = v->num_frames,
                        .reverse = reverse, .run_mem_encoder = run_mem, .prev_sam_mask_logits = prev_logits,
                        .binarize_mask_from_pts = v->opt.binarize_mask_from_pts_for_mem_enc};
    samc_track_out r;
    st = samc_tracker_track_step(v->x, v->tr, &sc, &in, &r, err);
    if (st)
        return st;
    if (r.has_mem)
        samc__video_round_memory(v, &sc, &r.maskmem);
    if (v->opt.fill_hole_area > 0 && (st = samc_fill_holes_video(&r.pred_masks, v->opt.fill_hole_area)))
        st = samc_fail(err, st, "frame %d: hole filling failed", t);
    if (!st) {
        out->frame_idx = t, out->has_mem = r.has_mem, out->object_score = r.object_score;
        out->maskmem = r.maskmem, out->pred_masks = r.pred_masks, out->obj_ptr = r.obj_ptr;
        memset(&r.maskmem, 0, sizeof r.maskmem), memset(&r.pred_masks, 0, sizeof r.pred_masks);
        memset(&r.obj_ptr, 0, sizeof r.obj_ptr);
    }
    samc_track_out_release(&r);
    return st;
}

void samc__video_round_memory(samc_video *v, const samc_scope *sc, samc_tensor *mem)
{
    samc_decision d = {.kind = SAMC_DECISION_BF16, .module = samc_memory_bank_name(v->x, v->tr),
                       .values = mem->data, .n = samc_numel(mem)};
    samc_exec_decide(v->x, sc, &d); /* a decision point: each value's rounding direction */
    samc_round_bf16(mem->data, samc_numel(mem));
}

samc_status samc__video_to_orig_res(samc_video *v, const samc_scope *sc, const samc_tensor *low, float *out,
                                    samc_error *err)
{
    samc_tensor r = {0};
    samc_status st = samc_tracker_postprocess_video(v->x, v->tr, sc, low, v->H, v->W, v->opt.non_overlap_masks, &r, err);
    if (!st)
        memcpy(out, r.data, (size_t)samc_numel(&r) * sizeof(float));
    samc_tensor_release(&r);
    return st;
}

video_tracked *samc__video_find_tracked(video_obj *o, int frame)
{
    for (int i = 0; i < o->n_tracked; i++)
        if (o->tracked[i].frame == frame)
            return &o->tracked[i];
    return NULL;
}

void samc__video_forget_tracked(video_obj *o, int frame)
{
    video_tracked *t = samc__video_find_tracked(o, frame);
    if (t) {
        *t = o->tracked[o->n_tracked - 1];
        o->n_tracked--;
    }
}
