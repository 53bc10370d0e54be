/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video.c - the video session's requests (Sam3VideoPredictor over
 * Sam3VideoInferenceWithInstanceInteractivity, docs/sam3_video.md 3, 5.3,
 * 7): start, add_prompt (a text and/or a box: a new session; points: a
 * click on an object), propagate_in_video (full, partial or fetch by the
 * action history; forward, backward or both; the hot-start buffer),
 * remove_object, reset_session. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_video_internal.h"
#include "core/nn/connected_components.h"

#define TEXT_PLACEHOLDER "<text placeholder>"

int samc_sam3_video_num_frames(const samc_sam3_video *v) { return v->T; }

static void free_states(samc_sam3_video *v)
{
    for (int i = 0; i < v->n_states; i++)
        samc_s3_state_free(v->states[i]), free(v->states[i]);
    v->n_states = 0;
}

static void free_history(samc_sam3_video *v)
{
    for (int i = 0; i < v->n_history; i++)
        free(v->history[i].obj_ids);
    v->n_history = 0;
}

/* reset_state: the prompt, the caches, the tracker states and metadata. */
void samc_sam3_video_reset(samc_sam3_video *v)
{
    free(v->text), v->text = NULL;
    v->has_text = false;
    for (int t = 0; t < v->T; t++)
        v->geo_label[t] = -1, v->has_outputs[t] = false;
    samc__s3v_clear_caches(v);
    free_states(v);
    samc__s3_meta_free(&v->meta);
    samc__s3v_cache_free(v);
    free_history(v);
    v->bound_start = v->bound_max = -1;
}

