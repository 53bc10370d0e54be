/* SPDX-License-Identifier: Apache-2.0 */
/* mlp.c - sam2_utils.MLP on rows as a layer (obj_ptr_proj, SAM 3's heads):
 * one threaded GEMM per layer over all rows. */
#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

samc_status samc_fast_mlp(samc_ctx *ctx, const samc_mlp *mlp, const samc_tensor *x, samc_tensor *out)
{
    if (mlp->num_layers < 1)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mlp: no layers");
    const int in = mlp->layers[0].in, o = mlp->layers[mlp->num_layers - 1].out;
    if (x->ndim < 1 || out->ndim < 1 || x->shape[x->ndim - 1] != in || out->shape[out->ndim - 1] != o ||
        samc_numel(out) / o != samc_numel(x) / in)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mlp: last dimension must be %d -> %d", in, o);
    const int64_t rows = samc_numel(x) / in;
    int wide = 1;
    for (int i = 0; i < mlp->num_layers; i++) {
        if (i > 0 && mlp->layers[i].in != mlp->layers[i - 1].out)
            return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mlp: layer %d input", i);
        wide = mlp->layers[i].out > wide ? mlp->layers[i].out : wide;
    }
    const size_t counts[2] = {(size_t)rows * wide, (size_t)rows * wide};
    float *p[2];
    samc_status st = samc__fast_ws_get(ctx, 2, counts, p);
    if (st)
        return st;
    const int nt = samc__fast_threads(ctx);
    const float *cur = x->data;
    for (int i = 0; i < mlp->num_layers; i++) { /* Linear, ReLU, ..., Linear */
        const samc_linear *l = &mlp->layers[i];
        const int last = i == mlp->num_layers - 1;
        float *dst = last ? out->data : p[i & 1];
        samc__fast_linear_x(ctx, nt, cur, l->in, rows, l, dst, l->out, 0);
        if (!last)
            samc__fast_relu(dst, rows * l->out);
        cur = dst;
    }
    if (mlp->sigmoid_output)
        samc__fast_sigmoid(out->data, rows * o);
    return SAMC_OK;
}
