/* SPDX-License-Identifier: Apache-2.0 */
/* layer_norm.c - nn.LayerNorm over the last dimension as a layer. */
#include "core/base/error.h"
#include "ref/prims.h"
#include "ref/ref_ops.h"

samc_status samc_ref_layer_norm(samc_ctx *ctx, const samc_norm *norm, const samc_tensor *x, samc_tensor *out)
{
    if (x->ndim < 1 || x->shape[x->ndim - 1] != norm->dim || !samc_tensor_same_shape(x, out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "layer_norm: last dimension must be %d", norm->dim);
    samc_ref_layer_norm_rows(x->data, samc_numel(x) / norm->dim, norm, out->data);
    return SAMC_OK;
}
