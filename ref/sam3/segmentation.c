/* SPDX-License-Identifier: Apache-2.0 */
/* segmentation.c - sam3/model/maskformer_segmentation.py:
 * UniversalSegmentationHead's prompt cross-attention on the encoder memory,
 * PixelDecoder.forward, and the heads (instance_seg_head, MaskPredictor's
 * mask_embed einsum, semantic_seg_head). NCHW except the memory (S, B, d). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/nearest.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

#define ERR(ctx) ((ctx) ? (ctx)->err : NULL)

samc_status samc_ref_sam3_seg_cross_attend(samc_ctx *ctx, const samc_sam3_seg_head *s,
                                           const samc_tensor *memory, const samc_tensor *prompt,
                                           const samc_tensor *prompt_mask, samc_tensor *out)
{
    samc_error *err = ERR(ctx);
    const int D = s->d_model;
    if (memory->ndim != 3 || memory->shape[2] != D || !samc_tensor_same_shape(memory, out) ||
        prompt->ndim != 3 || prompt->shape[1] != memory->shape[1] || prompt->shape[2] != D)
        return samc_fail(err, SAMC_ERR_SHAPE, "segmentation cross-attention: memory (S,B,%d), prompt (T,B,%d) expected", D, D);
    const int S = (int)memory->shape[0], B = (int)memory->shape[1], T = (int)prompt->shape[0];
    const int64_t ms[2] = {B, T};
    if (prompt_mask && !samc_ref_sam3_shape_is(prompt_mask, 2, ms))
        return samc_fail(err, SAMC_ERR_SHAPE, "segmentation cross-attention: prompt_mask is not (%d,%d)", B, T);
    if (!s->has_cross_attend) {
        memcpy(out->data, memory->data, (size_t)samc_numel(memory) * sizeof *out->data);
        return SAMC_OK;
    }
    float *m = malloc((size_t)S * D * sizeof *m), *p = malloc((size_t)T * D * sizeof *p);
    float *a = malloc((size_t)S * D * sizeof *a);
    samc_status st = SAMC_OK;
    if (!m || !p || !a) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "segmentation cross-attention: buffers");
        goto done;
    }
    for (int b = 0; b < B && !st; b++) {
        samc_ref_sam3_gather(memory->data, S, B, D, false, b, m);
        samc_ref_sam3_gather(prompt->data, T, B, D, false, b, p);
        samc_ref_layer_norm_rows(m, S, &s->cross_attn_norm, a); /* tgt2 = cross_attn_norm(memory) */
        memcpy(m, a, (size_t)S * D * sizeof *m);
        st = samc_ref_sam3_mha(&s->cross_attend_prompt, m, S, p, p, T, NULL,
                               prompt_mask ? prompt_mask->data + (int64_t)b * T : NULL, a);
        if (st)
            break;
        samc_ref_sam3_gather(memory->data, S, B, D, false, b, m);
        for (int64_t i = 0; i < (int64_t)S * D; i++) /* memory = tgt2 + memory */
            m[i] = a[i] + m[i];
        samc_ref_sam3_scatter(m, S, B, D, false, b, out->data);
    }
done:
    free(m), free(p), free(a);
    return st;
}

