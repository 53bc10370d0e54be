/* SPDX-License-Identifier: Apache-2.0 */
/* postprocess.c - the resize of SAM2Transforms.postprocess_masks
 * (sam2/utils/transforms.py): F.interpolate(masks, orig_hw, mode="bilinear",
 * align_corners=False), a single step from the low-res logits to the original
 * size, without antialias even when that is smaller. Hole and sprinkle
 * filling, which come before it, are core/nn/connected_components.c. */
#include "core/base/error.h"
#include "core/nn/resize_bilinear.h"
#include "ref/ref_ops.h"

samc_status samc_ref_postprocess(samc_ctx *ctx, const samc_tensor *lowres, int H, int W,
                                 samc_tensor *out)
{
    if (lowres->ndim != 4 || out->ndim != 4 || out->shape[0] != lowres->shape[0] ||
        out->shape[1] != lowres->shape[1] || out->shape[2] != H || out->shape[3] != W)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "postprocess: want (N,C,h,w) -> (N,C,%d,%d)", H, W);
    /* The channel count is passed on: torch 1.13 rounds C == 1 differently. */
    return samc_resize_bilinear(lowres->data, lowres->shape[0], (int)lowres->shape[1],
                                (int)lowres->shape[2], (int)lowres->shape[3], H, W, out->data);
}

