/* SPDX-License-Identifier: Apache-2.0 */
/* video.h - the tracker's video predictor (SAM2VideoPredictor; SAM 3's
 * Sam3TrackerPredictor is the same state machine): objects with
 * point, box or mask prompts on any frame, propagation forward or in
 * reverse, corrections, clearing, removal, reset.
 *
 * Objects are independent (batch 1 each, their own memory bank); the image
 * features of a frame are computed once per visit and shared. Outputs are
 * mask logits at the video resolution (threshold > 0). */
#ifndef SAMC_MODELS_TRACKER_VIDEO_H
#define SAMC_MODELS_TRACKER_VIDEO_H

#include "core/io/video_frames.h"
#include "core/models/tracker/frame_dict.h"
#include "core/models/tracker/tracker.h"

typedef struct samc_video samc_video;

/* The video predictor's options: SAM2VideoPredictor's constructor
 * arguments and binarize_mask_from_pts_for_mem_enc (SAM2Base), taken from
 * the model's config (samc_video_options_from_config). */
typedef struct samc_video_options {
    float fill_hole_area;       /* 0 = off (official hole filling needs the CUDA extension sam2._C) */
    bool non_overlap_masks;
    bool add_all_frames_to_correct_as_cond;
    bool clear_non_cond_mem_around_input;
    bool binarize_mask_from_pts_for_mem_enc;
    /* Streaming (camera-like): forward tracking only keeps what the memory
     * bank can still read: non-conditioning outputs of the last
     * max(num_maskmem-1, max_obj_ptrs_in_encoder-1) frames (times the
     * temporal stride), and stream frames are released once passed. */
    bool streaming;
} samc_video_options;

/* The options a config gives (absent keys: the constructor's defaults). */
samc_video_options samc_video_options_from_config(const samc_tracker_config *cfg);

/* init_state on the tracker `tr` of a use `x` of a model (x and tr must
 * outlive the video), its frames' features from `src` (copied). Takes
 * ownership of `frames` (also on failure). opt NULL: from the config. */
samc_status samc_video_init(samc_exec *x, const samc_tracker_model *tr, const samc_feature_source *src,
                            samc_frames *frames, const samc_video_options *opt, samc_video **out, samc_error *err);
void samc_video_free(samc_video *v);

/* Consolidated masks of one frame: n_obj masks of H x W logits (obj order). */
typedef struct samc_video_masks {
    int frame_idx, n_obj, height, width;
    int *obj_ids;
    float *logits;              /* n_obj * height * width */
    float *object_scores;       /* n_obj, NAN where an object has no output */
} samc_video_masks;
void samc_video_masks_free(samc_video_masks *m);

/* add_new_points_or_box: points (n,2) in video pixels with labels, and/or a
 * box (x0,y0,x1,y1); a box needs clear_old_points. normalized: points and
 * box in [0, 1] of the video width and height (normalize_coords=False). */
samc_status samc_video_add_points(samc_video *v, int frame_idx, int obj_id, const float *points,
                                  const int32_t *labels, int n, const float *box, bool clear_old_points,
                                  bool normalized, samc_video_masks *out, samc_error *err);
/* add_new_mask: mask (h,w) with values > 0.5 foreground (any size; resized). */
samc_status samc_video_add_mask(samc_video *v, int frame_idx, int obj_id, const float *mask, int h, int w,
                                samc_video_masks *out, samc_error *err);

typedef samc_status (*samc_video_frame_cb)(void *user, const samc_video_masks *masks);
/* propagate_in_video: start < 0 = the first conditioning frame; max_frames
 * < 0 = all. Calls `cb` once per frame in processing order. */
samc_status samc_video_propagate(samc_video *v, int start, int max_frames, bool reverse, samc_video_frame_cb cb,
                                 void *user, samc_error *err);

samc_status samc_video_clear_frame(samc_video *v, int frame_idx, int obj_id, samc_error *err);
samc_status samc_video_remove_object(samc_video *v, int obj_id, samc_error *err);
void samc_video_reset(samc_video *v);

/* The official frame loader's preprocessing of frame t -> (1,3,S,S), traced
 * as @preprocess (the predictor itself preprocesses frames on demand). */
samc_status samc_video_preprocess_frame(samc_video *v, int t, samc_tensor *x, samc_error *err);

/* Push one more frame into a stream source (samc_frames_new_stream). */
samc_status samc_video_push_frame(samc_video *v, const uint8_t *rgb, int h, int w, samc_error *err);
/* Stored per-frame outputs over all objects (memory-bank size, for tests). */
int samc_video_stored_outputs(const samc_video *v);

int samc_video_num_objects(const samc_video *v);
int samc_video_num_frames(const samc_video *v);
/* How many frames the propagate now running visits (known from its first
 * frame callback on: the default start depends on the prompts as
 * propagate's preflight consolidates them). */
int samc_video_propagate_total(const samc_video *v);

#endif
