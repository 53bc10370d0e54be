/* prompt_encoder.c - sam/prompt_encoder.py: PromptEncoder.forward and
 * get_dense_pe, with position_encoding.py: PositionEmbeddingRandom.
 *
 * The Fourier features are sin/cos of angles up to ~100 rad, where one float32
 * ulp of the angle is ~1e-5 of the result, so the angle is formed with
 * PyTorch's float32 operations in PyTorch's order (see fourier_pe), not in
 * double.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "ref/prims.h"
#include "core/nn/position_encoding.h"
#include "ref/ref_ops.h"

/* forward_with_coords: x / input_image_size[1], y / input_image_size[0]. */
static void pe_with_coords(const samc_prompt_encoder *pe, float x, float y, float *out)
{
    samc_fourier_pe(pe->gauss, pe->embed_dim / 2, x / (float)pe->input_w, y / (float)pe->input_h, out);
}

static void add_vec(float *y, const float *a, int n)
{
    for (int i = 0; i < n; i++)
        y[i] += a[i];
}

/* _embed_points for one batch element: n points (+0.5 shift) and, when pad,
 * the padding point (0,0) with label -1 (not shifted; it becomes
 * not_a_point anyway). */
static void embed_points(const samc_prompt_encoder *pe, const float *xy, const int32_t *labels,
                         int n, bool pad, float *out)
{
    const int D = pe->embed_dim;
    for (int i = 0; i < n + (pad ? 1 : 0); i++) {
        float *o = out + (int64_t)i * D;
        const bool is_pad = i == n;
        const int32_t label = is_pad ? -1 : labels[i];
        pe_with_coords(pe, is_pad ? 0.0f : xy[2 * i] + 0.5f, is_pad ? 0.0f : xy[2 * i + 1] + 0.5f,
                       o);
        /* The torch.where chain: -1 replaces the PE, 0..3 add an embedding,
         * any other label keeps the plain PE. */
        if (label == -1)
            memcpy(o, pe->not_a_point, (size_t)D * sizeof *o);
        else if (label >= 0 && label <= 3)
            add_vec(o, pe->point_embed[label], D);
    }
}

/* _embed_boxes for one box (x0, y0, x1, y1): two corners, +0.5, with
 * point_embeddings[2] / [3] added. */
static void embed_box(const samc_prompt_encoder *pe, const float *box, float *out)
{
    const int D = pe->embed_dim;
    pe_with_coords(pe, box[0] + 0.5f, box[1] + 0.5f, out);
    pe_with_coords(pe, box[2] + 0.5f, box[3] + 0.5f, out + D);
    add_vec(out, pe->point_embed[2], D);
    add_vec(out + D, pe->point_embed[3], D);
}

/* mask_downscaling: Conv(k2,s2) LN2d GELU Conv(k2,s2) LN2d GELU Conv(k1). */
static samc_status embed_masks(samc_error *err, const samc_prompt_encoder *pe, const samc_tensor *masks,
                               samc_tensor *dense)
{
    const int B = (int)masks->shape[0], H = (int)masks->shape[2], W = (int)masks->shape[3];
    const int H1 = samc_conv2d_out_dim(H, 2, 2, 0), W1 = samc_conv2d_out_dim(W, 2, 2, 0);
    const int H2 = samc_conv2d_out_dim(H1, 2, 2, 0), W2 = samc_conv2d_out_dim(W1, 2, 2, 0);
    if (H2 != pe->emb_h || W2 != pe->emb_w)
        return samc_fail(err, SAMC_ERR_SHAPE, "prompt encoder: mask input must be %dx%d",
                         4 * pe->emb_h, 4 * pe->emb_w);
    float *a = malloc((size_t)B * pe->md_conv0.cout * H1 * W1 * sizeof *a);
    float *b = malloc((size_t)B * pe->md_conv3.cout * H2 * W2 * sizeof *b);
    if (!a || !b) {
        free(a), free(b);
        return samc_fail(err, SAMC_ERR_NOMEM, "prompt encoder: mask downscaling");
    }
    samc_ref_conv2d_nchw(masks->data, B, H, W, &pe->md_conv0, a);
    samc_ref_layer_norm2d(a, B, H1, W1, &pe->md_norm1, a);
    samc_ref_gelu(a, (int64_t)B * pe->md_conv0.cout * H1 * W1);
    samc_ref_conv2d_nchw(a, B, H1, W1, &pe->md_conv3, b);
    samc_ref_layer_norm2d(b, B, H2, W2, &pe->md_norm4, b);
    samc_ref_gelu(b, (int64_t)B * pe->md_conv3.cout * H2 * W2);
    samc_ref_conv2d_nchw(b, B, H2, W2, &pe->md_conv6, dense->data);
    free(a), free(b);
    return SAMC_OK;
}

