/* SPDX-License-Identifier: Apache-2.0 */
/* amg_record.h - one output record of the automatic mask generator and its
 * JSON form: the dict SAM2AutomaticMaskGenerator.generate() returns per mask
 * (segmentation, area, bbox, predicted_iou, point_coords, stability_score,
 * crop_box), with the segmentation as the official uncompressed RLE
 * (mask_to_rle_pytorch's counts) and, when asked, also as the COCO API's
 * compressed string (issue 11).
 */
#ifndef SAMC_CORE_AMG_RECORD_H
#define SAMC_CORE_AMG_RECORD_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "core/amg/amg_grid.h"
#include "core/amg/amg_rle.h"

typedef struct samc_amg_record {
    samc_amg_rle rle;      /* uncropped mask, image size */
    int64_t box[4];        /* inclusive mask box, image frame (uncropped) */
    float predicted_iou;
    float stability_score;
    float point[2];        /* image pixels (uncropped) */
    samc_amg_crop crop;    /* the crop the mask came from */
} samc_amg_record;

/* The official record as a JSON object:
 *   "segmentation": {"size": [h, w], "counts": [...]}   (uncompressed RLE,
 *       output_mode="uncompressed_rle"), or with coco_string
 *       {"size": [h, w], "counts": "<rleToString>"} (output_mode="coco_rle")
 *   "area": int, "bbox": [x, y, w, h] (float32 XYWH of the inclusive box),
 *   "predicted_iou", "point_coords": [[x, y]], "stability_score",
 *   "crop_box": [x, y, w, h]. Numbers are written so they read back as the same
 * float32. *out is owned by the caller (cJSON_Delete). */
samc_status samc_amg_record_json(const samc_amg_record *r, bool coco_string, cJSON **out,
                                 samc_error *err);

#endif
