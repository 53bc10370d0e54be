/* SPDX-License-Identifier: Apache-2.0 */
/* roi_sample.c - see roi_sample.h.
 *
 * roi_align follows torchvision/csrc/ops/cpu/roi_align_kernel.cpp
 * (roi_align_forward_kernel_impl, pre_calc_for_bilinear_interpolate) with
 * T = float; grid_sample follows aten/src/ATen/native/cpu/GridSamplerKernel.cpp
 * (ComputeLocationBase<float, align_corners=false>::unnormalize,
 * ApplyGridSample<..., Bilinear, Zeros, false>::compute_interp_params). */
#include "core/nn/roi_sample.h"

#include <math.h>
#include <stdlib.h>

#include "core/base/error.h"

/* One roi_align sample at (y, x), as pre_calc_for_bilinear_interpolate. */
static void roi_tap(float y, float x, int H, int W, samc_bilinear_tap *t)
{
    *t = (samc_bilinear_tap){{0, 0, 0, 0}, {0, 0, 0, 0}, {false, false, false, false}};
    if (y < -1.0f || y > (float)H || x < -1.0f || x > (float)W)
        return; /* empty: contributes 0 */
    if (y <= 0)
        y = 0;
    if (x <= 0)
        x = 0;
    int y_low = (int)y, x_low = (int)x, y_high, x_high;
    if (y_low >= H - 1) {
        y_high = y_low = H - 1;
        y = (float)y_low;
    } else {
        y_high = y_low + 1;
    }
    if (x_low >= W - 1) {
        x_high = x_low = W - 1;
        x = (float)x_low;
    } else {
        x_high = x_low + 1;
    }
    const float ly = y - (float)y_low, lx = x - (float)x_low;
    const float hy = 1.0f - ly, hx = 1.0f - lx;
    t->i[0] = (int64_t)y_low * W + x_low, t->w[0] = hy * hx;
    t->i[1] = (int64_t)y_low * W + x_high, t->w[1] = hy * lx;
    t->i[2] = (int64_t)y_high * W + x_low, t->w[2] = ly * hx;
    t->i[3] = (int64_t)y_high * W + x_high, t->w[3] = ly * lx;
    t->in[0] = t->in[1] = t->in[2] = t->in[3] = true;
}

samc_status samc_roi_align_taps(const float box[4], float spatial_scale, int sampling_ratio,
                                bool aligned, int H, int W, int ph, int pw, samc_bilinear_tap **taps,
                                int *grid_h, int *grid_w, int *count)
{
    *taps = NULL;
    if (H < 1 || W < 1 || ph < 1 || pw < 1)
        return samc_fail(NULL, SAMC_ERR_ARG, "roi_align: map %dx%d, output %dx%d", H, W, ph, pw);
    const float offset = aligned ? 0.5f : 0.0f;
    const float start_w = box[0] * spatial_scale - offset, start_h = box[1] * spatial_scale - offset;
    const float end_w = box[2] * spatial_scale - offset, end_h = box[3] * spatial_scale - offset;
    float roi_w = end_w - start_w, roi_h = end_h - start_h;
    if (!aligned) { /* force malformed RoIs to be 1x1 */
        roi_w = roi_w > 1.0f ? roi_w : 1.0f;
        roi_h = roi_h > 1.0f ? roi_h : 1.0f;
    }
    const float bin_h = roi_h / (float)ph, bin_w = roi_w / (float)pw;
    const int gh = sampling_ratio > 0 ? sampling_ratio : (int)ceilf(roi_h / (float)ph);
    const int gw = sampling_ratio > 0 ? sampling_ratio : (int)ceilf(roi_w / (float)pw);
    *grid_h = gh, *grid_w = gw;
    *count = gh * gw > 1 ? gh * gw : 1;
    if (gh <= 0 || gw <= 0)
        return SAMC_OK;
    if ((int64_t)gh * gw > (int64_t)1 << 24)
        return samc_fail(NULL, SAMC_ERR_ARG, "roi_align: sampling grid %dx%d too large", gh, gw);
    samc_bilinear_tap *t = malloc((size_t)ph * pw * gh * gw * sizeof *t);
    if (!t)
        return samc_fail(NULL, SAMC_ERR_NOMEM, "roi_align: %dx%d taps per bin", gh, gw);
    int64_t k = 0;
    for (int py = 0; py < ph; py++)
        for (int px = 0; px < pw; px++)
            for (int iy = 0; iy < gh; iy++) {
                /* roi_start_h + ph * bin_size_h + (iy + .5f) * bin_size_h / roi_bin_grid_h */
                const float yy = start_h + (float)py * bin_h + ((float)iy + 0.5f) * bin_h / (float)gh;
                for (int ix = 0; ix < gw; ix++) {
                    const float xx =
                        start_w + (float)px * bin_w + ((float)ix + 0.5f) * bin_w / (float)gw;
                    roi_tap(yy, xx, H, W, &t[k++]);
                }
            }
    *taps = t;
    return SAMC_OK;
}

void samc_grid_sample_tap(float gx, float gy, int H, int W, samc_bilinear_tap *t)
{
    /* unnormalize: (coord + 1) * (size / 2) - 0.5 */
    const float x = (gx + 1.0f) * ((float)W / 2.0f) - 0.5f;
    const float y = (gy + 1.0f) * ((float)H / 2.0f) - 0.5f;
    const float xw = floorf(x), yn = floorf(y);
    const float w = x - xw, e = 1.0f - w, n = y - yn, s = 1.0f - n;
    const float wts[4] = {s * e, s * w, n * e, n * w}; /* nw, ne, sw, se */
    const int x0 = (int)xw, y0 = (int)yn;
    const int xs[4] = {x0, x0 + 1, x0, x0 + 1}, ys[4] = {y0, y0, y0 + 1, y0 + 1};
    for (int c = 0; c < 4; c++) {
        t->w[c] = wts[c];
        t->in[c] = xs[c] >= 0 && xs[c] < W && ys[c] >= 0 && ys[c] < H && isfinite(x) && isfinite(y);
        t->i[c] = t->in[c] ? (int64_t)ys[c] * W + xs[c] : 0;
    }
}
