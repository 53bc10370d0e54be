/* SPDX-License-Identifier: Apache-2.0 */
/* video_internal.h - the video predictor's state (inference_state),
 * shared by core/models/tracker/video*.c. */
#ifndef SAMC_MODELS_TRACKER_VIDEO_INTERNAL_H
#define SAMC_MODELS_TRACKER_VIDEO_INTERNAL_H

#include "core/models/tracker/video.h"

typedef struct video_points { int frame, n; float *coords; int32_t *labels; } video_points;
typedef struct video_mask { int frame; samc_tensor mask; } video_mask;   /* (1,1,S,S) {0,1} */
typedef struct video_tracked { int frame; bool reverse; } video_tracked;

typedef struct video_obj {
    int id;
    samc_frame_dict cond, non_cond;           /* output_dict_per_obj */
    samc_frame_dict tmp_cond, tmp_non_cond;   /* temp_output_dict_per_obj */
    video_points *pts;
    int n_pts, cap_pts;
    video_mask *masks;
    int n_masks, cap_masks;
    video_tracked *tracked;
    int n_tracked, cap_tracked;
} video_obj;

struct samc_video {
    samc_exec *x;                             /* the model and its implementations */
    const samc_tracker_model *tr;                   /* the tracker in that model */
    samc_feature_source src;                  /* the frames' features */
    samc_frames *frames;
    samc_video_options opt;
    int num_frames, H, W;
    int prop_total;                           /* frames the running propagate visits */
    video_obj *objs;
    int n_objs, cap_objs;
    int cached_t;                             /* cached_features holds one frame */
    samc_frame_features cached;
};

/* _get_image_feature: the features of frame t (computed when not cached). */
samc_status samc__video_features(samc_video *v, int t, const samc_frame_features **f, samc_error *err);

/* _run_single_frame_inference for one object. `n_points` < 0: no points.
 * *out is the compact output (bf16 memory, hole-filled masks). */
samc_status samc__video_infer(samc_video *v, video_obj *o, int t, bool is_init, int n_points, const float *coords,
                        const int32_t *labels, const samc_tensor *mask, bool reverse, bool run_mem,
                        const samc_tensor *prev_logits, samc_frame_out *out, samc_error *err);

/* Low-res masks (n,1,s,s) -> out (n,1,H,W) at video resolution (+ the
 * non-overlap constraint when set); traced as @postprocess when `sc` is given. */
samc_status samc__video_to_orig_res(samc_video *v, const samc_scope *sc, const samc_tensor *low, float *out,
                                    samc_error *err);

/* Stored memory is bfloat16 (_run_single_frame_inference): round `mem` (a
 * decision point, scope = its frame and object). */
void samc__video_round_memory(samc_video *v, const samc_scope *sc, samc_tensor *mem);

video_tracked *samc__video_find_tracked(video_obj *o, int frame);
void samc__video_forget_tracked(video_obj *o, int frame);

#endif
