/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_loop.c - one frame of the detector-tracker loop
 * (Sam3VideoBase._det_track_one_frame, docs/sam3_video.md 4): detection,
 * propagation of every tracker state, the planning phase (association,
 * limit, ids, hot start, reconditioning, occlusion suppression, memory
 * update, metadata), the execution phase (new objects, removals) and the
 * frame's masks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_video_internal.h"
#include "core/nn/connected_components.h"
#include "core/nn/resize_bilinear.h"

samc_s3_frame samc__s3v_frame(const samc_sam3_video *v, int t)
{
    return (samc_s3_frame){t, v->feat_frame == t ? &v->feat : NULL};
}

static int low_res_side(const samc_sam3_video *v)
{
    return 4 * (v->m->tracker.cfg.image_size / v->m->tracker.cfg.backbone_stride);
}

/* fill_holes_in_mask_scores(masks, fill_hole_area) on (n,1,s,s), traced as @fill_holes. */
static samc_status fill_holes(samc_sam3_video *v, int t, float *masks, int n, int s, samc_error *err)
{
    const int64_t shape[4] = {n, 1, s, s};
    s3_rec r = {0};
    if (v->x->trace)
        samc__s3_rec_floats(&r, "in/0", 4, shape, masks);
    samc_tensor m = samc_tensor_view(masks, 4, shape);
    samc_status st = n ? samc_fill_holes_sprinkles(&m, v->m->video.loop.fill_hole_area, NULL) : SAMC_OK;
    if (!st && v->x->trace)
        samc__s3_rec_floats(&r, "0", 4, shape, masks);
    samc__s3_rec_emit(v, &r, st ? -1 : S3R_FILL_HOLES, t, -1);
    return st ? samc_fail(err, st, "frame %d: hole filling failed", t) : SAMC_OK;
}

samc_status samc__s3v_propagate_states(samc_sam3_video *v, int t, bool reverse, bool run_mem, samc_s3_state **states,
                                       int n_states, float **masks, float **scores, int **ids, int *M,
                                       samc_error *err)
{
    const int s = low_res_side(v);
    const int64_t hw = (int64_t)s * s;
    int n = 0;
    for (int k = 0; k < n_states; k++)
        n += states[k]->n_obj;
    *masks = malloc((size_t)(n * hw + 1) * sizeof **masks), *scores = malloc((size_t)(n + 1) * sizeof **scores);
    *ids = malloc((size_t)(n + 1) * sizeof **ids), *M = 0;
    samc_status st = *masks && *scores && *ids ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    const samc_s3_frame fr = samc__s3v_frame(v, t);
    for (int k = 0; !st && k < n_states; k++) {
        if (!states[k]->n_obj)
            continue; /* empty states are skipped */
        st = samc_s3_propagate_frame(states[k], &fr, reverse, run_mem, *masks + *M * hw, *scores + *M, err);
        for (int i = 0; !st && i < states[k]->n_obj; i++)
            (*ids)[(*M)++] = states[k]->objs[i].id;
    }
    if (!st && *M) /* the holes of the concatenated masks */
        st = fill_holes(v, t, *masks, *M, s, err);
    if (!st && v->x->trace) {
        s3_rec r = {0};
        samc__s3_rec_ints(&r, "obj_ids", *ids, *M);
        samc__s3_rec_floats(&r, "low_res_masks", 3, (const int64_t[]){*M, s, s}, *masks);
        samc__s3_rec_floats(&r, "obj_scores", 1, (const int64_t[]){*M}, *scores);
        samc__s3_rec_emit(v, &r, S3R_PROPAGATE, t, -1);
    }
    return st;
}

/* A detection's mask (s x s logits) at the tracker's input size 16G, > 0. */
static samc_status input_mask(const samc_sam3_video *v, const float *det, int s, samc_tensor *out, samc_error *err)
{
    const int64_t S = 4LL * s;
    samc_status st = samc_tensor_allocv(out, err, 4, (int64_t)1, (int64_t)1, S, S);
    if (!st && samc_resize_bilinear(det, 1, 1, s, s, (int)S, (int)S, out->data))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory (resize)");
    for (int64_t p = 0; !st && p < S * S; p++)
        out->data[p] = out->data[p] > 0.0f ? 1.0f : 0.0f;
    (void)v;
    return st;
}

