/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_config.h - the SAM 3 image model's configuration, typed.
 *
 * One struct holds everything the official `_target_` tree of the image
 * model decides (Sam3Image and the modules build_sam3_image_model passes
 * it; PARITY_DUMP_FORMAT.md, "SAM 3"). It is read once, from
 *   - a parity dump's /model/config_json,
 *   - a NAME.config.json written by tools/make_sam3_checkpoint.py (the
 *     Sam3Image tree, or {"image": tree, ...}), or
 *   - the built-in released preset (sam3_preset.c),
 * then validated (samc_sam3_config_validate) before any weight is bound.
 * A key absent from the tree takes the official constructor's default; a
 * constructor argument without a default must be present. Each part of
 * the model reads its own section (core/models/sam3/sam3_parts.h).
 *
 * Every count is bounded by the array it sizes (SAMC_SAM3_MAX_*), every
 * size by SAMC_SAM3_MAX_DIM, and the products the model allocates
 * (token grids, RoPE tables, embeddings) are checked for overflow.
 */
#ifndef SAMC_CORE_MODELS_SAM3_CONFIG_H
#define SAMC_CORE_MODELS_SAM3_CONFIG_H

#include <stdbool.h>

#include "core/models/tracker/tracker_config.h" /* samc_sine_pe_config */
#include "samc_status.h"

typedef struct cJSON cJSON;

#define SAMC_SAM3_MAX_BLOCKS 64       /* ViT depth */
#define SAMC_SAM3_NECK_MAX 4          /* neck scale factors */
#define SAMC_SAM3_TEXT_MAX_LAYERS 48  /* text transformer depth */
#define SAMC_SAM3_MAX_ENC_LAYERS 12   /* geometry, fusion and decoder layers */
#define SAMC_SAM3_PIXDEC_MAX 4        /* pixel decoder stages */
#define SAMC_SAM3_MAX_DIM 65536       /* any width, size or count the config gives */
#define SAMC_SAM3_MAX_IMAGE 8192      /* the trunk's img_size */

/* nn.MultiheadAttention (MultiheadAttentionWrapper) as a layer's argument. */
typedef struct samc_sam3_mha_config {
    int embed_dim, num_heads;
    bool batch_first;
} samc_sam3_mha_config;

/* vitdet.ViT */
typedef struct samc_sam3_vit_config {
    int img_size, patch_size, in_chans, embed_dim, depth, num_heads, window_size, pretrain_img_size;
    int rope_pt_size;                   /* 0: None (the window size) */
    double mlp_ratio;
    double rope_theta;                  /* Attention's default: ViT never passes one */
    bool qkv_bias, bias_patch_embed, use_abs_pos, tile_abs_pos, pretrain_use_cls_token, ln_pre;
    bool use_rope, use_interp_rope;
    int n_global;                       /* global_att_blocks, in the order listed */
    int global_att_blocks[SAMC_SAM3_MAX_BLOCKS];
} samc_sam3_vit_config;

/* necks.Sam3DualViTDetNeck (its position_encoding shared by both necks). */
typedef struct samc_sam3_neck_config {
    int d_model;
    int n_scales;
    double scale_factors[SAMC_SAM3_NECK_MAX];
    samc_sine_pe_config pe;
    bool add_sam2_neck;                 /* the tracker's copy, sam2_convs */
} samc_sam3_neck_config;

/* The vision backbone part: the trunk, the neck, and SAM3VLBackbone's
 * scalp of its output. */
typedef struct samc_sam3_vision_config {
    samc_sam3_vit_config trunk;
    samc_sam3_neck_config neck;
    int scalp;                          /* backbone.scalp: the lowest-resolution levels dropped */
} samc_sam3_vision_config;

/* text_encoder_ve.VETextEncoder (TextTransformer with output_tokens, its
 * defaults mlp_ratio 4 and output_dim 512, the causal mask). */
typedef struct samc_sam3_text_config {
    int d_model, width, heads, layers, context_length, vocab_size;
    bool use_ln_post;
} samc_sam3_text_config;

/* encoder.TransformerEncoderLayer (pre-norm, ReLU: the only ones implemented). */
typedef struct samc_sam3_enc_layer_config {
    int d_model, dim_feedforward;
    bool pos_enc_at_attn, pos_enc_at_cross_attn_keys, pos_enc_at_cross_attn_queries;
    samc_sam3_mha_config self_attention, cross_attention;
} samc_sam3_enc_layer_config;

/* geometry_encoders.SequenceGeometryEncoder (no mask encoder, boxes not
 * encoded as points). */