static samc_status check_shapes(samc_error *err, const samc_prompt_encoder *pe, int B, int N, const float *boxes,
                                const samc_tensor *masks, const samc_tensor *sparse,
                                const samc_tensor *dense)
{
    const int64_t T = N + (N > 0 && !boxes ? 1 : 0) + (boxes ? 2 : 0);
    if (sparse->ndim != 3 || sparse->shape[0] != B || sparse->shape[1] != T ||
        sparse->shape[2] != pe->embed_dim)
        return samc_fail(err, SAMC_ERR_SHAPE, "prompt encoder: sparse must be (%d,%lld,%d)", B,
                         (long long)T, pe->embed_dim);
    if (dense->ndim != 4 || dense->shape[0] != B || dense->shape[1] != pe->embed_dim ||
        dense->shape[2] != pe->emb_h || dense->shape[3] != pe->emb_w)
        return samc_fail(err, SAMC_ERR_SHAPE, "prompt encoder: dense must be (%d,%d,%d,%d)", B,
                         pe->embed_dim, pe->emb_h, pe->emb_w);
    if (masks && (masks->ndim != 4 || masks->shape[0] != B || masks->shape[1] != 1))
        return samc_fail(err, SAMC_ERR_SHAPE, "prompt encoder: masks must be (%d,1,H,W)", B);
    return SAMC_OK;
}

samc_status samc_ref_prompt_encoder(samc_ctx *ctx, const samc_prompt_encoder *pe,
                                    const float *coords, const int32_t *labels, int B, int N,
                                    const float *boxes, const samc_tensor *masks,
                                    samc_tensor *sparse, samc_tensor *dense)
{
    samc_status st = check_shapes(ctx->err, pe, B, N, boxes, masks, sparse, dense);
    if (st)
        return st;
    const int D = pe->embed_dim, T = (int)sparse->shape[1];
    const bool pad = boxes == NULL; /* _embed_points(..., pad=(boxes is None)) */
    for (int b = 0; b < B; b++) {   /* sparse = cat([points, boxes], dim=1) */
        float *s = sparse->data + (int64_t)b * T * D;
        if (N > 0) {
            embed_points(pe, coords + (int64_t)b * N * 2, labels + (int64_t)b * N, N, pad, s);
            s += (int64_t)(N + (pad ? 1 : 0)) * D;
        }
        if (boxes)
            embed_box(pe, boxes + (int64_t)b * 4, s);
    }
    if (masks)
        return embed_masks(ctx->err, pe, masks, dense);
    /* no_mask_embed.weight.reshape(1,-1,1,1).expand(bs, -1, h, w) */
    const int64_t hw = (int64_t)pe->emb_h * pe->emb_w;
    for (int64_t bc = 0; bc < (int64_t)B * D; bc++)
        for (int64_t p = 0; p < hw; p++)
            dense->data[bc * hw + p] = pe->no_mask[bc % D];
    return SAMC_OK;
}

/* get_dense_pe -> PositionEmbeddingRandom.forward((h, w)): grid.cumsum - 0.5
 * gives exactly i + 0.5, divided by h (rows) / w (columns) in float32; the
 * stack is (x, y); the result is permuted to (C, H, W). */
samc_status samc_ref_dense_pe(samc_ctx *ctx, const samc_prompt_encoder *pe, samc_tensor *out)
{
    const int D = pe->embed_dim, h = pe->emb_h, w = pe->emb_w;
    if (out->ndim != 4 || out->shape[0] != 1 || out->shape[1] != D || out->shape[2] != h ||
        out->shape[3] != w)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "dense_pe: output must be (1,%d,%d,%d)", D, h, w);
    float *v = malloc((size_t)D * sizeof *v);
    if (!v)
        return samc_fail(ctx->err, SAMC_ERR_NOMEM, "dense_pe");
    const int64_t hw = (int64_t)h * w;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            samc_fourier_pe(pe->gauss, pe->embed_dim / 2, ((float)j + 0.5f) / (float)w, ((float)i + 0.5f) / (float)h, v);
            for (int c = 0; c < D; c++)
                out->data[c * hw + (int64_t)i * w + j] = v[c];
        }
    free(v);
    return SAMC_OK;
}
