/* SPDX-License-Identifier: Apache-2.0 */
/* mask_decoder.c - sam/mask_decoder.py: MaskDecoder.predict_masks after the
 * transformer: output upscaling, hypernetwork MLPs, masks, IoU and object
 * score heads. hs rows are [obj_score (if pred_obj_scores), iou, mask tokens,
 * prompt tokens], so the IoU token is at s = pred_obj_scores ? 1 : 0. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "ref/prims.h"
#include "ref/ref_ops.h"

/* x (C,H,W) += f (C,H,W) of batch 0 when the feature is broadcast. */
static void add_feat(float *x, const samc_tensor *f, int b, int64_t n)
{
    const float *fb = f->data + (f->shape[0] == 1 ? 0 : (int64_t)b * n);
    for (int64_t i = 0; i < n; i++)
        x[i] += fb[i];
}

/* output_upscaling for one batch element, src (D,h,w) -> up (D/8,4h,4w):
 * with high-res features act1(ln1(dc1(src) + feat_s1)), then
 * act2(dc2(.) + feat_s0); without, the plain Sequential (same steps, no adds). */
static samc_status upscale(samc_error *err, const samc_mask_decoder *dec, const float *src, int h, int w, int b,
                           const samc_tensor *feat_s0, const samc_tensor *feat_s1, float *up)
{
    const int c1 = dec->up0.cout, c2 = dec->up1.cout;
    const int64_t n1 = (int64_t)c1 * 4 * h * w, n2 = (int64_t)c2 * 16 * h * w;
    float *u1 = malloc((size_t)n1 * sizeof *u1);
    if (!u1)
        return samc_fail(err, SAMC_ERR_NOMEM, "mask decoder: upscaling");
    samc_ref_conv_t2d(src, 1, h, w, &dec->up0, u1);
    if (dec->use_high_res_features)
        add_feat(u1, feat_s1, b, n1);
    samc_ref_layer_norm2d(u1, 1, 2 * h, 2 * w, &dec->up_norm, u1);
    samc_ref_gelu(u1, n1);
    samc_ref_conv_t2d(u1, 1, 2 * h, 2 * w, &dec->up1, up);
    if (dec->use_high_res_features)
        add_feat(up, feat_s0, b, n2);
    samc_ref_gelu(up, n2);
    free(u1);
    return SAMC_OK;
}

/* masks[t] = hyper_in[t] @ up (C2, HW): (M, C2) x (C2, HW). */
static void hyper_masks(const float *hyper, int M, int C2, const float *up, int64_t HW,
                        float *masks)
{
    for (int t = 0; t < M; t++)
        for (int64_t p = 0; p < HW; p++) {
            double acc = 0;
            for (int c = 0; c < C2; c++)
                acc += (double)hyper[t * C2 + c] * up[c * HW + p];
            masks[t * HW + p] = (float)acc;
        }
}

/* Heads on the tokens of one batch element: hypernetworks (one MLP per mask
 * token), iou_prediction_head (+ sigmoid), pred_obj_score_head (Linear or
 * MLP, raw logit) or the constant 10.0. */
static samc_status token_heads(const samc_mask_decoder *dec, const float *tok, float *hyper,
                               float *iou, float *obj)
{
    const int D = dec->dim, s = dec->pred_obj_scores ? 1 : 0, C2 = dec->up1.cout;
    samc_status st = SAMC_OK;
    for (int t = 0; t < dec->num_mask_tokens && !st; t++)
        st = samc_ref_mlp_rows(tok + (int64_t)(s + 1 + t) * D, 1, &dec->hyper[t], hyper + t * C2);
    samc_mlp iou_head = dec->iou_head; /* iou_prediction_use_sigmoid, however it was bound */
    iou_head.sigmoid_output = dec->iou_head.sigmoid_output || dec->iou_sigmoid;
    if (!st)
        st = samc_ref_mlp_rows(tok + (int64_t)s * D, 1, &iou_head, iou);
    if (!st && dec->pred_obj_scores)
        st = samc_ref_mlp_rows(tok, 1, &dec->obj_head, obj);
    else if (!st)
        *obj = 10.0f; /* 10.0 * iou_pred.new_ones(b, 1) */
    return st;
}

/* A high-res feature (1 or B, c, h, w): batch 1 broadcasts, as in torch. */
static bool feat_ok(const samc_tensor *f, int64_t B, int c, int h, int w)
{
    const int64_t want[3] = {c, h, w};
    return f && f->ndim == 4 && (f->shape[0] == 1 || f->shape[0] == B) &&
           samc_shape_equal(3, f->shape + 1, 3, want);
}

