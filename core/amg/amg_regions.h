/* SPDX-License-Identifier: Apache-2.0 */
/* amg_regions.h - sam2/utils/amg.py: remove_small_regions(mask, area_thresh,
 * mode), the cv2-based clean-up that SAM2AutomaticMaskGenerator's
 * postprocess_small_regions applies (SAM 1's generate() calls it for
 * min_mask_region_area > 0; SAM 2's generate() does NOT: there
 * min_mask_region_area becomes the image predictor's max_hole_area /
 * max_sprinkle_area, see core/nn/connected_components.h and docs/amg.md).
 *
 * cv2.connectedComponentsWithStats(m, 8) numbers components in the order of
 * their first 2x2 block in block-raster order (OpenCV's block-based labelling,
 * sequential or parallel): that order decides which island survives when
 * every island is small and two share the largest size (np.argmax takes the
 * first). samc_connected_components' labels (1 + the first block's top-left
 * flat index) sort the same way, so they are reused here.
 */
#ifndef SAMC_CORE_AMG_REGIONS_H
#define SAMC_CORE_AMG_REGIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "samc_status.h"

typedef enum samc_amg_regions_mode {
    SAMC_AMG_REGIONS_HOLES,  /* fill 8-connected components of ~mask smaller than the area
                                (the background around the mask counts as one of them) */
    SAMC_AMG_REGIONS_ISLANDS /* drop components of mask smaller than the area; if all are,
                                keep the largest (the first of equal ones) */
} samc_amg_regions_mode;

/* In place on an h x w row-major 0/1 mask. *changed is the official flag:
 * true whenever some component is smaller than area_thresh, even if the
 * "keep the largest" rule leaves the mask as it was. */
samc_status samc_amg_remove_small_regions(uint8_t *mask, int h, int w, double area_thresh,
                                          samc_amg_regions_mode mode, bool *changed,
                                          samc_error *err);

#endif
