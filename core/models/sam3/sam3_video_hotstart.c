/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_hotstart.c - the loop's removal and suppression heuristics
 * (docs/sam3_video.md 4.3e, g, h): the hot start with its keep-alive
 * counters (Sam3VideoBase._process_hotstart), suppression of overlapping
 * tracks by recent occlusion (_suppress_overlapping_based_on_recent_occlusion)
 * and the memory's shrink suppression (Sam3TrackerPredictor.
 * _suppress_object_pw_area_shrinkage). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_video_internal.h"

/* ---- hot start ------------------------------------------------------------------------ */

static double first_frame(const s3_meta *m, int id)
{
    double f = 0;
    return samc__s3m_get(&m->r0.first_frame, id, &f) ? f : 0; /* always set: only the loop's objects get here */
}

static bool within_hotstart(const s3_meta *m, int id, int diff, bool reverse)
{
    const double f = first_frame(m, id);
    return reverse ? f < diff : f > diff;
}

static void keep_alive_add(s3_map *ka, int id, int delta, int lo, int hi)
{
    double v = 0;
    samc__s3m_get(ka, id, &v); /* a defaultdict(int) */
    v += delta;
    v = v < lo ? lo : v > hi ? hi : v;
    samc__s3m_set(ka, id, v);
}

/* The @hotstart record's state slots ("state.<name>", `pre` "in/" before). */
static void trace_state(s3_rec *r, const s3_meta *m, int frame, const char *pre)
{
    const s3_rank0 *r0 = &m->r0;
    char slot[64];
    const s3_map *src[3] = {&r0->first_frame, &r0->unmatched, &r0->keep_alive};
    static const char *const names[3] = {"obj_first_frame_idx", "unmatched_count", "trk_keep_alive"};
    for (int k = 0; k < 3; k++) {
        snprintf(slot, sizeof slot, "%sstate.%s", pre, names[k]);
        samc__s3_rec_pairs(r, slot, src[k]);
    }
    int *pairs = malloc((size_t)(3 * r0->overlaps.n + 1) * sizeof *pairs), n = 0;
    for (int i = 0; pairs && i < r0->overlaps.n; i++) { /* sorted by (first, later) */
        int j = n;
        const s3_pair *p = &r0->overlaps.e[i];
        while (j > 0 && (pairs[3 * (j - 1)] > p->a || (pairs[3 * (j - 1)] == p->a && pairs[3 * (j - 1) + 1] > p->b)))
            memcpy(pairs + 3 * j, pairs + 3 * (j - 1), 3 * sizeof *pairs), j--;
        pairs[3 * j] = p->a, pairs[3 * j + 1] = p->b, pairs[3 * j + 2] = p->count, n++;
    }
    snprintf(slot, sizeof slot, "%sstate.overlap_pairs", pre);
    samc__s3_rec_ints(r, slot, pairs, 3 * n);
    r->t[r->n - 1].ndim = 2, r->t[r->n - 1].shape[0] = n, r->t[r->n - 1].shape[1] = 3;
    free(pairs);
    snprintf(slot, sizeof slot, "%sstate.removed_obj_ids", pre);
    samc__s3_rec_keys(r, slot, &r0->removed);
    const s3_map *sup = samc__s3fm_get((s3_frame_maps *)&r0->suppressed, frame, false);
    const s3_map none = {0};
    snprintf(slot, sizeof slot, "%sstate.suppressed_obj_ids", pre);
    samc__s3_rec_keys(r, slot, sup ? sup : &none);
}

/* Steps 1-3: first frames and keep-alive of new, matched and unmatched ids. */
static samc_status count(samc_sam3_video *v, int t, const s3_assoc *a, const int *new_ids, int n_new)
{
    const samc_sam3_loop_config *c = &v->m->video.loop;
    s3_rank0 *r0 = &v->meta.r0;
    samc_status st = SAMC_OK;
    for (int i = 0; !st && i < n_new; i++) {
        if (!samc__s3m_has(&r0->first_frame, new_ids[i]))
            st = samc__s3m_set(&r0->first_frame, new_ids[i], t);
        if (!st)
            st = samc__s3m_set(&r0->keep_alive, new_ids[i], c->init_trk_keep_alive);
    }
    s3_map matched = {0}; /* the union of det_to_matched_trk_obj_ids (a set) */
    for (int d = 0; !st && d < a->n_det; d++)
        for (int k = 0; !st && k < a->n_matched[d]; k++)
            st = samc__s3m_set(&matched, a->matched[d][k], 0);
    for (int i = 0; !st && i < matched.n; i++)
        keep_alive_add(&r0->keep_alive, matched.e[i].key, 1, INT32_MIN, c->max_trk_keep_alive);
    samc__s3m_free(&matched);
    for (int i = 0; !st && i < a->n_unmatched; i++) {
        double n = 0;
        samc__s3m_get(&r0->unmatched, a->unmatched[i], &n);
        st = samc__s3m_set(&r0->unmatched, a->unmatched[i], n + 1);
        keep_alive_add(&r0->keep_alive, a->unmatched[i], -1, c->min_trk_keep_alive, INT32_MAX);
    }
    for (int i = 0; c->decrease_trk_keep_alive_for_empty_masklets && i < a->n_empty; i++)
        keep_alive_add(&r0->keep_alive, a->empty[i], -1, c->min_trk_keep_alive, INT32_MAX);
    return st ? SAMC_ERR_NOMEM : SAMC_OK;
}

