/* fast_sam3.h - the fast/ bodies of SAM 3 layer kinds (contracts:
 * core/models/sam3/sam3_layers.h). Kinds without a fast body here are
 * served by fast's fallback (ref), as the registry resolves per layer. */
#ifndef SAMC_FAST_SAM3_H
#define SAMC_FAST_SAM3_H

#include "core/models/sam3/sam3_layers.h"

samc_status samc_fast_sam3_vit_patch_embed(samc_ctx *ctx, const samc_sam3_vit_embed *e, const samc_tensor *x,
                                           samc_tensor *out);
samc_status samc_fast_sam3_vit_block(samc_ctx *ctx, const samc_sam3_vit_block *blk, const samc_tensor *x,
                                     samc_tensor *out);

extern const samc_sam3_ops samc_fast_sam3_ops;

#endif
