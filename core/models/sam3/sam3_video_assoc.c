/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_assoc.c - the loop's matching of masks (docs/sam3_video.md
 * 4.1, 4.3a-c): mask IoUs (perflib mask_iou), the detector's mask NMS
 * (perflib nms_masks), det-track association (Sam3VideoBase._associate_det_trk),
 * boundary suppression and the object limit (_drop_new_det_with_obj_limit),
 * each traced with the values its decisions compare. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_video_internal.h"
#include "core/nn/resize_bilinear.h"

void samc__s3_mask_iou(const uint8_t *a, int N, const uint8_t *b, int M, int64_t hw, float *ious)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            int64_t inter = 0, uni = 0;
            const uint8_t *x = a + i * hw, *y = b + j * hw;
            for (int64_t p = 0; p < hw; p++)
                inter += x[p] & y[p], uni += x[p] | y[p];
            ious[i * M + j] = (float)inter / (uni > 1 ? (float)uni : 1.0f); /* counts as float32 */
        }
}

void samc__s3v_decide(samc_sam3_video *v, int t, const char *module, const char *slot, float *values, int64_t n,
                      float thr, samc_cmp cmp)
{
    samc_decision d = {.kind = SAMC_DECISION_THRESHOLD, .module = module, .values = values, .n = n,
                       .threshold = thr, .slot = slot, .cmp = cmp};
    const samc_scope sc = {t, -1};
    if (n > 0)
        samc_exec_decide(v->x, &sc, &d);
}

/* Indices by descending value: numpy's argsort()[::-1], whose insertion
 * sort (at most 16 values) is stable, so ties come in reverse index order. */
static void argsort_desc(const float *v, const int *idx, int n, int *order)
{
    for (int i = 0; i < n; i++) { /* ascending, stable */
        int j = i;
        while (j > 0 && v[idx[order[j - 1]]] > v[idx[i]])
            order[j] = order[j - 1], j--;
        order[j] = i;
    }
    for (int i = 0; i < n / 2; i++) {
        const int tmp = order[i];
        order[i] = order[n - 1 - i], order[n - 1 - i] = tmp;
    }
}

/* ---- NMS ---------------------------------------------------------------------------- */

samc_status samc__s3v_nms(samc_sam3_video *v, int t, samc_tensor *logits, const samc_tensor *masks, samc_error *err)
{
    const int Q = (int)logits->shape[0];
    const int64_t hw = masks->shape[1] * masks->shape[2];
    const float thr = (float)v->m->video.loop.score_threshold_detection;
    const float iou_thr = (float)v->m->video.loop.det_nms_thresh;
    float *p = malloc((size_t)Q * sizeof *p), *ious = NULL, *keep = calloc((size_t)Q, sizeof *keep);
    int *valid = malloc((size_t)Q * sizeof *valid), *order = malloc((size_t)Q * sizeof *order), V = 0;
    uint8_t *bin = malloc((size_t)Q * hw + 1);
    samc_status st = p && keep && valid && order && bin ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int q = 0; !st && q < Q; q++)
        p[q] = 1.0f / (1.0f + expf(-logits->data[q]));
    if (!st)
        samc__s3v_decide(v, t, "@nms", "in/pred_probs", p, Q, thr, SAMC_CMP_GT);
    for (int q = 0; !st && q < Q; q++)
        if (p[q] > thr) /* the candidates, in query order */
            valid[V++] = q;
    for (int k = 0; !st && k < V; k++)
        for (int64_t i = 0; i < hw; i++)
            bin[k * hw + i] = masks->data[valid[k] * hw + i] > 0.0f;
    if (!st && !(ious = malloc((size_t)(V * V + 1) * sizeof *ious)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st) {
        samc__s3_mask_iou(bin, V, bin, V, hw, ious);
        samc__s3v_decide(v, t, "@nms", "ious", ious, (int64_t)V * V, iou_thr, SAMC_CMP_GT);
        argsort_desc(p, valid, V, order);
        bool *gone = calloc((size_t)V + 1, sizeof *gone);
        for (int a = 0; gone && a < V; a++) { /* greedy: keep the best left, drop what overlaps it */
            const int i = order[a];
            if (gone[i])
                continue;
            keep[valid[i]] = 1.0f;
            for (int b = a + 1; b < V; b++)
                if (!(ious[i * V + order[b]] <= iou_thr))
                    gone[order[b]] = true;
        }
        st = gone ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        free(gone);
    }
    if (!st && v->x->trace) {
        s3_rec r = {0};
        samc__s3_rec_floats(&r, "in/pred_probs", 1, (const int64_t[]){Q}, p);
        samc__s3_rec_floats(&r, "0", 1, (const int64_t[]){Q}, keep);
        samc__s3_rec_floats(&r, "ious", 2, (const int64_t[]){V, V}, ious);
        samc__s3_rec_emit(v, &r, S3R_NMS, t, -1);
    }
    for (int q = 0; !st && q < Q; q++) /* pred_logits -= 1e4 * (~keep) */
        logits->data[q] -= (float)SAMC_S3_NMS_OFFSET * (1.0f - keep[q]);
    free(p), free(ious), free(keep), free(valid), free(order), free(bin);
    return st;
}