typedef struct samc_sam3_geometry_config {
    int d_model, num_layers, roi_size;
    bool points_direct_project, points_pool, points_pos_enc;
    bool boxes_direct_project, boxes_pool, boxes_pos_enc;
    bool add_cls, add_post_encode_proj;
    samc_sine_pe_config pos_enc;
    samc_sam3_enc_layer_config layer;
} samc_sam3_geometry_config;

/* encoder.TransformerEncoderFusion (one feature level, no pooled text). */
typedef struct samc_sam3_fusion_config {
    int d_model, num_layers;
    samc_sam3_enc_layer_config layer;
} samc_sam3_fusion_config;

enum { SAMC_SAM3_RPB_NONE = 0, SAMC_SAM3_RPB_LOG, SAMC_SAM3_RPB_LINEAR, SAMC_SAM3_RPB_BOTH };

/* decoder.TransformerDecoder with its TransformerDecoderLayer (box_refine,
 * return_intermediate, ReLU, no interaction layer or instance query). */
typedef struct samc_sam3_decoder_config {
    int d_model, num_layers, num_queries, dim_feedforward;
    int n_heads;                        /* self-attention and text cross-attention */
    samc_sam3_mha_config cross_attention;
    bool use_text_cross_attention, presence_token, use_normed_output_consistently;
    int boxrpb;                         /* SAMC_SAM3_RPB_* */
} samc_sam3_decoder_config;

/* model_misc.DotProductScoring with an optional prompt_mlp (model_misc.MLP). */
typedef struct samc_sam3_scoring_config {
    int d_model, d_proj;
    bool clamp_logits;
    double clamp_max_val;
    bool has_prompt_mlp;
    int mlp_layers, mlp_hidden;
    bool mlp_residual, mlp_out_norm;
    double mlp_out_norm_eps;
} samc_sam3_scoring_config;

/* maskformer_segmentation.UniversalSegmentationHead + PixelDecoder. */
typedef struct samc_sam3_seg_config {
    bool present;                       /* segmentation_head is not None */
    int hidden_dim, num_upsampling_stages;
    bool shared_conv;
    bool has_cross_attend;
    samc_sam3_mha_config cross_attend_prompt;
} samc_sam3_seg_config;

typedef struct samc_sam3_config {
    int resolution;                     /* Sam3Processor's resolution: the trunk's img_size */
    samc_sam3_vision_config vision;     /* backbone.visual, backbone.scalp */
    samc_sam3_text_config text;         /* backbone.text */
    samc_sam3_geometry_config geo;      /* input_geometry_encoder */
    samc_sam3_fusion_config enc;        /* transformer.encoder */
    samc_sam3_decoder_config dec;       /* transformer.decoder */
    samc_sam3_scoring_config scoring;   /* dot_prod_scoring */
    samc_sam3_seg_config seg;           /* segmentation_head */
    bool joint_box_scores;              /* supervise_joint_box_scores: pred_logits joint with the presence
                                           (the video model's detector, Sam3ImageOnVideoMultiGPU) */
} samc_sam3_config;

/* The Sam3Image tree `root` into *out; `what` names the source in messages
 * ("model.config.json", "x.h5:/model/config_json"). Each value is read
 * with its official default; a missing required value, a value of the
 * wrong type, or an option samc does not implement is an error naming the
 * key's path. The result is validated. */
samc_status samc_sam3_config_from_json(const cJSON *root, const char *what, samc_sam3_config *out, samc_error *err);
/* The same from JSON text. */
samc_status samc_sam3_config_parse(const char *json, const char *what, samc_sam3_config *out, samc_error *err);
/* A config file: a Sam3Image tree, or {"image": tree, ...}. */
samc_status samc_sam3_config_from_file(const char *path, samc_sam3_config *out, samc_error *err);
/* The released image model (sam3_preset.c); with_sam2_neck: as the
 * detector of sam3.pt, which build_sam3_video_model builds with the
 * tracker's neck copy. */
samc_status samc_sam3_config_released(bool with_sam2_neck, samc_sam3_config *out, samc_error *err);
/* Every bound and every product the model sizes from the config; an error
 * names the key. */
samc_status samc_sam3_config_validate(const samc_sam3_config *c, const char *what, samc_error *err);

/* The tree read into *out without the validation (sam3_config_json.c;
 * the entry points above validate). */
samc_status samc__sam3_config_read(const cJSON *root, const char *what, samc_sam3_config *out, samc_error *err);

/* The released tree as text (sam3_preset.c, recorded from the official builder). */
extern const char samc_sam3_released_config_json[];

#endif