samc_status samc_sam3_video_open(samc_exec *x, samc_frames *frames, const samc_sam3_video_options *opt,
                                 samc_sam3_video **out, samc_error *err)
{
    *out = NULL;
    const samc_sam3_model *m = x->model;
    if (!m->has_tracker || !m->video.has_loop) {
        samc_frames_free(frames);
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "sam3 video: the model has no video loop (load sam3.pt with its "
                         "tracker half, or a sam3_video config)");
    }
    if (m->video.loop.image_size != m->tracker.cfg.image_size) { /* the frames are resized to the loop's size */
        samc_frames_free(frames);
        return samc_fail(err, SAMC_ERR_FORMAT, "sam3 video: the config's image_size %d differs from the detector's "
                         "and the tracker's %d", m->video.loop.image_size, m->tracker.cfg.image_size);
    }
    if (opt && opt->streaming) {
        samc_frames_free(frames);
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "sam3 video: the streaming (bounded-memory) session is not "
                         "implemented yet");
    }
    samc_sam3_video *v = calloc(1, sizeof *v);
    if (!v) {
        samc_frames_free(frames);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    v->x = x, v->m = m, v->frames = frames;
    v->opt = opt ? *opt : (samc_sam3_video_options){0};
    v->T = samc_frames_count(frames), v->H = samc_frames_height(frames), v->W = samc_frames_width(frames);
    v->geo_label = malloc((size_t)(v->T + 1) * sizeof *v->geo_label);
    v->geo_box = malloc((size_t)(v->T + 1) * sizeof *v->geo_box);
    v->has_outputs = calloc((size_t)v->T + 1, sizeof *v->has_outputs);
    v->feat_frame = -1, v->click_obj = -1;
    if (!v->geo_label || !v->geo_box || !v->has_outputs) {
        samc_sam3_video_close(v);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    samc_sam3_video_reset(v);
    *out = v;
    return SAMC_OK;
}

void samc_sam3_video_close(samc_sam3_video *v)
{
    if (!v)
        return;
    samc_sam3_video_reset(v);
    free(v->states), free(v->cache), free(v->history), free(v->buf);
    free(v->geo_label), free(v->geo_box), free(v->has_outputs);
    samc_frames_free(v->frames);
    free(v);
}

/* ---- the action history --------------------------------------------------------------------- */

static samc_status add_action(samc_sam3_video *v, int type, bool has_frame, int frame, const int *ids, int n)
{
    if (v->n_history == v->cap_history) {
        int cap = v->cap_history ? 2 * v->cap_history : 16;
        s3_action *a = realloc(v->history, (size_t)cap * sizeof *a);
        if (!a)
            return SAMC_ERR_NOMEM;
        v->history = a, v->cap_history = cap;
    }
    s3_action *a = &v->history[v->n_history];
    *a = (s3_action){.type = type, .has_frame = has_frame, .frame = frame};
    if (n && !(a->obj_ids = malloc((size_t)n * sizeof *ids)))
        return SAMC_ERR_NOMEM;
    if (n)
        memcpy(a->obj_ids, ids, (size_t)n * sizeof *ids), a->n_obj = n;
    v->n_history++;
    return SAMC_OK;
}

static bool is_propagation(int type) { return type >= S3_PROP_FULL; }

/* parse_action_history_for_propagation: the propagation's kind and, for a
 * partial one, the clicked objects (a set: ascending). */
static int propagation_type(const samc_sam3_video *v, int *ids, int *n)
{
    *n = 0;
    if (v->n_history == 0)
        return S3_PROP_FULL;
    const s3_action *last = &v->history[v->n_history - 1];
    if (is_propagation(last->type)) {
        if (last->type == S3_PROP_FETCH)
            return S3_PROP_FETCH;
        const bool twice = v->n_history > 1 && is_propagation(v->history[v->n_history - 2].type) &&
                           v->history[v->n_history - 2].type != S3_PROP_FETCH;
        if (twice || (last->has_frame && (last->frame == 0 || last->frame == v->T - 1)))
            return S3_PROP_FETCH;
        for (int k = 0; k < last->n_obj; k++)
            ids[(*n)++] = last->obj_ids[k];
        return last->type;
    }
    for (int i = v->n_history - 1; i >= 0 && !is_propagation(v->history[i].type); i--)
        for (int k = 0; (v->history[i].type == S3_ADD || v->history[i].type == S3_REFINE) && k < v->history[i].n_obj; k++) {
            bool seen = false;
            for (int j = 0; j < *n; j++)
                seen |= ids[j] == v->history[i].obj_ids[k];
            if (!seen)
                ids[(*n)++] = v->history[i].obj_ids[k];
        }
    for (int i = 1; i < *n; i++) { /* list(set(obj_ids)): ascending for small ids */
        const int k = ids[i];
        int j = i;
        while (j > 0 && ids[j - 1] > k)
            ids[j] = ids[j - 1], j--;
        ids[j] = k;
    }
    return *n ? S3_PROP_PARTIAL : S3_PROP_FETCH;
}

/* ---- add_prompt with a text and/or a box ------------------------------------------------------ */

/* _run_single_frame_inference: one frame of the loop, marked as having
 * outputs, cached without hiding anything. */
static samc_status run_frame(samc_sam3_video *v, int t, bool reverse, s3_frame_out *fo, samc_error *err)
{
    samc_status st = samc__s3v_one_frame(v, t, reverse, fo, err);
    if (!st)
        v->has_outputs[t] = true, st = samc__s3v_cache_put(v, fo, NULL, err);
    return st;
}

samc_status samc_sam3_video_add_prompt(samc_sam3_video *v, int frame, const char *text, const float *box,
                                       int box_label, samc_sam3_outputs *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    if (frame < 0 || frame >= v->T)
        return samc_fail(err, SAMC_ERR_ARG, "add_prompt: frame %d is outside the video's %d frames", frame, v->T);
    if (!text && !box)
        return samc_fail(err, SAMC_ERR_ARG, "add_prompt: give a text, a box or points");
    for (int k = 0; box && k < 4; k++) /* the official asserts xywh and cxcywh in [0, 1] */
        if (!(box[k] >= 0.0f && box[k] <= 1.0f) || (k < 2 && !(box[k] + box[k + 2] * 0.5f <= 1.0f)))
            return samc_fail(err, SAMC_ERR_ARG, "add_prompt: the box (%g, %g, %g, %g) must be normalised x, y, w, h "
                             "inside [0, 1]", box[0], box[1], box[2], box[3]);
    samc_sam3_video_reset(v); /* a semantic prompt starts over */
    if (text && strcmp(text, "visual")) {
        if (!(v->text = strdup(text)))
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        v->has_text = true;
    }
    if (box) { /* the first box of a frame without outputs is its visual prompt: xywh -> cxcywh */
        v->geo_box[frame][0] = box[0] + 0.5f * box[2], v->geo_box[frame][1] = box[1] + 0.5f * box[3];
        v->geo_box[frame][2] = box[2], v->geo_box[frame][3] = box[3];
        v->geo_label[frame] = box_label ? 1 : 0;
    }
    s3_frame_out fo;
    samc_status st = run_frame(v, frame, false, &fo, err);
    if (!st)
        st = samc__s3v_postprocess(v, &fo, NULL, NULL, out, err);
    samc__s3_frame_out_free(&fo);
    return st;
}

/* ---- propagation ----------------------------------------------------------------------------- */

typedef struct yield_ctx {
    samc_sam3_video_cb cb;
    void *user;
} yield_ctx;

static samc_status yield(samc_sam3_video *v, const s3_frame_out *fo, const s3_map *removed, const s3_map *suppressed,
                         const yield_ctx *y, samc_error *err)
{
    samc_sam3_outputs o;
    samc_status st = samc__s3v_postprocess(v, fo, removed, suppressed, &o, err);
    if (!st && y->cb)
        st = y->cb(y->user, &o);
    if (st && !err->msg[0])
        samc_fail(err, st, "propagation stopped by the caller");
    samc_sam3_outputs_free(&o);
    return st;
}

/* _get_processing_order (Sam3VideoInference's: reverse skips the start frame). */
static samc_status order(const samc_sam3_video *v, int start, int max, bool reverse, int *first, int *end, int *n,
                         samc_error *err)
{
    if (start < 0) {
        for (int t = v->T - 1; t >= 0; t--)
            start = v->has_outputs[t] ? t : start;
        if (start < 0)
            return samc_fail(err, SAMC_ERR_ARG, "propagate: no prompts were received on any frame; add a prompt first");
    }
    if (start >= v->T)
        return samc_fail(err, SAMC_ERR_ARG, "propagate: start frame %d is outside the video's %d frames", start, v->T);
    if (max < 0)
        max = v->T;
    if (reverse) {
        *end = start - max > 0 ? start - max : 0;
        *first = start - 1, *n = start - 1 >= *end ? start - *end : 0;
    } else {
        *end = start + max < v->T - 1 ? start + max : v->T - 1;
        *first = start, *n = *end - start + 1;
    }
    return SAMC_OK;
}

/* propagation_full with the hot-start buffer (5.3). */
static samc_status full(samc_sam3_video *v, int start, int max, bool reverse, const yield_ctx *y, samc_error *err)
{
    int first, end, n;
    samc_status st = order(v, start, max, reverse, &first, &end, &n, err);
    if (st)
        return st;
    v->bound_start = start, v->bound_max = max;
    const int delay = v->m->video.loop.hotstart_delay;
    s3_frame_out *buf = calloc((size_t)(delay > 0 ? delay : 1) + 1, sizeof *buf);
    s3_map removed = {0};
    int nb = 0;
    if (!buf)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int k = 0; !st && k < n; k++) {
        const int t = reverse ? first - k : first + k;
        if (!(st = run_frame(v, t, reverse, &buf[nb], err)))
            nb++;
        for (int i = 0; !st && i < buf[nb - 1].removed.n; i++)
            st = samc__s3m_set(&removed, buf[nb - 1].removed.e[i].key, 0) ? SAMC_ERR_NOMEM : SAMC_OK;
        int n_yield = delay <= 0 ? nb : t == end ? nb : nb >= delay ? 1 : 0;
        for (int i = 0; !st && i < n_yield; i++) { /* the oldest first, hidden as known now */
            s3_map hide = {0};
            st = samc__s3m_copy(&hide, &buf[i].suppressed);
            for (int j = 0; !st && j < removed.n; j++)
                st = samc__s3m_set(&hide, removed.e[j].key, 0) ? SAMC_ERR_NOMEM : SAMC_OK;
            if (!st)
                st = yield(v, &buf[i], &removed, &buf[i].suppressed, y, err);
            if (!st)
                st = samc__s3v_cache_put(v, &buf[i], &hide, err);
            samc__s3m_free(&hide);
        }
        for (int i = 0; i < n_yield && !st; i++)
            samc__s3_frame_out_free(&buf[i]);
        if (!st && n_yield) {
            memmove(buf, buf + n_yield, (size_t)(nb - n_yield) * sizeof *buf);
            nb -= n_yield;
        }
    }
    for (int i = 0; i < nb; i++)
        samc__s3_frame_out_free(&buf[i]);
    free(buf);
    samc__s3m_free(&removed);
    return st;
}

