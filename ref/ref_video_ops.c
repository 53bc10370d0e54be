/* ref_video_ops.c - the memory-path ops table of the scalar reference. */
#include "ref_video.h"

const samc_video_ops samc_ref_video_ops = {
    .name = "ref",
    .mask_downsampler = samc_ref_mask_downsampler,
    .cxblock = samc_ref_cxblock,
    .memory_attention_layer = samc_ref_memory_attention_layer,
    .layer_norm = samc_ref_layer_norm_op,
    .mlp = samc_ref_mlp_op,
};
