/* geometry_encoder.c - sam3/model/geometry_encoders.py
 * SequenceGeometryEncoder.forward up to its transformer layers:
 * _encode_points, _encode_boxes, the CLS token, concat_padded_sequences and
 * final_proj + norm (encode_boxes_as_points False, no mask encoder). The
 * layers themselves are encoder.c (TransformerEncoderLayer, seq-first) and
 * encode_norm a LayerNorm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/box_geom.h"
#include "core/nn/roi_sample.h"
#include "core/nn/sine_embed.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

#define ERR(ctx) ((ctx) ? (ctx)->err : NULL)

/* A prompt part: n tokens of batch B; NULL or empty tensors mean n = 0. */
static int count_of(const samc_tensor *t)
{
    return (t && t->ndim >= 1 && samc_numel(t) > 0) ? (int)t->shape[0] : 0;
}

static float mask_at(const samc_tensor *mask, int b, int n, int j)
{
    return (mask && mask->data[(int64_t)b * n + j] != 0.0f) ? 1.0f : 0.0f;
}

/* label_embed(labels.long()) row of element (i, b) of an (n, B) label tensor. */
static samc_status label_row(const samc_sam3_geometry_encoder *g, const samc_tensor *labels, int i,
                             int B, int b, const float **row, samc_error *err)
{
    const float v = labels ? labels->data[(int64_t)i * B + b] : 1.0f;
    if (v != 0.0f && v != 1.0f)
        return samc_fail(err, SAMC_ERR_ARG, "geometry encoder: label %g is not 0 or 1", (double)v);
    *row = g->label_embed + (int64_t)(v != 0.0f) * g->d_model;
    return SAMC_OK;
}

static void add_into(float *y, const float *a, int n)
{
    for (int i = 0; i < n; i++)
        y[i] = y[i] + a[i];
}

/* _encode_points: direct projection + grid_sample pooling + sine position
 * projection, then type_embed + points_embed. normed (B, C, H, W). */
static samc_status encode_points(const samc_sam3_geometry_encoder *g, const samc_tensor *pts,
                                 const samc_tensor *labels, int Np, int B, const float *normed,
                                 int H, int W, float *out, samc_error *err)
{
    const int C = g->d_model, F = g->pe.num_pos_feats / 2;
    float *tmp = malloc((size_t)2 * C * sizeof *tmp), *v = malloc((size_t)2 * C * sizeof *v);
    samc_status st = SAMC_OK;
    if (!tmp || !v) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "geometry encoder: point buffers");
        goto done;
    }
    for (int i = 0; i < Np && !st; i++)
        for (int b = 0; b < B && !st; b++) {
            const float *p = pts->data + ((int64_t)i * B + b) * 2;
            float *o = out + ((int64_t)i * B + b) * C;
            bool have = false;
            if (g->points_direct.w) {
                samc_ref_linear(p, 1, &g->points_direct, o);
                have = true;
            }
            if (g->points_pool.w) {
                /* grid = points * 2 - 1; F.grid_sample(img, grid, align_corners=False) */
                samc_bilinear_tap t;
                samc_grid_sample_tap(p[0] * 2.0f - 1.0f, p[1] * 2.0f - 1.0f, H, W, &t);
                for (int c = 0; c < C; c++) {
                    const float *pl = normed + ((int64_t)b * C + c) * H * W;
                    float s = 0.0f;
                    for (int k = 0; k < 4; k++)
                        s = s + (t.in[k] ? pl[t.i[k]] : 0.0f) * t.w[k];
                    v[c] = s;
                }
                samc_ref_linear(v, 1, &g->points_pool, tmp);
                if (have)
                    add_into(o, tmp, C);
                else
                    memcpy(o, tmp, (size_t)C * sizeof *o);
                have = true;
            }
            if (g->points_pos.w) { /* cat([_encode_xy x, _encode_xy y]) */
                samc_sine_encode_coord(p[0], g->pe.scale, g->pe.temperature, F, v);
                samc_sine_encode_coord(p[1], g->pe.scale, g->pe.temperature, F, v + F);
                samc_ref_linear(v, 1, &g->points_pos, tmp);
                if (have)
                    add_into(o, tmp, C);
                else
                    memcpy(o, tmp, (size_t)C * sizeof *o);
                have = true;
            }
            if (!have)
                memset(o, 0, (size_t)C * sizeof *o);
            const float *lab = NULL;
            st = label_row(g, labels, i, B, b, &lab, err);
            for (int c = 0; c < C && !st; c++)
                o[c] = lab[c] + o[c];
        }
