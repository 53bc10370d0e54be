/* SPDX-License-Identifier: Apache-2.0 */
/* sine_pe.c - PositionEmbeddingSine as a layer: the shared float32 code
 * (core/nn/position_encoding.c), repeated over the batch. */
#include "ref/ref_ops.h"
#include "core/nn/position_encoding.h"

samc_status samc_ref_sine_pe(samc_ctx *ctx, const samc_sine_pe *pe, samc_tensor *out)
{
    return samc_sine_pe_batch(pe, out, ctx->err);
}
