/* SPDX-License-Identifier: Apache-2.0 */
/* processor.c - Sam3Processor's transform and the tail of _forward_grounding,
 * fast bodies: the shared core/nn resize helpers (torch 1.13's exact
 * sampling) run per channel or per mask over threads; the scores and boxes
 * use the shared box helpers. Same results as ref/sam3/processor.c. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "core/base/error.h"
#include "core/nn/box_geom.h"
#include "core/nn/resize_bilinear.h"
#include "fast/fast.h"
#include "fast/sam3/fast_sam3.h"

samc_status samc_fast_sam3_preprocess(samc_ctx *ctx, const uint8_t *img, int h, int w, int R, samc_tensor *out)
{
    if (!img || h < 1 || w < 1 || R < 1)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "preprocess: empty image (%dx%d) or size %d", w, h, R);
    if (out->ndim != 4 || out->shape[0] != 1 || out->shape[1] != 3 || out->shape[2] != R || out->shape[3] != R)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "preprocess: output must be (1,3,%d,%d)", R, R);
    const int64_t hw = (int64_t)h * w, RR = (int64_t)R * R;
    float *chw = malloc((size_t)(3 * hw) * sizeof *chw);
    if (!chw)
        return samc_fail(ctx->err, SAMC_ERR_NOMEM, "preprocess: %dx%d image", w, h);
    samc_status st3[3] = {SAMC_OK, SAMC_OK, SAMC_OK};
    const int nt = samc__fast_threads(ctx);
#pragma omp parallel for num_threads(nt < 3 ? nt : 3) schedule(static)
    for (int c = 0; c < 3; c++) { /* antialiased bilinear resize of each channel, torch.round, uint8, scale, normalise */
        float *src = chw + c * hw, *dst = out->data + c * RR;
        for (int64_t p = 0; p < hw; p++)
            src[p] = (float)img[p * 3 + c];
        st3[c] = samc_resize_bilinear_aa(src, 1, h, w, R, R, dst);
        const float inv255 = (float)(1.0 / 255.0);
        for (int64_t i = 0; i < RR && !st3[c]; i++) {
            float v = rintf(dst[i]);
            v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
            dst[i] = (v * inv255 - 0.5f) / 0.5f;
        }
    }
    free(chw);
    for (int c = 0; c < 3; c++)
        if (st3[c])
            return samc_fail(ctx->err, st3[c], "preprocess: resize");
    return SAMC_OK;
}

samc_status samc_fast_sam3_post_scores(samc_ctx *ctx, const samc_tensor *logits, const samc_tensor *presence,
                                       samc_tensor *out)
{
    if (logits->ndim != 3 || logits->shape[2] != 1 || presence->ndim != 2 || presence->shape[0] != logits->shape[0] ||
        presence->shape[1] != 1 || out->ndim != 2 || out->shape[0] != logits->shape[0] ||
        out->shape[1] != logits->shape[1])
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "post scores: logits (B,Q,1), presence (B,1) -> (B,Q) expected");
    const int64_t B = logits->shape[0], Q = logits->shape[1];
    for (int64_t i = 0; i < B * Q; i++) /* sigmoid(logits) * sigmoid(presence) */
        out->data[i] = samc_sigmoidf(logits->data[i]) * samc_sigmoidf(presence->data[i / Q]);
    return SAMC_OK;
}

samc_status samc_fast_sam3_post_boxes(samc_ctx *ctx, const samc_tensor *boxes, int H, int W, samc_tensor *out)
{
    if (boxes->ndim != 2 || boxes->shape[1] != 4 || !samc_tensor_same_shape(boxes, out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "post boxes: (M,4) -> (M,4) expected");
    const float sc[4] = {(float)W, (float)H, (float)W, (float)H};
    for (int64_t m = 0; m < boxes->shape[0]; m++) { /* cxcywh -> xyxy, times (W, H, W, H), not clipped */
        float xyxy[4];
        samc_box_cxcywh_to_xyxy(boxes->data + m * 4, xyxy);
        for (int k = 0; k < 4; k++)
            out->data[m * 4 + k] = xyxy[k] * sc[k];
    }
    return SAMC_OK;
}

samc_status samc_fast_sam3_post_masks(samc_ctx *ctx, const samc_tensor *masks, int H, int W, samc_tensor *out)
{
    if (masks->ndim != 4 || masks->shape[1] != 1)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "post masks: input is not (M,1,h,w)");
    const int64_t M = masks->shape[0], h = masks->shape[2], w = masks->shape[3], HW = (int64_t)H * W;
    if (out->ndim != 4 || out->shape[0] != M || out->shape[1] != 1 || out->shape[2] != H || out->shape[3] != W)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "post masks: output is not (M,1,%d,%d)", H, W);
    samc_status bad = SAMC_OK;
    const int nt = samc__fast_threads(ctx);
#pragma omp parallel for num_threads(nt) schedule(dynamic)
    for (int64_t m = 0; m < M; m++) { /* bilinear (align_corners False) to H x W, then sigmoid, one mask per task */
        const samc_status st = samc_resize_bilinear(masks->data + m * h * w, 1, 1, (int)h, (int)w, H, W,
                                                    out->data + m * HW);
        if (st) {
#pragma omp critical
            bad = st;
        }
        for (int64_t i = 0; i < HW && !st; i++)
            out->data[m * HW + i] = samc_sigmoidf(out->data[m * HW + i]);
    }
    return bad ? samc_fail(ctx->err, bad, "post masks: resize") : SAMC_OK;
}