done:
    free(tmp), free(v);
    return st;
}

/* roi_align of one box (already in feature-map pixels) on the B-th normed
 * map, then boxes_pool_project (Conv2d k = roi_size to 1x1) -> out (C). */
static samc_status pool_box(const samc_sam3_geometry_encoder *g, const float xyxy[4],
                            const float *normed_b, int H, int W, float *roi, float *out,
                            samc_error *err)
{
    const int C = g->d_model, R = g->roi_size;
    samc_bilinear_tap *taps = NULL;
    int gh, gw, count;
    samc_status st = samc_roi_align_taps(xyxy, 1.0f, -1, false, H, W, R, R, &taps, &gh, &gw, &count);
    if (st)
        return samc_fail(err, st, "geometry encoder: roi_align taps");
    for (int c = 0; c < C; c++) {
        const float *pl = normed_b + (int64_t)c * H * W;
        for (int bin = 0; bin < R * R; bin++) {
            double acc = 0;
            for (int s = 0; s < gh * gw; s++) {
                const samc_bilinear_tap *t = &taps[(int64_t)bin * gh * gw + s];
                for (int k = 0; k < 4; k++)
                    acc += (double)t->w[k] * pl[t->i[k]];
            }
            roi[(int64_t)c * R * R + bin] = (float)(acc / count);
        }
    }
    free(taps);
    samc_ref_conv2d_nchw(roi, 1, R, R, &g->boxes_pool, out); /* (1, C, R, R) -> (1, C, 1, 1) */
    return SAMC_OK;
}

/* _encode_boxes: direct projection + roi pooling + box position projection,
 * then type_embed + boxes_embed. */
static samc_status encode_boxes(const samc_sam3_geometry_encoder *g, const samc_tensor *boxes,
                                const samc_tensor *labels, int Nb, int B, const float *normed,
                                int H, int W, float *out, samc_error *err)
{
    const int C = g->d_model, F = g->pe.num_pos_feats / 2, R = g->roi_size;
    float *tmp = malloc((size_t)C * sizeof *tmp), *v = malloc((size_t)(2 * F + 2) * sizeof *v);
    float *roi = malloc((size_t)C * R * R * sizeof *roi);
    samc_status st = SAMC_OK;
    if (!tmp || !v || !roi) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "geometry encoder: box buffers");
        goto done;
    }
    for (int i = 0; i < Nb && !st; i++)
        for (int b = 0; b < B && !st; b++) {
            const float *bx = boxes->data + ((int64_t)i * B + b) * 4;
            float *o = out + ((int64_t)i * B + b) * C;
            bool have = false;
            if (g->boxes_direct.w) {
                samc_ref_linear(bx, 1, &g->boxes_direct, o);
                have = true;
            }
            if (g->boxes_pool.w) {
                /* box_cxcywh_to_xyxy(boxes) * [W, H, W, H] */
                float xyxy[4];
                samc_box_cxcywh_to_xyxy(bx, xyxy);
                xyxy[0] = xyxy[0] * (float)W, xyxy[1] = xyxy[1] * (float)H;
                xyxy[2] = xyxy[2] * (float)W, xyxy[3] = xyxy[3] * (float)H;
                st = pool_box(g, xyxy, normed + (int64_t)b * C * H * W, H, W, roi, tmp, err);
                if (st)
                    break;
                if (have)
                    add_into(o, tmp, C);
                else
                    memcpy(o, tmp, (size_t)C * sizeof *o);
                have = true;
            }
            if (g->boxes_pos.w) { /* pos_enc.encode_boxes(cx, cy, w, h): y, x, h, w */
                samc_sine_encode_box(bx, g->pe.scale, g->pe.temperature, F, v);
                samc_ref_linear(v, 1, &g->boxes_pos, tmp);
                if (have)
                    add_into(o, tmp, C);
                else
                    memcpy(o, tmp, (size_t)C * sizeof *o);
                have = true;
            }
            if (!have)
                memset(o, 0, (size_t)C * sizeof *o);
            const float *lab = NULL;
            st = label_row(g, labels, i, B, b, &lab, err);
            for (int c = 0; c < C && !st; c++)
                o[c] = lab[c] + o[c];
        }