/* ---- planning --------------------------------------------------------------------------- */

typedef struct plan {
    s3_detections det;
    float *masks, *scores;              /* the tracks' low-res masks and logits (M) */
    int *ids, M;
    s3_assoc a;
    int *new_ids, n_new, n_dropped;
    s3_map removed;                     /* obj_ids_newly_removed */
    s3_map last_occluded;
} plan;

static void plan_free(plan *p)
{
    samc__s3_detections_free(&p->det);
    free(p->masks), free(p->scores), free(p->ids), free(p->new_ids);
    samc__s3_assoc_free(&p->a);
    samc__s3m_free(&p->removed), samc__s3m_free(&p->last_occluded);
}

/* suppress_det_close_to_boundary: new detections whose box centre is
 * within the margin of the border are dropped. */
static void boundary(const samc_sam3_video *v, plan *p)
{
    const float mg = (float)SAMC_S3_BOUNDARY_MARGIN;
    int n = 0;
    for (int k = 0; k < p->a.n_new; k++) {
        const float *b = p->det.bbox.data + 4 * p->a.new_det[k];
        const float xc = (b[0] + b[2]) / 2, yc = (b[1] + b[3]) / 2;
        if (xc > mg && xc < 1.0f - mg && yc > mg && yc < 1.0f - mg)
            p->a.new_det[n++] = p->a.new_det[k];
    }
    p->a.n_new = n;
    (void)v;
}

/* _recondition_masklets: each high-confidence pair's detection becomes a
 * mask input of the track's state when its object score logit > 0.8, then
 * that state's preflight. */
static samc_status recondition(samc_sam3_video *v, int t, plan *p, samc_error *err)
{
    const int s = low_res_side(v);
    const samc_s3_frame fr = samc__s3v_frame(v, t);
    int *added = malloc((size_t)(p->a.n_hc + 1) * sizeof *added), n_added = 0;
    samc_status st = added ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int k = 0; !st && k < p->a.n_hc; k++) {
        const int id = p->a.hc_trk[k], j = samc__s3_meta_find(&v->meta, id);
        samc_tensor mask = {0};
        st = input_mask(v, p->det.mask.data + (int64_t)p->a.hc_det[k] * s * s, s, &mask, err);
        bool *touched = calloc((size_t)v->n_states + 1, sizeof *touched);
        for (int i = 0; !st && touched && i < v->n_states; i++)
            if (samc_s3_state_find(v->states[i], id) >= 0 && p->scores[j] > (float)SAMC_S3_RECONDITION_HIGH_CONF) {
                st = samc_s3_add_new_mask(v->states[i], &fr, id, &mask, err);
                touched[i] = true, added[n_added++] = id;
            }
        for (int i = 0; !st && touched && i < v->n_states; i++)
            if (touched[i])
                st = samc_s3_preflight(v->states[i], &fr, true, err);
        if (!touched && !st)
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        free(touched);
        samc_tensor_release(&mask);
    }
    if (!st && v->x->trace) {
        s3_map pairs = {0}, sc = {0};
        for (int k = 0; k < p->a.n_hc; k++) {
            samc__s3m_set(&pairs, p->a.hc_trk[k], p->a.hc_det[k]);
            samc__s3m_set(&sc, p->a.hc_trk[k], p->scores[samc__s3_meta_find(&v->meta, p->a.hc_trk[k])]);
        }
        s3_rec r = {0};
        samc__s3_rec_pairs(&r, "in/pairs", &pairs);
        samc__s3_rec_pairs(&r, "in/obj_scores", &sc); /* by track id, as the pairs */
        for (int k = 0; k < sc.n; k++)
            r.t[r.n - 1].data[k] = r.t[r.n - 1].data[2 * k + 1];
        r.t[r.n - 1].ndim = 1, r.t[r.n - 1].shape[0] = sc.n;
        samc__s3_rec_ints(&r, "add_new_mask_obj_ids", added, n_added);
        samc__s3_rec_emit(v, &r, S3R_RECONDITION, t, -1);
        samc__s3m_free(&pairs), samc__s3m_free(&sc);
    }
    free(added);
    return st;
}

