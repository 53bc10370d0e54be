/* SPDX-License-Identifier: Apache-2.0 */
/* elementwise.c - the element-wise glue kinds, threaded over blocks of
 * whole rows (the same float operation per element as ref). */
#include <omp.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

samc_status samc_fast_add(samc_ctx *ctx, const samc_tensor *a, const samc_tensor *b, float scale, samc_tensor *out)
{
    const int64_t n = samc_numel(a);
    if (samc_numel(b) != n || samc_numel(out) != n)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "add: %lld + %lld -> %lld elements", (long long)n,
                         (long long)samc_numel(b), (long long)samc_numel(out));
    const float *x = a->data, *y = b->data;
    float *o = out->data;
#pragma omp parallel for num_threads(samc__fast_threads_for(ctx, n)) schedule(static)
    for (int64_t i = 0; i < n; i++)
        o[i] = x[i] + scale * y[i];
    return SAMC_OK;
}

samc_status samc_fast_add_channel(samc_ctx *ctx, const samc_tensor *x, const float *v, float scale, samc_tensor *out)
{
    if (x->ndim < 2 || samc_numel(out) != samc_numel(x))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "add_channel: input must be (B,C,...) like the output");
    const int64_t B = x->shape[0], C = x->shape[1], hw = samc_numel(x) / (B * C > 0 ? B * C : 1);
#pragma omp parallel for num_threads(samc__fast_threads_for(ctx, samc_numel(x))) schedule(static)
    for (int64_t p = 0; p < B * C; p++) {
        const float s = scale * v[p % C], *src = x->data + p * hw;
        float *dst = out->data + p * hw;
        for (int64_t i = 0; i < hw; i++)
            dst[i] = src[i] + s;
    }
    return SAMC_OK;
}
