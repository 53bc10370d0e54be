/* fast_ops.c - the ops table of the fast implementation (every entry a fast/
 * body; see docs/fast.md). */
#include "fast_layers.h"

const samc_ops samc_fast_ops = {
    .name = "fast",
    .preprocess = samc_fast_preprocess,
    .patch_embed = samc_fast_patch_embed,
    .hiera_block = samc_fast_hiera_block,
    .fpn_neck = samc_fast_fpn_neck,
    .conv2d = samc_fast_conv2d_op,
    .prompt_encoder = samc_fast_prompt_encoder,
    .dense_pe = samc_fast_dense_pe,
    .twoway_block = samc_fast_twoway_block,
    .twoway_final = samc_fast_twoway_final,
    .mask_decoder_heads = samc_fast_mask_decoder_heads,
    .postprocess = samc_fast_postprocess,
};