static samc_status fetch(samc_sam3_video *v, int start, int max, bool reverse, const yield_ctx *y, samc_error *err)
{
    int first, end, n;
    samc_status st = order(v, start, max, reverse, &first, &end, &n, err);
    for (int k = 0; !st && k < n; k++) {
        const int t = reverse ? first - k : first + k;
        s3_frame_out fo;
        if (!(st = samc__s3v_from_cache(v, t, NULL, NULL, 0, &fo, err)))
            st = yield(v, &fo, NULL, &fo.suppressed, y, err);
        samc__s3_frame_out_free(&fo);
    }
    return st;
}

/* propagation_partial: the clicked objects' states tracked again (memory
 * encoded), their masks and logits replacing the cached ones (7.2). */
static samc_status partial(samc_sam3_video *v, int start, int max, bool reverse, const int *ids, int n_ids,
                           const yield_ctx *y, samc_error *err)
{
    int first, end, n, ns = 0;
    samc_status st = order(v, start, max, reverse, &first, &end, &n, err);
    samc_s3_state **states = malloc((size_t)(v->n_states + 1) * sizeof *states);
    if (!st && !states)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < v->n_states; i++) {
        bool has = false;
        for (int k = 0; k < n_ids; k++)
            has |= samc_s3_state_find(v->states[i], ids[k]) >= 0;
        if (has) {
            states[ns++] = v->states[i];
            const samc_s3_frame fr = samc__s3v_frame(v, v->feat_frame);
            st = samc_s3_preflight(v->states[i], &fr, true, err);
        }
    }
    const int s = 4 * (v->m->tracker.cfg.image_size / v->m->tracker.cfg.backbone_stride);
    for (int k = 0; !st && k < n; k++) {
        const int t = reverse ? first - k : first + k;
        s3_detections det;
        float *masks = NULL, *scores = NULL;
        int *tids = NULL, M = 0, nr = 0, *rid = malloc((size_t)(n_ids + 1) * sizeof *rid);
        uint8_t **rm = calloc((size_t)n_ids + 1, sizeof *rm);
        st = samc__s3v_detect(v, t, reverse, true, &det, err); /* the features (its detections unused) */
        samc__s3_detections_free(&det);
        if (!st)
            st = samc__s3v_propagate_states(v, t, reverse, true, states, ns, &masks, &scores, &tids, &M, err);
        s3_map *ts = st ? NULL : samc__s3fm_get(&v->meta.trk_score, t, true);
        for (int q = 0; !st && rid && rm && q < n_ids; q++)
            for (int j = 0; !st && j < M; j++)
                if (tids[j] == ids[q]) { /* the raw logit, unlike full propagation */
                    st = samc__s3m_set(ts, ids[q], scores[j]) ? SAMC_ERR_NOMEM : SAMC_OK;
                    if (!st && !(rm[nr] = malloc((size_t)v->H * v->W)))
                        st = SAMC_ERR_NOMEM;
                    if (!st)
                        st = samc__s3v_video_mask(v, masks + (int64_t)j * s * s, s, rm[nr], err);
                    rid[nr++] = ids[q];
                }
        s3_frame_out fo = {0};
        if (!st && !samc__s3v_cache_get(v, t))
            st = samc_fail(err, SAMC_ERR_ARG, "propagate: frame %d has no outputs to refine (propagate over it first)",
                           t);
        if (!st)
            st = samc__s3v_from_cache(v, t, rid, rm, nr, &fo, err);
        if (!st)
            st = samc__s3v_cache_put(v, &fo, &fo.suppressed, err);
        if (!st)
            st = yield(v, &fo, NULL, &fo.suppressed, y, err);
        samc__s3_frame_out_free(&fo);
        for (int q = 0; rm && q < nr; q++)
            free(rm[q]);
        free(rm), free(rid), free(masks), free(scores), free(tids);
    }
    free(states);
    return st;
}

