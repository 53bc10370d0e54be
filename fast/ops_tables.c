/* ops_tables.c - the fast implementation's tables (the bf16 implementation
 * runs the same bodies on bf16-packed weights), generated from the kind
 * lists: the body of kind K is samc_fast_K (declared in fast/fast_ops.h,
 * defined in the file of its module under fast/nn/, fast/tracker/,
 * fast/sam2/). A row names
 * its kind (SAMC_BODY(samc_tracker_ops, cxblock)), so grepping the kind
 * finds the row and every implementation's body; adding a kind adds its
 * bodies and nothing here. tests/test_registry.c checks that no kind is
 * left out. */
#include "fast/fast_ops.h"

const samc_nn_ops samc_fast_nn_ops = {
#define SAMC_X(kind) .kind = samc_fast_##kind,
    SAMC_NN_OPS(SAMC_X)
#undef SAMC_X
};

const samc_tracker_ops samc_fast_tracker_ops = {
#define SAMC_X(kind) .kind = samc_fast_##kind,
    SAMC_TRACKER_OPS(SAMC_X)
#undef SAMC_X
};

const samc_sam2_ops samc_fast_sam2_ops = {
#define SAMC_X(kind) .kind = samc_fast_##kind,
    SAMC_SAM2_OPS(SAMC_X)
#undef SAMC_X
};

const samc_sam3_ops samc_fast_sam3_ops = {
    .sam3_preprocess = samc_fast_sam3_preprocess,
    .sam3_vit_patch_embed = samc_fast_sam3_vit_patch_embed,
    .sam3_vit_pos_ln_pre = samc_fast_sam3_vit_pos_ln_pre,
    .sam3_vit_block = samc_fast_sam3_vit_block,
    .sam3_neck_level = samc_fast_sam3_neck_level,
    .sam3_text_embed = samc_fast_sam3_text_embed,
    .sam3_text_block = samc_fast_sam3_text_block,
    .sam3_text_final = samc_fast_sam3_text_final,
    .sam3_text_resize = samc_fast_sam3_text_resize,
    .sam3_geo_prompt = samc_fast_sam3_geo_prompt,
    .sam3_enc_layer = samc_fast_sam3_enc_layer,
    .sam3_dec_layer = samc_fast_sam3_dec_layer,
    .sam3_dec_query_pos = samc_fast_sam3_dec_query_pos,
    .sam3_dec_boxrpb = samc_fast_sam3_dec_boxrpb,
    .sam3_dec_refine = samc_fast_sam3_dec_refine,
    .sam3_dot_scoring = samc_fast_sam3_dot_scoring,
    .sam3_seg_cross_attend = samc_fast_sam3_seg_cross_attend,
    .sam3_pixel_decoder = samc_fast_sam3_pixel_decoder,
    .sam3_seg_heads = samc_fast_sam3_seg_heads,
    .sam3_post_scores = samc_fast_sam3_post_scores,
    .sam3_post_boxes = samc_fast_sam3_post_boxes,
    .sam3_post_masks = samc_fast_sam3_post_masks,
};
