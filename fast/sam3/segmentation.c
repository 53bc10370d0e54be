/* SPDX-License-Identifier: Apache-2.0 */
/* segmentation.c - sam3/model/maskformer_segmentation.py, fast bodies:
 * the prompt cross-attention on the encoder memory (fast/sam3/mha.c, the
 * residual fused into out_proj), PixelDecoder (nearest upsample + add,
 * fast/conv.c's conv, GroupNorm and ReLU), and the heads (1x1 convs on
 * fast/conv.c, mask_embed on SAM 2's fast MLP, the mask einsum as GEMMs
 * over pixel panels). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/nearest.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"
#include "fast/sam3/fast_sam3.h"

#define PIX_PANEL 2048

samc_status samc_fast_sam3_seg_cross_attend(samc_ctx *ctx, const samc_sam3_seg_head *s, const samc_tensor *memory,
                                            const samc_tensor *prompt, const samc_tensor *prompt_mask,
                                            samc_tensor *out)
{
    const int D = s->d_model;
    if (memory->ndim != 3 || memory->shape[2] != D || !samc_tensor_same_shape(memory, out) || prompt->ndim != 3 ||
        prompt->shape[1] != memory->shape[1] || prompt->shape[2] != D)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE,
                         "segmentation cross-attention: memory (S,B,%d), prompt (T,B,%d) expected", D, D);
    const int S = (int)memory->shape[0], B = (int)memory->shape[1], T = (int)prompt->shape[0];
    if (prompt_mask && (prompt_mask->ndim != 2 || prompt_mask->shape[0] != B || prompt_mask->shape[1] != T))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "segmentation cross-attention: prompt_mask is not (%d,%d)", B, T);
    memcpy(out->data, memory->data, (size_t)samc_numel(memory) * sizeof *out->data);
    if (!s->has_cross_attend)
        return SAMC_OK;
    const int nt = samc__fast_threads(ctx);
    const size_t counts[2] = {(size_t)S * D, samc__fast_sam3_mha_scratch(&s->cross_attend_prompt, S, T)};
    float *buf[2];
    samc_status st = samc__fast_ws_get(ctx, 2, counts, buf);
    if (st)
        return samc_fail(ctx->err, st, "segmentation cross-attention: out of memory");
    const int64_t ld = (int64_t)B * D;
    for (int b = 0; b < B; b++) { /* memory = memory + cross_attend_prompt(cross_attn_norm(memory), prompt, prompt) */
        samc__fast_layer_norm_rows(memory->data + (int64_t)b * D, ld, S, &s->cross_attn_norm, buf[0], D);
        const float *p = prompt->data + (int64_t)b * D;
        const fast_mha_io io = {.q = buf[0], .k = p, .v = p, .ldq = D, .ldk = ld, .ldv = ld, .Lq = S, .Lk = T,
                                .kpm = prompt_mask ? prompt_mask->data + (int64_t)b * T : NULL,
                                .out = out->data + (int64_t)b * D, .ldo = ld, .accumulate = true};
        samc__fast_sam3_mha(ctx, nt, &s->cross_attend_prompt, &io, buf[1]);
    }
    return SAMC_OK;
}

/* GroupNorm over each (image, group) of NCHW x, in place; relu after it. */
static void group_norm_relu(int nt, float *x, int B, int64_t hw, const samc_group_norm *g)
{
    const int cg = g->C / g->groups;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < B * g->groups; t++) {
        float *xg = x + (int64_t)t * cg * hw;
        const int64_t n = (int64_t)cg * hw;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < n; i++)
            mean += xg[i];
        mean /= (double)n;
        for (int64_t i = 0; i < n; i++)
            var += (xg[i] - mean) * (xg[i] - mean);
        const float m = (float)mean, rstd = (float)(1.0 / sqrt(var / (double)n + (double)g->eps));
        for (int c = 0; c < cg; c++) {
            const int ch = (t % g->groups) * cg + c;
            const float w = g->w[ch] * rstd, bb = g->b[ch] - m * w;
            float *r = xg + c * hw;
            for (int64_t p = 0; p < hw; p++) {
                const float v = r[p] * w + bb;
                r[p] = v > 0.0f ? v : 0.0f;
            }
        }
    }
}

