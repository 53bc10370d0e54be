/* SPDX-License-Identifier: Apache-2.0 */
/* processor.c - sam3/model/sam3_image_processor.py Sam3Processor: the
 * transform of set_image and the tail of _forward_grounding. */
#include <math.h>
#include <stdlib.h>

#include "core/base/error.h"
#include "core/nn/box_geom.h"
#include "core/nn/resize_bilinear.h"
#include "ref/sam3/ref_sam3.h"

#define ERR(ctx) ((ctx) ? (ctx)->err : NULL)

/* v2.Compose([ToDtype(uint8, scale=True), Resize((R, R)), ToDtype(float32,
 * scale=True), Normalize(0.5, 0.5)]) on the uint8 image:
 *  - Resize of a uint8 tensor (bilinear, antialias): resampled in float32
 *    (torch's _upsample_bilinear2d_aa), then torch.round (half to even) and
 *    cast back to uint8. torch >= 2.1 on CPU resamples uint8 directly with
 *    fixed-point weights instead and differs from this by one level on some
 *    pixels (see SAM3_REFERENCE_NOTES section 7), which is why @preprocess is
 *    compared at 1/255;
 *  - ToDtype(float32, scale=True): x * (1/255) (torchvision v2 multiplies by
 *    the float32-rounded reciprocal);
 *  - Normalize: (x - 0.5) / 0.5. */
samc_status samc_ref_sam3_preprocess(samc_ctx *ctx, const uint8_t *img, int h, int w, int R,
                                     samc_tensor *out)
{
    if (!img || h < 1 || w < 1 || R < 1)
        return samc_fail(ERR(ctx), SAMC_ERR_ARG, "preprocess: empty image (%dx%d) or size %d", w, h, R);
    const int64_t os[4] = {1, 3, R, R};
    if (!samc_ref_sam3_shape_is(out, 4, os))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "preprocess: output must be (1,3,%d,%d)", R, R);
    const int64_t hw = (int64_t)h * w, RR = (int64_t)R * R;
    float *chw = malloc((size_t)(3 * hw) * sizeof *chw);
    if (!chw)
        return samc_fail(ERR(ctx), SAMC_ERR_NOMEM, "preprocess: %dx%d image", w, h);
    for (int c = 0; c < 3; c++)
        for (int64_t p = 0; p < hw; p++)
            chw[c * hw + p] = (float)img[p * 3 + c];
    samc_status st = samc_resize_bilinear_aa(chw, 3, h, w, R, R, out->data);
    free(chw);
    if (st)
        return samc_fail(ERR(ctx), st, "preprocess: resize");
    const float inv255 = (float)(1.0 / 255.0);
    for (int64_t i = 0; i < 3 * RR; i++) {
        float v = rintf(out->data[i]); /* torch.round, then .to(uint8) */
        v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
        out->data[i] = (v * inv255 - 0.5f) / 0.5f;
    }
    return SAMC_OK;
}

/* out_probs = out_logits.sigmoid() * presence_logit_dec.sigmoid().unsqueeze(1), squeezed. */
samc_status samc_ref_sam3_post_scores(samc_ctx *ctx, const samc_tensor *logits,
                                      const samc_tensor *presence, samc_tensor *out)
{
    if (logits->ndim != 3 || logits->shape[2] != 1 || presence->ndim != 2 ||
        presence->shape[0] != logits->shape[0] || presence->shape[1] != 1 || out->ndim != 2 ||
        out->shape[0] != logits->shape[0] || out->shape[1] != logits->shape[1])
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "post scores: logits (B,Q,1), presence (B,1) -> (B,Q) expected");
    const int64_t B = logits->shape[0], Q = logits->shape[1];
    for (int64_t b = 0; b < B; b++) {
        const float pr = samc_sigmoidf(presence->data[b]);
        for (int64_t q = 0; q < Q; q++)
            out->data[b * Q + q] = samc_sigmoidf(logits->data[b * Q + q]) * pr;
    }
    return SAMC_OK;
}

/* box_cxcywh_to_xyxy(boxes) * tensor([W, H, W, H]) (an int64 tensor: the
 * product is float32), not clipped. */
samc_status samc_ref_sam3_post_boxes(samc_ctx *ctx, const samc_tensor *boxes, int H, int W,
                                     samc_tensor *out)
{
    if (boxes->ndim != 2 || boxes->shape[1] != 4 || !samc_tensor_same_shape(boxes, out))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "post boxes: (M,4) -> (M,4) expected");
    const float sc[4] = {(float)W, (float)H, (float)W, (float)H};
    for (int64_t m = 0; m < boxes->shape[0]; m++) {
        float xyxy[4];
        samc_box_cxcywh_to_xyxy(boxes->data + m * 4, xyxy);
        for (int k = 0; k < 4; k++)
            out->data[m * 4 + k] = xyxy[k] * sc[k];
    }
    return SAMC_OK;
}

/* interpolate(masks.unsqueeze(1), (H, W), bilinear, align_corners=False).sigmoid() */
samc_status samc_ref_sam3_post_masks(samc_ctx *ctx, const samc_tensor *masks, int H, int W,
                                     samc_tensor *out)
{
    if (masks->ndim != 4 || masks->shape[1] != 1)
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "post masks: input is not (M,1,h,w)");
    const int64_t os[4] = {masks->shape[0], 1, H, W};
    if (!samc_ref_sam3_shape_is(out, 4, os))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "post masks: output is not (M,1,%d,%d)", H, W);
    if (masks->shape[0] == 0)
        return SAMC_OK;
    /* one channel: torch 1.13 takes its channels-last kernel (core/nn/resize_bilinear.c) */
    samc_status st = samc_resize_bilinear(masks->data, masks->shape[0], 1, (int)masks->shape[2],
                                          (int)masks->shape[3], H, W, out->data);
    if (st)
        return samc_fail(ERR(ctx), st, "post masks: resize");
    for (int64_t i = 0; i < samc_numel(out); i++)
        out->data[i] = samc_sigmoidf(out->data[i]);
    return SAMC_OK;
}
