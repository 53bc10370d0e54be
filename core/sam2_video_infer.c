/* sam2_video_infer.c - per-frame work of the video predictor: the frame
 * loader's preprocessing, the one-frame feature cache, single-frame
 * inference and the resize to video resolution. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "connected_components.h"
#include "error.h"
#include "resize_bilinear.h"
#include "resize_pil.h"
#include "sam2_track.h"
#include "sam2_video_internal.h"

samc_status samc_video_preprocess_rgb(const samc_sam2_model *m, const uint8_t *rgb, int h, int w, samc_tensor *x,
                                      samc_error *err)
{
    static const float mean[3] = {0.485f, 0.456f, 0.406f}, stdv[3] = {0.229f, 0.224f, 0.225f};
    const int S = m->cfg.image_size;
    uint8_t *small = malloc((size_t)S * S * 3);
    samc_status st = small ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st && (st = samc_resize_pil_bicubic_rgb(rgb, h, w, S, S, small)))
        st = samc_fail(err, st, "frame resize failed");
    if (!st)
        st = samc_tensor_allocv(x, err, 4, (int64_t)1, (int64_t)3, (int64_t)S, (int64_t)S);
    for (int c = 0; !st && c < 3; c++)
        for (int64_t i = 0; i < (int64_t)S * S; i++) {
            const float u = (float)(small[i * 3 + c] / 255.0); /* numpy float64, stored as float32 */
            x->data[(int64_t)c * S * S + i] = (u - mean[c]) / stdv[c];
        }
    free(small);
    return st;
}

static samc_status video_preprocess(samc_video *v, int t, bool trace, samc_tensor *x, samc_error *err)
{
    const uint8_t *rgb = NULL;
    samc_status st = samc_frames_get(v->frames, t, &rgb, err);
    if (!st)
        st = samc_video_preprocess_rgb(v->m, rgb, v->H, v->W, x, err);
    if (!st && trace && v->m->trace) {
        static const char *const slot0[] = {"0"};
        const samc_tensor *tt = x;
        v->m->trace_frame_idx = t, v->m->trace_obj_id = -1;
        v->m->trace(v->m->trace_user, "@preprocess", 1, slot0, &tt);
    }
    return st;
}

samc_status samc_video_preprocess_frame(samc_video *v, int t, samc_tensor *x, samc_error *err)
{
    return video_preprocess(v, t, true, x, err);
}

samc_status video_features(samc_video *v, int t, const samc_sam2_features **f, samc_error *err)
{
    if (v->cached_t != t) {
        samc_sam2_features_release(&v->cached);
        v->cached_t = -1;
        const int saved_obj = v->m->trace_obj_id;
        v->m->trace_frame_idx = t, v->m->trace_obj_id = -1;
        samc_tensor x = {0};
        /* untraced: the official loader preprocesses each frame once, at
         * init_state (samc_video_preprocess_frame reproduces that record) */
        samc_status st = video_preprocess(v, t, false, &x, err);
        if (!st)
            st = samc_sam2_encode_tensor(v->m, &x, &v->cached, err);
        samc_tensor_release(&x);
        v->m->trace_obj_id = saved_obj;
        if (st)
            return st;
        v->cached.orig_h = v->H, v->cached.orig_w = v->W;
        v->cached_t = t;
    }
    *f = &v->cached;
    return SAMC_OK;
}

samc_status video_infer(samc_video *v, video_obj *o, int t, bool is_init, int n_points, const float *coords,
                        const int32_t *labels, const samc_tensor *mask, bool reverse, bool run_mem,
                        const samc_tensor *prev_logits, samc_frame_out *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    const samc_sam2_features *f = NULL;
    samc_status st = video_features(v, t, &f, err);
    if (st)
        return st;
    v->m->trace_frame_idx = t, v->m->trace_obj_id = o->id;
    samc_track_in in = {.frame_idx = t, .is_init_cond_frame = is_init, .f = f, .n_points = n_points,
                        .point_coords = coords, .point_labels = labels, .mask_inputs = mask,
                        .cond = &o->cond, .non_cond = &o->non_cond, .num_frames = v->num_frames,
                        .reverse = reverse, .run_mem_encoder = run_mem, .prev_sam_mask_logits = prev_logits};
    samc_track_out r;
    st = samc_sam2_track_step(v->m, &in, &r, err);
    if (st)
        return st;
    if (r.has_mem) /* stored memory is bfloat16 (_run_single_frame_inference) */
        samc_round_bf16(r.maskmem.data, samc_numel(&r.maskmem));
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

/* _apply_non_overlapping_constraints: keep each pixel only for the object
 * with the highest score there; others are clamped to <= -10. */
static void non_overlap(float *m, int n, int64_t hw)
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

samc_status samc_video_resize_to_video(const samc_tensor *low, int H, int W, bool non_overlap_masks, float *out,
                                       samc_error *err)
{
    const int64_t n = low->shape[0], hw = (int64_t)H * W;
    if (low->shape[2] == H && low->shape[3] == W)
        memcpy(out, low->data, (size_t)(n * hw) * sizeof(float));
    else if (samc_resize_bilinear(low->data, n, 1, (int)low->shape[2], (int)low->shape[3], H, W, out))
        return samc_fail(err, SAMC_ERR_INTERNAL, "resize to the video resolution failed");
    if (non_overlap_masks)
        non_overlap(out, (int)n, hw);
    return SAMC_OK;
}

samc_status video_to_orig_res(samc_video *v, const samc_tensor *low, float *out, samc_error *err)
{
    return samc_video_resize_to_video(low, v->H, v->W, v->opt.non_overlap_masks, out, err);
}

video_tracked *video_find_tracked(video_obj *o, int frame)
{
    for (int i = 0; i < o->n_tracked; i++)
        if (o->tracked[i].frame == frame)
            return &o->tracked[i];
    return NULL;
}

void video_forget_tracked(video_obj *o, int frame)
{
    video_tracked *t = video_find_tracked(o, frame);
    if (t) {
        *t = o->tracked[o->n_tracked - 1];
        o->n_tracked--;
    }
}
