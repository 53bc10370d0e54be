/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_outputs.c - a frame's outputs (docs/sam3_video.md 5.2):
 * Sam3VideoInference._postprocess_output (sorted ids, birth scores, boxes
 * from the masks, the object-wise non-overlap by tracker score), the
 * output cache (_cache_frame_outputs, _build_tracker_output) and the
 * video-size masks of low-resolution logits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_video_internal.h"
#include "core/nn/resize_bilinear.h"

void samc_sam3_outputs_free(samc_sam3_outputs *o)
{
    free(o->obj_ids), free(o->probs), free(o->boxes_xywh), free(o->masks);
    memset(o, 0, sizeof *o);
}

void samc__s3_frame_out_free(s3_frame_out *o)
{
    for (int i = 0; o->masks && i < o->n; i++)
        free(o->masks[i]);
    free(o->ids), free(o->masks);
    samc__s3m_free(&o->score), samc__s3m_free(&o->trk_score);
    samc__s3m_free(&o->removed), samc__s3m_free(&o->suppressed);
    memset(o, 0, sizeof *o);
}

samc_status samc__s3v_video_mask(const samc_sam3_video *v, const float *low, int s, uint8_t *out, samc_error *err)
{
    const int64_t HW = (int64_t)v->H * v->W;
    float *f = malloc((size_t)HW * sizeof *f);
    if (!f || samc_resize_bilinear(low, 1, 1, s, s, v->H, v->W, f)) {
        free(f);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory (resize)");
    }
    for (int64_t p = 0; p < HW; p++)
        out[p] = f[p] > 0.0f;
    free(f);
    return SAMC_OK;
}

/* masks_to_boxes as normalised xywh: min/max column and row of the mask. */
static void box_of(const uint8_t *m, int H, int W, float *xywh)
{
    int x0 = W, y0 = H, x1 = -1, y1 = -1;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (m[(int64_t)y * W + x]) {
                x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1;
                y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
            }
    xywh[0] = (float)x0 / (float)W, xywh[1] = (float)y0 / (float)H;
    xywh[2] = (float)(x1 - x0) / (float)W, xywh[3] = (float)(y1 - y0) / (float)H;
}

/* _apply_object_wise_non_overlapping_constraints with background 0: a pixel
 * stays only with the first object of the largest tracker score among those
 * covering it, and only if that score is > 0. */
static void object_non_overlap(uint8_t *masks, const float *s, int n, int64_t HW)
{
    for (int64_t p = 0; n > 1 && p < HW; p++) {
        int best = 0;
        for (int i = 1; i < n; i++)
            if ((masks[i * HW + p] ? s[i] : 0.0f) > (masks[best * HW + p] ? s[best] : 0.0f))
                best = i;
        for (int i = 0; i < n; i++)
            masks[i * HW + p] = masks[i * HW + p] && i == best && s[i] > 0.0f;
    }
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static samc_status kept_objects(const s3_frame_out *fo, const s3_map *removed, const s3_map *suppressed,
                                int64_t HW, int *order, int *n)
{
    *n = 0;
    for (int i = 0; i < fo->n; i++) {
        bool any = false;
        for (int64_t p = 0; p < HW && !any; p++)
            any = fo->masks[i][p];
        if (any && !(removed && samc__s3m_has(removed, fo->ids[i])) &&
            !(suppressed && samc__s3m_has(suppressed, fo->ids[i])))
            order[(*n)++] = i;
    }
    for (int i = 1; i < *n; i++) { /* by id */
        const int k = order[i];
        int j = i;
        while (j > 0 && fo->ids[order[j - 1]] > fo->ids[k])
            order[j] = order[j - 1], j--;
        order[j] = k;
    }
    return SAMC_OK;
}

static void trace(samc_sam3_video *v, const samc_sam3_outputs *o)
{
    s3_rec r = {0};
    const int64_t HW = (int64_t)o->H * o->W;
    float *f = malloc((size_t)(o->n * HW + 1) * sizeof *f);
    for (int64_t p = 0; f && p < o->n * HW; p++)
        f[p] = o->masks[p];
    samc__s3_rec_ints(&r, "out_obj_ids", o->obj_ids, o->n);
    samc__s3_rec_floats(&r, "out_probs", 1, (const int64_t[]){o->n}, o->probs);
    samc__s3_rec_floats(&r, "out_boxes_xywh", 2, (const int64_t[]){o->n, 4}, o->boxes_xywh);
    if (f)
        samc__s3_rec_floats(&r, "out_binary_masks", 3, (const int64_t[]){o->n, o->H, o->W}, f);
    free(f);
    samc__s3_rec_emit(v, &r, S3R_POSTPROCESS, o->frame_idx, v->click_obj);
}

samc_status samc__s3v_postprocess(samc_sam3_video *v, const s3_frame_out *fo, const s3_map *removed,
                                  const s3_map *suppressed, samc_sam3_outputs *o, samc_error *err)
{
    memset(o, 0, sizeof *o);
    const int64_t HW = (int64_t)v->H * v->W;
    int *order = malloc((size_t)(fo->n + 1) * sizeof *order), n = 0;
    float *s = malloc((size_t)(fo->n + 1) * sizeof *s);
    o->frame_idx = fo->frame, o->H = v->H, o->W = v->W;
    samc_status st = order && s ? kept_objects(fo, removed, suppressed, HW, order, &n)
                                : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    o->obj_ids = malloc((size_t)(n + 1) * sizeof *o->obj_ids), o->probs = malloc((size_t)(n + 1) * sizeof *o->probs);
    o->boxes_xywh = malloc((size_t)(4 * n + 1) * sizeof(float)), o->masks = malloc((size_t)(n * HW + 1));
    if (!st && (!o->obj_ids || !o->probs || !o->boxes_xywh || !o->masks))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int k = 0; !st && k < n; k++) {
        const int i = order[k];
        double score = 0, trk = 0;
        if (!samc__s3m_get(&fo->score, fo->ids[i], &score))
            st = samc_fail(err, SAMC_ERR_INTERNAL, "object %d has no score", fo->ids[i]);
        samc__s3m_get(&fo->trk_score, fo->ids[i], &trk); /* 0.0 when missing */
        o->obj_ids[k] = fo->ids[i], o->probs[k] = (float)score, s[k] = (float)trk;
        memcpy(o->masks + k * HW, fo->masks[i], (size_t)HW);
        box_of(fo->masks[i], v->H, v->W, o->boxes_xywh + 4 * k); /* before the non-overlap */
    }
    o->n = n;
    if (!st)
        object_non_overlap(o->masks, s, n, HW);
    if (!st && v->x->trace)
        trace(v, o);
    free(order), free(s);
    if (st)
        samc_sam3_outputs_free(o);
    return st;
}

