/* SPDX-License-Identifier: Apache-2.0 */
/* amg_stability.c - stability score and filter decisions with torch 1.13's
 * dtypes (see amg_stability.h). */
#include "core/amg/amg_stability.h"

/* A row count as torch's int16 accumulator holds it: modulo 2^16, two's
 * complement (written out because a C cast of an out-of-range value is
 * implementation-defined). */
static int32_t wrap_int16(int32_t n)
{
    const int32_t m = n & 0xffff;
    return m >= 0x8000 ? m - 0x10000 : m;
}

float samc_amg_stability_score(const float *logits, int h, int w, double mask_threshold,
                               double offset)
{
    const float hi = (float)(mask_threshold + offset), lo = (float)(mask_threshold - offset);
    int32_t inter = 0, uni = 0;
    for (int y = 0; y < h; y++) {
        const float *row = logits + (int64_t)y * w;
        int32_t ri = 0, ru = 0;
        for (int x = 0; x < w; x++) {
            ri += row[x] > hi;
            ru += row[x] > lo;
        }
        /* int32 sums of the int16 row counts; callers keep h * w <= INT32_MAX. */
        inter += wrap_int16(ri);
        uni += wrap_int16(ru);
    }
    return (float)inter / (float)uni;
}

bool samc_amg_keep_by_iou(float iou_pred, double pred_iou_thresh)
{
    return !(pred_iou_thresh > 0.0) || iou_pred > (float)pred_iou_thresh;
}

bool samc_amg_keep_by_stability(float stability, double stability_score_thresh)
{
    return !(stability_score_thresh > 0.0) || stability >= (float)stability_score_thresh;
}

bool samc_amg_logit_in_mask(float logit, double mask_threshold)
{
    return logit > (float)mask_threshold;
}
