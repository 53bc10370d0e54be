/* SPDX-License-Identifier: Apache-2.0 */
/* geometry_encoder.c - SequenceGeometryEncoder's prompt encoding
 * (sam3/model/geometry_encoders.py: _encode_points, _encode_boxes, the CLS
 * token, concat_padded_sequences, final_proj + norm), fast body.
 *
 * The prompt tokens of one part (every point, or every box, of the batch)
 * are the rows of one matrix, so each projection is one GEMM over all of
 * them (points_direct, points_pool, points_pos, boxes_direct, boxes_pool,
 * boxes_pos, final_proj), the terms of a token summed by accumulating GEMMs.
 * The image features are sampled where they lie, in the seq-first (HW, B, C)
 * rows after img_pre_norm, a vector of channels per bilinear tap, instead of
 * through the (B, C, H, W) copy the official code (and ref) make. The
 * contract, labels, sampling positions, sine encodings and the packing are
 * core/models/sam3/sam3_geo_prompt.h, shared with ref. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_geo_prompt.h"
#include "fast/fast.h"
#include "fast/sam3/fast_sam3.h"

/* A token term: y = x W^T + b (the first one), else y += x W^T + b. */
static void term(const samc_ctx *ctx, int nt, const float *x, int64_t ldx, int64_t rows, const samc_linear *l,
                 float *y, bool *have)
{
    samc__fast_linear_x(ctx, nt, x, ldx, rows, l, y, l->out, *have ? FAST_GEMM_ACC : 0);
    *have = true;
}

/* Token row r = i*B + b: o[r] = label_embed row + o[r] (o zero when no term was on). */
static samc_status add_labels(const samc_sam3_geometry_encoder *g, const samc_tensor *labels, int n, int B, bool have,
                              float *o, samc_error *err)
{
    const int C = g->d_model;
    if (!have)
        memset(o, 0, (size_t)n * B * C * sizeof *o);
    for (int i = 0; i < n; i++)
        for (int b = 0; b < B; b++) {
            const float *lab = NULL;
            samc_status st = samc_sam3_geo_label_row(g, labels, i, B, b, &lab, err);
            if (st)
                return st;
            float *r = o + ((int64_t)i * B + b) * C;
            samc__fast_add(r, lab, r, C);
        }
    return SAMC_OK;
}

/* grid_sample of each point row r = i*B + b on the feature rows feat (HW, B,
 * C) -> v (rows, C); corners outside the map count 0. */
static void sample_points(const float *pts, int64_t rows, int B, const float *feat, int H, int W, int C, float *v)
{
    for (int64_t r = 0; r < rows; r++) {
        const int64_t b = r % B;
        samc_bilinear_tap t;
        samc_sam3_geo_point_tap(pts + r * 2, H, W, &t);
        float *o = v + r * C;
        memset(o, 0, (size_t)C * sizeof *o);
        for (int k = 0; k < 4; k++) {
            if (!t.in[k])
                continue;
            const float *src = feat + (t.i[k] * B + b) * C, w = t.w[k];
            for (int c = 0; c < C; c++)
                o[c] = o[c] + src[c] * w;
        }
    }
}

static samc_status encode_points(const samc_ctx *ctx, int nt, const samc_sam3_geometry_encoder *g,
                                 const samc_tensor *pts, const samc_tensor *labels, const samc_sam3_geo_dims *d,
                                 const float *feat, int H, int W, float *pe, float *v)
{
    const int C = g->d_model;
    const int64_t rows = (int64_t)d->Np * d->B;
    bool have = false;
    if (g->points_direct.w)
        term(ctx, nt, pts->data, 2, rows, &g->points_direct, pe, &have);
    if (g->points_pool.w) {
        sample_points(pts->data, rows, d->B, feat, H, W, C, v);
        term(ctx, nt, v, C, rows, &g->points_pool, pe, &have);
    }
    if (g->points_pos.w) {
        for (int64_t r = 0; r < rows; r++)
            samc_sam3_geo_point_pos(g, pts->data + r * 2, v + r * C);
        term(ctx, nt, v, C, rows, &g->points_pos, pe, &have);
    }
    return add_labels(g, labels, d->Np, d->B, have, pe, ctx->err);
}

