/* SPDX-License-Identifier: Apache-2.0 */
/* video_propagate.c - propagate_in_video_preflight and
 * propagate_in_video (sam2_video_predictor.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/resize_bilinear.h"
#include "core/models/tracker/track_step.h"
#include "core/models/tracker/video_internal.h"

/* Encode the memory of a prompted frame from its (hole-filled) low-res mask,
 * re-upsampled and binarised (_run_memory_encoder, is_mask_from_pts=True). */
static samc_status encode_prompted(samc_video *v, video_obj *o, samc_frame_out *r, samc_error *err)
{
    const int64_t S = v->tr->cfg.image_size, s = r->pred_masks.shape[2];
    samc_tensor high = {0};
    const samc_frame_features *f = NULL;
    samc_status st = samc_tensor_allocv(&high, err, 4, (int64_t)1, (int64_t)1, S, S);
    if (!st && samc_resize_bilinear(r->pred_masks.data, 1, 1, (int)s, (int)s, (int)S, (int)S, high.data))
        st = samc_fail(err, SAMC_ERR_INTERNAL, "resize failed");
    if (!st)
        st = samc__video_features(v, r->frame_idx, &f, err);
    const samc_scope sc = {r->frame_idx, o->id};
    if (!st)
        st = samc_tracker_encode_new_memory(v->x, v->tr, &sc, f, &high, r->object_score, v->opt.binarize_mask_from_pts_for_mem_enc,
                                         &r->maskmem, err);
    if (!st) {
        samc__video_round_memory(v, &sc, &r->maskmem);
        r->has_mem = true;
    }
    samc_tensor_release(&high);
    return st;
}

/* _clear_obj_non_cond_mem_around_input */
static void clear_around(samc_video *v, video_obj *o, int frame)
{
    const int r = v->tr->cfg.memory_temporal_stride_for_eval, n = v->tr->cfg.num_maskmem;
    for (int t = frame - r * n; t <= frame + r * n; t++)
        samc_frame_dict_pop(&o->non_cond, t, NULL);
}

static samc_status preflight_obj(samc_video *v, video_obj *o, samc_error *err)
{
    for (int is_cond = 0; is_cond < 2; is_cond++) { /* non-cond temp outputs first */
        samc_frame_dict *tmp = is_cond ? &o->tmp_cond : &o->tmp_non_cond;
        samc_frame_dict *dst = is_cond ? &o->cond : &o->non_cond;
        for (int i = 0; i < tmp->n; i++) {
            samc_frame_out *r = &tmp->items[i];
            samc_status st = r->has_mem ? SAMC_OK : encode_prompted(v, o, r, err);
            const int frame = r->frame_idx;
            if (!st)
                st = samc_frame_dict_put(dst, r, err); /* moves r's tensors */
            if (st)
                return st;
            if (v->opt.clear_non_cond_mem_around_input)
                clear_around(v, o, frame);
        }
        samc_frame_dict_clear(tmp);
    }
    if (o->cond.n == 0)
        return samc_fail(err, SAMC_ERR_ARG, "no points, box or mask were given for object id %d; add one first", o->id);
    for (int i = 0; i < o->cond.n; i++)
        samc_frame_dict_pop(&o->non_cond, o->cond.items[i].frame_idx, NULL);
    return SAMC_OK;
}

static samc_status mark_tracked(video_obj *o, int frame, bool reverse, samc_error *err)
{
    video_tracked *t = samc__video_find_tracked(o, frame);
    if (!t) {
        if (o->n_tracked == o->cap_tracked) {
            int cap = o->cap_tracked ? 2 * o->cap_tracked : 16;
            video_tracked *n = realloc(o->tracked, (size_t)cap * sizeof *n);
            if (!n)
                return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
            o->tracked = n, o->cap_tracked = cap;
        }
        t = &o->tracked[o->n_tracked++];
        t->frame = frame;
    }
    t->reverse = reverse;
    return SAMC_OK;
}

/* One frame for every object: stored cond output or a new tracking step. */
static samc_status propagate_frame(samc_video *v, int t, bool reverse, samc_tensor *low, samc_video_masks *res,
                                   samc_error *err)
{
    const int64_t s = low->shape[2];
    for (int i = 0; i < v->n_objs; i++) {
        video_obj *o = &v->objs[i];
        samc_frame_out *c = samc_frame_dict_get(&o->cond, t);
        samc_status st = SAMC_OK;
        if (c) {
            if (v->opt.clear_non_cond_mem_around_input)
                clear_around(v, o, t);
        } else {
            samc_frame_out r;
            st = samc__video_infer(v, o, t, false, -1, NULL, NULL, NULL, reverse, true, NULL, &r, err);
            if (!st)
                st = samc_frame_dict_put(&o->non_cond, &r, err);
            c = st ? NULL : samc_frame_dict_get(&o->non_cond, t);
        }
        if (!st)
            st = mark_tracked(o, t, reverse, err);
        if (st)
            return st;
        memcpy(low->data + i * s * s, c->pred_masks.data, (size_t)(s * s) * sizeof(float));
        res->obj_ids[i] = o->id;
        res->object_scores[i] = c->object_score;
    }
    const samc_scope sc = {t, -1}; /* the dump's @postprocess of the video task */
    return samc__video_to_orig_res(v, &sc, low, res->logits, err);
}