/* Steps 2b-6: removals of unmatched and duplicated objects within the hot
 * start, suppression by keep-alive. */
static samc_status remove_ids(samc_sam3_video *v, int t, bool reverse, const s3_assoc *a, s3_map *newly)
{
    const samc_sam3_loop_config *c = &v->m->video.loop;
    s3_rank0 *r0 = &v->meta.r0;
    const int diff = reverse ? t + c->hotstart_delay : t - c->hotstart_delay;
    s3_map *sup = samc__s3fm_get(&r0->suppressed, t, true); /* a defaultdict(set) entry */
    if (!sup)
        return SAMC_ERR_NOMEM;
    for (int i = 0; i < r0->unmatched.n; i++) {
        const int id = r0->unmatched.e[i].key;
        if (samc__s3m_has(&r0->removed, id) || samc__s3m_has(newly, id))
            continue;
        if (r0->unmatched.e[i].v >= c->hotstart_unmatch_thresh && within_hotstart(&v->meta, id, diff, reverse) &&
            samc__s3m_set(newly, id, 0))
            return SAMC_ERR_NOMEM;
        double ka = 0;
        samc__s3m_get(&r0->keep_alive, id, &ka);
        if (ka <= 0 && !c->suppress_unmatched_only_within_hotstart && !samc__s3m_has(newly, id) &&
            samc__s3m_set(sup, id, 0))
            return SAMC_ERR_NOMEM;
    }
    for (int d = 0; d < a->n_det; d++) { /* a detection matching several tracks: the first-born stays */
        const int *ids = a->matched[d], n = a->n_matched[d];
        if (n < 2)
            continue;
        int first = ids[0];
        for (int k = 1; k < n; k++)
            if (reverse ? first_frame(&v->meta, ids[k]) > first_frame(&v->meta, first)
                        : first_frame(&v->meta, ids[k]) < first_frame(&v->meta, first))
                first = ids[k];
        for (int k = 0; k < n; k++)
            if (ids[k] != first && samc__s3_pairs_add(&r0->overlaps, first, ids[k]))
                return SAMC_ERR_NOMEM;
    }
    for (int i = 0; i < r0->overlaps.n; i++) {
        const int id = r0->overlaps.e[i].b;
        if (samc__s3m_has(&r0->removed, id) || samc__s3m_has(newly, id))
            continue;
        if (within_hotstart(&v->meta, id, diff, reverse) && r0->overlaps.e[i].count >= c->hotstart_dup_thresh &&
            samc__s3m_set(newly, id, 0))
            return SAMC_ERR_NOMEM;
    }
    for (int i = 0; i < newly->n; i++)
        if (samc__s3m_set(&r0->removed, newly->e[i].key, 0))
            return SAMC_ERR_NOMEM;
    return SAMC_OK;
}

samc_status samc__s3v_hotstart(samc_sam3_video *v, int t, bool reverse, const s3_assoc *a, const int *new_ids,
                               int n_new, s3_map *removed_now, samc_error *err)
{
    s3_rec r = {0};
    if (v->x->trace) {
        samc__s3_rec_ints(&r, "in/new_det_obj_ids", new_ids, n_new);
        trace_state(&r, &v->meta, t, "in/");
    }
    samc_status st = count(v, t, a, new_ids, n_new);
    if (!st)
        st = remove_ids(v, t, reverse, a, removed_now);
    if (st) {
        samc__s3_rec_emit(v, &r, -1, t, -1); /* releases */
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory (hot start)");
    }
    if (v->x->trace) {
        samc__s3_rec_keys(&r, "obj_ids_newly_removed", removed_now);
        trace_state(&r, &v->meta, t, "");
    }
    samc__s3_rec_emit(v, &r, S3R_HOTSTART, t, -1);
    return SAMC_OK;
}

/* ---- occlusion ------------------------------------------------------------------------ */

/* _get_objects_to_suppress_based_on_most_recently_occluded over M tracks. */
static void to_suppress(const float *ious, const double *last, int M, bool reverse, float thr, bool *sup)
{
    for (int i = 0; i < M; i++)
        for (int j = i + 1; j < M; j++) {
            if (!(ious[i * M + j] >= thr))
                continue;
            const double li = last[i], lj = last[j];
            if ((reverse ? li < lj : li > lj) && lj > -1) /* j can suppress i only if i was occluded */
                sup[i] = true;
            if ((reverse ? lj < li : lj > li) && li > -1)
                sup[j] = true;
        }
}

