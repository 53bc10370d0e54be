/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_tracker_state.h - SAM 3's tracker predictor (Sam3TrackerPredictor,
 * sam3/model/sam3_tracking_predictor.py): one inference state holds a
 * batch of objects that are tracked together (the objects the detector
 * found on one frame, or one clicked object), with the official batched
 * bookkeeping the loop's decisions depend on: one output per frame for the
 * whole batch (its eff_iou_score a batch value), consolidation of new
 * inputs across the batch (pixel-wise non-overlap before the memory is
 * encoded), the per-object slices clicks and consolidation read (which
 * clearing the memory around an input edits), temporary outputs, input
 * frames, frames already tracked.
 *
 * The numerics run per object through the tracker's parts
 * (samc_tracker_track_step with the object's view of the batch's outputs):
 * every object of a batch reads the same frames, so the results are the
 * batched call's. A state's features come from its caller: each operation
 * on frame t is given frame t's features (the session's feature cache).
 * The numbered sections refer to docs/sam3_video.md. */
#ifndef SAMC_MODELS_SAM3_TRACKER_STATE_H
#define SAMC_MODELS_SAM3_TRACKER_STATE_H

#include "core/models/tracker/frame_dict.h"
#include "core/models/tracker/tracker.h"

/* Sam3TrackerPredictor's own options (its constructor's arguments, the
 * tracker node of the video builder's config). */
typedef struct samc_s3_tracker_options {
    bool clear_non_cond_mem_around_input, clear_non_cond_mem_for_multi_obj;
    int fill_hole_area;                 /* the tracker's own (0 in SAM 3's builder) */
    bool always_start_from_first_ann_frame;
    int max_point_num_in_prompt_enc;    /* <= 0: all points */
    bool non_overlap_masks_for_output;
} samc_s3_tracker_options;

/* One output of the batch on one frame: per object its slice (a frame_out
 * with the batch's has_eff / eff_iou_score copied in) and how its IoU
 * scores are shaped ([B, 1] after a consolidation, [B] from a tracking
 * step: cal_mem_score's broadcast differs, and a removal recomputes it). */
typedef struct samc_s3_entry {
    int frame;
    samc_frame_out *obj;                /* n_obj of them */
    bool iou_2d;
} samc_s3_entry;

typedef struct samc_s3_dict {           /* frame -> entry, Python dict order */
    samc_s3_entry *e;
    int n, cap;
} samc_s3_dict;

/* temp_output_dict_per_obj[obj][kind][frame]: a click's or a mask's output
 * before consolidation. */
typedef struct samc_s3_temp {
    int frame;
    bool cond;
    samc_tensor pred_masks;             /* (1,1,4G,4G) low-res logits, or empty */
    samc_tensor video_masks;            /* (1,1,H,W) +-1024 (a mask input at video size), or empty */
    samc_tensor obj_ptr;                /* (1,D) */
    float object_score, iou_score;
} samc_s3_temp;

typedef struct samc_s3_points {         /* point_inputs_per_obj[obj][frame] */
    int frame, n;
    float *coords;                      /* (n,2) model pixels */
    int32_t *labels;
} samc_s3_points;

typedef struct samc_s3_int_set { int *v; int n, cap; } samc_s3_int_set;

typedef struct samc_s3_object {
    int id;
    samc_s3_int_set slices[2];          /* output_dict_per_obj: frames of the cond / non-cond slices */
    samc_s3_temp *temp;
    int n_temp, cap_temp;
    samc_s3_points *points;
    int n_points, cap_points;
    samc_s3_int_set mask_frames;        /* mask_inputs_per_obj's frames */
} samc_s3_object;

typedef struct samc_s3_state {
    samc_exec *x;
    const samc_tracker_model *tr;
    const samc_s3_tracker_options *opt;
    int num_frames, H, W;               /* the video */
    samc_s3_object *objs;
    int n_obj, cap_obj;
    samc_s3_dict out[2];                /* output_dict: [0] cond, [1] non-cond frame outputs */
    samc_s3_int_set consolidated[2];
    samc_s3_int_set tracked;            /* frames_already_tracked: frame * 2 + reverse */
    int first_ann_frame;                /* -1: None */
    bool tracking_started;
} samc_s3_state;

void samc_s3_state_init(samc_s3_state *s, samc_exec *x, const samc_tracker_model *tr,
                        const samc_s3_tracker_options *opt, int num_frames, int H, int W);
void samc_s3_state_free(samc_s3_state *s);
int samc_s3_state_find(const samc_s3_state *s, int obj_id);  /* index, or -1 */

/* The frame's features, each operation's input (set by the caller). */
typedef struct samc_s3_frame {
    int t;
    const samc_frame_features *f;
} samc_s3_frame;

/* add_new_mask: mask (16G x 16G, {0,1}; 6.2). */
samc_status samc_s3_add_new_mask(samc_s3_state *s, const samc_s3_frame *fr, int obj_id, const samc_tensor *mask,
                                 samc_error *err);
/* add_new_points_or_box with clear_old_points (7.1): points (n,2) in model
 * pixels; `video_masks` (may be NULL) gets the consolidated (n_obj,1,H,W)
 * logits of the frame. */
samc_status samc_s3_add_new_points(samc_s3_state *s, const samc_s3_frame *fr, int obj_id, const float *coords,
                                   const int32_t *labels, int n, bool no_memory, samc_tensor *video_masks,
                                   samc_error *err);
/* propagate_in_video_preflight (6.3). */
samc_status samc_s3_preflight(samc_s3_state *s, const samc_s3_frame *fr, bool run_mem_encoder, samc_error *err);
/* propagate_in_video for one frame (4.2): masks (n_obj,4G,4G) and object
 * score logits (n_obj) in the state's order, written at `masks`/`scores`. */
samc_status samc_s3_propagate_frame(samc_s3_state *s, const samc_s3_frame *fr, bool reverse, bool run_mem_encoder,
                                    float *masks, float *scores, samc_error *err);
/* _run_memory_encoder with masks (n_obj,1,S,S) and scores (n_obj), not from
 * points, stored into the frame's outputs (4.3h). */
samc_status samc_s3_update_memory(samc_s3_state *s, const samc_s3_frame *fr, const samc_tensor *masks,
                                  const float *scores, samc_error *err);
/* remove_object (6.5); *emptied: it was the last object (the state is reset). */
samc_status samc_s3_remove_object(samc_s3_state *s, int obj_id, bool *emptied, samc_error *err);
/* clear_all_points_in_frame without output. */
void samc_s3_clear_frame(samc_s3_state *s, int frame, int obj_id);
/* clear_detector_added_cond_frame_in_tracker (7.1): the frames cleared. */
int samc_s3_clear_detector_frames(samc_s3_state *s, int obj_id, int refined_frame, int window, int *cleared, int cap);

#endif
