/* SPDX-License-Identifier: Apache-2.0 */
/* amg_grid.c - point grids and crop boxes of the automatic mask generator,
 * with the official float64 arithmetic (sam2/utils/amg.py). */
#include "core/amg/amg_grid.h"

#include <math.h>

#include "core/base/error.h"

/* np.linspace(start, stop, n) for n >= 1, endpoint=True, as numpy 1.24 computes
 * it: y[i] = i * step + start with step = (stop - start) / (n - 1), the last
 * value set to stop exactly; n == 1 gives start. */
static void linspace(double start, double stop, int n, double *y)
{
    const double delta = stop - start;
    if (n == 1) {
        y[0] = 0.0 * delta + start;
        return;
    }
    const double step = delta / (double)(n - 1);
    for (int i = 0; i < n; i++)
        y[i] = (double)i * step + start;
    y[n - 1] = stop;
}

samc_status samc_amg_build_point_grid(int n, double *out, samc_error *err)
{
    if (n < 1 || n > SAMC_AMG_MAX_POINTS_PER_SIDE)
        return samc_fail(err, SAMC_ERR_ARG, "point grid: %d points per side; expected 1 to %d", n,
                         SAMC_AMG_MAX_POINTS_PER_SIDE);
    double side[SAMC_AMG_MAX_POINTS_PER_SIDE];
    const double offset = 1.0 / (double)(2 * n);
    linspace(offset, 1.0 - offset, n, side);
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) {
            out[2 * (r * n + c)] = side[c];
            out[2 * (r * n + c) + 1] = side[r];
        }
    return SAMC_OK;
}

samc_status samc_amg_layer_points_per_side(int n_per_side, int n_layers, int scale, int *out,
                                           samc_error *err)
{
    if (scale < 1)
        return samc_fail(err, SAMC_ERR_ARG,
                         "crop_n_points_downscale_factor is %d; expected an integer >= 1", scale);
    if (n_layers < 0 || n_layers > SAMC_AMG_MAX_CROP_LAYERS)
        return samc_fail(err, SAMC_ERR_ARG, "crop_n_layers is %d; expected 0 to %d", n_layers,
                         SAMC_AMG_MAX_CROP_LAYERS);
    int64_t div = 1;
    for (int i = 0; i <= n_layers; i++) {
        /* int(n / scale**i): a float64 division, exact here (both < 2^53). */
        const int n = div > n_per_side ? 0 : (int)((double)n_per_side / (double)div);
        if (n < 1)
            return samc_fail(err, SAMC_ERR_ARG,
                             "points_per_side %d / crop_n_points_downscale_factor %d^%d leaves "
                             "crop layer %d without points; use fewer crop layers or a smaller "
                             "factor",
                             n_per_side, scale, i, i);
        out[i] = n;
        div *= scale;
    }
    return SAMC_OK;
}

void samc_amg_grid_to_crop_points(const double *grid, int64_t n_points, int crop_w, int crop_h,
                                  float *out)
{
    for (int64_t k = 0; k < n_points; k++) {
        out[2 * k] = (float)(grid[2 * k] * (double)crop_w);
        out[2 * k + 1] = (float)(grid[2 * k + 1] * (double)crop_h);
    }
}

int64_t samc_amg_crop_count(int n_layers)
{
    int64_t n = 0, per_layer = 1;
    for (int i = 0; i <= n_layers; i++, per_layer *= 4)
        n += per_layer;
    return n;
}

/* One side of layer i: the crop length and the step between crop starts,
 * as generate_crop_boxes computes them (overlap truncated, length ceiled). */
typedef struct crop_side {
    int len, step, n;
} crop_side;

static crop_side layer_side(int orig_len, int short_side, int layer, double overlap_ratio)
{
    crop_side s;
    s.n = 2 << layer; /* 2 ** (i_layer + 1) */
    const int overlap = (int)(overlap_ratio * (double)short_side * (2.0 / (double)s.n));
    const int64_t num = (int64_t)overlap * (s.n - 1) + orig_len;
    s.len = (int)ceil((double)num / (double)s.n);
    s.step = s.len - overlap;
    return s;
}