done:
    free(tmp), free(v), free(roi);
    return st;
}

/* concat_padded_sequences(seq1, mask1, seq2, mask2) for seq-first (n, B, C)
 * blocks: zeros, seq1 copied to rows [0, n1), then row j of seq2 scattered to
 * row j + len1[b] (all n2 rows, padded ones included); mask = row >= len1 + len2. */
static void concat_padded(const float *s1, const float *m1, int n1, const float *s2,
                          const float *m2, int n2, int B, int C, float *out, float *mout)
{
    const int n = n1 + n2;
    memset(out, 0, (size_t)n * B * C * sizeof *out);
    if (n1)
        memcpy(out, s1, (size_t)n1 * B * C * sizeof *out);
    for (int b = 0; b < B; b++) {
        int len1 = 0, len2 = 0;
        for (int j = 0; j < n1; j++)
            len1 += m1[(int64_t)b * n1 + j] == 0.0f;
        for (int j = 0; j < n2; j++)
            len2 += m2[(int64_t)b * n2 + j] == 0.0f;
        for (int j = 0; j < n2; j++)
            memcpy(out + ((int64_t)(j + len1) * B + b) * C, s2 + ((int64_t)j * B + b) * C,
                   (size_t)C * sizeof *out);
        for (int j = 0; j < n; j++)
            mout[(int64_t)b * n + j] = j >= len1 + len2 ? 1.0f : 0.0f;
    }
}

