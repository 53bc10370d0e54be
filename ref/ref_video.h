/* ref_video.h - ref bodies of the memory-path layers (core/layers_video.h). */
#ifndef SAMC_REF_VIDEO_H
#define SAMC_REF_VIDEO_H

#include "core/layers_video.h"

samc_status samc_ref_mask_downsampler(samc_ctx *ctx, const samc_mask_downsampler *ds, const samc_tensor *x,
                                      samc_tensor *out);
samc_status samc_ref_cxblock(samc_ctx *ctx, const samc_cxblock *blk, const samc_tensor *x, samc_tensor *out);
samc_status samc_ref_memory_attention_layer(samc_ctx *ctx, const samc_memory_attention_layer *layer,
                                            const samc_tensor *tgt, const samc_tensor *memory,
                                            const samc_tensor *pos, const samc_tensor *query_pos,
                                            int num_k_exclude_rope, samc_tensor *out);
samc_status samc_ref_layer_norm_op(samc_ctx *ctx, const samc_norm *norm, const samc_tensor *x, samc_tensor *out);
samc_status samc_ref_mlp_op(samc_ctx *ctx, const samc_mlp *mlp, const samc_tensor *x, samc_tensor *out);

#endif
