/* SPDX-License-Identifier: Apache-2.0 */
/* amg_coco_rle.h - the COCO API's compressed RLE string (pycocotools
 * maskApi.c: rleToString / rleFrString), which the generator's
 * output_mode="coco_rle" returns as segmentation["counts"]
 * (sam2/utils/amg.py: coco_encode_rle -> mask_utils.frPyObjects).
 *
 * The string is LEB128-like with 6 bits per character: each count, from the
 * fourth on as the DIFFERENCE to the count two places before (the C code
 * tests `i > 2`, so the third count is still absolute), is written as 5-bit
 * groups, least significant first, sign-extended from bit 4 of the last
 * group; bit 5 marks "more groups"; each group is stored as the character
 * 48 + value (so '0'..'o').
 */
#ifndef SAMC_CORE_AMG_COCO_RLE_H
#define SAMC_CORE_AMG_COCO_RLE_H

#include "core/amg/amg_rle.h"

/* rleToString of the counts (pycocotools reads them as uint32). *out is a
 * malloc'd NUL-terminated string. The RLE must pass samc_amg_rle_check. */
samc_status samc_amg_rle_to_coco_string(const samc_amg_rle *rle, char **out, samc_error *err);

/* rleFrString for an h x w mask, refusing what the C original would misread:
 * characters outside '0'..'o', a value cut off by the end of the string, a
 * value longer than 12 groups, negative counts, and counts that do not sum to
 * h*w (pycocotools' decode raises "Invalid RLE mask representation"). */
samc_status samc_amg_rle_from_coco_string(const char *s, int h, int w, samc_amg_rle *out,
                                          samc_error *err);

#endif