/* _tracker_update_memories: the masks at the memory's input size, shrink
 * suppression, object scores from the masks' areas, each state's slice encoded. */
static samc_status update_memories(samc_sam3_video *v, int t, plan *p, samc_error *err)
{
    const int s = low_res_side(v), M = p->M;
    const samc_memory_encoder_config *me = &v->m->tracker.cfg.mem_enc;
    const int Hs = me->ds_interpol_h ? me->ds_interpol_h : v->m->tracker.cfg.image_size;
    const int Ws = me->ds_interpol_w ? me->ds_interpol_w : v->m->tracker.cfg.image_size;
    s3_rec r = {0};
    if (v->x->trace) {
        samc__s3_rec_floats(&r, "in/low_res_masks", 3, (const int64_t[]){M, s, s}, p->masks);
        samc__s3_rec_ints(&r, "in/obj_ids", p->ids, M);
        samc__s3_rec_emit(v, &r, S3R_UPDATE_MEMORIES, t, -1);
    }
    samc_tensor high = {0};
    float *sc = malloc((size_t)(M + 1) * sizeof *sc);
    samc_status st = sc ? samc_tensor_allocv(&high, err, 4, (int64_t)M, (int64_t)1, (int64_t)Hs, (int64_t)Ws)
                        : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st && samc_resize_bilinear(p->masks, M, 1, s, s, Hs, Ws, high.data))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory (resize)");
    if (!st)
        st = samc__s3v_shrink(v, t, &high, err);
    const int64_t hw = (int64_t)Hs * Ws;
    for (int i = 0; !st && i < M; i++) {
        bool any = false;
        for (int64_t q = 0; q < hw && !any; q++)
            any = high.data[i * hw + q] > 0.0f;
        sc[i] = any ? (float)SAMC_S3_MEMORY_SCORE : -(float)SAMC_S3_MEMORY_SCORE;
    }
    const samc_s3_frame fr = samc__s3v_frame(v, t);
    for (int k = 0, at = 0; !st && k < v->n_states; k++) {
        const int n = v->states[k]->n_obj;
        if (!n)
            continue;
        const samc_tensor slice = samc_tensor_view(high.data + at * hw, 4, (const int64_t[]){n, 1, Hs, Ws});
        st = samc_s3_update_memory(v->states[k], &fr, &slice, sc + at, err);
        at += n;
    }
    samc_tensor_release(&high);
    free(sc);
    return st;
}

