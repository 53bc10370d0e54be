/* SPDX-License-Identifier: Apache-2.0 */
/* memory_encoder.c - fast bodies of memory_encoder.MaskDownSampler and
 * memory_encoder.CXBlock (modeling/memory_encoder.py), and the mask
 * transform before them. Same steps as ref/tracker/memory_encoder.c:
 * strided convs as im2col GEMMs (samc__fast_conv2d), the depthwise 7x7 as a
 * direct vectorised loop threaded over channels, the pointwise linears as
 * GEMMs over pixel rows. Temporaries come from the model's workspace. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

samc_status samc_fast_mask_downsampler(samc_ctx *ctx, const samc_mask_downsampler *ds, const samc_tensor *x,
                                       samc_tensor *out)
{
    if (x->ndim != 4 || x->shape[1] != 1)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask_downsampler: input must be (B,1,H,W)");
    const int B = (int)x->shape[0], H0 = (int)x->shape[2], W0 = (int)x->shape[3], nt = samc__fast_threads(ctx);
    /* geometry of every stage: the largest activation and im2col scratch */
    size_t big = 1, col = 1;
    int H = H0, W = W0, C = 1;
    for (int l = 0; l < ds->n_layers; l++) {
        const samc_conv2d *c = &ds->convs[l];
        if (c->cin != C || ds->norms[l].dim != c->cout)
            return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask_downsampler: layer %d channels", l);
        const size_t s = samc__fast_conv2d_scratch(c, H, W, nt);
        col = s > col ? s : col;
        H = samc_conv2d_out_dim(H, c->kh, c->stride, c->pad), W = samc_conv2d_out_dim(W, c->kw, c->stride, c->pad);
        C = c->cout;
        const size_t n = (size_t)C * H * W;
        big = n > big ? n : big;
    }
    if (ds->proj.cin != C || ds->proj.kh != 1 || ds->proj.kw != 1)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask_downsampler: projection");
    const size_t sp = samc__fast_conv2d_scratch(&ds->proj, H, W, nt);
    col = sp > col ? sp : col;
    if (out->ndim != 4 || out->shape[0] != B || out->shape[1] != ds->proj.cout || out->shape[2] != H ||
        out->shape[3] != W)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask_downsampler: output shape mismatch");
    const size_t counts[3] = {big, big, col};
    float *p[3];
    samc_status st = samc__fast_ws_get(ctx, 3, counts, p);
    if (st)
        return st;
    for (int b = 0; b < B; b++) {
        const float *cur = x->data + (int64_t)b * H0 * W0;
        int h = H0, w = W0;
        for (int l = 0; l < ds->n_layers; l++) { /* Conv2d -> LayerNorm2d -> GELU */
            const samc_conv2d *c = &ds->convs[l];
            float *nxt = p[l & 1];
            samc__fast_conv2d(nt, c, cur, h, w, nxt, p[2]);
            h = samc_conv2d_out_dim(h, c->kh, c->stride, c->pad), w = samc_conv2d_out_dim(w, c->kw, c->stride, c->pad);
            const int64_t hw = (int64_t)h * w;
            samc__fast_layer_norm2d(nt, nxt, c->cout, hw, &ds->norms[l], nxt);
            samc__fast_gelu_mt(nt, nxt, (int64_t)c->cout * hw);
            cur = nxt;
        }
        samc__fast_conv2d(nt, &ds->proj, cur, h, w, out->data + (int64_t)b * ds->proj.cout * h * w, p[2]);
    }
    return SAMC_OK;
}

/* Depthwise conv (groups == cin == cout, stride 1, "same" padding) of one
 * image, threaded over channels; each output row accumulates kh*kw shifted
 * input rows (a vectorisable axpy over the valid columns). */
static void depthwise(int nt, const samc_conv2d *c, const float *x, int H, int W, float *y)
{
    const int C = c->cout, kh = c->kh, kw = c->kw, pad = c->pad;
    const int64_t hw = (int64_t)H * W;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int ch = 0; ch < C; ch++) {
        const float *xp = x + ch * hw, *wk = c->w + (int64_t)ch * kh * kw;
        const float bias = c->b ? c->b[ch] : 0.0f;
        float *yp = y + ch * hw;
        for (int oy = 0; oy < H; oy++) {
            float *yr = yp + (int64_t)oy * W;
            for (int ox = 0; ox < W; ox++)
                yr[ox] = bias;
            for (int ky = 0; ky < kh; ky++) {
                const int iy = oy + ky - pad;
                if (iy < 0 || iy >= H)
                    continue;
                const float *xr = xp + (int64_t)iy * W;
                for (int kx = 0; kx < kw; kx++) {
                    const float wv = wk[ky * kw + kx];
                    const int sh = kx - pad; /* input column = ox + sh */
                    const int lo = sh < 0 ? -sh : 0, hi = sh > 0 ? W - sh : W;
                    for (int ox = lo; ox < hi; ox++)
                        yr[ox] += wv * xr[ox + sh];
                }
            }
        }
    }
}

