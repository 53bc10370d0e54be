/* SPDX-License-Identifier: Apache-2.0 */
/* layout.c - the layout glue kinds: transpose(0, 1), permute(0, 3, 1, 2)
 * and flatten(2).permute(0, 2, 1) (with a fused sum), as plain loops. */
#include "core/base/error.h"
#include "ref/ref_ops.h"

samc_status samc_ref_transpose01(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out)
{
    if (x->ndim != 3 || out->ndim != 3 || out->shape[0] != x->shape[1] || out->shape[1] != x->shape[0] ||
        out->shape[2] != x->shape[2])
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "transpose01: (A,B,C) -> (B,A,C) expected");
    const int64_t A = x->shape[0], B = x->shape[1], C = x->shape[2];
    for (int64_t a = 0; a < A; a++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t c = 0; c < C; c++)
                out->data[(b * A + a) * C + c] = x->data[(a * B + b) * C + c];
    return SAMC_OK;
}

samc_status samc_ref_tokens_to_planes(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out)
{
    if (x->ndim != 4 || out->ndim != 4 || out->shape[0] != x->shape[0] || out->shape[1] != x->shape[3] ||
        out->shape[2] != x->shape[1] || out->shape[3] != x->shape[2])
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "tokens_to_planes: (B,H,W,C) -> (B,C,H,W) expected");
    const int64_t B = x->shape[0], HW = x->shape[1] * x->shape[2], C = x->shape[3];
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < HW; i++)
            for (int64_t c = 0; c < C; c++)
                out->data[(b * C + c) * HW + i] = x->data[(b * HW + i) * C + c];
    return SAMC_OK;
}

samc_status samc_ref_planes_to_tokens(samc_ctx *ctx, const samc_tensor *x, const samc_tensor *add, samc_tensor *out)
{
    const int64_t B = x->shape[0], C = x->shape[1], HW = x->shape[2] * x->shape[3], b_out = out->shape[0];
    if (x->ndim != 4 || out->ndim != 3 || out->shape[1] != HW || out->shape[2] != C || (B != 1 && B != b_out) ||
        (add && (add->ndim != 4 || add->shape[0] != b_out || samc_numel(add) != b_out * C * HW)))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "planes_to_tokens: (B,C,H,W) [+ (b,C,H,W)] -> (b,HW,C) expected");
    for (int64_t b = 0; b < b_out; b++) {
        const float *src = x->data + (B == 1 ? 0 : b) * C * HW;
        for (int64_t i = 0; i < HW; i++)
            for (int64_t c = 0; c < C; c++) {
                float v = src[c * HW + i];
                if (add)
                    v = v + add->data[(b * C + c) * HW + i];
                out->data[(b * HW + i) * C + c] = v;
            }
    }
    return SAMC_OK;
}
