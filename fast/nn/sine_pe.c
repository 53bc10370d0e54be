/* SPDX-License-Identifier: Apache-2.0 */
/* sine_pe.c - PositionEmbeddingSine as a layer: the shared float32 code
 * (core/nn/position_encoding.c) once, copied over the batch; small next
 * to the layers around it. */
#include "core/nn/position_encoding.h"
#include "fast/fast_ops.h"

samc_status samc_fast_sine_pe(samc_ctx *ctx, const samc_sine_pe *pe, samc_tensor *out)
{
    return samc_sine_pe_batch(pe, out, ctx->err);
}
