/* SPDX-License-Identifier: Apache-2.0 */
/* amg_rle.h - uncompressed run-length encoding of masks, as the automatic
 * mask generator stores and returns them (sam2/utils/amg.py:
 * mask_to_rle_pytorch, rle_to_mask, area_from_rle).
 *
 * Runs are taken in COLUMN-MAJOR (Fortran) order - down the first column,
 * then the next - as pycocotools expects; they alternate 0-runs and 1-runs
 * and start with a 0-run, which is 0 long when the top-left pixel is set.
 * An all-0 h x w mask is [h*w], an all-1 one [0, h*w].
 */
#ifndef SAMC_CORE_AMG_RLE_H
#define SAMC_CORE_AMG_RLE_H

#include <stdint.h>

#include "core/amg/amg_grid.h"
#include "samc_status.h"

typedef struct samc_amg_rle {
    int h, w;        /* "size": [h, w] */
    int64_t n;       /* number of counts */
    int64_t *counts; /* malloc'd (samc_amg_rle_free) */
} samc_amg_rle;

/* mask_to_rle_pytorch for one h x w mask (row-major, nonzero = in). */
samc_status samc_amg_mask_to_rle(const uint8_t *mask, int h, int w, samc_amg_rle *out,
                                 samc_error *err);

/* mask_to_rle_pytorch(uncrop_masks(mask, crop, orig_h, orig_w)): the RLE of a
 * crop's mask zero-padded to the original image, without building the
 * padded mask. crop_mask is (y1-y0) x (x1-x0), row-major. */
samc_status samc_amg_mask_to_rle_uncrop(const uint8_t *crop_mask, const samc_amg_crop *crop,
                                        int orig_h, int orig_w, samc_amg_rle *out,
                                        samc_error *err);

/* The same from h x w row-major logits, the mask being logit > mask_threshold
 * (samc_amg_logit_in_mask), without building the mask. */
samc_status samc_amg_logits_to_rle(const float *logits, int h, int w, double mask_threshold, samc_amg_rle *out,
                                   samc_error *err);
/* batched_mask_to_box of the RLE's mask, from its runs: x0, y0, x1, y1
 * inclusive (samc_amg_mask_box's numbers, all 0 for an empty mask). */
void samc_amg_rle_box(const samc_amg_rle *rle, int64_t box[4]);
/* rle_to_mask: the h x w row-major mask (0/1). Counts must be >= 0 and sum
 * to h*w (the official function would leave np.empty garbage or silently
 * drop the excess): SAMC_ERR_FORMAT otherwise. */
samc_status samc_amg_rle_to_mask(const samc_amg_rle *rle, uint8_t *mask, samc_error *err);

/* area_from_rle: the sum of the odd-indexed counts (the 1-runs). */
int64_t samc_amg_rle_area(const samc_amg_rle *rle);

/* Size >= 1 x 1 with h*w <= INT32_MAX, counts >= 0 summing to h*w. */
samc_status samc_amg_rle_check(const samc_amg_rle *rle, samc_error *err);

void samc_amg_rle_free(samc_amg_rle *rle);

#endif
