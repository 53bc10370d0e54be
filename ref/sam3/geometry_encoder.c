/* SPDX-License-Identifier: Apache-2.0 */
/* geometry_encoder.c - sam3/model/geometry_encoders.py
 * SequenceGeometryEncoder.forward up to its transformer layers:
 * _encode_points, _encode_boxes, the CLS token, concat_padded_sequences and
 * final_proj + norm (encode_boxes_as_points False, no mask encoder). The
 * layers themselves are encoder.c (TransformerEncoderLayer, seq-first) and
 * encode_norm a LayerNorm. The shape contract, label rows, sampling
 * positions, sine encodings and the packing are shared with fast
 * (core/models/sam3/sam3_geo_prompt.h). */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_geo_prompt.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

#define ERR(ctx) ((ctx) ? (ctx)->err : NULL)

static void add_into(float *y, const float *a, int n)
{
    for (int i = 0; i < n; i++)
        y[i] = y[i] + a[i];
}

/* o = a (first term) or o + a. */
static void put_term(float *o, const float *a, int C, bool *have)
{
    if (*have)
        add_into(o, a, C);
    else
        memcpy(o, a, (size_t)C * sizeof *o);
    *have = true;
}

/* o = label_embed row + o, after the projections (zeros when none). */
static samc_status finish_token(const samc_sam3_geometry_encoder *g, const samc_tensor *labels, int i, int B, int b,
                                bool have, float *o, samc_error *err)
{
    const int C = g->d_model;
    if (!have)
        memset(o, 0, (size_t)C * sizeof *o);
    const float *lab = NULL;
    samc_status st = samc_sam3_geo_label_row(g, labels, i, B, b, &lab, err);
    for (int c = 0; c < C && !st; c++)
        o[c] = lab[c] + o[c];
    return st;
}

/* _encode_points: direct projection + grid_sample pooling + sine position
 * projection, then type_embed + points_embed. normed (B, C, H, W). */
static samc_status encode_points(const samc_sam3_geometry_encoder *g, const samc_tensor *pts,
                                 const samc_tensor *labels, int Np, int B, const float *normed,
                                 int H, int W, float *out, samc_error *err)
{
    const int C = g->d_model;
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
            if (g->points_pool.w) { /* F.grid_sample(img, points * 2 - 1, align_corners=False) */
                samc_bilinear_tap t;
                samc_sam3_geo_point_tap(p, H, W, &t);
                for (int c = 0; c < C; c++) {
                    const float *pl = normed + ((int64_t)b * C + c) * H * W;
                    float s = 0.0f;
                    for (int k = 0; k < 4; k++)
                        s = s + (t.in[k] ? pl[t.i[k]] : 0.0f) * t.w[k];
                    v[c] = s;
                }
                samc_ref_linear(v, 1, &g->points_pool, tmp);
                put_term(o, tmp, C, &have);
            }
            if (g->points_pos.w) { /* cat([_encode_xy x, _encode_xy y]) */
                samc_sam3_geo_point_pos(g, p, v);
                samc_ref_linear(v, 1, &g->points_pos, tmp);
                put_term(o, tmp, C, &have);
            }
            st = finish_token(g, labels, i, B, b, have, o, err);
        }
done:
    free(tmp), free(v);
    return st;
}

/* roi_align of one box on the B-th normed map, then boxes_pool_project
 * (Conv2d k = roi_size to 1x1) -> out (C). */
static samc_status pool_box(const samc_sam3_geometry_encoder *g, const float cxcywh[4],
                            const float *normed_b, int H, int W, float *roi, float *out,
                            samc_error *err)
{
    const int C = g->d_model, R = g->roi_size;
    samc_bilinear_tap *taps = NULL;
    int gh, gw, count;
    samc_status st = samc_sam3_geo_box_taps(g, cxcywh, H, W, &taps, &gh, &gw, &count, err);
    if (st)
        return st;
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
    const int C = g->d_model, R = g->roi_size;
    float *tmp = malloc((size_t)C * sizeof *tmp), *v = malloc((size_t)(C + 2) * sizeof *v);
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
                if ((st = pool_box(g, bx, normed + (int64_t)b * C * H * W, H, W, roi, tmp, err)))
                    break;
                put_term(o, tmp, C, &have);
            }
            if (g->boxes_pos.w) { /* pos_enc.encode_boxes(cx, cy, w, h): y, x, h, w */
                samc_sam3_geo_box_pos(g, bx, v);
                samc_ref_linear(v, 1, &g->boxes_pos, tmp);
                put_term(o, tmp, C, &have);
            }
            st = finish_token(g, labels, i, B, b, have, o, err);
        }
done:
    free(tmp), free(v), free(roi);
    return st;
}

samc_status samc_ref_sam3_geo_prompt(samc_ctx *ctx, const samc_sam3_geometry_encoder *g,
                                     const samc_tensor *points, const samc_tensor *point_mask,
                                     const samc_tensor *point_labels, const samc_tensor *boxes,
                                     const samc_tensor *box_mask, const samc_tensor *box_labels,
                                     const samc_tensor *img, int H, int W, samc_tensor *embeds,
                                     samc_tensor *mask)
{
    samc_error *err = ERR(ctx);
    samc_sam3_geo_dims d;
    samc_status st = samc_sam3_geo_check(g, points, point_mask, point_labels, boxes, box_mask, box_labels, img, H,
                                         W, embeds, mask, &d, err);
    if (st)
        return st;
    const int C = g->d_model, B = d.B, Np = d.Np, Nb = d.Nb, N = d.N;
    const int64_t hw = (int64_t)H * W;
    float *normed = NULL, *nrows = NULL, *pe = NULL, *be = NULL, *pmask = NULL, *bmask = NULL, *scratch = NULL;
    pe = malloc((size_t)(Np ? Np : 1) * B * C * sizeof *pe);
    be = malloc((size_t)(Nb ? Nb : 1) * B * C * sizeof *be);
    pmask = malloc((size_t)B * (Np ? Np : 1) * sizeof *pmask);
    bmask = malloc((size_t)B * (Nb ? Nb : 1) * sizeof *bmask);
    const size_t ns = samc_sam3_geo_pack_scratch(&d, C);
    scratch = malloc((ns > (size_t)C ? ns : (size_t)C) * sizeof *scratch);
    if (!pe || !be || !pmask || !bmask || !scratch)
        goto nomem;
    if (d.pool) { /* img_pre_norm on (HW, B, C), then permute(1, 2, 0).view(B, C, H, W) */
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
    samc_sam3_geo_pad_mask(point_mask, B, Np, pmask);
    samc_sam3_geo_pad_mask(box_mask, B, Nb, bmask);
    if (Np && (st = encode_points(g, points, point_labels, Np, B, normed, H, W, pe, err)))
        goto done;
    if (Nb && (st = encode_boxes(g, boxes, box_labels, Nb, B, normed, H, W, be, err)))
        goto done;
    samc_sam3_geo_pack(g, &d, pe, pmask, be, bmask, embeds->data, mask->data, scratch);
    if (g->has_final_proj) { /* self.norm(self.final_proj(final_embeds)) */
        for (int64_t r = 0; r < (int64_t)N * B; r++) {
            samc_ref_linear(embeds->data + r * C, 1, &g->final_proj, scratch);
            samc_ref_layer_norm_rows(scratch, 1, &g->norm, embeds->data + r * C);
        }
    }
    goto done;
nomem:
    st = samc_fail(err, SAMC_ERR_NOMEM, "geometry encoder: buffers");
done:
    free(normed), free(nrows), free(pe), free(be), free(pmask), free(bmask), free(scratch);
    return st;
}
