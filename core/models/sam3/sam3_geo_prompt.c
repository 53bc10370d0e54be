/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_geo_prompt.c - see sam3_geo_prompt.h. */
#include "core/models/sam3/sam3_geo_prompt.h"

#include <string.h>

#include "core/base/error.h"
#include "core/nn/box_geom.h"
#include "core/nn/sine_embed.h"

/* A prompt part: n tokens of batch B; NULL or empty tensors mean n = 0. */
static int count_of(const samc_tensor *t)
{
    return (t && t->ndim >= 1 && samc_numel(t) > 0) ? (int)t->shape[0] : 0;
}

static bool shape_is(const samc_tensor *t, int ndim, const int64_t *dims)
{
    return t && t->data && samc_shape_equal(t->ndim, t->shape, ndim, dims);
}

/* One prompt part (points: k = 2, boxes: k = 4): (n,B,k) values, optional
 * (B,n) mask and (n,B) labels. */
static bool part_ok(const samc_tensor *v, const samc_tensor *mask, const samc_tensor *labels, int n, int B, int k)
{
    const int64_t vs[3] = {n, B, k}, ms[2] = {B, n}, ls[2] = {n, B};
    return !n || (shape_is(v, 3, vs) && (!mask || shape_is(mask, 2, ms)) && (!labels || shape_is(labels, 2, ls)));
}

samc_status samc_sam3_geo_check(const samc_sam3_geometry_encoder *g, const samc_tensor *points,
                                const samc_tensor *point_mask, const samc_tensor *point_labels,
                                const samc_tensor *boxes, const samc_tensor *box_mask,
                                const samc_tensor *box_labels, const samc_tensor *img, int H, int W,
                                const samc_tensor *embeds, const samc_tensor *mask, samc_sam3_geo_dims *d,
                                samc_error *err)
{
    const int C = g->d_model;
    if (!img || !img->data || img->ndim != 3 || img->shape[2] != C || img->shape[0] != (int64_t)H * W)
        return samc_fail(err, SAMC_ERR_SHAPE, "geometry encoder: image features are not (%d,B,%d)", H * W, C);
    const int B = (int)img->shape[1], Np = count_of(points), Nb = count_of(boxes);
    if (!part_ok(points, point_mask, point_labels, Np, B, 2) || !part_ok(boxes, box_mask, box_labels, Nb, B, 4))
        return samc_fail(err, SAMC_ERR_SHAPE,
                         "geometry encoder: points must be (N,%d,2), boxes (N,%d,4), masks (%d,N), labels (N,%d)",
                         B, B, B, B);
    const int N = Np + Nb + (g->cls_embed ? 1 : 0);
    const int64_t es[3] = {N, B, C}, ms[2] = {B, N};
    if (N == 0 || !shape_is(embeds, 3, es) || !shape_is(mask, 2, ms))
        return samc_fail(err, SAMC_ERR_SHAPE, "geometry encoder: outputs must be (%d,%d,%d) and (%d,%d)", N, B, C,
                         B, N);
    if (((Np && g->points_pos.w) || (Nb && g->boxes_pos.w)) && g->pe.num_pos_feats != C)
        return samc_fail(err, SAMC_ERR_SHAPE, "geometry encoder: pos_enc has %d features, d_model %d",
                         g->pe.num_pos_feats, C);
    *d = (samc_sam3_geo_dims){.B = B, .Np = Np, .Nb = Nb, .N = N,
                              .pool = (Np && g->points_pool.w) || (Nb && g->boxes_pool.w)};
    return SAMC_OK;
}

samc_status samc_sam3_geo_label_row(const samc_sam3_geometry_encoder *g, const samc_tensor *labels, int i, int B,
                                    int b, const float **row, samc_error *err)
{
    const float v = labels ? labels->data[(int64_t)i * B + b] : 1.0f;
    if (v != 0.0f && v != 1.0f)
        return samc_fail(err, SAMC_ERR_ARG, "geometry encoder: label %g is not 0 or 1", (double)v);
    *row = g->label_embed + (int64_t)(v != 0.0f) * g->d_model;
    return SAMC_OK;
}