samc_status samc_ref_sam3_pixel_decoder(samc_ctx *ctx, const samc_sam3_seg_head *s,
                                        const samc_tensor *feats, int n, samc_tensor *out)
{
    samc_error *err = ERR(ctx);
    const int D = s->d_model;
    if (n < 1 || !s->interp_nearest)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "pixel decoder: %d levels, nearest interpolation only", n);
    const int B = (int)feats[0].shape[0];
    for (int i = 0; i < n; i++)
        if (feats[i].ndim != 4 || feats[i].shape[0] != B || feats[i].shape[1] != D)
            return samc_fail(err, SAMC_ERR_SHAPE, "pixel decoder: level %d is not (%d,%d,H,W)", i, B, D);
    if (n - 1 > (s->shared_conv ? 1 << 30 : s->n_convs))
        return samc_fail(err, SAMC_ERR_SHAPE, "pixel decoder: %d levels need %d convs, %d built", n,
                         n - 1, s->n_convs);
    if (!samc_tensor_same_shape(&feats[0], out))
        return samc_fail(err, SAMC_ERR_SHAPE, "pixel decoder: output must have the shape of level 0");
    if (n == 1) {
        memcpy(out->data, feats[0].data, (size_t)samc_numel(out) * sizeof *out->data);
        return SAMC_OK;
    }
    const int64_t big = samc_numel(&feats[0]);
    float *prev = malloc((size_t)big * sizeof *prev), *sum = malloc((size_t)big * sizeof *sum);
    if (!prev || !sum) {
        free(prev), free(sum);
        return samc_fail(err, SAMC_ERR_NOMEM, "pixel decoder: buffers");
    }
    int ph = (int)feats[n - 1].shape[2], pw = (int)feats[n - 1].shape[3];
    memcpy(prev, feats[n - 1].data, (size_t)samc_numel(&feats[n - 1]) * sizeof *prev);
    for (int k = 0, lvl = n - 2; lvl >= 0; k++, lvl--) {
        const int H = (int)feats[lvl].shape[2], W = (int)feats[lvl].shape[3];
        const int ci = s->shared_conv ? 0 : k;
        /* prev = curr + F.interpolate(prev, size=curr.shape[-2:], mode="nearest") */
        for (int64_t pl = 0; pl < (int64_t)B * D; pl++)
            for (int y = 0; y < H; y++) {
                const int sy = samc_nearest_src(y, ph, H);
                for (int x = 0; x < W; x++) {
                    const int sx = samc_nearest_src(x, pw, W);
                    sum[(pl * H + y) * W + x] = feats[lvl].data[(pl * H + y) * W + x] +
                                                prev[(pl * ph + sy) * pw + sx];
                }
            }
        /* prev = relu(norms[i](conv_layers[i](prev))) */
        samc_ref_conv2d_nchw(sum, B, H, W, &s->convs[ci], prev);
        samc_ref_group_norm(prev, B, H, W, &s->norms[ci], prev);
        samc_ref_relu(prev, (int64_t)B * D * H * W);
        ph = H, pw = W;
    }
    memcpy(out->data, prev, (size_t)big * sizeof *prev);
    free(prev), free(sum);
    return SAMC_OK;
}

samc_status samc_ref_sam3_seg_heads(samc_ctx *ctx, const samc_sam3_seg_head *s,
                                    const samc_tensor *pixel, const samc_tensor *queries,
                                    samc_tensor *masks, samc_tensor *semantic)
{
    samc_error *err = ERR(ctx);
    const int D = s->d_model;
    if (pixel->ndim != 4 || pixel->shape[1] != D || queries->ndim != 3 ||
        queries->shape[0] != pixel->shape[0] || queries->shape[2] != D)
        return samc_fail(err, SAMC_ERR_SHAPE, "segmentation heads: pixel (B,%d,H,W), queries (B,Q,%d) expected", D, D);
    const int B = (int)pixel->shape[0], H = (int)pixel->shape[2], W = (int)pixel->shape[3];
    const int Q = (int)queries->shape[1];
    const int64_t hw = (int64_t)H * W, ms[4] = {B, Q, H, W}, ss[4] = {B, 1, H, W};
    if (s->instance_seg_head.cin != D || s->instance_seg_head.cout != D ||
        s->mask_embed.layers[0].in != D || s->mask_embed.layers[s->mask_embed.num_layers - 1].out != D ||
        (semantic && s->semantic_seg_head.cin != D))
        return samc_fail(err, SAMC_ERR_SHAPE, "segmentation heads: instance head / mask_embed do not map %d channels", D);
    if (!samc_ref_sam3_shape_is(masks, 4, ms) || (semantic && !samc_ref_sam3_shape_is(semantic, 4, ss)))
        return samc_fail(err, SAMC_ERR_SHAPE, "segmentation heads: outputs (%d,%d,%d,%d) and (%d,1,%d,%d) expected",
                         B, Q, H, W, B, H, W);
    float *inst = malloc((size_t)B * s->instance_seg_head.cout * hw * sizeof *inst);
    float *emb = malloc((size_t)B * Q * D * sizeof *emb);
    samc_status st = SAMC_OK;
    if (!inst || !emb) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "segmentation heads: buffers");
        goto done;
    }
    samc_ref_conv2d_nchw(pixel->data, B, H, W, &s->instance_seg_head, inst); /* instance_seg_head */
    if ((st = samc_ref_mlp_rows(queries->data, (int64_t)B * Q, &s->mask_embed, emb))) {
        st = samc_fail(err, st, "segmentation heads: mask_embed");
        goto done;
    }
    for (int b = 0; b < B; b++) /* einsum("bqc,bchw->bqhw", mask_embed(q), instance_embeds) */
        for (int q = 0; q < Q; q++) {
            const float *e = emb + ((int64_t)b * Q + q) * D;
            float *o = masks->data + ((int64_t)b * Q + q) * hw;
            for (int64_t p = 0; p < hw; p++) {
                double acc = 0;
                for (int c = 0; c < D; c++)
                    acc += (double)e[c] * inst[((int64_t)b * D + c) * hw + p];
                o[p] = (float)acc;
            }
        }
    if (semantic)
        samc_ref_conv2d_nchw(pixel->data, B, H, W, &s->semantic_seg_head, semantic->data);
done:
    free(inst), free(emb);
    return st;
}