samc_status samc_fast_sam3_pixel_decoder(samc_ctx *ctx, const samc_sam3_seg_head *s, const samc_tensor *feats,
                                         int n, samc_tensor *out)
{
    const int D = s->d_model;
    if (n < 1 || !s->interp_nearest)
        return samc_fail(ctx->err, SAMC_ERR_UNSUPPORTED, "pixel decoder: %d levels, nearest interpolation only", n);
    const int B = (int)feats[0].shape[0];
    for (int i = 0; i < n; i++)
        if (feats[i].ndim != 4 || feats[i].shape[0] != B || feats[i].shape[1] != D)
            return samc_fail(ctx->err, SAMC_ERR_SHAPE, "pixel decoder: level %d is not (%d,%d,H,W)", i, B, D);
    if (n - 1 > (s->shared_conv ? 1 << 30 : s->n_convs) || !samc_tensor_same_shape(&feats[0], out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "pixel decoder: %d levels for %d convs, or output not level 0",
                         n, s->n_convs);
    memcpy(out->data, feats[n - 1].data, (size_t)samc_numel(&feats[n - 1]) * sizeof *out->data);
    if (n == 1)
        return SAMC_OK;
    const int nt = samc__fast_threads(ctx);
    const int64_t big = samc_numel(&feats[0]);
    const int H0 = (int)feats[0].shape[2], W0 = (int)feats[0].shape[3];
    const size_t counts[2] = {(size_t)big, samc__fast_conv2d_scratch(&s->convs[0], H0, W0, nt)};
    float *buf[2];
    samc_status st = samc__fast_ws_get(ctx, 2, counts, buf);
    if (st)
        return samc_fail(ctx->err, st, "pixel decoder: out of memory");
    float *sum = buf[0], *prev = out->data; /* prev lives in out (level 0 is the largest) */
    int ph = (int)feats[n - 1].shape[2], pw = (int)feats[n - 1].shape[3];
    for (int k = 0, lvl = n - 2; lvl >= 0; k++, lvl--) {
        const int H = (int)feats[lvl].shape[2], W = (int)feats[lvl].shape[3];
        const samc_conv2d *c = &s->convs[s->shared_conv ? 0 : k];
        /* prev = curr + F.interpolate(prev, size=curr.shape[-2:], mode="nearest") */
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t pl = 0; pl < (int64_t)B * D; pl++)
            for (int y = 0; y < H; y++) {
                const int sy = samc_nearest_src(y, ph, H);
                const float *src = prev + (pl * ph + sy) * pw, *cur = feats[lvl].data + (pl * H + y) * W;
                float *dst = sum + (pl * H + y) * W;
                for (int x = 0; x < W; x++)
                    dst[x] = cur[x] + src[samc_nearest_src(x, pw, W)];
            }
        /* prev = relu(norms[i](conv_layers[i](prev))) */
        for (int b = 0; b < B; b++)
            samc__fast_conv2d(nt, c, sum + (int64_t)b * D * H * W, H, W, prev + (int64_t)b * D * H * W, buf[1]);
        group_norm_relu(nt, prev, B, (int64_t)H * W, &s->norms[s->shared_conv ? 0 : k]);
        ph = H, pw = W;
    }
    return SAMC_OK;
}

samc_status samc_fast_sam3_seg_heads(samc_ctx *ctx, const samc_sam3_seg_head *s, const samc_tensor *pixel,
                                     const samc_tensor *queries, samc_tensor *masks, samc_tensor *semantic)
{
    const int D = s->d_model;
    if (pixel->ndim != 4 || pixel->shape[1] != D || queries->ndim != 3 || queries->shape[0] != pixel->shape[0] ||
        queries->shape[2] != D || s->instance_seg_head.cin != D || s->instance_seg_head.cout != D ||
        (semantic && s->semantic_seg_head.cin != D))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "segmentation heads: pixel (B,%d,H,W), queries (B,Q,%d) expected",
                         D, D);
    const int B = (int)pixel->shape[0], H = (int)pixel->shape[2], W = (int)pixel->shape[3];
    const int Q = (int)queries->shape[1];
    const int64_t hw = (int64_t)H * W;
    if (masks->ndim != 4 || masks->shape[0] != B || masks->shape[1] != Q || masks->shape[2] != H ||
        masks->shape[3] != W || (semantic && (semantic->ndim != 4 || semantic->shape[0] != B ||
                                              semantic->shape[1] != 1 || semantic->shape[2] != H ||
                                              semantic->shape[3] != W)))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "segmentation heads: outputs (%d,%d,%d,%d) and (%d,1,%d,%d) expected",
                         B, Q, H, W, B, H, W);
    samc_tensor emb = {0}; /* mask_embed(queries): SAM 2's fast MLP (it takes the workspace first) */
    samc_status st = samc_tensor_alloc(&emb, 3, queries->shape, ctx->err);
    if (!st)
        st = samc_fast_mlp(ctx, &s->mask_embed, queries, &emb);
    const int nt = samc__fast_threads(ctx);
    const size_t counts[2] = {(size_t)B * D * hw, samc__fast_conv2d_scratch(&s->instance_seg_head, H, W, nt)};
    float *buf[2];
    if (!st)
        st = samc__fast_ws_get(ctx, 2, counts, buf);
    for (int b = 0; b < B && !st; b++) { /* instance_seg_head, semantic_seg_head */
        samc__fast_conv2d(nt, &s->instance_seg_head, pixel->data + (int64_t)b * D * hw, H, W, buf[0] + (int64_t)b * D * hw,
                          buf[1]);
        if (semantic)
            samc__fast_conv2d(nt, &s->semantic_seg_head, pixel->data + (int64_t)b * D * hw, H, W,
                              semantic->data + (int64_t)b * hw, buf[1]);
    }
    const int64_t np = (hw + PIX_PANEL - 1) / PIX_PANEL;
    if (!st) { /* einsum("bqc,bchw->bqhw"): (Q x D) times (D x pixels), panels of pixels over threads */
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t t = 0; t < B * np; t++) {
            const int64_t b = t / np, p0 = (t % np) * PIX_PANEL;
            const int cols = (int)(hw - p0 < PIX_PANEL ? hw - p0 : PIX_PANEL);
            samc__fast_sgemm(Q, cols, D, emb.data + b * Q * D, D, 1, buf[0] + b * D * hw + p0, hw, 0,
                             masks->data + b * Q * hw + p0, hw, 0);
        }
    }
    samc_tensor_release(&emb);
    return st ? samc_fail(ctx->err, st, "segmentation heads: %s", ctx->err && ctx->err->msg[0] ? ctx->err->msg : "out of memory")
              : SAMC_OK;
}