/* ---- the output cache --------------------------------------------------------------------- */

s3_cached *samc__s3v_cache_get(samc_sam3_video *v, int frame)
{
    for (int i = 0; i < v->n_cache; i++)
        if (v->cache[i].frame == frame)
            return &v->cache[i];
    return NULL;
}

static void cached_free(s3_cached *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->masks[i]);
    free(c->ids), free(c->masks);
    c->n = c->cap = 0, c->ids = NULL, c->masks = NULL;
}

samc_status samc__s3v_cache_put(samc_sam3_video *v, const s3_frame_out *fo, const s3_map *hide, samc_error *err)
{
    s3_cached *c = samc__s3v_cache_get(v, fo->frame);
    if (!c) {
        if (v->n_cache == v->cap_cache) {
            int cap = v->cap_cache ? 2 * v->cap_cache : 16;
            s3_cached *n = realloc(v->cache, (size_t)cap * sizeof *n);
            if (!n)
                return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
            v->cache = n, v->cap_cache = cap;
        }
        c = &v->cache[v->n_cache++];
        memset(c, 0, sizeof *c);
        c->frame = fo->frame;
    }
    cached_free(c);
    const int64_t HW = (int64_t)v->H * v->W;
    c->ids = malloc((size_t)(fo->n + 1) * sizeof *c->ids), c->masks = calloc((size_t)fo->n + 1, sizeof *c->masks);
    if (!c->ids || !c->masks)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    c->cap = fo->n;
    for (int i = 0; i < fo->n; i++) {
        if (hide && samc__s3m_has(hide, fo->ids[i]))
            continue;
        if (!(c->masks[c->n] = malloc((size_t)HW)))
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        memcpy(c->masks[c->n], fo->masks[i], (size_t)HW);
        c->ids[c->n++] = fo->ids[i];
    }
    return SAMC_OK;
}

void samc__s3v_cache_del_obj(samc_sam3_video *v, int obj_id)
{
    for (int i = 0; i < v->n_cache; i++) {
        s3_cached *c = &v->cache[i];
        for (int k = 0; k < c->n; k++)
            if (c->ids[k] == obj_id) {
                free(c->masks[k]);
                c->ids[k] = c->ids[c->n - 1], c->masks[k] = c->masks[c->n - 1];
                c->n--;
                break;
            }
    }
}

void samc__s3v_cache_free(samc_sam3_video *v)
{
    for (int i = 0; i < v->n_cache; i++)
        cached_free(&v->cache[i]);
    v->n_cache = 0;
}

samc_status samc__s3v_from_cache(samc_sam3_video *v, int frame, const int *ids, uint8_t *const *masks, int n,
                                 s3_frame_out *fo, samc_error *err)
{
    memset(fo, 0, sizeof *fo);
    fo->frame = frame;
    const s3_cached *c = samc__s3v_cache_get(v, frame);
    const int64_t HW = (int64_t)v->H * v->W;
    const int cap = (c ? c->n : 0) + n;
    fo->ids = malloc((size_t)(cap + 1) * sizeof *fo->ids), fo->masks = calloc((size_t)cap + 1, sizeof *fo->masks);
    samc_status st = fo->ids && fo->masks ? SAMC_OK : SAMC_ERR_NOMEM;
    for (int k = 0; !st && c && k < c->n; k++)
        if ((fo->masks[fo->n] = malloc((size_t)HW)) != NULL)
            memcpy(fo->masks[fo->n], c->masks[k], (size_t)HW), fo->ids[fo->n++] = c->ids[k];
        else
            st = SAMC_ERR_NOMEM;
    for (int k = 0; !st && k < n; k++) { /* refined masks replace (or join) the cached ones */
        int at = fo->n;
        for (int j = 0; j < fo->n; j++)
            at = fo->ids[j] == ids[k] ? j : at;
        if (at == fo->n && !(fo->masks[fo->n++] = malloc((size_t)HW)))
            st = SAMC_ERR_NOMEM;
        if (!st)
            fo->ids[at] = ids[k], memcpy(fo->masks[at], masks[k], (size_t)HW);
    }
    if (!st)
        st = samc__s3m_copy(&fo->score, &v->meta.score);
    const s3_map *ts = samc__s3fm_get(&v->meta.trk_score, frame, false);
    if (!st && ts)
        st = samc__s3m_copy(&fo->trk_score, ts);
    const s3_map *sup = samc__s3fm_get(&v->meta.r0.suppressed, frame, false);
    if (!st && sup)
        st = samc__s3m_copy(&fo->suppressed, sup);
    if (st)
        samc__s3_frame_out_free(fo);
    (void)cmp_int;
    return st ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
}
