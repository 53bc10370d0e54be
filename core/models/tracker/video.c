/* SPDX-License-Identifier: Apache-2.0 */
/* video.c - SAM2VideoPredictor's state machine (sam2_video_predictor.py):
 * objects, prompts, consolidated outputs, clearing, removal, reset. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/resize_bilinear.h"
#include "core/models/tracker/video_internal.h"

#define NO_OBJ_SCORE (-1024.0f)

samc_video_options samc_video_options_from_config(const samc_tracker_config *c)
{
    return (samc_video_options){.fill_hole_area = (float)c->video.fill_hole_area,
                                .non_overlap_masks = c->video.non_overlap_masks,
                                .add_all_frames_to_correct_as_cond = c->video.add_all_frames_to_correct_as_cond,
                                .clear_non_cond_mem_around_input = c->video.clear_non_cond_mem_around_input,
                                .binarize_mask_from_pts_for_mem_enc = c->binarize_mask_from_pts_for_mem_enc};
}

samc_status samc_video_init(samc_exec *x, const samc_tracker_model *tr, const samc_feature_source *src,
                            samc_frames *frames, const samc_video_options *opt, samc_video **out, samc_error *err)
{
    *out = NULL;
    samc_video *v = calloc(1, sizeof *v);
    if (!v) {
        samc_frames_free(frames);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    v->x = x, v->tr = tr, v->src = *src, v->frames = frames, v->cached_t = -1;
    v->opt = opt ? *opt : samc_video_options_from_config(&tr->cfg);
    v->num_frames = samc_frames_count(frames), v->H = samc_frames_height(frames), v->W = samc_frames_width(frames);
    samc_status st = SAMC_OK;
    if (v->num_frames <= 0)
        st = samc_fail(err, SAMC_ERR_ARG, "the video has no frames");
    const samc_frame_features *f;
    if (!st) /* init_state computes frame 0's features */
        st = samc__video_features(v, 0, &f, err);
    if (st) {
        samc_video_free(v);
        return st;
    }
    *out = v;
    return SAMC_OK;
}

static void obj_free(video_obj *o)
{
    samc_frame_dict_free(&o->cond), samc_frame_dict_free(&o->non_cond);
    samc_frame_dict_free(&o->tmp_cond), samc_frame_dict_free(&o->tmp_non_cond);
    for (int i = 0; i < o->n_pts; i++)
        free(o->pts[i].coords), free(o->pts[i].labels);
    for (int i = 0; i < o->n_masks; i++)
        samc_tensor_release(&o->masks[i].mask);
    free(o->pts), free(o->masks), free(o->tracked);
    memset(o, 0, sizeof *o);
}

void samc_video_reset(samc_video *v)
{
    for (int i = 0; i < v->n_objs; i++)
        obj_free(&v->objs[i]);
    v->n_objs = 0;
}

void samc_video_free(samc_video *v)
{
    if (!v)
        return;
    samc_video_reset(v);
    free(v->objs);
    samc_frame_features_release(&v->cached);
    samc_frames_free(v->frames);
    free(v);
}

int samc_video_num_objects(const samc_video *v) { return v->n_objs; }

samc_status samc_video_push_frame(samc_video *v, const uint8_t *rgb, int h, int w, samc_error *err)
{
    samc_status st = samc_frames_push(v->frames, rgb, h, w, err);
    v->num_frames = samc_frames_count(v->frames);
    return st;
}

int samc_video_stored_outputs(const samc_video *v)
{
    int n = 0;
    for (int i = 0; i < v->n_objs; i++)
        n += v->objs[i].cond.n + v->objs[i].non_cond.n + v->objs[i].tmp_cond.n + v->objs[i].tmp_non_cond.n;
    return n;
}
int samc_video_num_frames(const samc_video *v) { return v->frames ? samc_frames_count(v->frames) : v->num_frames; }

void samc_video_masks_free(samc_video_masks *m)
{
    free(m->obj_ids), free(m->logits), free(m->object_scores);
    memset(m, 0, sizeof *m);
}

static int obj_index(const samc_video *v, int obj_id)
{
    for (int i = 0; i < v->n_objs; i++)
        if (v->objs[i].id == obj_id)
            return i;
    return -1;
}

