/* SPDX-License-Identifier: Apache-2.0 */
/* amg_generate.h - SAM2AutomaticMaskGenerator.generate on a SAM 2 model use
 * (sam2/automatic_mask_generator.py; the steps and their samc functions are
 * listed in docs/amg.md). */
#ifndef SAMC_CORE_AMG_GENERATE_H
#define SAMC_CORE_AMG_GENERATE_H

#include <stdint.h>

#include "core/amg/amg_params.h"
#include "core/amg/amg_record.h"
#include "core/models/sam2/sam2_model.h"
#include "core/runtime/exec.h"

/* samc_amg_progress, samc_amg_progress_fn: include/samc_amg.h. */

/* Every mask the model returned, with the official decisions on it (the
 * parity harness compares them with /outputs/candidates). Stability, box and
 * edge test are computed for every candidate when this is observed (the
 * generator itself skips them for candidates already filtered out). */
typedef struct samc_amg_candidate {
    int crop, batch;                /* crop index, batch index over the run */
    float point[2];                 /* crop pixels */
    float iou, stability;
    bool keep_iou, keep_stability;  /* keep_stability: passed both filters */
    bool near_edge;
    int64_t box[4];                 /* crop frame, inclusive */
} samc_amg_candidate;
typedef void (*samc_amg_candidate_fn)(void *user, const samc_amg_candidate *c);

/* What a run reports as it goes (any member may be NULL), and the parity
 * harness's one override: the predictor's fill areas the official run really
 * applied (a dump's max_hole_area / max_sprinkle_area: 0 where it ran without
 * sam2._C), instead of min_mask_region_area for both. */
typedef struct samc_amg_hooks {
    samc_amg_progress_fn progress;
    samc_amg_candidate_fn candidate;
    void *user;
    const samc_sam_image_opts *fill;
} samc_amg_hooks;

/* How many candidates each step kept (docs/parity_amg.md, fixtures/README.md). */
typedef struct samc_amg_counts {
    int64_t candidates, iou, stability, edge, box_nms, crop_nms;
} samc_amg_counts;

typedef struct samc_amg_output {
    samc_amg_record *records;       /* in the official order */
    int64_t n;
    samc_amg_counts counts;
} samc_amg_output;

/* The generator on an RGB image (h, w, 3 uint8) with model use x (a SAM 2
 * model: its implementation, threads and trace are used as set). The
 * parameters are checked first (samc_amg_params_check). */
samc_status samc_amg_generate(samc_exec *x, const samc_sam2_model *m, const uint8_t *rgb, int h, int w, const samc_amg_params *p,
                              const samc_amg_hooks *hooks, samc_amg_output *out, samc_error *err);
void samc_amg_output_free(samc_amg_output *o);

#endif
