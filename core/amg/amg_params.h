/* amg_params.h - the parameters of SAM2AutomaticMaskGenerator
 * (sam2/automatic_mask_generator.py), their official defaults, and the checks
 * that turn bad values into a clear message (the official code asserts, runs
 * forever, divides by zero or slices empty crops instead).
 */
#ifndef SAMC_CORE_AMG_PARAMS_H
#define SAMC_CORE_AMG_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "samc_status.h"

/* At most this many prompts over all crops and layers (points per side ^ 2
 * per crop), and this many per model batch. */
#define SAMC_AMG_MAX_TOTAL_POINTS ((int64_t)1 << 24)
#define SAMC_AMG_MAX_POINTS_PER_BATCH 65536

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

typedef struct samc_amg_params {
    int points_per_side;                    /* 32; 0 = None: point_grids give the points */
    const samc_amg_grid *point_grids; /* NULL; else one grid per crop layer */
    int n_point_grids;
    int points_per_batch;                   /* 64 */
    double pred_iou_thresh;                 /* 0.8 */
    double stability_score_thresh;          /* 0.95 */
    double stability_score_offset;          /* 1.0 */
    double mask_threshold;                  /* 0.0 */
    double box_nms_thresh;                  /* 0.7 */
    int crop_n_layers;                      /* 0 */
    double crop_nms_thresh;                 /* 0.7 */
    double crop_overlap_ratio;              /* 512 / 1500 */
    int crop_n_points_downscale_factor;     /* 1 */
    int64_t min_mask_region_area;           /* 0 */
    samc_amg_output_mode output_mode;       /* binary_mask */
    bool use_m2m;                           /* false */
    bool multimask_output;                  /* true */
} samc_amg_params;

/* The official defaults (SAM2AutomaticMaskGenerator.__init__). */
void samc_amg_params_default(samc_amg_params *p);

/* Check every parameter for an image of im_h x im_w (crop layers depend on
 * it): SAMC_ERR_ARG naming the parameter, its value and what is allowed;
 * SAMC_ERR_UNSUPPORTED for images the official arithmetic cannot handle
 * (wider than 32767 columns: the stability score counts rows in int16). */
samc_status samc_amg_params_check(const samc_amg_params *p, int im_h, int im_w, samc_error *err);

/* "binary_mask" / "uncompressed_rle" / "coco_rle" -> the enum. */
samc_status samc_amg_output_mode_parse(const char *s, samc_amg_output_mode *out, samc_error *err);

#endif
