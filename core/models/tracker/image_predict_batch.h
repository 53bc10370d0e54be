/* SPDX-License-Identifier: Apache-2.0 */
/* image_predict_batch.h - SAM2ImagePredictor._predict with a batch of
 * prompts: B prompts on one image's features in one prompt-encoder and one
 * mask-decoder pass (repeat_image when B > 1), as predict_batch and
 * SAM2AutomaticMaskGenerator._process_batch / refine_with_m2m call it. */
#ifndef SAMC_MODELS_TRACKER_IMAGE_PREDICT_BATCH_H
#define SAMC_MODELS_TRACKER_IMAGE_PREDICT_BATCH_H

#include "core/models/tracker/image_predict.h"

/* The official tensors: every prompt of a batch has the same number of
 * points and either all or none have a box / a mask input. */
typedef struct samc_sam_batch_prompt {
    int B;                    /* prompts, >= 1 */
    int n_points;             /* points per prompt (>= 0) */
    const float *points;      /* (B, n_points, 2) x, y in original-image pixels */
    const int32_t *labels;    /* (B, n_points) */
    const float *boxes;       /* (B, 4) x0 y0 x1 y1 in original-image pixels, or NULL */
    const float *mask_input;  /* (B, 4e, 4e) low-res logits, or NULL */
    bool multimask;
    bool allow_points_outside; /* as samc_sam_prompt */
    bool normalized_coords;    /* as samc_sam_prompt */
    /* Which masks are brought to the image size: NULL, every one; else the
     * C masks of each prompt for which upscale_keep(keep_user, iou) holds
     * for one of them at least (samc_sam_batch_upscaled), and out->masks
     * holds only those prompts', in order (K, C, H, W), or nothing when
     * there are none. Each plane's fill and resize read its own logits
     * only, so a caller that drops masks by their IoU prediction anyway (the
     * AMG) can decide first and not make, move and free the rest (805 MB a
     * batch of 64 points at 1024 x 1024). */
    bool (*upscale_keep)(const void *keep_user, float iou);
    const void *keep_user;
} samc_sam_batch_prompt;

typedef struct samc_sam_batch_prediction {
    int B, C;                 /* prompts, masks per prompt */
    samc_tensor masks;        /* (B, C, H, W) logits at the image size, after the hole/sprinkle fill
                                 (with upscale_keep: the kept planes only, see above) */
    samc_tensor iou;          /* (B, C) */
    samc_tensor low_res;      /* (B, C, 4e, 4e) logits clamped to [-32, 32] */
} samc_sam_batch_prediction;

/* Check every prompt (as samc_sam_check_prompt), then run them. */
samc_status samc_sam_predict_batch(samc_exec *x, const samc_tracker_model *tr, const samc_frame_features *f,
                                   const samc_sam_batch_prompt *p, const samc_sam_image_opts *opts,
                                   samc_sam_batch_prediction *out, samc_error *err);
/* Whether prompt b of a prediction (iou (B, C)) has its masks in out->masks. */
bool samc_sam_batch_upscaled(const samc_sam_batch_prompt *p, const float *iou, int C, int64_t b);
/* transform_coords in float32 (image_predict.c): pixels / (w, h) * S, or
 * normalized coordinates (normalize=False) * S. */
void samc__sam_to_model_coords(float x, float y, const samc_frame_features *f, bool normalized, int S, float *out);
/* _predict's returned low-res copy: torch.clamp(src, -32, 32) into dst (may alias) (image_predict.c). */
void samc__sam2_clamp_logits(float *dst, const float *src, int64_t n);
void samc_sam_batch_prediction_release(samc_sam_batch_prediction *p);

#endif
