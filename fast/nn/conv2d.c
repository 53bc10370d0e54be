/* SPDX-License-Identifier: Apache-2.0 */
/* conv2d.c - nn.Conv2d as a layer (conv_s0/s1, mask_downsample, memory
 * encoder projections) on the GEMM-based kernel of fast/conv.c. */
#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

samc_status samc_fast_conv2d(samc_ctx *ctx, const samc_conv2d *conv, const samc_tensor *x, samc_tensor *out)
{
    if (x->ndim != 4 || x->shape[1] != conv->cin || out->ndim != 4 || out->shape[1] != conv->cout)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "conv2d: bad input/output shape");
    const int H = (int)x->shape[2], W = (int)x->shape[3];
    if (out->shape[0] != x->shape[0] || out->shape[2] != samc_conv2d_out_dim(H, conv->kh, conv->stride, conv->pad) ||
        out->shape[3] != samc_conv2d_out_dim(W, conv->kw, conv->stride, conv->pad))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "conv2d: output shape does not match the input");
    const int nt = samc__fast_threads(ctx);
    float *col = NULL;
    const size_t counts[1] = {samc__fast_conv2d_scratch(conv, H, W, nt)};
    samc_status st = samc__fast_ws_get(ctx, 1, counts, &col);
    if (st)
        return st;
    const int64_t in_n = (int64_t)conv->cin * H * W, out_n = samc_numel(out) / out->shape[0];
    for (int64_t b = 0; b < x->shape[0]; b++)
        samc__fast_conv2d(nt, conv, x->data + b * in_n, H, W, out->data + b * out_n, col);
    return SAMC_OK;
}