samc_status samc__s3v_occlusion(samc_sam3_video *v, int t, bool reverse, float *masks, const int *ids, int M,
                                int s4, const s3_map *removed_now, s3_map *last_occluded, samc_error *err)
{
    const int64_t hw = (int64_t)s4 * s4;
    const float thr = (float)v->m->video.loop.occlusion_threshold;
    uint8_t *bin = malloc((size_t)M * hw + 1);
    double *last = malloc((size_t)(M + 1) * sizeof *last);
    float *ious = malloc((size_t)(M * M + 1) * sizeof *ious);
    bool *sup = calloc((size_t)M + 1, sizeof *sup);
    if (!bin || !last || !ious || !sup) {
        free(bin), free(last), free(ious), free(sup);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    for (int64_t p = 0; p < M * hw; p++)
        bin[p] = masks[p] > 0.0f;
    for (int j = 0; j < M; j++)
        if (!samc__s3m_get(&v->meta.last_occluded, ids[j], &last[j]))
            last[j] = samc__s3m_has(removed_now, ids[j]) ? SAMC_S3_ALWAYS_OCCLUDED : SAMC_S3_NEVER_OCCLUDED;
    if (M > 1) {
        samc__s3_mask_iou(bin, M, bin, M, hw, ious);
        samc__s3v_decide(v, t, "@occlusion", "ious", ious, (int64_t)M * M, thr, SAMC_CMP_GE);
        to_suppress(ious, last, M, reverse, thr, sup);
    }
    s3_rec r = {0};
    if (v->x->trace) {
        float *lf = calloc((size_t)(2 * M + 1), sizeof *lf);
        for (int j = 0; lf && j < M; j++)
            lf[j] = (float)last[j], lf[M + j] = sup[j];
        if (lf) {
            samc__s3_rec_floats(&r, "in/last_occluded", 1, (const int64_t[]){M}, lf);
            samc__s3_rec_floats(&r, "0", 1, (const int64_t[]){M}, lf + M);
        }
        if (M > 1)
            samc__s3_rec_floats(&r, "ious", 2, (const int64_t[]){M, M}, ious);
        free(lf);
        samc__s3_rec_emit(v, &r, S3R_OCCLUSION, t, -1);
        samc__s3_rec_floats(&r, "in/low_res_masks", 3, (const int64_t[]){M, s4, s4}, masks);
    }
    for (int j = 0; j < M; j++) {
        bool empty = true;
        for (int64_t p = 0; p < hw && empty; p++)
            empty = !bin[j * hw + p];
        if (empty || sup[j]) /* occluded or suppressed on this frame */
            last[j] = t;
        if (sup[j])
            for (int64_t p = 0; p < hw; p++)
                masks[j * hw + p] = (float)SAMC_S3_OCCLUSION_LOGIT;
        samc__s3m_set(last_occluded, ids[j], last[j]);
    }
    if (v->x->trace) {
        samc__s3_rec_floats(&r, "low_res_masks", 3, (const int64_t[]){M, s4, s4}, masks);
        samc__s3_rec_pairs(&r, "obj_id_to_last_occluded", last_occluded);
        samc__s3_rec_emit(v, &r, S3R_SUPPRESS_OCCLUSION, t, -1);
    }
    free(bin), free(last), free(ious), free(sup);
    return SAMC_OK;
}

/* ---- shrink suppression ----------------------------------------------------------------- */

samc_status samc__s3v_shrink(samc_sam3_video *v, int t, samc_tensor *masks, samc_error *err)
{
    const int B = (int)masks->shape[0];
    const int64_t hw = masks->shape[2] * masks->shape[3];
    s3_rec r = {0};
    if (v->x->trace)
        samc__s3_rec_floats(&r, "in/0", 4, masks->shape, masks->data);
    int64_t *after = calloc((size_t)B + 1, sizeof *after);
    if (!after)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t p = 0; p < hw; p++) { /* the area of each mask after the pixel-wise non-overlap */
        int best = 0;
        for (int i = 1; i < B; i++)
            best = masks->data[i * hw + p] > masks->data[best * hw + p] ? i : best;
        for (int i = 0; i < B; i++) /* the argmax keeps its value, the others min(value, -10) (one mask: as is) */
            after[i] += (i == best || B == 1 ? masks->data[i * hw + p] : fminf(masks->data[i * hw + p], -10.0f)) > 0.0f;
    }
    for (int i = 0; i < B; i++) { /* an empty single mask too: its ratio is 0 / max(0, 1) */
        int64_t before = 0;
        for (int64_t p = 0; p < hw; p++)
            before += masks->data[i * hw + p] > 0.0f;
        const float ratio = (float)after[i] / (float)(before > 1 ? before : 1); /* clamp(min=1.0) */
        if (!(ratio >= (float)SAMC_S3_SHRINK_THRESHOLD))
            for (int64_t p = 0; p < hw; p++)
                masks->data[i * hw + p] = fminf(masks->data[i * hw + p], (float)SAMC_S3_SHRINK_LOGIT);
    }
    free(after);
    if (v->x->trace)
        samc__s3_rec_floats(&r, "0", 4, masks->shape, masks->data);
    samc__s3_rec_emit(v, &r, S3R_SHRINK, t, -1);
    return SAMC_OK;
}
