/* SPDX-License-Identifier: Apache-2.0 */
/* samc_amg.h - batched prediction and the automatic mask generator of SAM 2,
 * on a samc_predictor (samc.h).
 *
 * Many prompts on one image embedding in one decoder pass, as the official
 * SAM2ImagePredictor._predict with (B, N, 2) prompt tensors:
 *
 *   float pts[2 * B]; int32_t lab[B];                    // one point each
 *   samc_batch_request rq = {.batch = B, .n_points = 1, .point_coords = pts,
 *                            .point_labels = lab, .multimask_output = 1};
 *   samc_batch_masks m;
 *   samc_predictor_predict_batch(p, &rq, &m, &err);      // m.masks: B x C x H x W
 *
 * A batch of images (set_image_batch / predict_batch): samc_image_batch_set,
 * then samc_image_batch_predict per image.
 *
 * SAM2AutomaticMaskGenerator(model, **params).generate(image):
 *
 *   samc_amg_params ap = samc_amg_default_params();      // the official defaults
 *   samc_amg_result r;
 *   samc_amg_generate_masks(p, rgb, h, w, &ap, NULL, NULL, &r, &err);
 *   samc_amg_write_json(&r, "masks.json", &err);         // the official records
 *   samc_amg_result_free(&r);
 *
 * Results equal the official ones (docs/amg.md, docs/parity_amg.md). Every
 * call returns SAMC_OK or a status with a message naming the argument.
 */
#ifndef SAMC_AMG_H
#define SAMC_AMG_H

#include <stdbool.h>
#include <stdint.h>

#include "samc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- many prompts on one image --------------------------------------------- */

/* B prompts with the same number of points each (the official tensors);
 * boxes and mask inputs are given for all prompts or for none. */
typedef struct samc_batch_request {
    int batch;                   /* B, 1..65536 */
    int n_points;                /* points per prompt (0 with boxes or masks only) */
    const float *point_coords;   /* B*n_points*2: x, y in image pixels */
    const int32_t *point_labels; /* B*n_points: 1 positive, 0 negative */
    const float *boxes;          /* B*4: x0, y0, x1, y1 in image pixels, or NULL */
    const float *mask_input;     /* B*low_res_size^2 logits, or NULL */
    int multimask_output;        /* 3 masks per prompt, else 1 */
    int return_logits;           /* 0: masks are 0/1 (logit > 0) */
    int normalized_coords;       /* 1: coordinates in [0, 1] of the image size (samc_predict_request) */
} samc_batch_request;

typedef struct samc_batch_masks {
    int batch, num_masks;        /* B, C */
    int height, width, low_res_size;
    float *masks;                /* B*C*height*width */
    float *iou;                  /* B*C */
    float *low_res;              /* B*C*low_res_size^2 logits, clamped to [-32, 32] */
} samc_batch_masks;

/* On the image set with samc_predictor_set_image. */
SAMC_API samc_status samc_predictor_predict_batch(samc_predictor *p, const samc_batch_request *rq, samc_batch_masks *out,
                                         samc_error *err);
SAMC_API void samc_batch_masks_free(samc_batch_masks *m);

/* ---- one mask's records ----------------------------------------------------
 *
 * The numbers the generator's records hold, for any mask (segment, track,
 * a server's responses): the COCO RLE, area, box and stability score,
 * computed by the generator's own code. */

typedef struct samc_mask_rle {
    int height, width;           /* "size": [height, width] */
    int64_t n_counts;
    int64_t *counts;             /* uncompressed COCO RLE: column-major runs, the first of 0s
                                  * (sam2/utils/amg.py mask_to_rle_pytorch) */
    char *coco_counts;           /* the compressed string of pycocotools' rleToString */
    int64_t area;                /* pixels in the mask */
    float bbox[4];               /* x, y, w, h of the inclusive mask box (0s for an empty mask) */
} samc_mask_rle;

/* The records of a height x width mask (row-major, nonzero = in). */
SAMC_API samc_status samc_mask_rle_encode(const uint8_t *mask, int height, int width, samc_mask_rle *out, samc_error *err);
/* The same for the mask logits > mask_threshold (0 for a predictor's
 * masks), without building the mask first. */
SAMC_API samc_status samc_mask_rle_encode_logits(const float *logits, int height, int width, double mask_threshold,
                                        samc_mask_rle *out, samc_error *err);
SAMC_API void samc_mask_rle_free(samc_mask_rle *r);
/* calculate_stability_score of one plane of logits: the pixels above
 * threshold + offset over those above threshold - offset (NaN when none is
 * above the low cut). The generator uses offset 1, threshold 0. */
SAMC_API float samc_stability_score(const float *logits, int height, int width, double mask_threshold, double offset);

/* ---- a batch of images ----------------------------------------------------- */

typedef struct samc_image_batch samc_image_batch;

/* set_image_batch: the embeddings of n RGB images (rgb[i]: h[i]*w[i]*3). */
SAMC_API samc_status samc_image_batch_set(samc_predictor *p, int n, const uint8_t *const *rgb, const int *h, const int *w,
                                 samc_image_batch **out, samc_error *err);
SAMC_API int samc_image_batch_count(const samc_image_batch *b);
/* predict_batch for image i: the request's prompts on that image. */
SAMC_API samc_status samc_image_batch_predict(samc_predictor *p, const samc_image_batch *b, int i, const samc_batch_request *rq,
                                     samc_batch_masks *out, samc_error *err);
