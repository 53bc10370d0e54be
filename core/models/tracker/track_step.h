/* SPDX-License-Identifier: Apache-2.0 */
/* track_step.h - one tracking step of the tracker (SAM2Base.track_step and
 * what it calls): memory conditioning, SAM heads with object pointer, mask
 * prompts used as output, and memory encoding. */
#ifndef SAMC_MODELS_TRACKER_TRACK_STEP_H
#define SAMC_MODELS_TRACKER_TRACK_STEP_H

#include "core/models/tracker/frame_dict.h"
#include "core/models/tracker/tracker.h"
#include "core/nn/bf16.h"

typedef struct samc_track_in {
    int frame_idx;
    bool is_init_cond_frame;
    const samc_frame_features *f;            /* this frame's image features */
    int n_points;                           /* < 0: point_inputs is None */
    const float *point_coords;              /* (n,2) in model-input pixels */
    const int32_t *point_labels;
    const samc_tensor *mask_inputs;         /* (1,1,S,S) {0,1}, or NULL */
    const samc_frame_dict *cond, *non_cond; /* this object's output_dict */
    int num_frames;
    bool reverse, run_mem_encoder;
    const samc_tensor *prev_sam_mask_logits; /* (1,1,4e,4e) or NULL */
    bool binarize_mask_from_pts;            /* binarize_mask_from_pts_for_mem_enc (video predictor option) */
    bool no_memory;                         /* Sam3TrackerBase's use_prev_mem_frame=False (SAM 3's clicks):
                                               the feature + no_mem_embed, no memory attention */
    bool no_step_record;                    /* the caller traces @track_step (samc_tracker_trace_step): one
                                               object of a batch, whose eff_iou_score needs every object */
} samc_track_in;

typedef struct samc_track_out {
    samc_tensor pred_masks;                 /* (1,1,4e,4e) best low-res logits */
    samc_tensor pred_masks_high_res;        /* (1,1,S,S) */
    samc_tensor obj_ptr;                    /* (1,D) */
    float object_score;
    float iou_score;                        /* the best IoU prediction (1 for a mask used as output) */
    bool has_mem;
    samc_tensor maskmem;                    /* (1,mem_dim,e,e) float32 (not yet bf16) */
} samc_track_out;

void samc_track_out_release(samc_track_out *o);
/* The @track_step record of one object's step (SAM 3's dump format) with
 * eff_iou_score = *batch_eff (its batch's cal_mem_score), NULL: its own. */
samc_status samc_tracker_trace_step(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                    const samc_track_out *o, const float *batch_eff, samc_error *err);

/* Sam3TrackerBase.cal_mem_score over n objects of one state: the mean of
 * the [n, n] product of (2 sigmoid(score) - 1 where score > 0, else 0) and
 * the IoU scores (mean(norm) * mean(iou); the product for one object). */
float samc_tracker_mem_score(const float *scores, const float *ious, int n);
/* The part of SAM 3's @track_step, @use_mask_as_output and
 * @encode_new_memory records (mounted at the tracker's root). */
extern const samc_part_def samc_track_step_part;

/* track_step for one object; `sc` names the frame and object for the trace. */
samc_status samc_tracker_track_step(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                    const samc_track_in *in, samc_track_out *out, samc_error *err);

/* _prepare_memory_conditioned_features -> pix_feat (1,C,e,e); traced as
 * @prepare_memory_conditioned_features. */
samc_status samc_tracker_prepare_memory(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                        const samc_track_in *in, samc_tensor *pix, samc_error *err);

/* _encode_new_memory: high_res_masks (1,1,S,S) -> maskmem (1,mem_dim,e,e);
 * binarize: the masks come from points and binarize_mask_from_pts_for_mem_enc is set. */
samc_status samc_tracker_encode_new_memory(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                           const samc_frame_features *f, const samc_tensor *high_res_masks,
                                           float object_score, bool binarize, samc_tensor *maskmem, samc_error *err);

#endif