/* ---- association ---------------------------------------------------------------------- */

void samc__s3_assoc_free(s3_assoc *a)
{
    for (int d = 0; a->matched && d < a->n_det; d++)
        free(a->matched[d]);
    free(a->matched), free(a->n_matched), free(a->new_det), free(a->unmatched), free(a->empty);
    free(a->hc_trk), free(a->hc_det);
    memset(a, 0, sizeof *a);
}

/* trk_id_to_max_iou_high_conf_det[id] = d (a later detection replaces an
 * earlier one in its place). */
static void set_high_conf(s3_assoc *a, int id, int d)
{
    for (int k = 0; k < a->n_hc; k++)
        if (a->hc_trk[k] == id) {
            a->hc_det[k] = d;
            return;
        }
    a->hc_trk[a->n_hc] = id, a->hc_det[a->n_hc++] = d;
}

/* Binary masks (> 0) of n maps of hw, resized to s x s first when they are not. */
static samc_status binarise(const float *m, int n, int src, int s, uint8_t *out, samc_error *err)
{
    const int64_t hw = (int64_t)s * s;
    float *tmp = src != s ? malloc((size_t)n * hw * sizeof *tmp) : NULL;
    if (src != s && (!tmp || samc_resize_bilinear(m, n, 1, src, src, s, s, tmp)))
        return free(tmp), samc_fail(err, SAMC_ERR_NOMEM, "out of memory (resize)");
    const float *x = tmp ? tmp : m;
    for (int64_t i = 0; i < n * hw; i++)
        out[i] = x[i] > 0.0f;
    free(tmp);
    return SAMC_OK;
}

static samc_status alloc_assoc(s3_assoc *a, int N, int M)
{
    a->n_det = N;
    a->new_det = malloc((size_t)(N + 1) * sizeof(int)), a->unmatched = malloc((size_t)(M + 1) * sizeof(int));
    a->empty = malloc((size_t)(M + 1) * sizeof(int)), a->matched = calloc((size_t)N + 1, sizeof(int *));
    a->n_matched = calloc((size_t)N + 1, sizeof(int));
    a->hc_trk = malloc((size_t)(N + 1) * sizeof(int)), a->hc_det = malloc((size_t)(N + 1) * sizeof(int));
    return a->new_det && a->unmatched && a->empty && a->matched && a->n_matched && a->hc_trk && a->hc_det
               ? SAMC_OK : SAMC_ERR_NOMEM;
}