typedef struct box_taps {
    samc_bilinear_tap *t; /* n taps per bin (malloc'd, NULL when the grid is empty) */
    int n, count;         /* count: roi_align's divisor */
} box_taps;

/* roi_align of each box row r = i*B + b on feat (HW, B, C) -> roi (rows, C*R*R)
 * in the (c, bin) order of boxes_pool_project's weight; one task per (box,
 * bin), acc: C floats per thread. A sample sums its taps as torchvision's
 * kernel does (w1 v1 + w2 v2 + w3 v3 + w4 v4, then added to the bin). */
static void pool_boxes(int nt, const box_taps *bt, int64_t rows, int B, int R, int C, const float *feat, float *roi,
                       float *acc)
{
    const int RR = R * R;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
    for (int64_t job = 0; job < rows * RR; job++) {
        const int64_t r = job / RR, b = r % B;
        const int bin = (int)(job % RR);
        const box_taps *x = &bt[r];
        float *a = acc + (size_t)omp_get_thread_num() * C;
        memset(a, 0, (size_t)C * sizeof *a);
        for (int s = 0; s < x->n; s++) {
            const samc_bilinear_tap *t = &x->t[(int64_t)bin * x->n + s];
            const float *v0 = feat + (t->i[0] * B + b) * C, *v1 = feat + (t->i[1] * B + b) * C;
            const float *v2 = feat + (t->i[2] * B + b) * C, *v3 = feat + (t->i[3] * B + b) * C;
            const float w0 = t->w[0], w1 = t->w[1], w2 = t->w[2], w3 = t->w[3];
            for (int c = 0; c < C; c++)
                a[c] = a[c] + (w0 * v0[c] + w1 * v1[c] + w2 * v2[c] + w3 * v3[c]);
        }
        float *dst = roi + r * C * RR + bin;
        for (int c = 0; c < C; c++)
            dst[(int64_t)c * RR] = a[c] / (float)x->count;
    }
}

/* boxes_pool_project, a Conv2d(C, C, R) on the R x R roi (-> 1 x 1), is a
 * linear over the flattened roi: its (cout, cin, R, R) weight is that
 * linear's (out, in) matrix, and so is a packed copy of it where the
 * implementation prepared one. */
static samc_linear pool_as_linear(const samc_conv2d *c)
{
    samc_linear l = {.w = c->w, .b = c->b, .in = c->cin * c->kh * c->kw, .out = c->cout};
    memcpy(l.prep, c->prep, sizeof l.prep);
    return l;
}

/* The boxes_pool term: roi_align taps of every box, the pooled rois, one GEMM. */
static samc_status pool_term(const samc_ctx *ctx, int nt, const samc_sam3_geometry_encoder *g,
                             const samc_tensor *boxes, const samc_sam3_geo_dims *d, const float *feat, int H, int W,
                             float *roi, float *acc, float *be, bool *have)
{
    const int64_t rows = (int64_t)d->Nb * d->B;
    box_taps *bt = calloc((size_t)rows, sizeof *bt);
    if (!bt)
        return samc_fail(ctx->err, SAMC_ERR_NOMEM, "geometry encoder: roi_align taps");
    samc_status st = SAMC_OK;
    for (int64_t r = 0; r < rows && !st; r++) {
        int gh = 0, gw = 0;
        st = samc_sam3_geo_box_taps(g, boxes->data + r * 4, H, W, &bt[r].t, &gh, &gw, &bt[r].count, ctx->err);
        bt[r].n = gh * gw;
    }
    if (!st) {
        const samc_linear pool = pool_as_linear(&g->boxes_pool);
        pool_boxes(nt, bt, rows, d->B, g->roi_size, g->d_model, feat, roi, acc);
        term(ctx, nt, roi, pool.in, rows, &pool, be, have);
    }
    for (int64_t r = 0; r < rows; r++)
        free(bt[r].t);
    free(bt);
    return st;
}

