/* SPDX-License-Identifier: Apache-2.0 */
/* mask_decoder.c - MaskDecoder.predict_masks after the transformer
 * (sam/mask_decoder.py), fast body: the two ConvTranspose2d(k=2, s=2) of
 * output_upscaling on fast/conv.c (samc__fast_conv_t2d), LayerNorm2d and
 * GELU vectorised, the hypernetwork product over pixel panels. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

#define PIX_PANEL 2048

static const float *feat_b(const samc_tensor *f, int b, int64_t n)
{
    return f->data + (f->shape[0] == 1 ? 0 : (int64_t)b * n);
}

static int feat_ok(const samc_tensor *f, int64_t B, int c, int h, int w)
{
    const int64_t want[3] = {c, h, w};
    return f && f->ndim == 4 && (f->shape[0] == 1 || f->shape[0] == B) && samc_shape_equal(3, f->shape + 1, 3, want);
}

/* sam2_utils.MLP on one token row, on the calling thread. */
static void mlp_row(const samc_mlp *m, const float *x, float *a, float *b, float *y, int sigmoid)
{
    const float *in = x;
    for (int l = 0; l < m->num_layers; l++) {
        const samc_linear *lin = &m->layers[l];
        float *dst = l == m->num_layers - 1 ? y : (l % 2 ? b : a);
        samc__fast_linear_1t(in, lin->in, 1, lin, NULL, dst, lin->out, 0);
        if (l < m->num_layers - 1)
            samc__fast_relu(dst, lin->out);
        in = dst;
    }
    if (sigmoid)
        samc__fast_sigmoid(y, m->layers[m->num_layers - 1].out);
}

static int mlp_widest(const samc_mlp *m)
{
    int w = 0;
    for (int l = 0; l < m->num_layers; l++)
        w = m->layers[l].out > w ? m->layers[l].out : w;
    return w;
}

