/* ref_ops.c - the ops table of the scalar reference implementation. */
#include "ref_layers.h"

const samc_ops samc_ref_ops = {
    .name = "ref",
    .preprocess = samc_ref_preprocess,
    .patch_embed = samc_ref_patch_embed,
    .hiera_block = samc_ref_hiera_block,
    .fpn_neck = samc_ref_fpn_neck,
    .conv2d = samc_ref_conv2d_op,
    .prompt_encoder = samc_ref_prompt_encoder,
    .dense_pe = samc_ref_dense_pe,
    .twoway_block = samc_ref_twoway_block,
    .twoway_final = samc_ref_twoway_final,
    .mask_decoder_heads = samc_ref_mask_decoder_heads,
    .postprocess = samc_ref_postprocess,
};