static samc_status encode_boxes(const samc_ctx *ctx, int nt, const samc_sam3_geometry_encoder *g,
                                const samc_tensor *boxes, const samc_tensor *labels, const samc_sam3_geo_dims *d,
                                const float *feat, int H, int W, float *be, float *v, float *roi, float *acc)
{
    const int C = g->d_model;
    const int64_t rows = (int64_t)d->Nb * d->B;
    bool have = false;
    samc_status st = SAMC_OK;
    if (g->boxes_direct.w)
        term(ctx, nt, boxes->data, 4, rows, &g->boxes_direct, be, &have);
    if (g->boxes_pool.w && (st = pool_term(ctx, nt, g, boxes, d, feat, H, W, roi, acc, be, &have)))
        return st;
    if (g->boxes_pos.w) { /* pos_enc.encode_boxes(cx, cy, w, h): y, x, h, w */
        for (int64_t r = 0; r < rows; r++)
            samc_sam3_geo_box_pos(g, boxes->data + r * 4, v + r * (C + 2));
        term(ctx, nt, v, C + 2, rows, &g->boxes_pos, be, &have);
    }
    return add_labels(g, labels, d->Nb, d->B, have, be, ctx->err);
}

static size_t at_least_1(size_t n) { return n ? n : 1; }

samc_status samc_fast_sam3_geo_prompt(samc_ctx *ctx, const samc_sam3_geometry_encoder *g,
                                      const samc_tensor *points, const samc_tensor *point_mask,
                                      const samc_tensor *point_labels, const samc_tensor *boxes,
                                      const samc_tensor *box_mask, const samc_tensor *box_labels,
                                      const samc_tensor *img, int H, int W, samc_tensor *embeds, samc_tensor *mask)
{
    samc_sam3_geo_dims d;
    samc_status st = samc_sam3_geo_check(g, points, point_mask, point_labels, boxes, box_mask, box_labels, img, H,
                                         W, embeds, mask, &d, ctx->err);
    if (st)
        return st;
    const int C = g->d_model, B = d.B, RR = g->roi_size * g->roi_size, nt = samc__fast_threads(ctx);
    const size_t hw = (size_t)H * W, prow = (size_t)d.Np * B, brow = (size_t)d.Nb * B, nrow = (size_t)d.N * B;
    const bool norm_map = d.pool && g->has_img_pre_norm, roi_on = d.Nb && g->boxes_pool.w;
    const size_t vn = prow * C > brow * (C + 2) ? prow * C : brow * (C + 2);
    const size_t counts[8] = {norm_map ? hw * B * C : 1, at_least_1(prow * C), at_least_1(brow * C),
                              at_least_1(vn), roi_on ? brow * C * RR + (size_t)nt * C : 1,
                              at_least_1((size_t)B * (d.Np + d.Nb)), samc_sam3_geo_pack_scratch(&d, C),
                              at_least_1(nrow * C)};
    float *buf[8];
    if ((st = samc__fast_ws_get(ctx, 8, counts, buf)))
        return samc_fail(ctx->err, st, "geometry encoder: out of memory");
    float *pe = buf[1], *be = buf[2], *v = buf[3], *roi = buf[4], *pmask = buf[5], *bmask = pmask + (size_t)B * d.Np;
    const float *feat = img->data;
    if (norm_map) { /* img_pre_norm on the (HW, B, C) rows, sampled in place */
        samc__fast_layer_norm(nt, img->data, (int64_t)(hw * B), &g->img_pre_norm, buf[0]);
        feat = buf[0];
    }
    if (d.Np && (st = encode_points(ctx, nt, g, points, point_labels, &d, feat, H, W, pe, v)))
        return st;
    float *acc = roi_on ? roi + brow * C * RR : NULL;
    if (d.Nb && (st = encode_boxes(ctx, nt, g, boxes, box_labels, &d, feat, H, W, be, v, roi, acc)))
        return st;
    samc_sam3_geo_pad_mask(point_mask, B, d.Np, pmask);
    samc_sam3_geo_pad_mask(box_mask, B, d.Nb, bmask);
    samc_sam3_geo_pack(g, &d, pe, pmask, be, bmask, embeds->data, mask->data, buf[6]);
    if (g->has_final_proj) { /* self.norm(self.final_proj(final_embeds)) */
        samc__fast_linear_x(ctx, nt, embeds->data, C, (int64_t)nrow, &g->final_proj, buf[7], C, 0);
        samc__fast_layer_norm(nt, buf[7], (int64_t)nrow, &g->norm, embeds->data);
    }
    return SAMC_OK;
}
