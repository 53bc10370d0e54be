/* SPDX-License-Identifier: Apache-2.0 */
/* tracker_config.h - the tracker's config section (SAM2Base and
 * SAM2VideoPredictor): typed, read once by the family that mounts the
 * tracker (SAM 2 from its model config, SAM 3 from the tracker half of its
 * builder), with the official constructors' defaults. The tracker's parts
 * read their sizes from here, never from a family's constants. */
#ifndef SAMC_MODELS_TRACKER_CONFIG_H
#define SAMC_MODELS_TRACKER_CONFIG_H

#include <stdbool.h>

#include "samc_status.h"

typedef struct samc_sine_pe_config {
    int num_pos_feats;
    double temperature;
    bool normalize;
    double scale;                       /* <= 0 means the default 2*pi */
} samc_sine_pe_config;

typedef struct samc_memory_attention_config {
    int d_model, num_layers, dim_feedforward;
    int self_heads, cross_heads, kv_in_dim;
    double rope_theta;
    int feat_h, feat_w;
    bool pos_enc_at_input, pos_enc_at_attn;
    bool pos_enc_at_cross_attn_keys, pos_enc_at_cross_attn_queries;
    bool rope_k_repeat;
} samc_memory_attention_config;

typedef struct samc_memory_encoder_config {
    int out_dim, in_dim;
    int ds_kernel, ds_stride, ds_padding, ds_total_stride, ds_embed_dim;
    int ds_interpol_h, ds_interpol_w;   /* SimpleMaskDownSampler.interpol_size (SAM 3: 1152); 0: none (SAM 2) */
    int fuser_layers, fuser_dim, fuser_kernel, fuser_padding;
    double layer_scale_init_value;
    bool use_dwconv;
    samc_sine_pe_config pe;
} samc_memory_encoder_config;

/* SAM2VideoPredictor's own options (its constructor's keyword arguments,
 * keys of the model section like the SAM2Base ones). */
typedef struct samc_tracker_video_config {
    double fill_hole_area;              /* 0 = off */
    bool non_overlap_masks, clear_non_cond_mem_around_input, add_all_frames_to_correct_as_cond;
} samc_tracker_video_config;

/* SAM2Base's options and the SAM heads' sizes: one list, declared in the
 * tracker's config section below and in each family's config that reads
 * them (core/models/sam2/config.h), and copied between the two from it. */
#define SAMC_SAM2BASE_OPTIONS(X)                                                                    \
    X(int, num_maskmem)                                                                             \
    X(double, sigmoid_scale_for_mem_enc) X(double, sigmoid_bias_for_mem_enc)                        \
    X(bool, binarize_mask_from_pts_for_mem_enc) X(bool, use_mask_input_as_output_without_sam)       \
    X(int, max_cond_frames_in_attn)                                                                 \
    X(bool, directly_add_no_mem_embed) X(bool, use_high_res_features_in_sam)                        \
    X(bool, multimask_output_in_sam) X(int, multimask_min_pt_num) X(int, multimask_max_pt_num)      \
    X(bool, multimask_output_for_tracking) X(bool, use_multimask_token_for_obj_ptr)                 \
    X(bool, iou_prediction_use_sigmoid) X(int, memory_temporal_stride_for_eval)                     \
    X(bool, non_overlap_masks_for_mem_enc) X(bool, use_obj_ptrs_in_encoder)                         \
    X(int, max_obj_ptrs_in_encoder)                                                                 \
    X(bool, add_tpos_enc_to_obj_ptrs) X(bool, proj_tpos_enc_in_obj_ptrs)                            \
    X(bool, use_signed_tpos_enc_to_obj_ptrs) X(bool, only_obj_ptrs_in_the_past_for_eval)            \
    X(bool, pred_obj_scores) X(bool, pred_obj_scores_mlp) X(bool, fixed_no_obj_ptr)                 \
    X(bool, soft_no_obj_ptr) X(bool, use_mlp_for_obj_ptr_proj) X(bool, no_obj_embed_spatial)        \
    /* sam_mask_decoder_extra_args */                                                              \
    X(bool, dynamic_multimask_via_stability) X(double, dynamic_multimask_stability_delta)           \
    X(double, dynamic_multimask_stability_thresh)                                                   \
    /* fixed by SAM2Base._build_sam_heads */                                                        \
    X(int, mask_in_chans) X(int, num_multimask_outputs) X(int, twoway_depth) X(int, twoway_mlp_dim) \
    X(int, twoway_heads) X(int, iou_head_depth) X(int, iou_head_hidden_dim)
#define SAMC_SAM2BASE_FIELD(type, name) type name;

/* Where SAM 3's tracker (Sam3TrackerBase, sam3/model/sam3_tracker_base.py)
 * differs from SAM2Base: all zero (SAM2Base's behaviour) for SAM 2. */
typedef struct samc_sam3_tracker_config {
    bool use_memory_selection;          /* frame_filter (SAM2Long): previous memories and pointers
                                           from frames whose eff_iou_score > mf_threshold */
    double mf_threshold;
    bool keep_first_cond_frame;         /* select_closest_cond_frames keeps the earliest one */
    bool mask_low_res_by_stride;        /* _use_mask_as_output's low-res side: S // backbone_stride * 4
                                           (SAM 2: S // 4) */
    bool mlp_block;                     /* the two-way blocks' MLP is sam/common.py's MLPBlock (lin1, lin2) */
    bool traced;                        /* SAM 3's dump format: @track_step, @use_mask_as_output,
                                           @encode_new_memory, obj_ptr_tpos_proj, mask_downsample and
                                           conv_s0/s1 are parity points */
} samc_sam3_tracker_config;

/* SAM2Base's options, the SAM heads' sizes and the frame geometry. */
typedef struct samc_tracker_config {
    int d_model;                        /* transformer_dim: SAM heads, memory attention, object pointers */
    int image_size, backbone_stride;    /* input side; features are image_size / backbone_stride */
    samc_memory_attention_config mem_attn;
    samc_memory_encoder_config mem_enc;
    samc_tracker_video_config video;

    SAMC_SAM2BASE_OPTIONS(SAMC_SAM2BASE_FIELD)
    samc_sam3_tracker_config sam3;
} samc_tracker_config;

/* Every size the tracker's parts derive from the config within what the
 * official code would build (an error names the key). */
samc_status samc_tracker_config_validate(const samc_tracker_config *c, samc_error *err);

#endif
