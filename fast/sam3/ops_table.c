/* ops_table.c - the SAM 3 table of the fast implementation: a body for
 * every kind (tests/test_registry.c checks that none is left to fast's
 * fallback). */
#include "fast/sam3/fast_sam3.h"

const samc_sam3_ops samc_fast_sam3_ops = {
    .name = "fast",
    .preprocess = samc_fast_sam3_preprocess,
    .vit_patch_embed = samc_fast_sam3_vit_patch_embed,
    .vit_pos_ln_pre = samc_fast_sam3_vit_pos_ln_pre,
    .vit_block = samc_fast_sam3_vit_block,
    .neck_level = samc_fast_sam3_neck_level,
    .text_embed = samc_fast_sam3_text_embed,
    .text_block = samc_fast_sam3_text_block,
    .text_final = samc_fast_sam3_text_final,
    .text_resize = samc_fast_sam3_text_resize,
    .geo_prompt = samc_fast_sam3_geo_prompt,
    .enc_layer = samc_fast_sam3_enc_layer,
    .layer_norm = samc_fast_sam3_layer_norm,
    .dec_layer = samc_fast_sam3_dec_layer,
    .dec_query_pos = samc_fast_sam3_dec_query_pos,
    .dec_boxrpb = samc_fast_sam3_dec_boxrpb,
    .dec_presence = samc_fast_sam3_dec_presence,
    .dot_scoring = samc_fast_sam3_dot_scoring,
    .post_scores = samc_fast_sam3_post_scores,
    .post_boxes = samc_fast_sam3_post_boxes,
    .post_masks = samc_fast_sam3_post_masks,
    .dec_refine = samc_fast_sam3_dec_refine,
    .seg_cross_attend = samc_fast_sam3_seg_cross_attend,
    .pixel_decoder = samc_fast_sam3_pixel_decoder,
    .seg_heads = samc_fast_sam3_seg_heads,
};
