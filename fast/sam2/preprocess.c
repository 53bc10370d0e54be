/* SPDX-License-Identifier: Apache-2.0 */
/* preprocess.c - SAM2Transforms' preprocess (ToTensor, antialiased Resize,
 * Normalize) and the video loader's frame transform, fast bodies.
 *
 * The colour planes are resampled by fast/resize.c (threads over rows, the
 * same float steps as core/nn/resize_bilinear.c); conversion and
 * normalisation are vectorised (a true division, as torch). */
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/base/error.h"
#include <string.h>

#include "core/models/sam2/sam2_transforms.h"
#include "core/nn/resize_bilinear.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

static const float k_mean[3] = {0.485f, 0.456f, 0.406f};
static const float k_std[3] = {0.229f, 0.224f, 0.225f};

samc_status samc_fast_preprocess(samc_ctx *ctx, const uint8_t *img, int h, int w, int size, samc_tensor *out)
{
    if (!img || h < 1 || w < 1 || size < 1)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "preprocess: empty image (%dx%d) or size %d", w, h, size);
    if (out->ndim != 4 || out->shape[0] != 1 || out->shape[1] != 3 || out->shape[2] != size || out->shape[3] != size)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "preprocess: output must be (1,3,%d,%d)", size, size);
    const int nt = samc__fast_threads(ctx);
    const int64_t hw = (int64_t)h * w;
    const size_t counts[2] = {(size_t)(3 * hw), samc__fast_resize_aa_scratch(3, h, w, size, size)};
    float *buf[2];
    samc_status st = samc__fast_ws_get(ctx, 2, counts, buf);
    if (st)
        return st;
    float *chw = buf[0];
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t p0 = 0; p0 < hw; p0 += 4096) {
        const int64_t p1 = p0 + 4096 < hw ? p0 + 4096 : hw;
        for (int64_t p = p0; p < p1; p++)
            for (int c = 0; c < 3; c++)
                chw[c * hw + p] = (float)img[p * 3 + c] / 255.0f;
    }
    if ((st = samc__fast_resize_aa(nt, chw, 3, h, w, size, size, out->data, buf[1])))
        return samc_fail(ctx->err, st, "preprocess: resize");
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int r = 0; r < 3 * size; r++) {
        const int c = r / size;
        samc__fast_standardize(out->data + (int64_t)r * size, size, k_mean[c], k_std[c]);
    }
    return SAMC_OK;
}

/* The video loader's transform: the shared PIL-exact code
 * (core/models/sam2/sam2_transforms.c); one frame is small work next to
 * the encoder that follows. */
samc_status samc_fast_preprocess_frame(samc_ctx *ctx, const uint8_t *img, int h, int w, int size, samc_tensor *out)
{
    if (!img || h < 1 || w < 1 || size < 1)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "frame preprocess: empty frame (%dx%d) or size %d", w, h, size);
    return samc_sam2_frame_to_tensor(img, h, w, size, out, ctx->err);
}
