/* SPDX-License-Identifier: Apache-2.0 */
/* conv2d.c - nn.Conv2d as a layer (conv_s0 / conv_s1 of the mask decoder,
 * mask_downsample, the memory encoder projections). */
#include "core/base/error.h"
#include "ref/prims.h"
#include "ref/ref_ops.h"

samc_status samc_ref_conv2d(samc_ctx *ctx, const samc_conv2d *conv, const samc_tensor *x,
                               samc_tensor *out)
{
    if (x->ndim != 4 || x->shape[1] != conv->cin || out->ndim != 4 || out->shape[1] != conv->cout)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "conv2d: bad input/output shape");
    const int H = (int)x->shape[2], W = (int)x->shape[3];
    if (out->shape[0] != x->shape[0] ||
        out->shape[2] != samc_conv2d_out_dim(H, conv->kh, conv->stride, conv->pad) ||
        out->shape[3] != samc_conv2d_out_dim(W, conv->kw, conv->stride, conv->pad))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "conv2d: output shape does not match the input");
    samc_ref_conv2d_nchw(x->data, (int)x->shape[0], H, W, conv, out->data);
    return SAMC_OK;
}
