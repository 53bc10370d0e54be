/* SPDX-License-Identifier: Apache-2.0 */
/* layout.c - the layout glue kinds on the blocked, threaded copies of
 * core/nn/layout.c (whole cache lines on both sides; exact). */
#include "core/base/error.h"
#include "core/nn/layout.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

samc_status samc_fast_transpose01(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out)
{
    if (x->ndim != 3 || out->ndim != 3 || out->shape[0] != x->shape[1] || out->shape[1] != x->shape[0] ||
        out->shape[2] != x->shape[2])
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "transpose01: (A,B,C) -> (B,A,C) expected");
    samc_layout_transpose01(samc__fast_threads_for(ctx, samc_numel(x)), x->data, x->shape[0], x->shape[1],
                            x->shape[2], out->data);
    return SAMC_OK;
}

samc_status samc_fast_tokens_to_planes(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out)
{
    if (x->ndim != 4 || out->ndim != 4 || out->shape[0] != x->shape[0] || out->shape[1] != x->shape[3] ||
        out->shape[2] != x->shape[1] || out->shape[3] != x->shape[2])
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "tokens_to_planes: (B,H,W,C) -> (B,C,H,W) expected");
    samc_layout_tokens_to_planes(samc__fast_threads_for(ctx, samc_numel(x)), x->data, x->shape[0],
                                 x->shape[1] * x->shape[2], x->shape[3], out->data);
    return SAMC_OK;
}

samc_status samc_fast_planes_to_tokens(samc_ctx *ctx, const samc_tensor *x, const samc_tensor *add, samc_tensor *out)
{
    const int64_t B = x->shape[0], C = x->shape[1], HW = x->shape[2] * x->shape[3], b_out = out->shape[0];
    if (x->ndim != 4 || out->ndim != 3 || out->shape[1] != HW || out->shape[2] != C || (B != 1 && B != b_out) ||
        (add && (add->ndim != 4 || add->shape[0] != b_out || samc_numel(add) != b_out * C * HW)))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "planes_to_tokens: (B,C,H,W) [+ (b,C,H,W)] -> (b,HW,C) expected");
    samc_layout_planes_to_tokens(samc__fast_threads_for(ctx, samc_numel(out)), x->data, B, add ? add->data : NULL,
                                 b_out, HW, C, out->data);
    return SAMC_OK;
}