/* _obj_id_to_idx: new ids are accepted at any time (also after tracking). */
static video_obj *obj_for_id(samc_video *v, int obj_id, samc_error *err)
{
    int i = obj_index(v, obj_id);
    if (i >= 0)
        return &v->objs[i];
    if (v->n_objs == v->cap_objs) {
        int cap = v->cap_objs ? 2 * v->cap_objs : 4;
        video_obj *n = realloc(v->objs, (size_t)cap * sizeof *n);
        if (!n) {
            samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
            return NULL;
        }
        v->objs = n, v->cap_objs = cap;
    }
    video_obj *o = &v->objs[v->n_objs++];
    memset(o, 0, sizeof *o);
    o->id = obj_id;
    return o;
}

static video_points *find_points(video_obj *o, int frame)
{
    for (int i = 0; i < o->n_pts; i++)
        if (o->pts[i].frame == frame)
            return &o->pts[i];
    return NULL;
}

static void drop_points(video_obj *o, int frame)
{
    video_points *p = find_points(o, frame);
    if (p) {
        free(p->coords), free(p->labels);
        *p = o->pts[--o->n_pts];
    }
}

static void drop_mask(video_obj *o, int frame)
{
    for (int i = 0; i < o->n_masks; i++)
        if (o->masks[i].frame == frame) {
            samc_tensor_release(&o->masks[i].mask);
            o->masks[i] = o->masks[--o->n_masks];
            return;
        }
}

static const samc_frame_out *any_output(const video_obj *o, int frame, bool is_cond)
{
    const samc_frame_out *r = samc_frame_dict_get(is_cond ? &o->tmp_cond : &o->tmp_non_cond, frame);
    if (!r)
        r = samc_frame_dict_get(&o->cond, frame);
    if (!r)
        r = samc_frame_dict_get(&o->non_cond, frame);
    return r;
}

/* _consolidate_temp_output_across_obj(consolidate_at_video_res=True). */
static samc_status consolidate(samc_video *v, int frame, bool is_cond, samc_video_masks *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    const int n = v->n_objs;
    const int64_t hw = (int64_t)v->H * v->W;
    out->frame_idx = frame, out->n_obj = n, out->height = v->H, out->width = v->W;
    out->obj_ids = malloc((size_t)(n ? n : 1) * sizeof *out->obj_ids);
    out->logits = malloc((size_t)((n ? n : 1) * hw) * sizeof *out->logits);
    out->object_scores = malloc((size_t)(n ? n : 1) * sizeof *out->object_scores);
    if (!out->obj_ids || !out->logits || !out->object_scores) {
        samc_video_masks_free(out);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        float *dst = out->logits + i * hw;
        const samc_frame_out *r = any_output(&v->objs[i], frame, is_cond);
        out->obj_ids[i] = v->objs[i].id;
        out->object_scores[i] = r ? r->object_score : NAN;
        if (!r) {
            for (int64_t k = 0; k < hw; k++)
                dst[k] = NO_OBJ_SCORE;
            continue;
        }
        const samc_tensor *pm = &r->pred_masks;
        if (samc_resize_bilinear(pm->data, 1, 1, (int)pm->shape[2], (int)pm->shape[3], v->H, v->W, dst)) {
            samc_video_masks_free(out);
            return samc_fail(err, SAMC_ERR_INTERNAL, "resize failed");
        }
    }
    if (v->opt.non_overlap_masks) { /* _get_orig_video_res_output */
        const int64_t shape[4] = {n, 1, v->H, v->W};
        samc_tensor t = samc_tensor_view(out->logits, 4, shape);
        return samc__video_to_orig_res(v, NULL, &t, out->logits, err);
    }
    return SAMC_OK;
}

static samc_status check_frame(samc_video *v, int frame, samc_error *err)
{
    v->num_frames = samc_frames_count(v->frames); /* a stream may have grown */
    if (frame < 0 || frame >= v->num_frames)
        return samc_fail(err, SAMC_ERR_ARG, "frame index %d is outside the video's 0..%d", frame, v->num_frames - 1);
    return SAMC_OK;
}

