/* ops_tables.c - the scalar reference's tables: each kind's body by name
 * (tests/test_registry.c checks that no kind of the lists is left out). */
#include "ref/ref_ops.h"

const samc_nn_ops samc_ref_nn_ops = {
    .conv2d = samc_ref_conv2d,
    .layer_norm = samc_ref_layer_norm,
    .mlp = samc_ref_mlp,
};

const samc_tracker_ops samc_ref_tracker_ops = {
    .prompt_encoder = samc_ref_prompt_encoder,
    .dense_pe = samc_ref_dense_pe,
    .twoway_block = samc_ref_twoway_block,
    .twoway_final = samc_ref_twoway_final,
    .mask_decoder_heads = samc_ref_mask_decoder_heads,
    .postprocess = samc_ref_postprocess,
    .mask_downsampler = samc_ref_mask_downsampler,
    .cxblock = samc_ref_cxblock,
    .memory_attention_layer = samc_ref_memory_attention_layer,
};

const samc_sam2_ops samc_ref_sam2_ops = {
    .preprocess = samc_ref_preprocess,
    .preprocess_frame = samc_ref_preprocess_frame,
    .patch_embed = samc_ref_patch_embed,
    .hiera_block = samc_ref_hiera_block,
    .fpn_neck = samc_ref_fpn_neck,
};
