/* sam3_preset.c - the released SAM 3 image model's `_target_` tree (what
 * build_sam3_image_model passes, recorded from facebookresearch/sam3@99d02f28c8d3 by
 * tools/sam3_preset.py --c; do not edit by hand). sam3.pt holds the weights
 * of exactly this tree under "detector.". */
#include "core/models/sam3/sam3_model.h"

#include "core/base/error.h"

const char samc_sam3_released_config_json[] =
    "{\"_target_\": \"sam3.model.sam3_image.Sam3Image\", \"backbone\": {\"_target_\": \"sam3.model.vl_combiner.SAM"
    "3VLBackbone\", \"scalp\": 1, \"text\": {\"_target_\": \"sam3.model.text_encoder_ve.VETextEncoder\", \"d_model\""
    ": 256, \"heads\": 16, \"layers\": 24, \"tokenizer\": {\"_target_\": \"sam3.model.tokenizer_ve.SimpleTokenizer"
    "\"}, \"width\": 1024}, \"visual\": {\"_target_\": \"sam3.model.necks.Sam3DualViTDetNeck\", \"add_sam2_neck\": f"
    "alse, \"d_model\": 256, \"position_encoding\": {\"_target_\": \"sam3.model.position_encoding.PositionEmbedd"
    "ingSine\", \"normalize\": true, \"num_pos_feats\": 256, \"precompute_resolution\": 1008, \"scale\": null, \"te"
    "mperature\": 10000}, \"scale_factors\": [4.0, 2.0, 1.0, 0.5], \"trunk\": {\"_target_\": \"sam3.model.vitdet."
    "ViT\", \"bias_patch_embed\": false, \"compile_mode\": null, \"depth\": 32, \"drop_path_rate\": 0.1, \"embed_di"
    "m\": 1024, \"global_att_blocks\": [7, 15, 23, 31], \"img_size\": 1008, \"ln_post\": false, \"ln_pre\": true, "
    "\"mlp_ratio\": 4.625, \"norm_layer\": \"LayerNorm\", \"num_heads\": 16, \"patch_size\": 14, \"pretrain_img_size"
    "\": 336, \"pretrain_use_cls_token\": true, \"qkv_bias\": true, \"rel_pos_blocks\": [], \"retain_cls_token\": "
    "false, \"return_interm_layers\": false, \"tile_abs_pos\": true, \"use_abs_pos\": true, \"use_interp_rope\": "
    "true, \"use_rope\": true, \"window_size\": 24}}}, \"dot_prod_scoring\": {\"_target_\": \"sam3.model.model_mis"
    "c.DotProductScoring\", \"d_model\": 256, \"d_proj\": 256, \"prompt_mlp\": {\"_target_\": \"sam3.model.model_mi"
    "sc.MLP\", \"dropout\": 0.1, \"hidden_dim\": 2048, \"input_dim\": 256, \"num_layers\": 2, \"out_norm\": {\"_targe"
    "t_\": \"torch.nn.LayerNorm\", \"normalized_shape\": 256}, \"output_dim\": 256, \"residual\": true}}, \"input_g"
    "eometry_encoder\": {\"_target_\": \"sam3.model.geometry_encoders.SequenceGeometryEncoder\", \"add_cls\": tr"
    "ue, \"add_post_encode_proj\": true, \"boxes_direct_project\": true, \"boxes_pool\": true, \"boxes_pos_enc\":"
    " true, \"d_model\": 256, \"encode_boxes_as_points\": false, \"layer\": {\"_target_\": \"sam3.model.encoder.Tr"
    "ansformerEncoderLayer\", \"activation\": \"relu\", \"cross_attention\": {\"_target_\": \"sam3.model.model_misc"
    ".MultiheadAttentionWrapper\", \"batch_first\": false, \"dropout\": 0.1, \"embed_dim\": 256, \"num_heads\": 8}"
    ", \"d_model\": 256, \"dim_feedforward\": 2048, \"dropout\": 0.1, \"pos_enc_at_attn\": false, \"pos_enc_at_cro"
    "ss_attn_keys\": true, \"pos_enc_at_cross_attn_queries\": false, \"pre_norm\": true, \"self_attention\": {\"_"
    "target_\": \"sam3.model.model_misc.MultiheadAttentionWrapper\", \"batch_first\": false, \"dropout\": 0.1, \""
    "embed_dim\": 256, \"num_heads\": 8}}, \"num_layers\": 3, \"points_direct_project\": true, \"points_pool\": tr"
    "ue, \"points_pos_enc\": true, \"pos_enc\": {\"_target_\": \"sam3.model.position_encoding.PositionEmbeddingS"
    "ine\", \"normalize\": true, \"num_pos_feats\": 256, \"precompute_resolution\": null, \"scale\": null, \"temper"
    "ature\": 10000}, \"use_act_ckpt\": true}, \"inst_interactive_predictor\": null, \"matcher\": null, \"multima"
    "sk_output\": true, \"num_feature_levels\": 1, \"o2m_mask_predict\": true, \"segmentation_head\": {\"_target_"
    "\": \"sam3.model.maskformer_segmentation.UniversalSegmentationHead\", \"act_ckpt\": true, \"aux_masks\": fa"
    "lse, \"cross_attend_prompt\": {\"_target_\": \"sam3.model.model_misc.MultiheadAttentionWrapper\", \"dropout"
    "\": 0, \"embed_dim\": 256, \"num_heads\": 8}, \"dot_product_scorer\": null, \"hidden_dim\": 256, \"pixel_decod"
    "er\": {\"_target_\": \"sam3.model.maskformer_segmentation.PixelDecoder\", \"compile_mode\": null, \"hidden_d"
    "im\": 256, \"interpolation_mode\": \"nearest\", \"num_upsampling_stages\": 3}, \"presence_head\": false, \"ups"
    "ampling_stages\": 3}, \"transformer\": {\"_target_\": \"sam3.model.model_misc.TransformerWrapper\", \"d_mode"
    "l\": 256, \"decoder\": {\"_target_\": \"sam3.model.decoder.TransformerDecoder\", \"boxRPB\": \"log\", \"box_refi"
    "ne\": true, \"d_model\": 256, \"dac\": true, \"dac_use_selfatt_ln\": true, \"frozen\": false, \"interaction_la"
    "yer\": null, \"layer\": {\"_target_\": \"sam3.model.decoder.TransformerDecoderLayer\", \"activation\": \"relu\""
    ", \"cross_attention\": {\"_target_\": \"sam3.model.model_misc.MultiheadAttentionWrapper\", \"dropout\": 0.1,"
    " \"embed_dim\": 256, \"num_heads\": 8}, \"d_model\": 256, \"dim_feedforward\": 2048, \"dropout\": 0.1, \"n_head"
    "s\": 8, \"use_text_cross_attention\": true}, \"num_layers\": 6, \"num_o2m_queries\": 0, \"num_queries\": 200,"
    " \"presence_token\": true, \"resolution\": 1008, \"return_intermediate\": true, \"stride\": 14, \"use_act_che"
    "ckpoint\": true}, \"encoder\": {\"_target_\": \"sam3.model.encoder.TransformerEncoderFusion\", \"add_pooled_"
    "text_to_img_feat\": false, \"d_model\": 256, \"frozen\": false, \"layer\": {\"_target_\": \"sam3.model.encoder"
    ".TransformerEncoderLayer\", \"activation\": \"relu\", \"cross_attention\": {\"_target_\": \"sam3.model.model_m"
    "isc.MultiheadAttentionWrapper\", \"batch_first\": true, \"dropout\": 0.1, \"embed_dim\": 256, \"num_heads\": "
    "8}, \"d_model\": 256, \"dim_feedforward\": 2048, \"dropout\": 0.1, \"pos_enc_at_attn\": true, \"pos_enc_at_cr"
    "oss_attn_keys\": false, \"pos_enc_at_cross_attn_queries\": false, \"pre_norm\": true, \"self_attention\": {"
    "\"_target_\": \"sam3.model.model_misc.MultiheadAttentionWrapper\", \"batch_first\": true, \"dropout\": 0.1, "
    "\"embed_dim\": 256, \"num_heads\": 8}}, \"num_feature_levels\": 1, \"num_layers\": 6, \"pool_text_with_mask\":"
    " true, \"use_act_checkpoint\": true}}, \"use_instance_query\": false}"
    ;

samc_status samc_sam3_released_config(bool with_sam2_neck, cJSON **out, samc_error *err)
{
    *out = cJSON_Parse(samc_sam3_released_config_json);
    if (!*out)
        return samc_fail(err, SAMC_ERR_NOMEM, "the built-in SAM 3 config could not be parsed (out of memory)");
    cJSON *visual = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(*out, "backbone"), "visual");
    if (with_sam2_neck && !cJSON_ReplaceItemInObjectCaseSensitive(visual, "add_sam2_neck", cJSON_CreateTrue())) {
        cJSON_Delete(*out);
        *out = NULL;
        return samc_fail(err, SAMC_ERR_NOMEM, "the built-in SAM 3 config could not be edited (out of memory)");
    }
    return SAMC_OK;
}