samc_status samc_fast_cxblock(samc_ctx *ctx, const samc_cxblock *blk, const samc_tensor *x, samc_tensor *out)
{
    if (x->ndim != 4 || !samc_tensor_same_shape(x, out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "cxblock: bad input/output shape");
    const int B = (int)x->shape[0], C = (int)x->shape[1], H = (int)x->shape[2], W = (int)x->shape[3];
    const samc_conv2d *dw = &blk->dwconv;
    const int hidden = blk->pw1.out;
    if (C != dw->cout || blk->norm.dim != C || blk->pw1.in != C || blk->pw2.in != hidden || blk->pw2.out != C)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "cxblock: weights do not match %d channels", C);
    const int nt = samc__fast_threads(ctx);
    const int64_t hw = (int64_t)H * W, n = (int64_t)C * hw;
    const int is_dw = dw->groups == C && dw->cin == C && dw->stride == 1 && 2 * dw->pad == dw->kh - 1 &&
                      dw->kh == dw->kw;
    if (!is_dw && (samc_conv2d_out_dim(H, dw->kh, dw->stride, dw->pad) != H || samc_conv2d_out_dim(W, dw->kw, dw->stride, dw->pad) != W))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "cxblock: dwconv must keep the spatial size");
    const size_t counts[4] = {(size_t)n, (size_t)n, (size_t)hw * hidden, is_dw ? 1 : samc__fast_conv2d_scratch(dw, H, W, nt)};
    float *p[4];
    samc_status st = samc__fast_ws_get(ctx, 4, counts, p);
    if (st)
        return st;
    float *y = p[0], *tok = p[1], *hid = p[2];
    for (int b = 0; b < B; b++) {
        const float *xb = x->data + b * n;
        float *ob = out->data + b * n;
        if (is_dw)
            depthwise(nt, dw, xb, H, W, y);
        else
            samc__fast_conv2d(nt, dw, xb, H, W, y, p[3]);
        samc__fast_layer_norm2d(nt, y, C, hw, &blk->norm, y);
        /* (C, hw) -> (hw, C) tokens, in column blocks over threads */
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t p0 = 0; p0 < hw; p0 += 64) {
            const int np = (int)(hw - p0 < 64 ? hw - p0 : 64);
            samc__fast_transpose(y + p0, hw, C, np, tok + p0 * C, C);
        }
        samc__fast_linear_x(ctx, nt, tok, C, hw, &blk->pw1, hid, hidden, 0);
        samc__fast_gelu_mt(nt, hid, hw * hidden);
        samc__fast_linear_x(ctx, nt, hid, hidden, hw, &blk->pw2, tok, C, 0);
        /* back to (C, hw), then gamma and the residual */
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int c0 = 0; c0 < C; c0 += 16) {
            const int nc = C - c0 < 16 ? C - c0 : 16;
            samc__fast_transpose(tok + c0, C, (int)hw, nc, y + (int64_t)c0 * hw, hw);
            for (int c = c0; c < c0 + nc; c++) {
                const float g = blk->gamma ? blk->gamma[c] : 1.0f;
                const float *yc = y + (int64_t)c * hw, *xc = xb + (int64_t)c * hw;
                float *oc = ob + (int64_t)c * hw;
                if (blk->gamma)
                    for (int64_t i = 0; i < hw; i++)
                        oc[i] = xc[i] + g * yc[i];
                else
                    for (int64_t i = 0; i < hw; i++)
                        oc[i] = xc[i] + yc[i];
            }
        }
    }
    return SAMC_OK;
}

/* The float operations of ref's body, element for element (scalar expf:
 * the memory is bf16-rounded next, where one ulp decides a flip). */
samc_status samc_fast_mask_for_memory(samc_ctx *ctx, const samc_tensor *x, bool binarize, float scale, float bias,
                                      samc_tensor *out)
{
    const int64_t n = samc_numel(x);
    if (samc_numel(out) != n)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask_for_memory: output size differs from the input");
    const float *in = x->data;
    float *o = out->data;
#pragma omp parallel for num_threads(samc__fast_threads_for(ctx, n)) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        const float v = binarize ? (in[i] > 0 ? 1.0f : 0.0f) : 1.0f / (1.0f + expf(-in[i]));
        o[i] = v * scale + bias;
    }
    return SAMC_OK;
}

/* fast/resize.c's threaded antialiased resize: core/nn/resize_bilinear.c's
 * float steps, bit for bit. */
samc_status samc_fast_mask_interpolate(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out)
{
    if (x->ndim != 4 || out->ndim != 4 || out->shape[0] != x->shape[0] || out->shape[1] != x->shape[1])
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask_interpolate: (B,C,h,w) -> (B,C,H,W) expected");
    const int64_t planes = x->shape[0] * x->shape[1];
    const int h = (int)x->shape[2], w = (int)x->shape[3], H = (int)out->shape[2], W = (int)out->shape[3];
    const size_t counts[1] = {samc__fast_resize_aa_scratch(planes, h, w, H, W) + 1};
    float *scratch;
    samc_status st = samc__fast_ws_get(ctx, 1, counts, &scratch);
    if (!st)
        st = samc__fast_resize_aa(samc__fast_threads(ctx), x->data, planes, h, w, H, W, out->data, scratch);
    return st ? samc_fail(ctx->err, st, "mask_interpolate: resize failed") : SAMC_OK;
}
