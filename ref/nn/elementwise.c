/* SPDX-License-Identifier: Apache-2.0 */
/* elementwise.c - the element-wise glue kinds: a + scale * b, and a
 * per-channel vector added to every position. */
#include "core/base/error.h"
#include "ref/ref_ops.h"

samc_status samc_ref_add(samc_ctx *ctx, const samc_tensor *a, const samc_tensor *b, float scale, samc_tensor *out)
{
    const int64_t n = samc_numel(a);
    if (samc_numel(b) != n || samc_numel(out) != n)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "add: %lld + %lld -> %lld elements", (long long)n,
                         (long long)samc_numel(b), (long long)samc_numel(out));
    for (int64_t i = 0; i < n; i++)
        out->data[i] = a->data[i] + scale * b->data[i];
    return SAMC_OK;
}

samc_status samc_ref_add_channel(samc_ctx *ctx, const samc_tensor *x, const float *v, float scale, samc_tensor *out)
{
    if (x->ndim < 2 || samc_numel(out) != samc_numel(x))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "add_channel: input must be (B,C,...) like the output");
    const int64_t B = x->shape[0], C = x->shape[1], hw = samc_numel(x) / (B * C > 0 ? B * C : 1);
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++) {
            const float *src = x->data + (b * C + c) * hw;
            float *dst = out->data + (b * C + c) * hw;
            for (int64_t i = 0; i < hw; i++)
                dst[i] = src[i] + scale * v[c];
        }
    return SAMC_OK;
}