/* Streaming: forget what frame t's successors can no longer read. */
static void evict_before(samc_video *v, int t)
{
    const samc_tracker_config *c = &v->tr->cfg;
    const int back = (c->num_maskmem - 1) * c->memory_temporal_stride_for_eval;
    const int keep = back > c->max_obj_ptrs_in_encoder - 1 ? back : c->max_obj_ptrs_in_encoder - 1;
    const int oldest = t - keep;
    for (int i = 0; i < v->n_objs; i++) {
        video_obj *o = &v->objs[i];
        for (int k = o->non_cond.n - 1; k >= 0; k--)
            if (o->non_cond.items[k].frame_idx < oldest)
                samc_frame_dict_pop(&o->non_cond, o->non_cond.items[k].frame_idx, NULL);
        for (int k = o->n_tracked - 1; k >= 0; k--)
            if (o->tracked[k].frame < oldest)
                o->tracked[k] = o->tracked[--o->n_tracked];
    }
    samc_frames_forget_before(v->frames, t < v->cached_t ? t : v->cached_t);
}

/* The first conditioning frame of any object (after preflight). */
static int default_start(const samc_video *v)
{
    int start = v->num_frames;
    for (int i = 0; i < v->n_objs; i++)
        for (int k = 0; k < v->objs[i].cond.n; k++)
            start = v->objs[i].cond.items[k].frame_idx < start ? v->objs[i].cond.items[k].frame_idx : start;
    return start;
}

int samc_video_propagate_total(const samc_video *v) { return v->prop_total; }

samc_status samc_video_propagate(samc_video *v, int start, int max_frames, bool reverse, samc_video_frame_cb cb,
                                 void *user, samc_error *err)
{
    v->num_frames = samc_frames_count(v->frames); /* a stream may have grown */
    if (v->opt.streaming && reverse)
        return samc_fail(err, SAMC_ERR_ARG, "a streaming tracker only propagates forward");
    if (v->n_objs == 0)
        return samc_fail(err, SAMC_ERR_ARG, "no points, box or mask were given for any object; add prompts before propagating");
    for (int i = 0; i < v->n_objs; i++) {
        samc_status st = preflight_obj(v, &v->objs[i], err);
        if (st)
            return st;
    }
    if (start < 0)
        start = default_start(v);
    if (start >= v->num_frames)
        return samc_fail(err, SAMC_ERR_ARG, "start frame %d is outside the video's 0..%d", start, v->num_frames - 1);
    if (max_frames < 0)
        max_frames = v->num_frames;
    int end = reverse ? (start - max_frames > 0 ? start - max_frames : 0)
                      : (start + max_frames < v->num_frames - 1 ? start + max_frames : v->num_frames - 1);
    v->prop_total = reverse ? (start == 0 ? 0 : start - end + 1) : end - start + 1;
    if (reverse && start == 0)
        return SAMC_OK; /* reverse tracking from frame 0 does nothing */
    const int64_t s = 4 * (int64_t)v->tr->emb, hw = (int64_t)v->H * v->W;
    samc_tensor low = {0};
    samc_video_masks res = {.n_obj = v->n_objs, .height = v->H, .width = v->W};
    samc_status st = samc_tensor_allocv(&low, err, 4, (int64_t)v->n_objs, (int64_t)1, s, s);
    res.obj_ids = malloc((size_t)v->n_objs * sizeof *res.obj_ids);
    res.logits = malloc((size_t)(v->n_objs * hw) * sizeof *res.logits);
    res.object_scores = malloc((size_t)v->n_objs * sizeof *res.object_scores);
    if (!st && (!res.obj_ids || !res.logits || !res.object_scores))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int t = start; !st && (reverse ? t >= end : t <= end); t += reverse ? -1 : 1) {
        res.frame_idx = t;
        st = propagate_frame(v, t, reverse, &low, &res, err);
        if (!st && cb)
            st = cb(user, &res);
        if (!st && v->opt.streaming)
            evict_before(v, t);
        if (!st && t != end) { /* a frame boundary: the caller may stop here */
            char where[48];
            snprintf(where, sizeof where, "frame %d", t);
            st = samc_exec_check_abort(v->x, where, err);
        }
    }
    samc_tensor_release(&low);
    samc_video_masks_free(&res);
    return st;
}
