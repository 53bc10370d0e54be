/* SPDX-License-Identifier: Apache-2.0 */
/* preprocess.c - SAM2Transforms.__call__ (sam2/utils/transforms.py) for the
 * image predictor: ToTensor, Resize((size, size)), Normalize. */
#include <stdlib.h>

#include "core/base/error.h"
#include "core/models/sam2/sam2_transforms.h"
#include "core/nn/resize_bilinear.h"
#include "ref/ref_ops.h"

/* Normalize(mean, std): torchvision turns the lists into float32 tensors. */
static const float k_mean[3] = {0.485f, 0.456f, 0.406f};
static const float k_std[3] = {0.229f, 0.224f, 0.225f};

samc_status samc_ref_preprocess(samc_ctx *ctx, const uint8_t *img, int h, int w, int size,
                                samc_tensor *out)
{
    if (!img || h < 1 || w < 1 || size < 1)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "preprocess: empty image (%dx%d) or size %d", w, h,
                         size);
    if (out->ndim != 4 || out->shape[0] != 1 || out->shape[1] != 3 || out->shape[2] != size ||
        out->shape[3] != size)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "preprocess: output must be (1,3,%d,%d)", size,
                         size);
    const int64_t hw = (int64_t)h * w, S2 = (int64_t)size * size;
    float *chw = malloc((size_t)(3 * hw) * sizeof *chw);
    if (!chw)
        return samc_fail(ctx->err, SAMC_ERR_NOMEM, "preprocess: %dx%d image", w, h);
    /* ToTensor: HWC uint8 -> CHW float32, img.float().div(255). */
    for (int c = 0; c < 3; c++)
        for (int64_t p = 0; p < hw; p++)
            chw[c * hw + p] = (float)img[p * 3 + c] / 255.0f;
    /* Resize: bilinear, antialias (torchvision >= 0.17); it returns the image
     * unchanged when it already has the size, as the resize itself would. */
    samc_status st = samc_resize_bilinear_aa(chw, 3, h, w, size, size, out->data);
    free(chw);
    if (st)
        return st;
    /* Normalize: tensor.sub(mean).div(std), a true division in float32. */
    for (int c = 0; c < 3; c++)
        for (int64_t p = 0; p < S2; p++)
            out->data[c * S2 + p] = (out->data[c * S2 + p] - k_mean[c]) / k_std[c];
    return SAMC_OK;
}

/* The video loader's transform (misc._load_img_as_tensor): PIL bicubic on
 * uint8, shared with fast (core/models/sam2/sam2_transforms.c). */
samc_status samc_ref_preprocess_frame(samc_ctx *ctx, const uint8_t *img, int h, int w, int size, samc_tensor *out)
{
    if (!img || h < 1 || w < 1 || size < 1)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "frame preprocess: empty frame (%dx%d) or size %d", w, h, size);
    return samc_sam2_frame_to_tensor(img, h, w, size, out, ctx->err);
}