void samc_sam3_geo_pad_mask(const samc_tensor *mask, int B, int n, float *out)
{
    for (int64_t j = 0; j < (int64_t)B * n; j++)
        out[j] = (mask && mask->data[j] != 0.0f) ? 1.0f : 0.0f;
}

void samc_sam3_geo_point_tap(const float p[2], int H, int W, samc_bilinear_tap *t)
{
    samc_grid_sample_tap(p[0] * 2.0f - 1.0f, p[1] * 2.0f - 1.0f, H, W, t);
}

void samc_sam3_geo_point_pos(const samc_sam3_geometry_encoder *g, const float p[2], float *out)
{
    const int F = g->pe.num_pos_feats / 2;
    samc_sine_encode_coord(p[0], g->pe.scale, g->pe.temperature, F, out);
    samc_sine_encode_coord(p[1], g->pe.scale, g->pe.temperature, F, out + F);
}

void samc_sam3_geo_box_pos(const samc_sam3_geometry_encoder *g, const float cxcywh[4], float *out)
{
    samc_sine_encode_box(cxcywh, g->pe.scale, g->pe.temperature, g->pe.num_pos_feats / 2, out);
}

samc_status samc_sam3_geo_box_taps(const samc_sam3_geometry_encoder *g, const float cxcywh[4], int H, int W,
                                   samc_bilinear_tap **taps, int *grid_h, int *grid_w, int *count,
                                   samc_error *err)
{
    float xyxy[4];
    samc_box_cxcywh_to_xyxy(cxcywh, xyxy);
    xyxy[0] = xyxy[0] * (float)W, xyxy[1] = xyxy[1] * (float)H;
    xyxy[2] = xyxy[2] * (float)W, xyxy[3] = xyxy[3] * (float)H;
    const int R = g->roi_size;
    samc_status st = samc_roi_align_taps(xyxy, 1.0f, -1, false, H, W, R, R, taps, grid_h, grid_w, count);
    return st ? samc_fail(err, st, "geometry encoder: roi_align taps") : SAMC_OK;
}

/* concat_padded_sequences(seq1, mask1, seq2, mask2) for seq-first (n, B, C)
 * blocks: zeros, seq1 copied to rows [0, n1), then row j of seq2 scattered to
 * row j + len1[b] (all n2 rows, padded ones included); mask = row >= len1 + len2. */
static void concat_padded(const float *s1, const float *m1, int n1, const float *s2, const float *m2, int n2, int B,
                          int C, float *out, float *mout)
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
            memcpy(out + ((int64_t)(j + len1) * B + b) * C, s2 + ((int64_t)j * B + b) * C, (size_t)C * sizeof *out);
        for (int j = 0; j < n; j++)
            mout[(int64_t)b * n + j] = j >= len1 + len2 ? 1.0f : 0.0f;
    }
}

size_t samc_sam3_geo_pack_scratch(const samc_sam3_geo_dims *d, int C)
{
    const size_t n = (size_t)d->Np + d->Nb, B = (size_t)d->B;
    return n * B * C + B * n + B * C + B;
}

void samc_sam3_geo_pack(const samc_sam3_geometry_encoder *g, const samc_sam3_geo_dims *d, const float *pe,
                        const float *pmask, const float *be, const float *bmask, float *embeds, float *mask,
                        float *scratch)
{
    const int B = d->B, C = g->d_model, n = d->Np + d->Nb;
    if (!g->cls_embed) {
        concat_padded(pe, pmask, d->Np, be, bmask, d->Nb, B, C, embeds, mask);
        return;
    }
    float *cat = scratch, *catm = cat + (size_t)n * B * C, *cls = catm + (size_t)B * n, *zero = cls + (size_t)B * C;
    concat_padded(pe, pmask, d->Np, be, bmask, d->Nb, B, C, cat, catm);
    for (int b = 0; b < B; b++) {
        memcpy(cls + (int64_t)b * C, g->cls_embed, (size_t)C * sizeof *cls);
        zero[b] = 0.0f;
    }
    concat_padded(cat, catm, n, cls, zero, 1, B, C, embeds, mask);
}