static samc_status propagate_one(samc_sam3_video *v, int start, int max, bool reverse, const yield_ctx *y,
                                 samc_error *err)
{
    int *ids = malloc((size_t)(v->meta.max_obj_id + 2 + 64) * sizeof *ids), n = 0;
    if (!ids)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    const int type = propagation_type(v, ids, &n);
    samc_status st = add_action(v, type, start >= 0, start, ids, type == S3_PROP_PARTIAL ? n : 0)
                         ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
    if (!st)
        st = type == S3_PROP_FULL ? full(v, start, max, reverse, y, err)
             : type == S3_PROP_FETCH ? fetch(v, start, max, reverse, y, err)
                                     : partial(v, start, max, reverse, ids, n, y, err);
    free(ids);
    return st;
}

samc_status samc_sam3_video_propagate(samc_sam3_video *v, samc_sam3_direction dir, int start, int max_frames,
                                      samc_sam3_video_cb cb, void *user, samc_error *err)
{
    const yield_ctx y = {cb, user};
    samc_status st = SAMC_OK;
    if (dir != SAMC_SAM3_BACKWARD)
        st = propagate_one(v, start, max_frames, false, &y, err);
    if (!st && dir != SAMC_SAM3_FORWARD)
        st = propagate_one(v, start, max_frames, true, &y, err);
    return st;
}

