/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_tracker_state.c - Sam3TrackerPredictor's inference state: its dicts in
 * Python's order, objects and their inputs, removal and clearing of inputs
 * (clear_all_points_in_frame, remove_object, _reset_tracking_results). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_tracker_state_internal.h"

/* ---- int sets ------------------------------------------------------------------ */

bool samc__s3_set_has(const samc_s3_int_set *s, int v)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i] == v)
            return true;
    return false;
}

samc_status samc__s3_set_add(samc_s3_int_set *s, int v)
{
    if (samc__s3_set_has(s, v))
        return SAMC_OK;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        int *n = realloc(s->v, (size_t)cap * sizeof *n);
        if (!n)
            return SAMC_ERR_NOMEM;
        s->v = n, s->cap = cap;
    }
    s->v[s->n++] = v;
    return SAMC_OK;
}

bool samc__s3_set_del(samc_s3_int_set *s, int v)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i] == v) {
            memmove(s->v + i, s->v + i + 1, (size_t)(s->n - i - 1) * sizeof *s->v);
            s->n--;
            return true;
        }
    return false;
}

static void set_free(samc_s3_int_set *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* ---- the batched output dicts ---------------------------------------------------- */

void samc__s3_entry_release(samc_s3_entry *e, int n_obj)
{
    for (int i = 0; e->obj && i < n_obj; i++)
        samc_frame_out_release(&e->obj[i]);
    free(e->obj);
    memset(e, 0, sizeof *e);
}

samc_s3_entry *samc__s3_dict_get(const samc_s3_dict *d, int frame)
{
    for (int i = 0; i < d->n; i++)
        if (d->e[i].frame == frame)
            return &d->e[i];
    return NULL;
}

samc_status samc__s3_dict_put(samc_s3_dict *d, samc_s3_entry *e, int n_obj, samc_error *err)
{
    samc_s3_entry *old = samc__s3_dict_get(d, e->frame);
    if (old) { /* an existing key keeps its place */
        samc__s3_entry_release(old, n_obj);
        *old = *e;
    } else {
        if (d->n == d->cap) {
            int cap = d->cap ? 2 * d->cap : 16;
            samc_s3_entry *n = realloc(d->e, (size_t)cap * sizeof *n);
            if (!n) {
                samc__s3_entry_release(e, n_obj);
                return samc_fail(err, SAMC_ERR_NOMEM, "out of memory (tracker outputs)");
            }
            d->e = n, d->cap = cap;
        }
        d->e[d->n++] = *e;
    }
    memset(e, 0, sizeof *e);
    return SAMC_OK;
}

bool samc__s3_dict_pop(samc_s3_dict *d, int frame, samc_s3_entry *out, int n_obj)
{
    for (int i = 0; i < d->n; i++) {
        if (d->e[i].frame != frame)
            continue;
        if (out)
            *out = d->e[i];
        else
            samc__s3_entry_release(&d->e[i], n_obj);
        memmove(d->e + i, d->e + i + 1, (size_t)(d->n - i - 1) * sizeof *d->e);
        d->n--;
        return true;
    }
    return false;
}

static void dict_clear(samc_s3_dict *d, int n_obj)
{
    for (int i = 0; i < d->n; i++)
        samc__s3_entry_release(&d->e[i], n_obj);
    d->n = 0;
}

/* _add_output_per_object: every object's slice of (kind, frame) exists. */
samc_status samc__s3_add_slices(samc_s3_state *s, int kind, int frame)
{
    for (int i = 0; i < s->n_obj; i++)
        if (samc__s3_set_add(&s->objs[i].slices[kind], frame))
            return SAMC_ERR_NOMEM;
    return SAMC_OK;
}

/* ---- objects --------------------------------------------------------------------- */

static void points_free(samc_s3_points *p)
{
    free(p->coords), free(p->labels);
    memset(p, 0, sizeof *p);
}

void samc__s3_temp_release(samc_s3_temp *t)
{
    samc_tensor_release(&t->pred_masks);
    samc_tensor_release(&t->video_masks);
    samc_tensor_release(&t->obj_ptr);
}

samc_s3_temp *samc__s3_temp_get(samc_s3_object *o, int frame, bool cond)
{
    for (int i = 0; i < o->n_temp; i++)
        if (o->temp[i].frame == frame && o->temp[i].cond == cond)
            return &o->temp[i];
    return NULL;
}

void samc__s3_temp_pop(samc_s3_object *o, int frame, bool cond)
{
    samc_s3_temp *t = samc__s3_temp_get(o, frame, cond);
    if (!t)
        return;
    samc__s3_temp_release(t);
    *t = o->temp[--o->n_temp];
}

samc_s3_points *samc__s3_points_get(samc_s3_object *o, int frame)
{
    for (int i = 0; i < o->n_points; i++)
        if (o->points[i].frame == frame)
            return &o->points[i];
    return NULL;
}

void samc__s3_points_pop(samc_s3_object *o, int frame)
{
    samc_s3_points *p = samc__s3_points_get(o, frame);
    if (!p)
        return;
    points_free(p);
    *p = o->points[--o->n_points];
}

static void object_free(samc_s3_object *o)
{
    set_free(&o->slices[0]), set_free(&o->slices[1]), set_free(&o->mask_frames);
    for (int i = 0; i < o->n_temp; i++)
        samc__s3_temp_release(&o->temp[i]);
    for (int i = 0; i < o->n_points; i++)
        points_free(&o->points[i]);
    free(o->temp), free(o->points);
    memset(o, 0, sizeof *o);
}

int samc_s3_state_find(const samc_s3_state *s, int obj_id)
{
    for (int i = 0; i < s->n_obj; i++)
        if (s->objs[i].id == obj_id)
            return i;
    return -1;
}

/* _obj_id_to_idx: an existing object, or a new one before tracking starts. */
samc_status samc__s3_obj_index(samc_s3_state *s, int obj_id, int *idx, samc_error *err)
{
    *idx = samc_s3_state_find(s, obj_id);
    if (*idx >= 0)
        return SAMC_OK;
    if (s->tracking_started)
        return samc_fail(err, SAMC_ERR_ARG, "cannot add new object id %d after tracking starts", obj_id);
    if (s->out[0].n || s->out[1].n) /* every output holds one slice per object */
        return samc_fail(err, SAMC_ERR_INTERNAL, "a new object in a state with outputs");
    if (s->n_obj == s->cap_obj) {
        int cap = s->cap_obj ? 2 * s->cap_obj : 4;
        samc_s3_object *n = realloc(s->objs, (size_t)cap * sizeof *n);
        if (!n)
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        s->objs = n, s->cap_obj = cap;
    }
    memset(&s->objs[s->n_obj], 0, sizeof s->objs[0]);
    s->objs[s->n_obj].id = obj_id;
    *idx = s->n_obj++;
    return SAMC_OK;
}

void samc_s3_state_init(samc_s3_state *s, samc_exec *x, const samc_tracker_model *tr,
                        const samc_s3_tracker_options *opt, int num_frames, int H, int W)
{
    memset(s, 0, sizeof *s);
    s->x = x, s->tr = tr, s->opt = opt;
    s->num_frames = num_frames, s->H = H, s->W = W;
    s->first_ann_frame = -1;
}

/* _reset_tracking_results: inputs and outputs gone, the objects stay. */
static void reset_tracking(samc_s3_state *s)
{
    for (int i = 0; i < s->n_obj; i++) {
        samc_s3_object *o = &s->objs[i];
        while (o->n_points)
            samc__s3_points_pop(o, o->points[0].frame);
        while (o->n_temp)
            samc__s3_temp_pop(o, o->temp[0].frame, o->temp[0].cond);
        o->mask_frames.n = o->slices[0].n = o->slices[1].n = 0;
    }
    dict_clear(&s->out[0], s->n_obj), dict_clear(&s->out[1], s->n_obj);
    s->consolidated[0].n = s->consolidated[1].n = s->tracked.n = 0;
    s->tracking_started = false;
    s->first_ann_frame = -1;
}

void samc_s3_state_free(samc_s3_state *s)
{
    reset_tracking(s);
    for (int i = 0; i < s->n_obj; i++)
        object_free(&s->objs[i]);
    free(s->objs);
    free(s->out[0].e), free(s->out[1].e);
    set_free(&s->consolidated[0]), set_free(&s->consolidated[1]), set_free(&s->tracked);
    memset(s, 0, sizeof *s);
}

/* frames_already_tracked: frame -> reverse (stored as frame * 2 + reverse). */
int samc__s3_tracked_get(const samc_s3_state *s, int frame)
{
    for (int i = 0; i < s->tracked.n; i++)
        if (s->tracked.v[i] >> 1 == frame)
            return s->tracked.v[i] & 1;
    return -1;
}

samc_status samc__s3_tracked_set(samc_s3_state *s, int frame, bool reverse)
{
    for (int i = 0; i < s->tracked.n; i++)
        if (s->tracked.v[i] >> 1 == frame) {
            s->tracked.v[i] = frame * 2 + reverse;
            return SAMC_OK;
        }
    return samc__s3_set_add(&s->tracked, frame * 2 + reverse);
}

static void tracked_pop(samc_s3_state *s, int frame)
{
    const int r = samc__s3_tracked_get(s, frame);
    if (r >= 0)
        samc__s3_set_del(&s->tracked, frame * 2 + r);
}

/* ---- clearing and removal --------------------------------------------------------- */

void samc_s3_clear_frame(samc_s3_state *s, int frame, int obj_id)
{
    const int idx = samc_s3_state_find(s, obj_id);
    if (idx < 0)
        return;
    samc_s3_object *o = &s->objs[idx];
    samc__s3_points_pop(o, frame);
    samc__s3_set_del(&o->mask_frames, frame);
    samc__s3_temp_pop(o, frame, true), samc__s3_temp_pop(o, frame, false);
    for (int i = 0; i < s->n_obj; i++)
        if (samc__s3_points_get(&s->objs[i], frame) || samc__s3_set_has(&s->objs[i].mask_frames, frame))
            return; /* the frame still has inputs */
    samc__s3_set_del(&s->consolidated[0], frame), samc__s3_set_del(&s->consolidated[1], frame);
    samc_s3_entry e;
    if (samc__s3_dict_pop(&s->out[0], frame, &e, s->n_obj)) { /* downgraded to a non-conditioning output */
        samc__s3_dict_put(&s->out[1], &e, s->n_obj, NULL); /* no growth: the frame left the other dict */
        tracked_pop(s, frame);
    }
    for (int i = 0; i < s->n_obj; i++)
        if (samc__s3_set_del(&s->objs[i].slices[0], frame))
            samc__s3_set_add(&s->objs[i].slices[1], frame);
    if (s->out[0].n == 0)
        reset_tracking(s);
}

int samc_s3_clear_detector_frames(samc_s3_state *s, int obj_id, int refined_frame, int window, int *cleared, int cap)
{
    const int idx = samc_s3_state_find(s, obj_id);
    int n = 0;
    for (int k = 0; idx >= 0 && k < s->objs[idx].mask_frames.n && n < cap; k++) {
        const int f = s->objs[idx].mask_frames.v[k];
        if (!samc__s3_points_get(&s->objs[idx], f) && abs(f - refined_frame) <= window)
            cleared[n++] = f;
    }
    for (int k = 0; k < n; k++) /* every object of the state: they are batched */
        for (int i = 0; i < s->n_obj; i++)
            samc_s3_clear_frame(s, cleared[k], s->objs[i].id);
    return n;
}

/* _slice_state for one entry: the removed object's slice dropped, the
 * batch's eff_iou_score recomputed as cal_mem_score broadcasts it. */
static void slice_entry(samc_s3_entry *e, int n_obj, int rm)
{
    samc_frame_out_release(&e->obj[rm]);
    memmove(e->obj + rm, e->obj + rm + 1, (size_t)(n_obj - rm - 1) * sizeof *e->obj);
    const int B = n_obj - 1;
    float *sc = malloc((size_t)B * sizeof *sc), *iou = malloc((size_t)B * sizeof *iou);
    if (!sc || !iou) {
        free(sc), free(iou);
        return;
    }
    for (int i = 0; i < B; i++)
        sc[i] = e->obj[i].object_score, iou[i] = e->obj[i].iou_score;
    float eff = samc_tracker_mem_score(sc, iou, B);
    if (e->iou_2d) { /* [B,1] * [B,1]: the mean of the products */
        float sum = 0;
        for (int i = 0; i < B; i++)
            sum += (sc[i] > 0 ? 2.0f / (1.0f + expf(-sc[i])) - 1.0f : 0.0f) * iou[i];
        eff = sum / (float)B;
    }
    for (int i = 0; i < B; i++)
        e->obj[i].has_eff = true, e->obj[i].eff_iou_score = eff;
    free(sc), free(iou);
}

samc_status samc_s3_remove_object(samc_s3_state *s, int obj_id, bool *emptied, samc_error *err)
{
    *emptied = false;
    const int rm = samc_s3_state_find(s, obj_id);
    if (rm < 0)
        return SAMC_OK;
    if (s->n_obj == 1) { /* clear_all_points_in_video */
        reset_tracking(s);
        object_free(&s->objs[0]);
        s->n_obj = 0;
        *emptied = true;
        return SAMC_OK;
    }
    samc_s3_object *o = &s->objs[rm];
    while (o->n_points) /* its input frames first: they may downgrade conditioning frames */
        samc_s3_clear_frame(s, o->points[0].frame, obj_id);
    while (o->mask_frames.n)
        samc_s3_clear_frame(s, o->mask_frames.v[0], obj_id);
    const int n_obj = s->n_obj;
    for (int kind = 0; kind < 2; kind++)
        for (int i = 0; i < s->out[kind].n; i++)
            slice_entry(&s->out[kind].e[i], n_obj, rm);
    object_free(&s->objs[rm]);
    memmove(s->objs + rm, s->objs + rm + 1, (size_t)(n_obj - rm - 1) * sizeof *s->objs);
    s->n_obj--;
    for (int kind = 0; kind < 2; kind++) /* _add_output_per_object for every stored frame */
        for (int i = 0; i < s->out[kind].n; i++)
            if (samc__s3_add_slices(s, kind, s->out[kind].e[i].frame))
                return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    return SAMC_OK;
}