/* Shared tail of add_points / add_mask: run the frame, store it in temp. */
static samc_status run_prompted(samc_video *v, video_obj *o, int frame, const video_points *p, const samc_tensor *mask,
                                samc_video_masks *out, samc_error *err)
{
    const video_tracked *tr = samc__video_find_tracked(o, frame);
    const bool is_init = tr == NULL, reverse = tr ? tr->reverse : false;
    const bool is_cond = is_init || v->opt.add_all_frames_to_correct_as_cond;
    samc_tensor prev = {0};
    samc_status st = SAMC_OK;
    if (p) { /* later clicks on a frame are conditioned on its previous logits */
        const samc_frame_out *po = any_output(o, frame, is_cond);
        if (po && !(st = samc_tensor_copy(&prev, &po->pred_masks, err)))
            for (int64_t i = 0; i < samc_numel(&prev); i++)
                prev.data[i] = fminf(fmaxf(prev.data[i], -32.0f), 32.0f);
    }
    samc_frame_out r;
    if (!st)
        st = samc__video_infer(v, o, frame, is_init, p ? p->n : -1, p ? p->coords : NULL, p ? p->labels : NULL, mask,
                         reverse, false, prev.data ? &prev : NULL, &r, err);
    samc_tensor_release(&prev);
    if (!st)
        st = samc_frame_dict_put(is_cond ? &o->tmp_cond : &o->tmp_non_cond, &r, err);
    if (!st && out)
        st = consolidate(v, frame, is_cond, out, err);
    return st;
}