/* ---- clicks and removal ----------------------------------------------------------------------- */

static samc_s3_state *state_of(samc_sam3_video *v, int obj_id)
{
    for (int i = 0; i < v->n_states; i++)
        if (samc_s3_state_find(v->states[i], obj_id) >= 0)
            return v->states[i];
    return NULL;
}

static samc_status remove_object(samc_sam3_video *v, int obj_id, bool user, samc_error *err)
{
    if (samc__s3_meta_find(&v->meta, obj_id) < 0)
        return samc_fail(err, SAMC_ERR_ARG, "remove_object: object %d is not tracked", obj_id);
    samc_status st = samc__s3v_remove_from_states(v, obj_id, err);
    if (!st && user && add_action(v, S3_REMOVE, false, 0, &obj_id, 1))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    samc__s3_meta_del_obj(&v->meta, obj_id);
    samc__s3m_del(&v->meta.score, obj_id); /* max_obj_id stays: ids are never reused */
    samc__s3v_cache_del_obj(v, obj_id);
    return st;
}

samc_status samc_sam3_video_remove_object(samc_sam3_video *v, int obj_id, samc_error *err)
{
    return remove_object(v, obj_id, true, err);
}

static bool refined_before(const samc_sam3_video *v, int obj_id)
{
    for (int i = 0; i < v->n_history; i++)
        for (int k = 0; (v->history[i].type == S3_ADD || v->history[i].type == S3_REFINE) && k < v->history[i].n_obj; k++)
            if (v->history[i].obj_ids[k] == obj_id)
                return true;
    return false;
}

