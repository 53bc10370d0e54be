/* fast_video_ops.c - the memory-path ops table of the fast implementation
 * (every entry a fast/ body; see docs/fast.md, "fast memory path"). */
#include "fast_video.h"

const samc_video_ops samc_fast_video_ops = {
    .name = "fast",
    .mask_downsampler = samc_fast_mask_downsampler,
    .cxblock = samc_fast_cxblock,
    .memory_attention_layer = samc_fast_memory_attention_layer,
    .layer_norm = samc_fast_layer_norm_op,
    .mlp = samc_fast_mlp_op,
};
