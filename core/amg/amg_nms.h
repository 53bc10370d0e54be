/* SPDX-License-Identifier: Apache-2.0 */
/* amg_nms.h - torchvision 0.14's CPU non-maximum suppression as the automatic
 * mask generator calls it: batched_nms(boxes.float(), scores,
 * zeros (one category), iou_threshold).
 *
 * Semantics (torchvision/csrc/ops/cpu/nms_kernel.cpp and ops/boxes.py):
 *  - boxes are float32 (x0, y0, x1, y1); area = (x1 - x0) * (y1 - y0), with no
 *    +1, so the generator's inclusive mask boxes lose a pixel per side and a
 *    one-pixel mask has area 0 (its IoU with anything is 0, or NaN = 0/0 with
 *    another empty box: never suppressed);
 *  - boxes are visited in the order of the kernel's scores.sort(stable=True,
 *    descending=True): equal scores in index order (NaN first);
 *  - a box suppresses every later box whose IoU, computed in float32 as
 *    inter / (area_i + area_j - inter), is > iou_threshold compared in
 *    double; the kept indices come out in visiting order;
 *  - batched_nms with more than 1000 boxes (numel > 4000 on CPU) takes the
 *    "vanilla" path: the same NMS, then the kept indices in ascending order
 *    sorted again by score with the unstable sort, which can reorder ties
 *    differently from the visiting order.
 */
#ifndef SAMC_CORE_AMG_NMS_H
#define SAMC_CORE_AMG_NMS_H

#include <stdint.h>

#include "samc_status.h"

/* torchvision.ops.nms: boxes [n, 4], scores [n]; keep gets up to n indices,
 * *n_keep how many. */
samc_status samc_amg_nms(const float *boxes, const float *scores, int64_t n, double iou_threshold,
                         int64_t *keep, int64_t *n_keep, samc_error *err);

/* torchvision.ops.batched_nms with every box in one category (the
 * generator's three calls), including the vanilla path above 1000 boxes. */
samc_status samc_amg_batched_nms(const float *boxes, const float *scores, int64_t n,
                                 double iou_threshold, int64_t *keep, int64_t *n_keep,
                                 samc_error *err);

/* The IoU the NMS kernel compares (float32, see above). */
float samc_amg_box_iou(const float a[4], const float b[4]);

#endif
