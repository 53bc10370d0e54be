/* SPDX-License-Identifier: Apache-2.0 */
/* amg_box.h - boxes and crop-frame changes of the automatic mask generator
 * (sam2/utils/amg.py: batched_mask_to_box, is_box_near_crop_edge,
 * uncrop_boxes_xyxy, uncrop_points, uncrop_masks, box_xyxy_to_xywh).
 *
 * Mask boxes are (x0, y0, x1, y1) with x1/y1 the LAST column/row of the mask
 * (inclusive), unlike crop boxes (exclusive): batched_mask_to_box returns
 * max indices, and the records' XYWH width is x1 - x0, one less than the
 * mask's extent (COCO's toBbox would say x1 - x0 + 1).
 */
#ifndef SAMC_CORE_AMG_BOX_H
#define SAMC_CORE_AMG_BOX_H

#include <stdbool.h>
#include <stdint.h>

#include "core/amg/amg_grid.h"

/* batched_mask_to_box for one h x w mask (row-major, nonzero = in):
 * (min col, min row, max col, max row); (0, 0, 0, 0) for an empty mask. */
void samc_amg_mask_box(const uint8_t *mask, int h, int w, int64_t box[4]);

/* is_box_near_crop_edge(box, crop, [0, 0, orig_w, orig_h], atol=20) for a
 * box in the crop's frame: after uncropping, some coordinate is within 20
 * (float32 isclose, rtol 0) of the same coordinate of the crop box but not
 * of the image box. */
bool samc_amg_box_near_crop_edge(const int64_t box[4], const samc_amg_crop *crop, int orig_w,
                                 int orig_h);

/* uncrop_boxes_xyxy: + (x0, y0, x0, y0), int64. */
void samc_amg_uncrop_box(int64_t box[4], const samc_amg_crop *crop);

/* uncrop_points: float32 point + the int64 offset, which torch rounds to
 * float32 before the float32 add. */
void samc_amg_uncrop_point(float xy[2], const samc_amg_crop *crop);

/* uncrop_masks: the crop's (y1-y0) x (x1-x0) mask zero-padded into an
 * orig_h x orig_w one. */
void samc_amg_uncrop_mask(const uint8_t *crop_mask, const samc_amg_crop *crop, int orig_h,
                          int orig_w, uint8_t *out);

/* box_xyxy_to_xywh as generate() applies it: on the float32 copy that
 * MaskData.to_numpy makes, subtracting in float32. */
void samc_amg_box_xywh(const int64_t xyxy[4], float xywh[4]);

/* The float32 box the NMS calls see (`data["boxes"].float()`). */
void samc_amg_box_float(const int64_t box[4], float out[4]);

#endif