SAMC_API void samc_image_batch_free(samc_image_batch *b);

/* ---- the automatic mask generator ------------------------------------------ */

typedef enum samc_amg_output_mode {
    SAMC_AMG_BINARY_MASK,
    SAMC_AMG_UNCOMPRESSED_RLE,
    SAMC_AMG_COCO_RLE
} samc_amg_output_mode;

/* An explicit grid of one crop layer: n points (x, y) in [0, 1]. */
typedef struct samc_amg_grid {
    const double *xy;
    int64_t n;
} samc_amg_grid;

/* SAM2AutomaticMaskGenerator's arguments; comments give the defaults. */
typedef struct samc_amg_params {
    int points_per_side;                /* 32; 0 = None: point_grids give the points */
    const samc_amg_grid *point_grids;   /* NULL; else one grid per crop layer */
    int n_point_grids;
    int points_per_batch;               /* 64 */
    double pred_iou_thresh;             /* 0.8 */
    double stability_score_thresh;      /* 0.95 */
    double stability_score_offset;      /* 1.0 */
    double mask_threshold;              /* 0.0 */
    double box_nms_thresh;              /* 0.7 */
    int crop_n_layers;                  /* 0 */
    double crop_nms_thresh;             /* 0.7 */
    double crop_overlap_ratio;          /* 512 / 1500 */
    int crop_n_points_downscale_factor; /* 1 */
    int64_t min_mask_region_area;       /* 0: the predictor's hole and sprinkle fill (SAM 2) */
    samc_amg_output_mode output_mode;   /* binary_mask */
    bool use_m2m;                       /* false */
    bool multimask_output;              /* true */
} samc_amg_params;

SAMC_API samc_amg_params samc_amg_default_params(void);
/* "binary_mask", "uncompressed_rle" or "coco_rle". */
SAMC_API samc_status samc_amg_output_mode_parse(const char *s, samc_amg_output_mode *out, samc_error *err);

/* Where a run is, after each decoder batch. */
typedef struct samc_amg_progress {
    int crop, n_crops;                  /* crop being processed (0-based), crops in all */
    int64_t points_done, points_total;  /* prompts decoded so far, over all crops */
    int64_t masks_kept;                 /* candidates that passed the filters so far (before NMS) */
} samc_amg_progress;
/* Called from inside samc_amg_generate_masks: it may use other objects; a
 * call on the predictor being used (set_image, predict, the batch and AMG
 * calls) fails with SAMC_ERR_ARG until generate returns. */
typedef void (*samc_amg_progress_fn)(void *user, const samc_amg_progress *p);

/* One record of generate(). */
typedef struct samc_amg_mask {
    int height, width;                  /* segmentation["size"] */
    int64_t n_counts;
    int64_t *counts;                    /* the uncompressed RLE (column-major runs, first run of 0s) */
    char *coco_counts;                  /* output_mode coco_rle: pycocotools' string, else NULL */
    uint8_t *binary;                    /* output_mode binary_mask: height*width 0/1, else NULL */
    int64_t area;
    float bbox[4];                      /* x, y, w, h of the inclusive mask box */
    float predicted_iou;
    float point_coords[2];              /* image pixels */
    float stability_score;
    float crop_box[4];                  /* x, y, w, h */
} samc_amg_mask;

typedef struct samc_amg_result {
    int64_t n;
    samc_amg_mask *masks;               /* in the official order */
} samc_amg_result;

/* generate(image) on an RGB image (h*w*3). Uses p's implementation and
 * threads; leaves p's current image as it was. progress may be NULL. */
SAMC_API samc_status samc_amg_generate_masks(samc_predictor *p, const uint8_t *rgb, int h, int w, const samc_amg_params *params,
                                    samc_amg_progress_fn progress, void *user, samc_amg_result *out, samc_error *err);
SAMC_API void samc_amg_result_free(samc_amg_result *r);
/* SAM2AutomaticMaskGenerator.postprocess_small_regions(data, min_area,
 * nms_thresh), the official static clean-up that SAM 2's generate() does not
 * call (SAM 1's did, for min_mask_region_area): fills holes and removes
 * islands smaller than min_area in every mask, then box NMS preferring
 * unchanged masks; r keeps the survivors in NMS order, changed ones with
 * their new segmentation, area and bbox. */
SAMC_API samc_status samc_amg_postprocess_small_regions(samc_amg_result *r, double min_area, double nms_thresh,
                                               samc_error *err);
/* The COCO RLE of any h x w mask (row-major, nonzero = in): the string of
 * pycocotools' encode (column-major runs, rleToString), as the records of
 * output_mode coco_rle hold; for masks from elsewhere (SAM 3 instances, a
 * predictor's best mask). *out is malloc'd (samc_free). */
SAMC_API samc_status samc_mask_to_coco_rle(const uint8_t *mask, int h, int w, char **out, samc_error *err);
/* The records as JSON text, an array of the official dicts (segmentation as
 * the COCO string with output_mode coco_rle, else the uncompressed counts);
 * *out is malloc'd. */
SAMC_API samc_status samc_amg_to_json(const samc_amg_result *r, char **out, samc_error *err);
/* The same written to a temporary file and renamed over `path`. */
SAMC_API samc_status samc_amg_write_json(const samc_amg_result *r, const char *path, samc_error *err);

#ifdef __cplusplus
}
#endif

#endif
