/* ops_tables.c - the fast implementation's tables (the bf16 implementation
 * runs the same bodies on bf16-packed weights): each kind's body by name
 * (tests/test_registry.c checks that no kind of the lists is left out). */
#include "fast/fast_ops.h"

const samc_nn_ops samc_fast_nn_ops = {
    .conv2d = samc_fast_conv2d,
    .layer_norm = samc_fast_layer_norm,
    .mlp = samc_fast_mlp,
};

const samc_tracker_ops samc_fast_tracker_ops = {
    .prompt_encoder = samc_fast_prompt_encoder,
    .dense_pe = samc_fast_dense_pe,
    .twoway_block = samc_fast_twoway_block,
    .twoway_final = samc_fast_twoway_final,
    .mask_decoder_heads = samc_fast_mask_decoder_heads,
    .postprocess = samc_fast_postprocess,
    .mask_downsampler = samc_fast_mask_downsampler,
    .cxblock = samc_fast_cxblock,
    .memory_attention_layer = samc_fast_memory_attention_layer,
};

const samc_sam2_ops samc_fast_sam2_ops = {
    .preprocess = samc_fast_preprocess,
    .preprocess_frame = samc_fast_preprocess_frame,
    .patch_embed = samc_fast_patch_embed,
    .hiera_block = samc_fast_hiera_block,
    .fpn_neck = samc_fast_fpn_neck,
};