/* The decisions on the IoU matrix (N x M): matches, new detections, pairs. */
static samc_status decide(const samc_sam3_loop_config *c, const float *ious, const float *scores, const uint8_t *tb,
                          int64_t hw, const int *ids, int N, int M, s3_assoc *a)
{
    const float t_det = (float)c->assoc_iou_thresh, t_trk = (float)c->trk_assoc_iou_thresh;
    const float t_new = (float)c->new_det_thresh, hc = (float)SAMC_S3_ASSOC_HIGH_CONF, hi = (float)SAMC_S3_ASSOC_HIGH_IOU;
    for (int j = 0; j < M; j++) {
        bool matched = false, nonempty = false;
        for (int i = 0; i < N; i++)
            matched |= ious[i * M + j] >= t_trk;
        for (int64_t p = 0; p < hw && !nonempty; p++)
            nonempty = tb[j * hw + p];
        if (!nonempty)
            a->empty[a->n_empty++] = ids[j];
        else if (!matched)
            a->unmatched[a->n_unmatched++] = ids[j];
    }
    for (int d = 0; d < N; d++) {
        int best = 0, k = 0;
        bool any = false;
        if (!(a->matched[d] = malloc((size_t)(M + 1) * sizeof(int))))
            return SAMC_ERR_NOMEM;
        for (int j = 0; j < M; j++) {
            if (ious[d * M + j] >= t_det)
                a->matched[d][k++] = ids[j], any = true;
            best = ious[d * M + j] > ious[d * M + best] ? j : best; /* np.argmax: the first maximum */
        }
        a->n_matched[d] = k;
        const bool is_new = scores[d] >= t_new && !any;
        if (is_new)
            a->new_det[a->n_new++] = d;
        if (scores[d] >= hc && !is_new && ious[d * M + best] >= hi)
            set_high_conf(a, ids[best], d);
    }
    return SAMC_OK;
}

static void trace_assoc(samc_sam3_video *v, int t, const s3_detections *det, const float *trk, const int *ids, int M,
                        int s4, const float *ious, const uint8_t *db, const uint8_t *tb, const s3_assoc *a)
{
    const int N = det->n;
    s3_rec r = {0};
    int *pairs = malloc((size_t)(2 * a->n_hc + 1) * sizeof *pairs);
    for (int k = 0; pairs && k < a->n_hc; k++)
        pairs[2 * k] = a->hc_trk[k], pairs[2 * k + 1] = a->hc_det[k];
    samc__s3_rec_floats(&r, "in/det_scores", 1, (const int64_t[]){N}, det->scores.data);
    samc__s3_rec_floats(&r, "in/trk_masks", 3, (const int64_t[]){M, s4, s4}, trk);
    samc__s3_rec_ints(&r, "new_det_fa_inds", a->new_det, a->n_new);
    samc__s3_rec_ints(&r, "unmatched_trk_obj_ids", a->unmatched, a->n_unmatched);
    samc__s3_rec_ints(&r, "empty_trk_obj_ids", a->empty, a->n_empty);
    samc__s3_rec_ints(&r, "trk_id_to_max_iou_high_conf_det", pairs, 2 * a->n_hc);
    r.t[r.n - 1].ndim = 2, r.t[r.n - 1].shape[0] = a->n_hc, r.t[r.n - 1].shape[1] = 2;
    if (N > 0 && M > 0) {
        const int64_t hw = (int64_t)s4 * s4;
        float *fd = malloc((size_t)(N + M) * hw * sizeof *fd);
        for (int64_t p = 0; fd && p < (N + M) * hw; p++)
            fd[p] = p < N * hw ? db[p] : tb[p - N * hw];
        samc__s3_rec_floats(&r, "ious", 2, (const int64_t[]){N, M}, ious);
        if (fd) {
            samc__s3_rec_floats(&r, "det_masks_binary", 3, (const int64_t[]){N, s4, s4}, fd);
            samc__s3_rec_floats(&r, "trk_masks_binary", 3, (const int64_t[]){M, s4, s4}, fd + N * hw);
        }
        for (int d = 0; d < N && r.n < 22; d++) {
            char slot[48];
            snprintf(slot, sizeof slot, "det_to_matched_trk_obj_ids.%d", d);
            samc__s3_rec_ints(&r, slot, a->matched[d], a->n_matched[d]);
        }
        free(fd);
    }
    samc__s3_rec_emit(v, &r, S3R_ASSOCIATE, t, -1);
    free(pairs);
    (void)ids;
}

