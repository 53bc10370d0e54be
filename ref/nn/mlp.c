/* SPDX-License-Identifier: Apache-2.0 */
/* mlp.c - sam2_utils.MLP on rows as a layer (obj_ptr_proj, SAM 3's heads). */
#include "core/base/error.h"
#include "ref/prims.h"
#include "ref/ref_ops.h"

samc_status samc_ref_mlp(samc_ctx *ctx, const samc_mlp *mlp, const samc_tensor *x, samc_tensor *out)
{
    const int in = mlp->layers[0].in, o = mlp->layers[mlp->num_layers - 1].out;
    if (x->ndim < 1 || x->shape[x->ndim - 1] != in || out->shape[out->ndim - 1] != o)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "mlp: last dimension must be %d -> %d", in, o);
    return samc_ref_mlp_rows(x->data, samc_numel(x) / in, mlp, out->data);
}
