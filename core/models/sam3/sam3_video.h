/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video.h - SAM 3's video session (Sam3VideoPredictor over
 * Sam3VideoInferenceWithInstanceInteractivity; docs/sam3_video.md): a
 * detector-tracker loop over a video's frames, prompted by a text and/or
 * one box, refined by clicks, propagated forward / backward / both, with
 * objects removed by hand or by the loop's heuristics. Runs on an exec of
 * the video family (samc_sam3_video_exec_init) of a SAM 3 model that has
 * its tracker.
 *
 * Outputs of a frame are the official _postprocess_output: object ids
 * (ascending), probabilities (the detection score at the object's birth,
 * 1 after a click), boxes (normalised x, y, w, h) and binary masks at the
 * video's size. */
#ifndef SAMC_CORE_MODELS_SAM3_VIDEO_H
#define SAMC_CORE_MODELS_SAM3_VIDEO_H

#include "core/io/video_frames.h"
#include "core/models/sam3/sam3_model.h"
#include "samc_sam3.h"

typedef struct samc_sam3_video samc_sam3_video;

/* samc_sam3_direction: forward, backward or both (samc_sam3.h). */

typedef struct samc_sam3_outputs {
    int frame_idx, H, W, n;
    int *obj_ids;
    float *probs;
    float *boxes_xywh;                  /* n x 4 */
    uint8_t *masks;                     /* n x H x W, 0/1 */
} samc_sam3_outputs;
void samc_sam3_outputs_free(samc_sam3_outputs *o);

typedef struct samc_sam3_video_options {
    /* Bounded memory (beyond the official; issue 19 item 3a, not implemented
     * yet: samc_sam3_video_open refuses it): frames decoded when needed and
     * released, nothing kept per frame that the loop can no longer read. */
    bool streaming;
} samc_sam3_video_options;

/* start_session on `frames` (owned by the session from here on, also on
 * failure). `x` is an exec of the video family of a model with a tracker
 * and a tokenizer vocabulary. */
samc_status samc_sam3_video_open(samc_exec *x, samc_frames *frames, const samc_sam3_video_options *opt,
                                 samc_sam3_video **out, samc_error *err);
void samc_sam3_video_close(samc_sam3_video *v);
int samc_sam3_video_num_frames(const samc_sam3_video *v);

/* add_prompt with a text (NULL: none) and/or one box (x, y, w, h normalised,
 * NULL: none; label 1 positive, 0 negative): a new session (reset), then
 * the frame's outputs. */
samc_status samc_sam3_video_add_prompt(samc_sam3_video *v, int frame, const char *text, const float *box_xywh,
                                       int box_label, samc_sam3_outputs *out, samc_error *err);
/* add_prompt with points (normalised x, y; labels 1 / 0) on object obj_id
 * (an existing one is refined, a new one added): the frame's outputs. */
samc_status samc_sam3_video_add_points(samc_sam3_video *v, int frame, int obj_id, const float *points,
                                       const int32_t *labels, int n, samc_sam3_outputs *out, samc_error *err);

typedef samc_status (*samc_sam3_video_cb)(void *user, const samc_sam3_outputs *o);
/* propagate_in_video: start < 0: the official default (the earliest frame
 * with outputs), max_frames < 0: all. `cb` gets every yielded frame; a
 * non-OK status from it stops the propagation and is returned. */
samc_status samc_sam3_video_propagate(samc_sam3_video *v, samc_sam3_direction dir, int start, int max_frames,
                                      samc_sam3_video_cb cb, void *user, samc_error *err);
samc_status samc_sam3_video_remove_object(samc_sam3_video *v, int obj_id, samc_error *err);
void samc_sam3_video_reset(samc_sam3_video *v);

/* The frame loader's preprocessing of frame t -> (1,3,R,R) float32 (the
 * float16 values), traced as @preprocess. */
samc_status samc_sam3_video_preprocess(samc_sam3_video *v, int t, samc_tensor *out, samc_error *err);

#endif
