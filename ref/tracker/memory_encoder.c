/* SPDX-License-Identifier: Apache-2.0 */
/* memory_encoder.c - ref bodies of memory_encoder.MaskDownSampler and
 * memory_encoder.CXBlock (modeling/memory_encoder.py), and the mask
 * transform before them (MemoryEncoder.forward's sigmoid, SAM2Base.
 * _encode_new_memory's binarisation and scale/bias). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/resize_bilinear.h"
#include "ref/prims.h"
#include "ref/ref_ops.h"

samc_status samc_ref_mask_downsampler(samc_ctx *ctx, const samc_mask_downsampler *ds, const samc_tensor *x,
                                      samc_tensor *out)
{
    if (x->ndim != 4 || x->shape[1] != 1)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask_downsampler: input must be (B,1,H,W)");
    int B = (int)x->shape[0], H = (int)x->shape[2], W = (int)x->shape[3];
    float *cur = malloc((size_t)samc_numel(x) * sizeof *cur);
    if (!cur)
        return SAMC_ERR_NOMEM;
    memcpy(cur, x->data, (size_t)samc_numel(x) * sizeof *cur);
    for (int l = 0; l < ds->n_layers; l++) { /* Conv2d -> LayerNorm2d -> GELU */
        const samc_conv2d *c = &ds->convs[l];
        const int Ho = samc_conv2d_out_dim(H, c->kh, c->stride, c->pad), Wo = samc_conv2d_out_dim(W, c->kw, c->stride, c->pad);
        float *nxt = malloc((size_t)B * c->cout * Ho * Wo * sizeof *nxt);
        if (!nxt) {
            free(cur);
            return SAMC_ERR_NOMEM;
        }
        samc_ref_conv2d_nchw(cur, B, H, W, c, nxt);
        samc_ref_layer_norm2d(nxt, B, Ho, Wo, &ds->norms[l], nxt);
        samc_ref_gelu(nxt, (int64_t)B * c->cout * Ho * Wo);
        free(cur);
        cur = nxt, H = Ho, W = Wo;
    }
    if (out->ndim != 4 || out->shape[0] != B || out->shape[1] != ds->proj.cout || out->shape[2] != H ||
        out->shape[3] != W) {
        free(cur);
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask_downsampler: output shape mismatch");
    }
    samc_ref_conv2d_nchw(cur, B, H, W, &ds->proj, out->data);
    free(cur);
    return SAMC_OK;
}

samc_status samc_ref_cxblock(samc_ctx *ctx, const samc_cxblock *blk, const samc_tensor *x, samc_tensor *out)
{
    const int B = (int)x->shape[0], C = (int)x->shape[1], H = (int)x->shape[2], W = (int)x->shape[3];
    const int64_t hw = (int64_t)H * W, hidden = blk->pw1.out;
    if (x->ndim != 4 || C != blk->dwconv.cout || !samc_tensor_same_shape(x, out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "cxblock: bad input/output shape");
    float *y = malloc((size_t)samc_numel(x) * sizeof *y);
    float *tok = malloc((size_t)C * sizeof *tok), *h = malloc((size_t)hidden * sizeof *h);
    float *o = malloc((size_t)C * sizeof *o);
    if (!y || !tok || !h || !o) {
        free(y), free(tok), free(h), free(o);
        return SAMC_ERR_NOMEM;
    }
    samc_ref_conv2d_nchw(x->data, B, H, W, &blk->dwconv, y); /* depthwise 7x7 */
    samc_ref_layer_norm2d(y, B, H, W, &blk->norm, y);
    for (int b = 0; b < B; b++)
        for (int64_t p = 0; p < hw; p++) { /* per pixel: permute to (H,W,C), MLP, gamma */
            for (int c = 0; c < C; c++)
                tok[c] = y[((int64_t)b * C + c) * hw + p];
            samc_ref_linear(tok, 1, &blk->pw1, h);
            samc_ref_gelu(h, hidden);
            samc_ref_linear(h, 1, &blk->pw2, o);
            for (int c = 0; c < C; c++) {
                const int64_t i = ((int64_t)b * C + c) * hw + p;
                const float v = blk->gamma ? blk->gamma[c] * o[c] : o[c];
                out->data[i] = x->data[i] + v; /* residual (drop_path is the identity) */
            }
        }
    free(y), free(tok), free(h), free(o);
    return SAMC_OK;
}

samc_status samc_ref_mask_for_memory(samc_ctx *ctx, const samc_tensor *x, bool binarize, float scale, float bias,
                                     samc_tensor *out)
{
    const int64_t n = samc_numel(x);
    if (samc_numel(out) != n)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask_for_memory: output size differs from the input");
    for (int64_t i = 0; i < n; i++) {
        const float v = binarize ? (x->data[i] > 0 ? 1.0f : 0.0f) : 1.0f / (1.0f + expf(-x->data[i]));
        out->data[i] = v * scale + bias;
    }
    return SAMC_OK;
}

samc_status samc_ref_mask_interpolate(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out)
{
    if (x->ndim != 4 || out->ndim != 4 || out->shape[0] != x->shape[0] || out->shape[1] != x->shape[1])
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask_interpolate: (B,C,h,w) -> (B,C,H,W) expected");
    samc_status st = samc_resize_bilinear_aa(x->data, x->shape[0] * x->shape[1], (int)x->shape[2], (int)x->shape[3],
                                             (int)out->shape[2], (int)out->shape[3], out->data);
    return st ? samc_fail(ctx->err, st, "mask_interpolate: resize failed") : SAMC_OK;
}