samc_status samc__s3v_associate(samc_sam3_video *v, int t, const s3_detections *det, const float *trk_masks,
                                const int *trk_ids, int M, int s4, s3_assoc *a, samc_error *err)
{
    memset(a, 0, sizeof *a);
    const int N = det->n, sd = N ? (int)det->mask.shape[1] : s4, s = sd < s4 ? sd : s4;
    const int64_t hw = (int64_t)s * s;
    if (alloc_assoc(a, N, M))
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    uint8_t *db = malloc((size_t)N * hw + 1), *tb = malloc((size_t)M * hw + 1);
    float *ious = malloc((size_t)(N * M + 1) * sizeof *ious);
    samc_status st = db && tb && ious ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        st = binarise(det->mask.data, N, sd, s, db, err);
    if (!st)
        st = binarise(trk_masks, M, s4, s, tb, err);
    if (!st && M == 0) { /* no track: every detection is new, whatever its score */
        for (int d = 0; d < N; d++)
            a->new_det[a->n_new++] = d;
    } else if (!st && N == 0) {
        st = decide(&v->m->video.loop, ious, NULL, tb, hw, trk_ids, 0, M, a) ? SAMC_ERR_NOMEM : SAMC_OK;
    } else if (!st) {
        samc__s3_mask_iou(db, N, tb, M, hw, ious);
        const samc_sam3_loop_config *c = &v->m->video.loop;
        float *sc = malloc((size_t)N * sizeof *sc); /* the scores as the decisions take them */
        if (sc) {
            memcpy(sc, det->scores.data, (size_t)N * sizeof *sc);
            samc__s3v_decide(v, t, "@associate", "in/det_scores", sc, N, (float)c->new_det_thresh, SAMC_CMP_GE);
            samc__s3v_decide(v, t, "@associate", "in/det_scores", sc, N, (float)SAMC_S3_ASSOC_HIGH_CONF, SAMC_CMP_GE);
            const float thr[3] = {(float)c->trk_assoc_iou_thresh, (float)c->assoc_iou_thresh,
                                  (float)SAMC_S3_ASSOC_HIGH_IOU};
            for (int k = 0; k < 3; k++)
                samc__s3v_decide(v, t, "@associate", "ious", ious, (int64_t)N * M, thr[k], SAMC_CMP_GE);
        }
        if (!sc || decide(c, ious, sc, tb, hw, trk_ids, N, M, a))
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        free(sc);
    }
    if (!st && v->x->trace)
        trace_assoc(v, t, det, trk_masks, trk_ids, M, s4, ious, db, tb, a);
    free(db), free(tb), free(ious);
    if (st)
        samc__s3_assoc_free(a);
    return st;
}

samc_status samc__s3v_drop_over_limit(samc_sam3_video *v, int t, s3_assoc *a, const s3_detections *det, int keep,
                                      samc_error *err)
{
    int *order = malloc((size_t)(a->n_new + 1) * sizeof *order), *kept = malloc((size_t)(a->n_new + 1) * sizeof *kept);
    if (!order || !kept) {
        free(order), free(kept);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    int n = 0;
    if (keep == a->n_new) { /* all kept, in place */
        memcpy(kept, a->new_det, (size_t)a->n_new * sizeof *kept), n = a->n_new;
    } else if (keep > 0) { /* the best scores (argsort()[::-1]) */
        argsort_desc(det->scores.data, a->new_det, a->n_new, order);
        for (; n < keep; n++)
            kept[n] = a->new_det[order[n]];
    }
    if (v->x->trace) {
        s3_rec r = {0};
        samc__s3_rec_ints(&r, "in/new_det_fa_inds", a->new_det, a->n_new);
        samc__s3_rec_ints(&r, "0", kept, n);
        samc__s3_rec_emit(v, &r, S3R_DROP, t, -1);
    }
    memcpy(a->new_det, kept, (size_t)n * sizeof *kept);
    a->n_new = n;
    free(order), free(kept);
    return SAMC_OK;
}
