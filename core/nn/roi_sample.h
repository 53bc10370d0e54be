/* SPDX-License-Identifier: Apache-2.0 */
/* roi_sample.h - where SAM 3's geometry encoder samples the image features:
 * torchvision.ops.roi_align (CPU kernel, float) for boxes and
 * F.grid_sample (bilinear, zeros padding, align_corners False; torch's
 * vectorised CPU kernel) for points, in their float32 arithmetic. Both
 * produce bilinear taps; the bodies (ref, fast) only sum them. */
#ifndef SAMC_CORE_NN_ROI_SAMPLE_H
#define SAMC_CORE_NN_ROI_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "samc_status.h"

/* One bilinear sample: value = w[0]*f[i[0]] + w[1]*f[i[1]] + w[2]*f[i[2]] +
 * w[3]*f[i[3]] with i = flat y*W + x offsets into one H x W plane. A tap
 * with w == 0 everywhere and i == 0 is an empty sample (roi_align's
 * out-of-map samples); for grid_sample, corners outside the map have w set
 * but `in[k]` false (their value is 0). */
typedef struct samc_bilinear_tap {
    int64_t i[4];
    float w[4];
    bool in[4];
} samc_bilinear_tap;

/* roi_align(input, [box], output_size=(ph, pw), spatial_scale,
 * sampling_ratio, aligned) for one box (x0, y0, x1, y1) on an H x W map.
 * Bin (py, px) averages its grid_h * grid_w taps
 *   taps[((py * pw + px) * grid_h + iy) * grid_w + ix]
 * and divides the sum by *count (max(grid_h * grid_w, 1)).
 * *taps is malloc'd (NULL when a grid is empty). */
samc_status samc_roi_align_taps(const float box[4], float spatial_scale, int sampling_ratio,
                                bool aligned, int H, int W, int ph, int pw, samc_bilinear_tap **taps,
                                int *grid_h, int *grid_w, int *count);

/* grid_sample of one normalised grid point (gx, gy) in [-1, 1] on an H x W
 * map (bilinear, padding_mode zeros, align_corners False). The sum order of
 * torch's kernel is ((nw + ne) + sw) + se, which is w[0..3] in that order. */
void samc_grid_sample_tap(float gx, float gy, int H, int W, samc_bilinear_tap *tap);

#endif
