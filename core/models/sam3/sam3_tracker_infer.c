/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_tracker_infer.c - what Sam3TrackerPredictor computes on a frame: the
 * tracking step of each object over the batch's outputs
 * (_run_single_frame_inference), one frame of propagate_in_video (4.2),
 * add_new_mask (6.2), add_new_points_or_box (7.1) and the memory update of
 * the loop (_run_memory_encoder, 4.3h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_tracker_state_internal.h"
#include "core/models/tracker/memory.h"
#include "core/nn/bf16.h"
#include "core/nn/connected_components.h"
#include "core/nn/resize_bilinear.h"

/* The batch's tracking step on a frame nothing was given on: every
 * object's step, the batch's eff_iou_score (cal_mem_score). */
static samc_status track_batch(samc_s3_state *s, const samc_s3_frame *fr, bool reverse, bool run_mem,
                               samc_s3_entry *e, samc_error *err)
{
    const int B = s->n_obj;
    memset(e, 0, sizeof *e);
    e->frame = fr->t;
    e->obj = calloc((size_t)B, sizeof *e->obj);
    float *sc = malloc((size_t)B * sizeof *sc), *iou = malloc((size_t)B * sizeof *iou);
    samc_status st = e->obj && sc && iou ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    const samc_s3_step_in in = {.reverse = reverse, .run_mem = run_mem, .n_points = -1, .batched = true};
    for (int i = 0; !st && i < B; i++)
        if (!(st = samc__s3_step(s, fr, i, &in, &e->obj[i], err)))
            sc[i] = e->obj[i].object_score, iou[i] = e->obj[i].iou_score;
    const float eff = st ? 0.0f : samc_tracker_mem_score(sc, iou, B);
    for (int i = 0; !st && i < B; i++) {
        e->obj[i].has_eff = true, e->obj[i].eff_iou_score = eff;
        st = samc__s3_step_done(s, fr, i, &e->obj[i], eff, err);
    }
    free(sc), free(iou);
    if (st)
        samc__s3_entry_release(e, B);
    return st;
}

samc_status samc_s3_propagate_frame(samc_s3_state *s, const samc_s3_frame *fr, bool reverse, bool run_mem_encoder,
                                    float *masks, float *scores, samc_error *err)
{
    if (s->out[0].n == 0)
        return samc_fail(err, SAMC_ERR_ARG, "a tracker state without inputs cannot propagate (no points are provided)");
    const int t = fr->t;
    int kind = 1;
    samc_s3_entry *e = NULL;
    samc_status st = SAMC_OK;
    if (samc__s3_set_has(&s->consolidated[0], t)) { /* a frame with inputs: its stored output */
        kind = 0, e = samc__s3_dict_get(&s->out[0], t);
        if (samc__s3_clears_around(s))
            samc__s3_clear_around(s, t);
    } else if (samc__s3_set_has(&s->consolidated[1], t)) {
        e = samc__s3_dict_get(&s->out[1], t);
    } else {
        samc_s3_entry ne;
        if (!(st = track_batch(s, fr, reverse, run_mem_encoder, &ne, err)) &&
            !(st = samc__s3_dict_put(&s->out[1], &ne, s->n_obj, err)))
            e = samc__s3_dict_get(&s->out[1], t);
    }
    if (!st && !e)
        st = samc_fail(err, SAMC_ERR_INTERNAL, "frame %d: a consolidated frame without output", t);
    if (!st && (samc__s3_add_slices(s, kind, t) || samc__s3_tracked_set(s, t, reverse)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < s->n_obj; i++) {
        const samc_tensor *m = &e->obj[i].pred_masks;
        memcpy(masks + i * samc_numel(m), m->data, (size_t)samc_numel(m) * sizeof(float));
        scores[i] = e->obj[i].object_score;
    }
    return st;
}

samc_status samc_s3_update_memory(samc_s3_state *s, const samc_s3_frame *fr, const samc_tensor *masks,
                                  const float *scores, samc_error *err)
{
    const int64_t S = masks->shape[2], n = S * masks->shape[3];
    samc_status st = SAMC_OK;
    for (int i = 0; !st && i < s->n_obj; i++) {
        const samc_tensor hi = samc_tensor_view(masks->data + i * n, 4, (const int64_t[]){1, 1, S, masks->shape[3]});
        const samc_scope sc = {fr->t, s->objs[i].id};
        samc_tensor mem = {0};
        st = samc_tracker_encode_new_memory(s->x, s->tr, &sc, fr->f, &hi, scores[i], false, &mem, err);
        if (!st)
            samc__s3_round_memory(s, &sc, &mem);
        for (int kind = 0; !st && kind < 2; kind++) { /* into the frame's outputs, both kinds */
            samc_s3_entry *e = samc__s3_dict_get(&s->out[kind], fr->t);
            if (!e)
                continue;
            samc_tensor_release(&e->obj[i].maskmem);
            if (!(st = samc_tensor_copy(&e->obj[i].maskmem, &mem, err)))
                e->obj[i].has_mem = true;
        }
        samc_tensor_release(&mem);
    }
    for (int kind = 0; !st && kind < 2; kind++)
        if (samc__s3_dict_get(&s->out[kind], fr->t) && samc__s3_add_slices(s, kind, fr->t))
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    return st;
}

/* The stored temporary output of object i on the frame (a conditioning one:
 * add_all_frames_to_correct_as_cond), replacing an earlier one. */
static samc_status put_temp(samc_s3_object *o, samc_s3_temp *t, samc_error *err)
{
    samc__s3_temp_pop(o, t->frame, t->cond);
    if (o->n_temp == o->cap_temp) {
        int cap = o->cap_temp ? 2 * o->cap_temp : 4;
        samc_s3_temp *n = realloc(o->temp, (size_t)cap * sizeof *n);
        if (!n) {
            samc__s3_temp_release(t);
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        }
        o->temp = n, o->cap_temp = cap;
    }
    o->temp[o->n_temp++] = *t;
    memset(t, 0, sizeof *t);
    return SAMC_OK;
}

/* The frame's inputs make it an initial conditioning frame unless it was
 * tracked (then in its tracking direction). */
static void frame_kind(const samc_s3_state *s, int t, bool *is_init, bool *reverse)
{
    const int r = samc__s3_tracked_get(s, t);
    *is_init = r < 0, *reverse = r > 0;
}

/* The mask at video size: antialiased resize, > 0.5, as +-1024 logits. */
static samc_status video_mask(const samc_s3_state *s, const samc_tensor *mask, samc_tensor *out, samc_error *err)
{
    const int h = (int)mask->shape[2], w = (int)mask->shape[3];
    samc_status st = samc_tensor_allocv(out, err, 4, (int64_t)1, (int64_t)1, (int64_t)s->H, (int64_t)s->W);
    if (!st && (h != s->H || w != s->W) && samc_resize_bilinear_aa(mask->data, 1, h, w, s->H, s->W, out->data))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory (resize)");
    else if (!st && h == s->H && w == s->W)
        memcpy(out->data, mask->data, (size_t)samc_numel(out) * sizeof(float));
    for (int64_t p = 0; !st && p < samc_numel(out); p++)
        out->data[p] = out->data[p] > 0.5f ? -SAMC_S3_NO_OBJ_SCORE : SAMC_S3_NO_OBJ_SCORE;
    return st;
}

samc_status samc_s3_add_new_mask(samc_s3_state *s, const samc_s3_frame *fr, int obj_id, const samc_tensor *mask,
                                 samc_error *err)
{
    const int64_t S = 16LL * (s->tr->cfg.image_size / s->tr->cfg.backbone_stride); /* input_mask_size */
    int idx;
    samc_status st = samc__s3_obj_index(s, obj_id, &idx, err);
    samc_tensor m = {0};
    samc_s3_temp t = {.frame = fr->t, .cond = true};
    if (!st && (mask->shape[2] != S || mask->shape[3] != S) &&
        !(st = samc_tensor_allocv(&m, err, 4, (int64_t)1, (int64_t)1, S, S)) &&
        samc_resize_bilinear_aa(mask->data, 1, (int)mask->shape[2], (int)mask->shape[3], (int)S, (int)S, m.data))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory (resize)");
    if (!st)
        st = video_mask(s, mask, &t.video_masks, err);
    if (!st && samc__s3_set_add(&s->objs[idx].mask_frames, fr->t))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        samc__s3_points_pop(&s->objs[idx], fr->t);
    bool is_init, reverse;
    frame_kind(s, fr->t, &is_init, &reverse);
    samc_frame_out o = {0};
    const samc_s3_step_in in = {.is_init = is_init, .reverse = reverse, .n_points = -1, .mask = m.data ? &m : mask};
    if (!st && !(st = samc__s3_step(s, fr, idx, &in, &o, err))) {
        t.obj_ptr = o.obj_ptr, memset(&o.obj_ptr, 0, sizeof o.obj_ptr);
        t.object_score = o.object_score, t.iou_score = o.iou_score;
    }
    samc_frame_out_release(&o);
    for (int i = 0; !st && i < s->n_obj; i++) { /* the other objects' masks lose this one's pixels */
        samc_s3_temp *other = i == idx ? NULL : samc__s3_temp_get(&s->objs[i], fr->t, true);
        for (int64_t p = 0; other && other->video_masks.data && p < samc_numel(&t.video_masks); p++)
            if (t.video_masks.data[p] > 0)
                other->video_masks.data[p] = SAMC_S3_NO_OBJ_SCORE;
    }
    if (!st)
        st = put_temp(&s->objs[idx], &t, err);
    samc_tensor video = {0};
    if (!st) /* the output the official call returns (traced) */
        st = samc__s3_consolidate(s, fr, true, false, NULL, &video, err);
    samc_tensor_release(&video), samc_tensor_release(&m);
    samc__s3_temp_release(&t);
    return st;
}

/* point_inputs_per_obj[obj][frame] = the clicks (clear_old_points). */
static samc_status set_points(samc_s3_object *o, int frame, const float *coords, const int32_t *labels, int n,
                              samc_error *err)
{
    samc__s3_points_pop(o, frame);
    if (o->n_points == o->cap_points) {
        int cap = o->cap_points ? 2 * o->cap_points : 4;
        samc_s3_points *p = realloc(o->points, (size_t)cap * sizeof *p);
        if (!p)
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        o->points = p, o->cap_points = cap;
    }
    samc_s3_points *p = &o->points[o->n_points];
    p->frame = frame, p->n = n;
    p->coords = malloc((size_t)(2 * n + 1) * sizeof *p->coords);
    p->labels = malloc((size_t)(n + 1) * sizeof *p->labels);
    if (!p->coords || !p->labels) {
        free(p->coords), free(p->labels);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    memcpy(p->coords, coords, (size_t)(2 * n) * sizeof *coords);
    memcpy(p->labels, labels, (size_t)n * sizeof *labels);
    o->n_points++;
    return SAMC_OK;
}

/* Keep the first max/2 and the last max - max/2 points (max_point_num_in_prompt_enc). */
static void limit_points(samc_s3_points *p, int max)
{
    if (max <= 0 || p->n <= max)
        return;
    const int first = max / 2, last = max - first;
    memmove(p->coords + 2 * first, p->coords + 2 * (p->n - last), (size_t)(2 * last) * sizeof *p->coords);
    memmove(p->labels + first, p->labels + (p->n - last), (size_t)last * sizeof *p->labels);
    p->n = max;
}

/* The previous mask logits of the frame (the latest temporary output, else
 * the stored slices), clamped to +-32; empty when none. */
static samc_status prev_logits(samc_s3_state *s, int i, int frame, samc_tensor *out, samc_error *err)
{
    const samc_tensor *src = NULL;
    samc_s3_temp *t = samc__s3_temp_get(&s->objs[i], frame, true);
    if (t)
        src = t->pred_masks.data ? &t->pred_masks : NULL;
    for (int kind = 0; !t && !src && kind < 2; kind++) {
        const samc_s3_entry *e = samc__s3_set_has(&s->objs[i].slices[kind], frame) ? samc__s3_dict_get(&s->out[kind], frame)
                                                                                    : NULL;
        src = e ? &e->obj[i].pred_masks : NULL;
    }
    samc_status st = src ? samc_tensor_copy(out, src, err) : SAMC_OK;
    for (int64_t p = 0; src && !st && p < samc_numel(out); p++)
        out->data[p] = fminf(fmaxf(out->data[p], -SAMC_S3_PREV_MASK_CLAMP), SAMC_S3_PREV_MASK_CLAMP);
    return st;
}

/* _get_orig_video_res_output on the consolidated masks: non-overlap when
 * the options ask for it, the tracker's own hole fill. */
static samc_status video_output(samc_s3_state *s, samc_tensor *video, samc_error *err)
{
    const int B = (int)video->shape[0];
    const int64_t hw = (int64_t)s->H * s->W;
    for (int64_t p = 0; s->opt->non_overlap_masks_for_output && B > 1 && p < hw; p++) {
        int best = 0;
        for (int i = 1; i < B; i++)
            best = video->data[i * hw + p] > video->data[best * hw + p] ? i : best;
        for (int i = 0; i < B; i++)
            if (i != best)
                video->data[i * hw + p] = fminf(video->data[i * hw + p], -10.0f);
    }
    if (s->opt->fill_hole_area > 0 && samc_fill_holes_sprinkles(video, s->opt->fill_hole_area, NULL))
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory (hole filling)");
    return SAMC_OK;
}

samc_status samc_s3_add_new_points(samc_s3_state *s, const samc_s3_frame *fr, int obj_id, const float *coords,
                                   const int32_t *labels, int n, bool no_memory, samc_tensor *video_masks,
                                   samc_error *err)
{
    int idx;
    samc_status st = samc__s3_obj_index(s, obj_id, &idx, err);
    if (!st)
        st = set_points(&s->objs[idx], fr->t, coords, labels, n, err);
    if (st)
        return st;
    samc_s3_object *o = &s->objs[idx];
    samc__s3_set_del(&o->mask_frames, fr->t);
    samc_s3_points *p = samc__s3_points_get(o, fr->t);
    limit_points(p, s->opt->max_point_num_in_prompt_enc);
    bool is_init, reverse;
    frame_kind(s, fr->t, &is_init, &reverse);
    samc_tensor prev = {0};
    samc_frame_out r = {0};
    samc_s3_temp t = {.frame = fr->t, .cond = true};
    st = prev_logits(s, idx, fr->t, &prev, err);
    const samc_s3_step_in in = {.is_init = is_init, .reverse = reverse, .no_memory = no_memory, .n_points = p->n,
                                .coords = p->coords, .labels = p->labels, .prev_logits = prev.data ? &prev : NULL};
    if (!st && !(st = samc__s3_step(s, fr, idx, &in, &r, err))) {
        t.pred_masks = r.pred_masks, t.obj_ptr = r.obj_ptr;
        memset(&r.pred_masks, 0, sizeof r.pred_masks), memset(&r.obj_ptr, 0, sizeof r.obj_ptr);
        t.object_score = r.object_score, t.iou_score = r.iou_score;
        st = put_temp(o, &t, err);
    }
    samc_tensor video = {0};
    if (!st)
        st = samc__s3_consolidate(s, fr, true, false, NULL, &video, err);
    if (!st)
        st = video_output(s, &video, err);
    if (!st && video_masks)
        *video_masks = video, memset(&video, 0, sizeof video);
    samc_tensor_release(&video), samc_tensor_release(&prev);
    samc_frame_out_release(&r);
    samc__s3_temp_release(&t);
    return st;
}
