/* SPDX-License-Identifier: Apache-2.0 */
/* connected_components.h - what the sam2._C CUDA extension computes
 * (sam2/csrc/connected_components.cu, via utils/misc.py:
 * get_connected_components) and the two hole-filling post-processors built on
 * it.
 *
 * The official post-processors run only when that extension loads; without
 * it they warn and leave the logits unchanged. Whether to call these is the
 * caller's choice (it must match how the reference run was made).
 */
#ifndef SAMC_CORE_CONNECTED_COMPONENTS_H
#define SAMC_CORE_CONNECTED_COMPONENTS_H

#include <stdint.h>

#include "core/base/tensor.h"

/* 8-connected components of one binary H x W plane (nonzero = foreground).
 * labels[p] (may be NULL): 0 on background, else the CUDA kernel's label:
 * 1 + the smallest flat index (row*W + col) of a top-left corner of a 2x2
 * block holding part of the component (not consecutive).
 * counts[p] (may be NULL): 0 on background, else the component's area.
 * Any H, W >= 1 (the CUDA kernel asserts even sizes; SAM 2 uses 256x256).
 * Returns SAMC_ERR_ARG for bad sizes, SAMC_ERR_NOMEM. */
samc_status samc_connected_components(const uint8_t *mask, int H, int W, int32_t *labels,
                                      int32_t *counts);

/* SAM2Transforms.postprocess_masks, the part before the resize, in place on
 * masks (..., H, W) (every H x W plane independently, e.g. (1, C, 256, 256)):
 *  - max_hole_area > 0: components of (mask <= thr) with area <= max_hole_area
 *    become thr + 10;
 *  - max_sprinkle_area > 0: components of (mask > thr) with area <=
 *    max_sprinkle_area become thr - 10, found on the mask as it was before
 *    the hole step (the official code labels `mask_flat`, taken once).
 * Both off (<= 0) leaves masks untouched. */
samc_status samc_fill_holes_image_predictor(samc_tensor *masks, float mask_threshold,
                                            double max_hole_area, double max_sprinkle_area);

/* utils/misc.py: fill_holes_in_mask_scores(mask, max_area), in place on
 * masks (..., H, W): components of (mask <= 0) with area <= max_area become
 * 0.1 (border components included). max_area must be > 0 (the official code
 * asserts it): SAMC_ERR_ARG otherwise. */
samc_status samc_fill_holes_video(samc_tensor *masks, double max_area);

/* SAM 3's version (sam3/model/sam3_tracker_utils.py: fill_holes_in_mask_scores
 * with fill_holes and remove_sprinkles), in place on masks (..., H, W):
 * max_area <= 0 leaves them untouched; components of (mask <= 0) with area
 * <= max_area become 0.1; then components of (mask > 0) of that result with
 * area <= min(max_area, #(mask > 0) / 2) become -0.1. `changed` (may be
 * NULL) counts the logits it set. */
samc_status samc_fill_holes_sprinkles(samc_tensor *masks, int max_area, int64_t *changed);

#endif