/* Steps a-e: association, boundary, limit, ids, hot start. */
static samc_status match(samc_sam3_video *v, int t, bool reverse, plan *p, samc_error *err)
{
    const samc_sam3_loop_config *c = &v->m->video.loop;
    samc_status st = samc__s3v_associate(v, t, &p->det, p->masks, p->ids, p->M, low_res_side(v), &p->a, err);
    if (!st && c->suppress_det_close_to_boundary)
        boundary(v, p);
    if (!st && p->M + p->a.n_new > c->max_num_objects) {
        const int keep = c->max_num_objects - p->M;
        p->n_dropped = p->a.n_new - keep;
        st = samc__s3v_drop_over_limit(v, t, &p->a, &p->det, keep, err);
    }
    if (!st && !(p->new_ids = malloc((size_t)(p->a.n_new + 1) * sizeof *p->new_ids)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int k = 0; !st && k < p->a.n_new; k++)
        p->new_ids[p->n_new++] = v->meta.max_obj_id + 1 + k;
    if (!st)
        st = samc__s3v_hotstart(v, t, reverse, &p->a, p->new_ids, p->n_new, &p->removed, err);
    return st;
}

/* Step i: the new metadata. */
static samc_status new_metadata(samc_sam3_video *v, int t, plan *p, samc_error *err)
{
    s3_meta *m = &v->meta;
    s3_map *ts = samc__s3fm_get(&m->trk_score, t, true);
    samc_status st = ts ? SAMC_OK : SAMC_ERR_NOMEM;
    for (int k = 0; !st && k < p->n_new; k++) {
        const double score = p->det.scores.data[p->a.new_det[k]];
        st = samc__s3_meta_add_obj(m, p->new_ids[k]);
        if (!st)
            st = samc__s3m_set(&m->score, p->new_ids[k], score);
        if (!st)
            st = samc__s3m_set(ts, p->new_ids[k], score);
        m->max_obj_id = p->new_ids[k] > m->max_obj_id ? p->new_ids[k] : m->max_obj_id;
    }
    samc__s3m_free(&m->last_occluded);
    m->last_occluded = p->last_occluded, memset(&p->last_occluded, 0, sizeof p->last_occluded);
    for (int k = 0; !st && k < p->removed.n; k++) {
        const int id = p->removed.e[k].key;
        samc__s3_meta_del_obj(m, id);
        st = samc__s3m_set(&m->score, id, SAMC_S3_REMOVED_SCORE);
        if (!st)
            st = samc__s3m_set(ts, id, SAMC_S3_REMOVED_SCORE);
        samc__s3m_del(&m->last_occluded, id);
    }
    if (st)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory (metadata)");
    if (v->x->trace) {
        s3_rec r = {0};
        samc__s3_rec_ints(&r, "new_det_fa_inds", p->a.new_det, p->a.n_new);
        samc__s3_rec_ints(&r, "new_det_obj_ids", p->new_ids, p->n_new);
        samc__s3_rec_ints(&r, "unmatched_trk_obj_ids", p->a.unmatched, p->a.n_unmatched);
        samc__s3_rec_keys(&r, "obj_ids_newly_removed", &p->removed);
        samc__s3_rec_ints(&r, "reconditioned_obj_ids", NULL, 0);
        samc__s3_rec_ints(&r, "obj_ids_all_gpu", m->obj_ids, m->n_obj);
        samc__s3_rec_pairs(&r, "obj_id_to_score", &m->score);
        samc__s3_rec_pairs(&r, "obj_id_to_tracker_score", ts);
        samc__s3_rec_pairs(&r, "obj_id_to_last_occluded", &m->last_occluded);
        samc__s3_rec_emit(v, &r, S3R_PLAN, t, -1);
    }
    return SAMC_OK;
}

static samc_status planning(samc_sam3_video *v, int t, bool reverse, plan *p, samc_error *err)
{
    const samc_sam3_loop_config *c = &v->m->video.loop;
    samc_status st = match(v, t, reverse, p, err);
    if (!st && c->recondition_every_nth_frame > 0 && t % c->recondition_every_nth_frame == 0 && p->a.n_hc > 0)
        st = recondition(v, t, p, err);
    if (!st && p->M > 0 && c->occlusion_threshold > 0.0)
        st = samc__s3v_occlusion(v, t, reverse, p->masks, p->ids, p->M, low_res_side(v), &p->removed,
                                 &p->last_occluded, err);
    if (!st && p->M > 0)
        st = update_memories(v, t, p, err);
    if (!st)
        st = new_metadata(v, t, p, err);
    return st;
}

/* ---- execution ---------------------------------------------------------------------------- */

static samc_status add_objects(samc_sam3_video *v, int t, plan *p, samc_error *err)
{
    const int s = low_res_side(v);
    const int64_t hw = (int64_t)s * s;
    s3_rec r = {0};
    if (v->x->trace) {
        float *m = malloc((size_t)(p->n_new * hw + 1) * sizeof *m);
        for (int k = 0; m && k < p->n_new; k++)
            memcpy(m + k * hw, p->det.mask.data + p->a.new_det[k] * hw, (size_t)hw * sizeof *m);
        samc__s3_rec_ints(&r, "in/new_obj_ids", p->new_ids, p->n_new);
        if (m)
            samc__s3_rec_floats(&r, "in/new_obj_masks", 3, (const int64_t[]){p->n_new, s, s}, m);
        free(m);
        samc__s3_rec_emit(v, &r, S3R_ADD_OBJECTS, t, -1);
    }
    samc_s3_state *st8 = malloc(sizeof *st8);
    if (!st8)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    samc_s3_state_init(st8, v->x, &v->m->tracker, &v->m->video.tracker_opt, v->T, v->H, v->W);
    const samc_s3_frame fr = samc__s3v_frame(v, t);
    samc_status st = SAMC_OK;
    for (int k = 0; !st && k < p->n_new; k++) { /* one state for the frame's new objects, in id order */
        samc_tensor mask = {0};
        st = input_mask(v, p->det.mask.data + p->a.new_det[k] * hw, s, &mask, err);
        if (!st)
            st = samc_s3_add_new_mask(st8, &fr, p->new_ids[k], &mask, err);
        samc_tensor_release(&mask);
    }
    if (!st)
        st = samc_s3_preflight(st8, &fr, true, err);
    if (!st && v->n_states == v->cap_states) {
        int cap = v->cap_states ? 2 * v->cap_states : 8;
        samc_s3_state **n = realloc(v->states, (size_t)cap * sizeof *n);
        if (!n)
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        else
            v->states = n, v->cap_states = cap;
    }
    if (st) {
        samc_s3_state_free(st8), free(st8);
        return st;
    }
    v->states[v->n_states++] = st8;
    return SAMC_OK;
}

samc_status samc__s3v_remove_from_states(samc_sam3_video *v, int obj_id, samc_error *err)
{
    int k = 0;
    samc_status st = SAMC_OK;
    for (int i = 0; i < v->n_states; i++) { /* every state tries; an emptied one is dropped */
        bool emptied = false;
        if (!st)
            st = samc_s3_remove_object(v->states[i], obj_id, &emptied, err);
        if (emptied) {
            samc_s3_state_free(v->states[i]), free(v->states[i]);
            continue;
        }
        v->states[k++] = v->states[i];
    }
    v->n_states = k;
    return st;
}

static samc_status execution(samc_sam3_video *v, int t, plan *p, samc_error *err)
{
    samc_status st = p->n_new ? add_objects(v, t, p, err) : SAMC_OK;
    if (!st && p->removed.n && v->x->trace) {
        s3_rec r = {0};
        samc__s3_rec_keys(&r, "in/obj_ids", &p->removed);
        samc__s3_rec_emit(v, &r, S3R_REMOVE_OBJECTS, t, -1);
    }
    for (int k = 0; !st && k < p->removed.n; k++) { /* a Python set of small ints iterates ascending */
        int best = -1;
        for (int j = 0; j < p->removed.n; j++)
            if (p->removed.e[j].v == 0 && (best < 0 || p->removed.e[j].key < p->removed.e[best].key))
                best = j;
        p->removed.e[best].v = 1;
        st = samc__s3v_remove_from_states(v, p->removed.e[best].key, err);
    }
    for (int k = 0; k < p->removed.n; k++)
        p->removed.e[k].v = 0;
    return st;
}

/* ---- outputs ------------------------------------------------------------------------------- */

/* build_outputs: the tracks' masks (after occlusion suppression) and the new
 * objects' hole-filled detection masks at video size, > 0. */
static samc_status build_outputs(samc_sam3_video *v, int t, plan *p, s3_frame_out *fo, samc_error *err)
{
    const int s = low_res_side(v);
    const int64_t hw = (int64_t)s * s, HW = (int64_t)v->H * v->W;
    const int n = p->M + p->n_new;
    fo->ids = malloc((size_t)(n + 1) * sizeof *fo->ids), fo->masks = calloc((size_t)n + 1, sizeof *fo->masks);
    float *nm = malloc((size_t)(p->n_new * hw + 1) * sizeof *nm);
    samc_status st = fo->ids && fo->masks && nm ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int k = 0; !st && k < p->n_new; k++)
        memcpy(nm + k * hw, p->det.mask.data + p->a.new_det[k] * hw, (size_t)hw * sizeof *nm);
    if (!st)
        st = fill_holes(v, t, nm, p->n_new, s, err);
    for (int k = 0; !st && k < n; k++) {
        const bool existing = k < p->M;
        fo->ids[k] = existing ? p->ids[k] : p->new_ids[k - p->M];
        if (!(fo->masks[k] = malloc((size_t)HW)))
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        else
            st = samc__s3v_video_mask(v, existing ? p->masks + k * hw : nm + (k - p->M) * hw, s, fo->masks[k], err);
        fo->n = k + 1;
    }
    if (!st && v->x->trace) {
        s3_rec r = {0};
        float *f = malloc((size_t)HW * sizeof *f);
        samc__s3_rec_ints(&r, "in/reconditioned_obj_ids", NULL, 0);
        for (int k = 0; f && k < n && r.n < 24; k++) {
            char slot[24];
            snprintf(slot, sizeof slot, "%d", fo->ids[k]);
            for (int64_t q = 0; q < HW; q++)
                f[q] = fo->masks[k][q];
            samc__s3_rec_floats(&r, slot, 3, (const int64_t[]){1, v->H, v->W}, f);
        }
        free(f);
        samc__s3_rec_emit(v, &r, S3R_BUILD_OUTPUTS, t, -1);
    }
    free(nm);
    return st;
}

