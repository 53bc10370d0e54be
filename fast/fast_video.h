/* fast_video.h - the fast/ bodies of the memory-path layer kinds (contracts
 * in core/layers_video.h; table in fast_video_ops.c). */
#ifndef SAMC_FAST_VIDEO_H
#define SAMC_FAST_VIDEO_H

#include "core/layers_video.h"

/* memory_encoder.c */
samc_status samc_fast_mask_downsampler(samc_ctx *ctx, const samc_mask_downsampler *ds, const samc_tensor *x,
                                       samc_tensor *out);
samc_status samc_fast_cxblock(samc_ctx *ctx, const samc_cxblock *blk, const samc_tensor *x, samc_tensor *out);
samc_status samc_fast_layer_norm_op(samc_ctx *ctx, const samc_norm *norm, const samc_tensor *x, samc_tensor *out);
samc_status samc_fast_mlp_op(samc_ctx *ctx, const samc_mlp *mlp, const samc_tensor *x, samc_tensor *out);
/* memory_attention.c */
samc_status samc_fast_memory_attention_layer(samc_ctx *ctx, const samc_memory_attention_layer *layer,
                                             const samc_tensor *tgt, const samc_tensor *memory,
                                             const samc_tensor *pos, const samc_tensor *query_pos,
                                             int num_k_exclude_rope, samc_tensor *out);
/* The RoPE tables cached per model (FAST_CACHE_ROPE of fast_ws_cache). */
void fast_rope_cache_free(void *cache);

#endif
