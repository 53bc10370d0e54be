/* SPDX-License-Identifier: Apache-2.0 */
/* amg_box.c - mask boxes, the crop-edge filter and crop-frame changes (see
 * amg_box.h for the official functions and their conventions). */
#include "core/amg/amg_box.h"

#include <math.h>
#include <string.h>

void samc_amg_mask_box(const uint8_t *mask, int h, int w, int64_t box[4])
{
    int64_t x0 = w, y0 = h, x1 = -1, y1 = -1;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = mask + (int64_t)y * w;
        for (int x = 0; x < w; x++) {
            if (!row[x])
                continue;
            x0 = x < x0 ? x : x0;
            x1 = x > x1 ? x : x1;
            y0 = y < y0 ? y : y0;
            y1 = y;
        }
    }
    if (x1 < 0) { /* the official empty_filter zeroes the box */
        x0 = y0 = x1 = y1 = 0;
    }
    box[0] = x0, box[1] = y0, box[2] = x1, box[3] = y1;
}

/* torch.isclose(a, b, rtol=0, atol=20) on float32 values. */
static bool isclose20(float a, float b)
{
    const float d = fabsf(a - b);
    return a == b || (isfinite(d) && d <= 20.0f);
}

bool samc_amg_box_near_crop_edge(const int64_t box[4], const samc_amg_crop *crop, int orig_w,
                                 int orig_h)
{
    int64_t b[4] = {box[0], box[1], box[2], box[3]};
    samc_amg_uncrop_box(b, crop);
    const float c[4] = {(float)crop->x0, (float)crop->y0, (float)crop->x1, (float)crop->y1};
    const float o[4] = {0.0f, 0.0f, (float)orig_w, (float)orig_h};
    for (int i = 0; i < 4; i++) {
        const float v = (float)b[i];
        if (isclose20(v, c[i]) && !isclose20(v, o[i]))
            return true;
    }
    return false;
}

void samc_amg_uncrop_box(int64_t box[4], const samc_amg_crop *crop)
{
    box[0] += crop->x0, box[1] += crop->y0, box[2] += crop->x0, box[3] += crop->y0;
}

void samc_amg_uncrop_point(float xy[2], const samc_amg_crop *crop)
{
    xy[0] = xy[0] + (float)crop->x0;
    xy[1] = xy[1] + (float)crop->y0;
}

void samc_amg_uncrop_mask(const uint8_t *crop_mask, const samc_amg_crop *crop, int orig_h,
                          int orig_w, uint8_t *out)
{
    const int cw = crop->x1 - crop->x0;
    memset(out, 0, (size_t)orig_h * (size_t)orig_w);
    for (int y = crop->y0; y < crop->y1; y++)
        memcpy(out + (int64_t)y * orig_w + crop->x0, crop_mask + (int64_t)(y - crop->y0) * cw,
               (size_t)cw);
}

void samc_amg_box_xywh(const int64_t xyxy[4], float xywh[4])
{
    float f[4];
    samc_amg_box_float(xyxy, f);
    xywh[0] = f[0], xywh[1] = f[1], xywh[2] = f[2] - f[0], xywh[3] = f[3] - f[1];
}

void samc_amg_box_float(const int64_t box[4], float out[4])
{
    for (int i = 0; i < 4; i++)
        out[i] = (float)box[i];
}
