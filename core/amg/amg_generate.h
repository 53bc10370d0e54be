/* amg_generate.h - SAM2AutomaticMaskGenerator.generate on a SAM 2 model use
 * (sam2/automatic_mask_generator.py; the steps and their samc functions are
 * listed in docs/amg.md). */
#ifndef SAMC_CORE_AMG_GENERATE_H
#define SAMC_CORE_AMG_GENERATE_H

#include <stdint.h>

#include "core/amg/amg_params.h"
#include "core/amg/amg_record.h"
#include "core/runtime/exec.h"

/* samc_amg_progress, samc_amg_progress_fn: include/samc_amg.h. */

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
samc_status samc_amg_generate(samc_exec *x, const uint8_t *rgb, int h, int w, const samc_amg_params *p,
                              samc_amg_progress_fn progress, void *user, samc_amg_output *out, samc_error *err);
void samc_amg_output_free(samc_amg_output *o);

#endif