/* Every crop of the layer starts inside the image (the last one too). */
static int layer_fits(int im_h, int im_w, int layer, double overlap_ratio)
{
    const int short_side = im_h < im_w ? im_h : im_w;
    const crop_side sx = layer_side(im_w, short_side, layer, overlap_ratio);
    const crop_side sy = layer_side(im_h, short_side, layer, overlap_ratio);
    const int64_t last_x = (int64_t)sx.step * (sx.n - 1), last_y = (int64_t)sy.step * (sy.n - 1);
    return sx.step >= 1 && sy.step >= 1 && last_x < im_w && last_y < im_h;
}

int samc_amg_max_crop_layers(int im_h, int im_w, double overlap_ratio)
{
    int n = 0;
    while (n < SAMC_AMG_MAX_CROP_LAYERS && layer_fits(im_h, im_w, n, overlap_ratio))
        n++;
    return n;
}

static void emit_layer(int im_h, int im_w, int layer, double overlap_ratio, samc_amg_crop *out)
{
    const int short_side = im_h < im_w ? im_h : im_w;
    const crop_side sx = layer_side(im_w, short_side, layer, overlap_ratio);
    const crop_side sy = layer_side(im_h, short_side, layer, overlap_ratio);
    int k = 0;
    for (int i = 0; i < sx.n; i++)
        for (int j = 0; j < sy.n; j++) {
            const int x0 = sx.step * i, y0 = sy.step * j;
            out[k++] = (samc_amg_crop){x0, y0, x0 + sx.len < im_w ? x0 + sx.len : im_w,
                                       y0 + sy.len < im_h ? y0 + sy.len : im_h, layer + 1};
        }
}

samc_status samc_amg_crop_layers_check(int im_h, int im_w, int n_layers, double overlap_ratio,
                                      samc_error *err)
{
    if (im_h < 1 || im_w < 1)
        return samc_fail(err, SAMC_ERR_ARG, "crop boxes: image size %dx%d", im_h, im_w);
    if (!(overlap_ratio >= 0.0 && overlap_ratio < 1.0))
        return samc_fail(err, SAMC_ERR_ARG, "crop_overlap_ratio is %g; expected a value in [0, 1)",
                         overlap_ratio);
    if (n_layers < 0 || n_layers > SAMC_AMG_MAX_CROP_LAYERS)
        return samc_fail(err, SAMC_ERR_ARG, "crop_n_layers is %d; expected 0 to %d", n_layers,
                         SAMC_AMG_MAX_CROP_LAYERS);
    const int fit = samc_amg_max_crop_layers(im_h, im_w, overlap_ratio);
    if (n_layers > fit)
        return samc_fail(err, SAMC_ERR_ARG,
                         "crop_n_layers %d is too many for a %dx%d image: crop layer %d would "
                         "cut it into %d crops per side, some of them empty (at most %d layers "
                         "fit with crop_overlap_ratio %g)",
                         n_layers, im_h, im_w, fit + 1, 2 << fit, fit, overlap_ratio);
    return SAMC_OK;
}

samc_status samc_amg_crop_boxes(int im_h, int im_w, int n_layers, double overlap_ratio,
                                samc_amg_crop *out, samc_error *err)
{
    samc_status st = samc_amg_crop_layers_check(im_h, im_w, n_layers, overlap_ratio, err);
    if (st)
        return st;
    out[0] = (samc_amg_crop){0, 0, im_w, im_h, 0};
    int64_t k = 1;
    for (int i = 0; i < n_layers; i++) {
        emit_layer(im_h, im_w, i, overlap_ratio, out + k);
        k += (int64_t)4 << (2 * i);
    }
    return SAMC_OK;
}