samc_status samc_fast_mask_decoder_heads(samc_ctx *ctx, const samc_mask_decoder *dec, const samc_tensor *hs,
                                         const samc_tensor *keys, int emb_h, int emb_w, const samc_tensor *feat_s0,
                                         const samc_tensor *feat_s1, samc_tensor *masks, samc_tensor *iou,
                                         samc_tensor *obj)
{
    const int64_t B = hs->ndim == 3 ? hs->shape[0] : -1, M = dec->num_mask_tokens, D = dec->dim;
    const int s = dec->pred_obj_scores ? 1 : 0, h = emb_h, w = emb_w;
    if (hs->ndim != 3 || hs->shape[2] != D || hs->shape[1] < s + 1 + M || keys->ndim != 3 || keys->shape[0] != B ||
        keys->shape[1] != (int64_t)h * w || keys->shape[2] != D)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask decoder: want hs (B,T,%lld), keys (B,%d,%lld)", (long long)D,
                         h * w, (long long)D);
    const int64_t ms[4] = {B, M, 4 * h, 4 * w}, is[2] = {B, M}, os[2] = {B, 1};
    if (!samc_shape_equal(masks->ndim, masks->shape, 4, ms) || !samc_shape_equal(iou->ndim, iou->shape, 2, is) ||
        !samc_shape_equal(obj->ndim, obj->shape, 2, os))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask decoder: outputs must be masks (B,M,4h,4w), iou (B,M), obj (B,1)");
    if (dec->use_high_res_features &&
        (!feat_ok(feat_s0, B, dec->up1.cout, 4 * h, 4 * w) || !feat_ok(feat_s1, B, dec->up0.cout, 2 * h, 2 * w)))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask decoder: want feat_s0 (1|B,%d,%d,%d), feat_s1 (1|B,%d,%d,%d)",
                         dec->up1.cout, 4 * h, 4 * w, dec->up0.cout, 2 * h, 2 * w);
    if (dec->up0.k != 2 || dec->up1.k != 2 || dec->up0.cin != D || dec->up1.cin != dec->up0.cout)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mask decoder: output upscaling weights do not match dim %lld",
                         (long long)D);
    const int nt = samc__fast_threads(ctx), T = (int)hs->shape[1];
    const int c1 = dec->up0.cout, c2 = dec->up1.cout;
    const int64_t hw = (int64_t)h * w, n1 = (int64_t)c1 * 4 * hw, HW = 16 * hw, n2 = (int64_t)c2 * HW;
    int widest = mlp_widest(&dec->iou_head);
    for (int t = 0; t < M; t++)
        widest = mlp_widest(&dec->hyper[t]) > widest ? mlp_widest(&dec->hyper[t]) : widest;
    if (dec->pred_obj_scores)
        widest = mlp_widest(&dec->obj_head) > widest ? mlp_widest(&dec->obj_head) : widest;
    const size_t z0 = samc__fast_conv_t2d_scratch(&dec->up0, h, w, nt),
                 z1 = samc__fast_conv_t2d_scratch(&dec->up1, 2 * h, 2 * w, nt);
    const size_t counts[5] = {(size_t)hw * D, (size_t)n1, (size_t)n2, z0 > z1 ? z0 : z1,
                              (size_t)M * c2 + 2 * (size_t)widest * (M + 2)};
    float *buf[5];
    samc_status st = samc__fast_ws_get(ctx, 5, counts, buf);
    if (st)
        return st;
    float *src = buf[0], *u1 = buf[1], *up = buf[2], *z = buf[3], *hyper = buf[4];
    float *mlp_tmp = hyper + (size_t)M * c2;
    for (int b = 0; b < B; b++) {
        /* src = keys.transpose(1, 2).view(b, c, h, w) */
        const float *kb = keys->data + b * hw * D;
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t p0 = 0; p0 < hw; p0 += 256)
            samc__fast_transpose(kb + p0 * D, D, (int)(hw - p0 < 256 ? hw - p0 : 256), (int)D, src + p0, hw);
        /* output upscaling (+ high-res features) */
        samc__fast_conv_t2d(nt, &dec->up0, src, h, w, u1, z);
        if (dec->use_high_res_features)
            samc__fast_add_mt(nt, u1, u1, feat_b(feat_s1, b, n1), n1);
        samc__fast_layer_norm2d(nt, u1, c1, 4 * hw, &dec->up_norm, u1);
        samc__fast_gelu_mt(nt, u1, n1);
        samc__fast_conv_t2d(nt, &dec->up1, u1, 2 * h, 2 * w, up, z);
        if (dec->use_high_res_features) /* act2(dc2(.) + feat_s0) in one pass */
            samc__fast_add_gelu_mt(nt, up, feat_b(feat_s0, b, n2), n2);
        else
            samc__fast_gelu_mt(nt, up, n2);
        /* token heads: one thread per MLP */
        const float *tok = hs->data + (int64_t)b * T * D;
        const int nmlp = (int)M + 1 + (dec->pred_obj_scores ? 1 : 0);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
        for (int t = 0; t < nmlp; t++) {
            float *a = mlp_tmp + (size_t)2 * widest * t, *bb = a + widest;
            if (t < M)
                mlp_row(&dec->hyper[t], tok + (int64_t)(s + 1 + t) * D, a, bb, hyper + (int64_t)t * c2, 0);
            else if (t == M)
                mlp_row(&dec->iou_head, tok + (int64_t)s * D, a, bb, iou->data + b * M,
                        dec->iou_head.sigmoid_output || dec->iou_sigmoid);
            else
                mlp_row(&dec->obj_head, tok, a, bb, obj->data + b, 0);
        }
        if (!dec->pred_obj_scores)
            obj->data[b] = 10.0f;
        /* masks = hyper_in @ upscaled.view(b, c, h*w) */
        float *mb = masks->data + (int64_t)b * M * HW;
        const int64_t np = (HW + PIX_PANEL - 1) / PIX_PANEL;
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t p = 0; p < np; p++) {
            const int64_t p0 = p * PIX_PANEL;
            const int n = (int)(HW - p0 < PIX_PANEL ? HW - p0 : PIX_PANEL);
            /* M (<= 8) rows are too few for the GEMM kernel (it would pack
             * all of `up`): one pass over up, M accumulators */
            samc__fast_mask_product((int)M, c2, hyper, up + p0, HW, n, mb + p0);
        }
    }
    return SAMC_OK;
}