/* The object's state: its own, or a new one for a new object (limit checked). */
static samc_status click_state(samc_sam3_video *v, int frame, int obj_id, samc_s3_state **out, samc_error *err)
{
    samc_s3_state *s = state_of(v, obj_id);
    samc_status st = SAMC_OK;
    if (s && v->m->video.loop.use_stateless_refinement && !refined_before(v, obj_id)) {
        st = remove_object(v, obj_id, false, err);
        s = NULL;
    }
    if (!st && s) {
        *out = s;
        return add_action(v, S3_REFINE, true, frame, &obj_id, 1) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory")
                                                                  : SAMC_OK;
    }
    if (!st && v->meta.n_obj >= v->m->video.loop.max_num_objects)
        st = samc_fail(err, SAMC_ERR_ARG, "add_prompt: cannot add object %d: %d objects are tracked "
                       "(max_num_objects)", obj_id, v->meta.n_obj);
    if (!st && v->n_states == v->cap_states) {
        int cap = v->cap_states ? 2 * v->cap_states : 8;
        samc_s3_state **n = realloc(v->states, (size_t)cap * sizeof *n);
        st = n ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        if (n)
            v->states = n, v->cap_states = cap;
    }
    if (!st && !(s = malloc(sizeof *s)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (st)
        return st;
    samc_s3_state_init(s, v->x, &v->m->tracker, &v->m->video.tracker_opt, v->T, v->H, v->W);
    v->states[v->n_states++] = s;
    if (samc__s3_meta_add_obj(&v->meta, obj_id) || add_action(v, S3_ADD, true, frame, &obj_id, 1))
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    v->meta.max_obj_id = obj_id > v->meta.max_obj_id ? obj_id : v->meta.max_obj_id;
    *out = s;
    return SAMC_OK;
}

/* A click's masks: hole-filled (the loop's fill_hole_area, @fill_holes),
 * the object's at video size > 0. */
static samc_status clicked_mask(samc_sam3_video *v, int frame, samc_s3_state *s, int obj_id, samc_tensor *video,
                                uint8_t *mask, samc_error *err)
{
    const int64_t HW = (int64_t)v->H * v->W;
    s3_rec r = {0};
    if (v->x->trace)
        samc__s3_rec_floats(&r, "in/0", 4, video->shape, video->data);
    samc_status st = samc_fill_holes_sprinkles(video, v->m->video.loop.fill_hole_area, NULL);
    if (!st && v->x->trace)
        samc__s3_rec_floats(&r, "0", 4, video->shape, video->data);
    samc__s3_rec_emit(v, &r, st ? -1 : S3R_FILL_HOLES, frame, v->click_obj);
    const int idx = samc_s3_state_find(s, obj_id);
    for (int64_t p = 0; !st && p < HW; p++)
        mask[p] = video->data[idx * HW + p] > 0.0f;
    return st ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory (hole filling)") : SAMC_OK;
}

static samc_status clear_detector_frames(samc_sam3_video *v, int frame, samc_s3_state *s, int obj_id)
{
    int cleared[256];
    const int n = samc_s3_clear_detector_frames(s, obj_id, frame,
                                                v->m->video.loop.refinement_detector_cond_frame_removal_window,
                                                cleared, 256);
    if (v->x->trace) {
        s3_rec r = {0};
        samc__s3_rec_ints(&r, "cleared_frames", cleared, n);
        samc__s3_rec_emit(v, &r, S3R_CLEAR_COND, frame, s->n_obj == 1 ? s->objs[0].id : -1);
    }
    return SAMC_OK;
}

samc_status samc_sam3_video_add_points(samc_sam3_video *v, int frame, int obj_id, const float *points,
                                       const int32_t *labels, int n, samc_sam3_outputs *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    if (frame < 0 || frame >= v->T)
        return samc_fail(err, SAMC_ERR_ARG, "add_prompt: frame %d is outside the video's %d frames", frame, v->T);
    if (n < 1 || obj_id < 0)
        return samc_fail(err, SAMC_ERR_ARG, "add_prompt: points need an object id >= 0 and at least one point");
    if (!v->meta.initialised)
        v->meta.initialised = true, v->meta.max_obj_id = -1;
    s3_detections det;
    samc_s3_state *s = NULL;
    samc_status st = samc__s3v_detect(v, frame, false, true, &det, err); /* _prepare_backbone_feats */
    samc__s3_detections_free(&det);
    if (!st)
        st = click_state(v, frame, obj_id, &s, err);
    s3_map *ts = st ? NULL : samc__s3fm_get(&v->meta.trk_score, frame, true);
    if (!st && (!ts || samc__s3m_set(&v->meta.score, obj_id, SAMC_S3_REFINED_SCORE) ||
                samc__s3m_set(ts, obj_id, SAMC_S3_REFINED_SCORE)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st) { /* no longer removed or suppressed anywhere */
        samc__s3m_del(&v->meta.r0.removed, obj_id);
        for (int i = 0; i < v->meta.r0.suppressed.n; i++)
            samc__s3m_del(&v->meta.r0.suppressed.e[i].m, obj_id);
    }
    const float R = (float)v->m->tracker.cfg.image_size;
    float *px = malloc((size_t)(2 * n) * sizeof *px);
    uint8_t *mask = malloc((size_t)v->H * v->W);
    if (!st && (!px || !mask))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int k = 0; !st && k < 2 * n; k++) /* normalised -> model pixels */
        px[k] = points[k] * R;
    samc_tensor video = {0};
    const samc_s3_frame fr = samc__s3v_frame(v, frame);
    v->click_obj = obj_id;
    if (!st)
        st = samc_s3_add_new_points(s, &fr, obj_id, px, labels, n, true, &video, err);
    if (!st)
        st = clicked_mask(v, frame, s, obj_id, &video, mask, err);
    if (!st)
        st = samc_s3_preflight(s, &fr, true, err);
    if (!st)
        st = clear_detector_frames(v, frame, s, obj_id);
    s3_frame_out fo = {0};
    if (!st && !samc__s3v_cache_get(v, frame))
        st = samc_fail(err, SAMC_ERR_ARG, "add_prompt: frame %d has no outputs to refine (prompt or propagate over it "
                       "first)", frame);
    if (!st)
        st = samc__s3v_from_cache(v, frame, &obj_id, &mask, 1, &fo, err);
    if (!st)
        st = samc__s3v_cache_put(v, &fo, &fo.suppressed, err);
    if (!st)
        st = samc__s3v_postprocess(v, &fo, NULL, &fo.suppressed, out, err);
    v->click_obj = -1;
    samc__s3_frame_out_free(&fo);
    samc_tensor_release(&video);
    free(px), free(mask);
    return st;
}