samc_status samc_ref_sam3_geo_prompt(samc_ctx *ctx, const samc_sam3_geometry_encoder *g,
                                     const samc_tensor *points, const samc_tensor *point_mask,
                                     const samc_tensor *point_labels, const samc_tensor *boxes,
                                     const samc_tensor *box_mask, const samc_tensor *box_labels,
                                     const samc_tensor *img, int H, int W, samc_tensor *embeds,
                                     samc_tensor *mask)
{
    samc_error *err = ERR(ctx);
    const int C = g->d_model;
    if (img->ndim != 3 || img->shape[2] != C || img->shape[0] != (int64_t)H * W)
        return samc_fail(err, SAMC_ERR_SHAPE, "geometry encoder: image features are not (%d,B,%d)",
                         H * W, C);
    const int B = (int)img->shape[1], Np = count_of(points), Nb = count_of(boxes);
    const int ncls = g->cls_embed ? 1 : 0, N = Np + Nb + ncls;
    const int64_t pshape[3] = {Np, B, 2}, bshape[3] = {Nb, B, 4};
    const int64_t pm[2] = {B, Np}, bm[2] = {B, Nb}, pl[2] = {Np, B}, bl[2] = {Nb, B};
    if ((Np && (!samc_ref_sam3_shape_is(points, 3, pshape) ||
                (point_mask && !samc_ref_sam3_shape_is(point_mask, 2, pm)) ||
                (point_labels && !samc_ref_sam3_shape_is(point_labels, 2, pl)))) ||
        (Nb && (!samc_ref_sam3_shape_is(boxes, 3, bshape) ||
                (box_mask && !samc_ref_sam3_shape_is(box_mask, 2, bm)) ||
                (box_labels && !samc_ref_sam3_shape_is(box_labels, 2, bl)))))
        return samc_fail(err, SAMC_ERR_SHAPE,
                         "geometry encoder: points must be (N,%d,2), boxes (N,%d,4), masks "
                         "(%d,N), labels (N,%d)", B, B, B, B);
    const int64_t es[3] = {N, B, C}, ms[2] = {B, N};
    if (N == 0 || !samc_ref_sam3_shape_is(embeds, 3, es) || !samc_ref_sam3_shape_is(mask, 2, ms))
        return samc_fail(err, SAMC_ERR_SHAPE, "geometry encoder: outputs must be (%d,%d,%d) and "
                                              "(%d,%d)", N, B, C, B, N);
    if ((Np && g->points_pos.w) || (Nb && g->boxes_pos.w))
        if (g->pe.num_pos_feats != C)
            return samc_fail(err, SAMC_ERR_SHAPE, "geometry encoder: pos_enc has %d features, "
                                                  "d_model %d", g->pe.num_pos_feats, C);
    const bool pool = (Np && g->points_pool.w) || (Nb && g->boxes_pool.w);
    const int64_t hw = (int64_t)H * W;
    float *normed = NULL, *nrows = NULL, *pe = NULL, *be = NULL, *cat = NULL, *catm = NULL;
    float *pmask = NULL, *bmask = NULL;
    samc_status st = SAMC_OK;
    pe = malloc((size_t)(Np ? Np : 1) * B * C * sizeof *pe);
    be = malloc((size_t)(Nb ? Nb : 1) * B * C * sizeof *be);
    cat = malloc((size_t)N * B * C * sizeof *cat);
    catm = malloc((size_t)B * N * sizeof *catm);
    pmask = calloc((size_t)B * (Np ? Np : 1), sizeof *pmask);
    bmask = calloc((size_t)B * (Nb ? Nb : 1), sizeof *bmask);
    if (!pe || !be || !cat || !catm || !pmask || !bmask)
        goto nomem;
    if (pool) { /* img_pre_norm on (HW, B, C), then permute(1, 2, 0).view(B, C, H, W) */
        normed = malloc((size_t)B * C * hw * sizeof *normed);
        nrows = malloc((size_t)hw * B * C * sizeof *nrows);
        if (!normed || !nrows)
            goto nomem;
        if (g->has_img_pre_norm)
            samc_ref_layer_norm_rows(img->data, hw * B, &g->img_pre_norm, nrows);
        else
            memcpy(nrows, img->data, (size_t)(hw * B * C) * sizeof *nrows);
        for (int64_t p = 0; p < hw; p++)
            for (int b = 0; b < B; b++)
                for (int c = 0; c < C; c++)
                    normed[((int64_t)b * C + c) * hw + p] = nrows[(p * B + b) * C + c];
    }
    for (int b = 0; b < B; b++) {
        for (int j = 0; j < Np; j++)
            pmask[(int64_t)b * Np + j] = mask_at(point_mask, b, Np, j);
        for (int j = 0; j < Nb; j++)
            bmask[(int64_t)b * Nb + j] = mask_at(box_mask, b, Nb, j);
    }
    if (Np && (st = encode_points(g, points, point_labels, Np, B, normed, H, W, pe, err)))
        goto done;
    if (Nb && (st = encode_boxes(g, boxes, box_labels, Nb, B, normed, H, W, be, err)))
        goto done;
    /* final_embeds, final_mask = concat_padded_sequences(points, boxes) */
    concat_padded(pe, pmask, Np, be, bmask, Nb, B, C, embeds->data, mask->data);
    if (ncls) { /* ... then the CLS token (mask 0) */
        for (int b = 0; b < B; b++)
            memcpy(be + (int64_t)b * C, g->cls_embed, (size_t)C * sizeof *be);
        memcpy(cat, embeds->data, (size_t)(Np + Nb) * B * C * sizeof *cat);
        memcpy(catm, mask->data, (size_t)B * (Np + Nb) * sizeof *catm);
        float *zero = pmask; /* (B, 1) zeros: reuse */
        memset(zero, 0, (size_t)B * sizeof *zero);
        concat_padded(cat, catm, Np + Nb, be, zero, 1, B, C, embeds->data, mask->data);
    }
    if (g->has_final_proj) { /* self.norm(self.final_proj(final_embeds)) */
        for (int64_t r = 0; r < (int64_t)N * B; r++) {
            samc_ref_linear(embeds->data + r * C, 1, &g->final_proj, cat);
            samc_ref_layer_norm_rows(cat, 1, &g->norm, embeds->data + r * C);
        }
    }
    goto done;
nomem:
    st = samc_fail(err, SAMC_ERR_NOMEM, "geometry encoder: buffers");
done:
    free(normed), free(nrows), free(pe), free(be), free(cat), free(catm), free(pmask), free(bmask);
    return st;
}
