/* SPDX-License-Identifier: Apache-2.0 */
/* amg_params.h - the parameters of SAM2AutomaticMaskGenerator
 * (sam2/automatic_mask_generator.py), their official defaults, and the checks
 * that turn bad values into a clear message (the official code asserts, runs
 * forever, divides by zero or slices empty crops instead).
 */
#ifndef SAMC_CORE_AMG_PARAMS_H
#define SAMC_CORE_AMG_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "samc_amg.h"

/* At most this many prompts over all crops and layers (points per side ^ 2
 * per crop), and this many per model batch. */
#define SAMC_AMG_MAX_TOTAL_POINTS ((int64_t)1 << 24)
#define SAMC_AMG_MAX_POINTS_PER_BATCH 65536

/* samc_amg_output_mode, samc_amg_grid and samc_amg_params: include/samc_amg.h. */

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