static samc_status check_shapes(samc_error *err, const samc_mask_decoder *dec, const samc_tensor *hs,
                                const samc_tensor *keys, int h, int w, const samc_tensor *feat_s0,
                                const samc_tensor *feat_s1, const samc_tensor *masks,
                                const samc_tensor *iou, const samc_tensor *obj)
{
    const int64_t B = hs->ndim == 3 ? hs->shape[0] : -1, M = dec->num_mask_tokens, D = dec->dim;
    const int s = dec->pred_obj_scores ? 1 : 0;
    if (hs->ndim != 3 || hs->shape[2] != D || hs->shape[1] < s + 1 + M || keys->ndim != 3 ||
        keys->shape[0] != B || keys->shape[1] != (int64_t)h * w || keys->shape[2] != D)
        return samc_fail(err, SAMC_ERR_SHAPE, "mask decoder: want hs (B,T,%lld), keys (B,%d,%lld)",
                         (long long)D, h * w, (long long)D);
    const int64_t ms[4] = {B, M, 4 * h, 4 * w}, is[2] = {B, M}, os[2] = {B, 1};
    if (!samc_shape_equal(masks->ndim, masks->shape, 4, ms) ||
        !samc_shape_equal(iou->ndim, iou->shape, 2, is) ||
        !samc_shape_equal(obj->ndim, obj->shape, 2, os))
        return samc_fail(err, SAMC_ERR_SHAPE,
                         "mask decoder: outputs must be masks (B,M,4h,4w), iou (B,M), obj (B,1)");
    if (dec->use_high_res_features && (!feat_ok(feat_s0, B, dec->up1.cout, 4 * h, 4 * w) ||
                                       !feat_ok(feat_s1, B, dec->up0.cout, 2 * h, 2 * w)))
        return samc_fail(err, SAMC_ERR_SHAPE,
                         "mask decoder: want feat_s0 (1|B,%d,%d,%d), feat_s1 (1|B,%d,%d,%d)",
                         dec->up1.cout, 4 * h, 4 * w, dec->up0.cout, 2 * h, 2 * w);
    return SAMC_OK;
}

/* src = keys.transpose(1, 2).view(b, c, h, w): (h*w, D) -> (D, h, w). */
static void tokens_to_nchw(const float *keys, int64_t hw, int D, float *src)
{
    for (int64_t p = 0; p < hw; p++)
        for (int c = 0; c < D; c++)
            src[c * hw + p] = keys[p * D + c];
}

samc_status samc_ref_mask_decoder_heads(samc_ctx *ctx, const samc_mask_decoder *dec,
                                        const samc_tensor *hs, const samc_tensor *keys, int emb_h,
                                        int emb_w, const samc_tensor *feat_s0,
                                        const samc_tensor *feat_s1, samc_tensor *masks,
                                        samc_tensor *iou, samc_tensor *obj)
{
    samc_status st = check_shapes(ctx->err, dec, hs, keys, emb_h, emb_w, feat_s0, feat_s1, masks, iou, obj);
    if (st)
        return st;
    const int B = (int)hs->shape[0], T = (int)hs->shape[1], D = dec->dim, M = dec->num_mask_tokens;
    const int C2 = dec->up1.cout;
    const int64_t hw = (int64_t)emb_h * emb_w, HW = 16 * hw;
    float *src = malloc((size_t)(hw * D) * sizeof *src),
          *up = malloc((size_t)(HW * C2) * sizeof *up);
    float *hyper = malloc((size_t)M * C2 * sizeof *hyper);
    if (!src || !up || !hyper)
        st = samc_fail(ctx->err, SAMC_ERR_NOMEM, "mask decoder heads");
    for (int b = 0; b < B && !st; b++) {
        tokens_to_nchw(keys->data + b * hw * D, hw, D, src);
        if ((st = upscale(ctx->err, dec, src, emb_h, emb_w, b, feat_s0, feat_s1, up)))
            break;
        st = token_heads(dec, hs->data + (int64_t)b * T * D, hyper, iou->data + (int64_t)b * M,
                         obj->data + b);
        if (!st)
            hyper_masks(hyper, M, C2, up, HW, masks->data + b * M * HW);
    }
    free(src), free(up), free(hyper);
    return st;
}
