/* SPDX-License-Identifier: Apache-2.0 */
/* prompt_encoder.c - sam/prompt_encoder.py: PromptEncoder.forward and
 * get_dense_pe, with position_encoding.py: PositionEmbeddingRandom (the
 * sparse tokens: core/models/tracker/prompt_points.c).
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
#include "core/models/tracker/prompt_points.h"
#include "ref/prims.h"
#include "core/nn/position_encoding.h"
#include "ref/ref_ops.h"

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
    for (int b = 0; b < B; b++) /* sparse = cat([points, boxes], dim=1) */
        for (int i = 0; i < T; i++)
            samc_prompt_sparse_token(pe, coords, labels, N, boxes, b, i, sparse->data + ((int64_t)b * T + i) * D);
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