samc_status samc_video_add_points(samc_video *v, int frame, int obj_id, const float *points, const int32_t *labels,
                                  int n, const float *box, bool clear_old_points, bool normalized,
                                  samc_video_masks *out, samc_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    samc_status st = check_frame(v, frame, err);
    if (st)
        return st;
    if ((n > 0) != (points && labels) || n < 0 || n > 4096)
        return samc_fail(err, SAMC_ERR_ARG, "points and labels must be given together (n = %d)", n);
    if (n == 0 && !box)
        return samc_fail(err, SAMC_ERR_ARG, "at least one of points or box must be given");
    if (box && !clear_old_points)
        return samc_fail(err, SAMC_ERR_ARG, "a box must clear old points (it goes before any point)");
    for (int i = 0; i < n; i++)
        if (!isfinite(points[2 * i]) || !isfinite(points[2 * i + 1]) || labels[i] < -1 || labels[i] > 3)
            return samc_fail(err, SAMC_ERR_ARG, "point %d (%g,%g) label %d: coordinates must be finite, labels -1..3",
                             i, points[2 * i], points[2 * i + 1], labels[i]);
    if (box && (!isfinite(box[0]) || !isfinite(box[1]) || !isfinite(box[2]) || !isfinite(box[3]) || box[2] < box[0] ||
                box[3] < box[1]))
        return samc_fail(err, SAMC_ERR_ARG, "box (%g,%g,%g,%g) must be finite with x0 <= x1, y0 <= y1", box[0], box[1],
                         box[2], box[3]);
    video_obj *o = obj_for_id(v, obj_id, err);
    if (!o)
        return SAMC_ERR_NOMEM;
    video_points *old = clear_old_points ? NULL : find_points(o, frame);
    const int nb = box ? 2 : 0, nold = old ? old->n : 0, total = nold + nb + n;
    float *c = malloc((size_t)total * 2 * sizeof *c);
    int32_t *l = malloc((size_t)total * sizeof *l);
    if (!c || !l) {
        free(c), free(l);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    if (old) /* concat_points: old points first */
        memcpy(c, old->coords, (size_t)nold * 2 * sizeof *c), memcpy(l, old->labels, (size_t)nold * sizeof *l);
    const float S = (float)v->tr->cfg.image_size;
    for (int i = 0; i < nb + n; i++) { /* box corners (labels 2, 3) before the clicks; / (W,H) * S in float32 */
        const float *xy = i < nb ? box + 2 * i : points + 2 * (i - nb);
        c[2 * (nold + i)] = (normalized ? xy[0] : xy[0] / (float)v->W) * S;
        c[2 * (nold + i) + 1] = (normalized ? xy[1] : xy[1] / (float)v->H) * S;
        l[nold + i] = i < nb ? 2 + i : labels[i - nb];
    }
    drop_points(o, frame);
    if (o->n_pts == o->cap_pts) {
        int cap = o->cap_pts ? 2 * o->cap_pts : 4;
        video_points *np = realloc(o->pts, (size_t)cap * sizeof *np);
        if (!np) {
            free(c), free(l);
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        }
        o->pts = np, o->cap_pts = cap;
    }
    o->pts[o->n_pts++] = (video_points){frame, total, c, l};
    drop_mask(o, frame);
    return run_prompted(v, o, frame, &o->pts[o->n_pts - 1], NULL, out, err);
}

samc_status samc_video_add_mask(samc_video *v, int frame, int obj_id, const float *mask, int h, int w,
                                samc_video_masks *out, samc_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    samc_status st = check_frame(v, frame, err);
    if (st)
        return st;
    if (!mask || h <= 0 || w <= 0 || (int64_t)h * w > (1 << 28))
        return samc_fail(err, SAMC_ERR_ARG, "mask prompt has an unusable size %dx%d", w, h);
    const int S = v->tr->cfg.image_size;
    samc_tensor orig = {0}, mk = {0};
    if ((st = samc_tensor_allocv(&orig, err, 4, (int64_t)1, (int64_t)1, (int64_t)h, (int64_t)w)) ||
        (st = samc_tensor_allocv(&mk, err, 4, (int64_t)1, (int64_t)1, (int64_t)S, (int64_t)S))) {
        samc_tensor_release(&orig);
        return st;
    }
    for (int64_t i = 0; i < (int64_t)h * w; i++) /* torch.tensor(mask, dtype=bool).float() */
        orig.data[i] = mask[i] != 0.0f ? 1.0f : 0.0f;
    if (h == S && w == S) {
        memcpy(mk.data, orig.data, (size_t)S * S * sizeof(float));
    } else { /* antialiased bilinear to S x S, then >= 0.5 */
        st = samc_resize_bilinear_aa(orig.data, 1, h, w, S, S, mk.data);
        for (int64_t i = 0; !st && i < (int64_t)S * S; i++)
            mk.data[i] = mk.data[i] >= 0.5f ? 1.0f : 0.0f;
    }
    samc_tensor_release(&orig);
    video_obj *o = st ? NULL : obj_for_id(v, obj_id, err);
    if (!o || (o->n_masks == o->cap_masks && !(o->masks = realloc(o->masks, (size_t)(o->cap_masks = o->cap_masks ? 2 * o->cap_masks : 4) * sizeof *o->masks)))) {
        samc_tensor_release(&mk);
        return st ? st : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    drop_mask(o, frame);
    o->masks[o->n_masks++] = (video_mask){frame, mk};
    drop_points(o, frame);
    return run_prompted(v, o, frame, NULL, &o->masks[o->n_masks - 1].mask, out, err);
}

/* clear_all_prompts_in_frame(need_output=False). Unknown ids become new
 * (empty) objects, as in the official predictor. */
static samc_status clear_frame(samc_video *v, int frame, int obj_id, samc_error *err)
{
    video_obj *o = obj_for_id(v, obj_id, err);
    if (!o)
        return SAMC_ERR_NOMEM;
    drop_points(o, frame);
    drop_mask(o, frame);
    samc_frame_dict_pop(&o->tmp_cond, frame, NULL);
    samc_frame_dict_pop(&o->tmp_non_cond, frame, NULL);
    samc_frame_out r;
    if (samc_frame_dict_pop(&o->cond, frame, &r)) { /* the output stays, downgraded to non-cond */
        samc_status st = samc_frame_dict_put(&o->non_cond, &r, err);
        if (st)
            return st;
        samc__video_forget_tracked(o, frame);
    }
    return SAMC_OK;
}

samc_status samc_video_clear_frame(samc_video *v, int frame, int obj_id, samc_error *err)
{
    samc_status st = check_frame(v, frame, err);
    return st ? st : clear_frame(v, frame, obj_id, err);
}

samc_status samc_video_remove_object(samc_video *v, int obj_id, samc_error *err)
{
    const int i = obj_index(v, obj_id);
    if (i < 0)
        return samc_fail(err, SAMC_ERR_ARG, "cannot remove object id %d: no such object", obj_id);
    if (v->n_objs == 1) {
        samc_video_reset(v);
        return SAMC_OK;
    }
    obj_free(&v->objs[i]); /* its prompts go with it; the others are re-indexed in order */
    memmove(v->objs + i, v->objs + i + 1, (size_t)(v->n_objs - i - 1) * sizeof *v->objs);
    v->n_objs--;
    return SAMC_OK;
}
