/* SPDX-License-Identifier: Apache-2.0 */
/* image_predict.h - SAM2ImagePredictor.predict (and SAM 3's predict_inst,
 * the same SAM 1 task) on the tracker's SAM heads: prompts in image
 * pixels, masks at the image size (image_predict.c); batches of prompts in
 * image_predict_batch.h. */
#ifndef SAMC_MODELS_TRACKER_IMAGE_PREDICT_H
#define SAMC_MODELS_TRACKER_IMAGE_PREDICT_H

#include "core/models/tracker/tracker.h"

typedef struct samc_sam_prompt {
    int n_points;
    const float *points;                /* (n_points, 2) x, y in original-image pixels */
    const int32_t *labels;              /* (n_points): 1 pos, 0 neg (-1..3 accepted) */
    bool has_box;
    float box[4];                       /* x0, y0, x1, y1 in original-image pixels */
    const samc_tensor *mask_input;      /* (1, 4e, 4e) or (1,1,4e,4e) logits, or NULL */
    bool multimask;
    /* Points outside the image are rejected unless this is set (the
     * official predictor accepts them; the parity harness replays dumps
     * exactly). Boxes may always extend past the image, as in the official
     * predictor; they must be ordered and finite. */
    bool allow_points_outside;
    /* points and box are in [0, 1] of the image width and height (the
     * official normalize_coords=False): scaled by the model size only. */
    bool normalized_coords;
} samc_sam_prompt;

/* SAM2ImagePredictor(max_hole_area, max_sprinkle_area): 0 = off (default). */
typedef struct samc_sam_image_opts {
    double max_hole_area, max_sprinkle_area;
} samc_sam_image_opts;

typedef struct samc_sam_prediction {
    int num_masks;
    samc_tensor masks;                  /* (C, H, W) logits at original size */
    samc_tensor iou;                    /* (C) */
    samc_tensor low_res;                /* (C, 4e, 4e) logits clamped to [-32, 32] */
    float object_score;                 /* logit (ignored by the image predictor) */
} samc_sam_prediction;

/* Validate a prompt against the image (points inside, finite, labels in
 * -1..3, box ordered, mask size). Messages name the argument. */
samc_status samc_sam_check_prompt(const samc_tracker_model *tr, const samc_frame_features *f, const samc_sam_prompt *p,
                                  samc_error *err);
/* SAM2ImagePredictor.predict(return_logits=True) on the features. */
samc_status samc_sam_predict(samc_exec *x, const samc_tracker_model *tr, const samc_frame_features *f,
                             const samc_sam_prompt *p, const samc_sam_image_opts *opts, samc_sam_prediction *out,
                             samc_error *err);
void samc_sam_prediction_release(samc_sam_prediction *p);

#endif