/* Step 7 and the frame output's snapshot of the metadata. */
static samc_status finish(samc_sam3_video *v, int t, const plan *p, s3_frame_out *fo, samc_error *err)
{
    s3_map *ts = samc__s3fm_get(&v->meta.trk_score, t, true);
    samc_status st = ts ? SAMC_OK : SAMC_ERR_NOMEM;
    for (int k = 0; !st && k < p->M; k++) { /* the sigmoid as float32 computes it */
        const float sig = 1.0f / (1.0f + expf(-p->scores[k]));
        st = samc__s3m_set(ts, p->ids[k], sig);
    }
    fo->frame = t;
    if (!st)
        st = samc__s3m_copy(&fo->score, &v->meta.score);
    if (!st)
        st = samc__s3m_copy(&fo->trk_score, ts);
    if (!st)
        st = samc__s3m_copy(&fo->removed, &v->meta.r0.removed);
    const s3_map *sup = samc__s3fm_get(&v->meta.r0.suppressed, t, false);
    if (!st && sup)
        st = samc__s3m_copy(&fo->suppressed, sup);
    return st ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
}

samc_status samc__s3v_one_frame(samc_sam3_video *v, int t, bool reverse, s3_frame_out *fo, samc_error *err)
{
    memset(fo, 0, sizeof *fo);
    plan p = {0};
    const bool allow_new = v->has_text || v->geo_label[t] >= 0;
    samc_status st = samc__s3v_detect(v, t, reverse, allow_new, &p.det, err);
    if (!st && !v->meta.initialised)
        v->meta.initialised = true, v->meta.max_obj_id = -1;
    if (!st)
        st = samc__s3v_propagate_states(v, t, reverse, false, v->states, v->n_states, &p.masks, &p.scores, &p.ids,
                                        &p.M, err);
    for (int k = 0; !st && k < p.M; k++)
        if (k >= v->meta.n_obj || p.ids[k] != v->meta.obj_ids[k])
            st = samc_fail(err, SAMC_ERR_INTERNAL, "frame %d: the tracker's objects disagree with the metadata", t);
    if (!st)
        st = planning(v, t, reverse, &p, err);
    if (!st)
        st = execution(v, t, &p, err);
    if (!st)
        st = build_outputs(v, t, &p, fo, err);
    if (!st)
        st = finish(v, t, &p, fo, err);
    plan_free(&p);
    if (st)
        samc__s3_frame_out_free(fo);
    return st;
}
