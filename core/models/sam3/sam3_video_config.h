/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_config.h - SAM 3's video model (build_sam3_video_model:
 * Sam3VideoInferenceWithInstanceInteractivity) and its interactive image
 * predictor (build_sam3_image_model(enable_inst_interactivity=True)),
 * typed: the detector (the image model's config), the tracker's config
 * section (Sam3TrackerBase: SAM2Base's options with SAM 3's values and
 * differences), Sam3TrackerPredictor's options, and the detector-tracker
 * loop's options (Sam3VideoBase, Sam3VideoInference and the instance
 * interactivity). Read once from the builder's `_target_` tree (a dump's
 * /model/config_json, a config file, or the built-in release) with the
 * official constructors' defaults; options samc does not implement are
 * refused naming the key. docs/sam3_video.md section 1 lists them. */
#ifndef SAMC_CORE_MODELS_SAM3_VIDEO_CONFIG_H
#define SAMC_CORE_MODELS_SAM3_VIDEO_CONFIG_H

#include "core/models/sam3/sam3_config.h"
#include "core/models/sam3/sam3_tracker_state.h"
#include "core/models/tracker/tracker_config.h"

/* Sam3VideoBase / Sam3VideoInference / ...WithInstanceInteractivity. */
typedef struct samc_sam3_loop_config {
    double score_threshold_detection, det_nms_thresh;
    double assoc_iou_thresh, trk_assoc_iou_thresh, new_det_thresh;
    int hotstart_delay, hotstart_unmatch_thresh, hotstart_dup_thresh;
    bool suppress_unmatched_only_within_hotstart;
    int init_trk_keep_alive, max_trk_keep_alive, min_trk_keep_alive;
    double occlusion_threshold;         /* suppress_overlapping_based_on_recent_occlusion_threshold */
    bool decrease_trk_keep_alive_for_empty_masklets, suppress_det_close_to_boundary;
    int fill_hole_area;
    int max_num_objects;                /* <= 0 in the config: 10000 here, as the constructor sets it */
    int recondition_every_nth_frame;
    int masklet_confirmation_consecutive_det_thresh;
    int image_size;
    double image_mean[3], image_std[3];
    bool use_stateless_refinement;
    int refinement_detector_cond_frame_removal_window;
} samc_sam3_loop_config;

/* SAM3InteractiveImagePredictor's options (predict_inst). */
typedef struct samc_sam3_inst_config {
    double mask_threshold, max_hole_area, max_sprinkle_area;
} samc_sam3_inst_config;

typedef struct samc_sam3_video_config {
    samc_sam3_config detector;
    samc_tracker_config tracker;
    samc_s3_tracker_options tracker_opt;
    bool has_loop;                      /* the video model's tree (else an image model with inst interactivity) */
    samc_sam3_loop_config loop;
    samc_sam3_inst_config inst;
} samc_sam3_video_config;

/* The video model's tree (root Sam3VideoInferenceWithInstanceInteractivity)
 * or an image model's with inst_interactive_predictor; `what` names the
 * source in messages. Validated. */
samc_status samc_sam3_video_config_parse(const char *json, const char *what, samc_sam3_video_config *out,
                                         samc_error *err);
samc_status samc_sam3_video_config_from_json(const cJSON *root, const char *what, samc_sam3_video_config *out,
                                             samc_error *err);
/* The released video model (sam3_video_preset.c). */
samc_status samc_sam3_video_config_released(samc_sam3_video_config *out, samc_error *err);
/* Whether a tree is a video model's or an inst-interactive image model's. */
bool samc_sam3_video_config_is_tracker_tree(const char *json);

/* The official code's inline constants (docs/sam3_video.md section 1): the
 * loop uses SAMC_S3_<ID>; a dump's /model/code_constants_json names them
 * and is compared with these. */
#define SAMC_SAM3_CONSTANTS(X)                                                                                 \
    X(ASSOC_HIGH_CONF, assoc_high_conf_thresh, 0.8) X(ASSOC_HIGH_IOU, assoc_high_iou_thresh, 0.8)            \
    X(RECONDITION_HIGH_CONF, recondition_high_conf_thresh, 0.8)                                               \
    X(NEVER_OCCLUDED, occlusion_never_occluded, -1) X(ALWAYS_OCCLUDED, occlusion_always_occluded, 100000)    \
    X(OCCLUSION_LOGIT, occlusion_suppressed_logit, -10) X(REMOVED_SCORE, removed_obj_score, -1e4)            \
    X(NO_NEW_DET_OFFSET, no_new_detections_prob_offset, 1e8) X(NMS_OFFSET, nms_suppressed_logit_offset, 1e4) \
    X(MEMORY_SCORE, memory_object_score_present, 10.0) X(BOUNDARY_MARGIN, boundary_margin, 0.025)            \
    X(SHRINK_THRESHOLD, shrink_threshold, 0.3) X(SHRINK_LOGIT, shrink_suppressed_logit, -10.0)               \
    X(OBJECT_WISE_BACKGROUND, object_wise_background, -10.0) X(PREV_MASK_CLAMP, prev_mask_logit_clamp, 32.0) \
    X(NO_OBJ_SCORE, no_obj_score, -1024.0) X(MASK_AS_OUTPUT_SCALE, mask_as_output_scale, 20.0)               \
    X(NON_OVERLAP_CLAMP, non_overlap_clamp, -10.0) X(FILL_HOLE_VALUE, fill_hole_value, 0.1)                  \
    X(FILL_SPRINKLE_VALUE, fill_sprinkle_value, -0.1) X(REFINED_SCORE, refined_obj_score, 1.0)               \
    X(INVERSE_SIGMOID_EPS, inverse_sigmoid_eps, 1e-3) X(JOINT_LOGIT_CLAMP, joint_logit_clamp, 10.0)          \
    X(HOLE_FILL_LOGIT, hole_fill_logit, 10.0) X(LOW_RES_LOGIT_CLAMP, low_res_logit_clamp, 32.0)
#define SAMC_S3_CONST(id, name, v) static const double SAMC_S3_##id = (v);
SAMC_SAM3_CONSTANTS(SAMC_S3_CONST)
#undef SAMC_S3_CONST
typedef struct samc_sam3_code_constant {
    const char *name;
    double value;
} samc_sam3_code_constant;
extern const samc_sam3_code_constant samc_sam3_code_constants[];
extern const int samc_sam3_n_code_constants;
/* Every constant a dump records must equal samc's (an error names it). */
samc_status samc_sam3_check_code_constants(const char *json, const char *what, samc_error *err);

extern const char samc_sam3_released_video_config_json[];

#endif
