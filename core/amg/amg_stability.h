/* SPDX-License-Identifier: Apache-2.0 */
/* amg_stability.h - the stability score and the per-mask decisions of
 * SAM2AutomaticMaskGenerator._process_batch, with torch's dtypes.
 *
 * Every threshold is a Python float compared with a float32 tensor: torch
 * casts the scalar to float32 first (0.1 becomes 0.100000001490116), so the
 * comparisons here take the double and round it the same way.
 */
#ifndef SAMC_CORE_AMG_STABILITY_H
#define SAMC_CORE_AMG_STABILITY_H

#include <stdbool.h>
#include <stdint.h>

/* calculate_stability_score(masks, mask_threshold, offset) for one h x w
 * plane of logits (row-major): the number of logits > mask_threshold + offset
 * over the number > mask_threshold - offset (both sums formed in Python
 * double, then float32). Counts are the official ones: int16 per row (so they
 * wrap past 32767 columns, as torch's .sum(-1, dtype=torch.int16) does) and
 * int32 over the rows; the quotient is float32 / float32. 0 / 0 is NaN (a
 * mask with no logit above the low cut), which no stability threshold keeps. */
float samc_amg_stability_score(const float *logits, int h, int w, double mask_threshold,
                               double offset);

/* `iou_preds > pred_iou_thresh`, applied only when pred_iou_thresh > 0. */
bool samc_amg_keep_by_iou(float iou_pred, double pred_iou_thresh);

/* `stability_score >= stability_score_thresh`, applied only when the
 * threshold is > 0. */
bool samc_amg_keep_by_stability(float stability, double stability_score_thresh);

/* `masks > mask_threshold`: the binary mask of a logit. */
bool samc_amg_logit_in_mask(float logit, double mask_threshold);

#endif
