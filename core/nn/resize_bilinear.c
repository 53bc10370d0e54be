/* SPDX-License-Identifier: Apache-2.0 */
/* resize_bilinear.c - F.interpolate(bilinear, align_corners=False), plain and
 * antialiased, reproducing torch 1.13's CPU float32 kernels bit for bit.
 *
 * The rounding steps below are not a style choice: each one is what the torch
 * build the parity dumps come from (Debian torch 1.13, AVX2 kernels, GCC with
 * FMA contraction) does, and each was checked against it on whole images
 * (tests/test_resize.c keeps samples of those checks):
 *   - plain bilinear: the source index is computed in double
 *     (compute_source_index_and_lambda uses acc_type<float, CPU> = double;
 *     torch >= 2.1 and CUDA use float32 here, which moves lambdas by an ulp
 *     of the index, ~1e-5 at 256 -> 1024), lambdas are float;
 *   - the generic NCHW kernel interpolates along w, then h, each step as
 *     t0*w0 + t1*w1 contracted to fma(t0, w0, t1*w1);
 *   - a tensor that is also channels-last contiguous (c == 1) goes to
 *     cpu_upsample_linear_channels_last instead: weights h*w rounded to
 *     float, the four products summed in double;
 *   - antialias: horizontal pass, then vertical, float32 in between; the
 *     tap loop is vectorised as an in-order reduction, so taps 1..4k are
 *     rounded products added in order and the remaining taps are FMAs.
 */
#include "core/nn/resize_bilinear.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

/* ---- plain bilinear ------------------------------------------------------ */

/* UpSample.h: area_pixel_compute_scale + compute_source_index_and_lambda. */
void samc_bilinear_taps(int in, int out, samc_lin_tap *t)
{
    const float scale = (float)in / (float)out;
    for (int o = 0; o < out; o++) {
        if (in == out) { /* "scale_factor = 1, simply copy" */
            t[o] = (samc_lin_tap){o, o, 1.0f, 0.0f};
            continue;
        }
        double r = (double)scale * (o + 0.5) - 0.5;
        if (r < 0)
            r = 0;
        const int i0 = (int)r;
        t[o].i0 = i0;
        t[o].i1 = i0 + (i0 < in - 1 ? 1 : 0);
        t[o].l1 = (float)(r - i0);
        t[o].l0 = 1.0f - t[o].l1;
    }
}

/* upsample_generic_Nd_kernel_impl<2, HelperInterpLinear>: width, then height. */
static void bilinear_plane(const float *x, int w, const samc_lin_tap *th, int H, const samc_lin_tap *tw,
                           int W, float *y)
{
    for (int i = 0; i < H; i++) {
        const float *r0 = x + (int64_t)th[i].i0 * w, *r1 = x + (int64_t)th[i].i1 * w;
        for (int j = 0; j < W; j++) {
            const samc_lin_tap *c = &tw[j];
            const float t0 = fmaf(r0[c->i0], c->l0, r0[c->i1] * c->l1);
            const float t1 = fmaf(r1[c->i0], c->l0, r1[c->i1] * c->l1);
            y[(int64_t)i * W + j] = fmaf(t0, th[i].l0, t1 * th[i].l1);
        }
    }
}

/* cpu_upsample_linear_channels_last, scalar tail (channels < vector width). */
static void bilinear_plane_cl(const float *x, int w, const samc_lin_tap *th, int H, const samc_lin_tap *tw,
                              int W, float *y)
{
    for (int i = 0; i < H; i++) {
        const float *r0 = x + (int64_t)th[i].i0 * w, *r1 = x + (int64_t)th[i].i1 * w;
        for (int j = 0; j < W; j++) {
            const samc_lin_tap *c = &tw[j];
            const float w00 = th[i].l0 * c->l0, w01 = th[i].l0 * c->l1;
            const float w10 = th[i].l1 * c->l0, w11 = th[i].l1 * c->l1;
            const double acc = (double)r0[c->i0] * w00 + (double)r0[c->i1] * w01 +
                               (double)r1[c->i0] * w10 + (double)r1[c->i1] * w11;
            y[(int64_t)i * W + j] = (float)acc;
        }
    }
}

samc_status samc_resize_bilinear(const float *in, int64_t n, int c, int h, int w, int H, int W,
                                 float *out)
{
    if (n < 0 || c < 1 || h < 1 || w < 1 || H < 1 || W < 1)
        return samc_fail(NULL, SAMC_ERR_ARG, "resize_bilinear: bad sizes (%d,%d,%d) -> (%d,%d)", c,
                         h, w, H, W);
    samc_lin_tap *th = malloc((size_t)H * sizeof *th), *tw = malloc((size_t)W * sizeof *tw);
    if (!th || !tw) {
        free(th);
        free(tw);
        return samc_fail(NULL, SAMC_ERR_NOMEM, "resize_bilinear: tap tables");
    }
    samc_bilinear_taps(h, H, th);
    samc_bilinear_taps(w, W, tw);
    /* upsample_bilinear2d_kernel_impl: input.is_contiguous(ChannelsLast). */
    const bool channels_last = c == 1 || (h == 1 && w == 1);
    for (int64_t p = 0; p < n * c; p++) {
        const float *x = in + p * h * w;
        float *y = out + p * H * W;
        if (channels_last)
            bilinear_plane_cl(x, w, th, H, tw, W, y);
        else
            bilinear_plane(x, w, th, H, tw, W, y);
    }
    free(th);
    free(tw);
    return SAMC_OK;
}

/* ---- antialiased bilinear ------------------------------------------------ */

/* HelperInterpLinear::aa_filter, with its float argument and double 1 - x. */
static float aa_filter(float x)
{
    if (x < 0.0f)
        x = -x;
    return x < 1.0f ? (float)(1.0 - x) : 0.0f;
}

void samc_aa_taps_free(samc_aa_taps *t)
{
    free(t->xmin);
    free(t->n);
    free(t->w);
}

samc_status samc_aa_taps_make(int in, int out, samc_aa_taps *t)
{
    const float scale = (float)in / (float)out;
    const float support = scale >= 1.0f ? (float)(1.0 * scale) : 1.0f; /* (interp_size*0.5)*scale */
    const float invscale = scale >= 1.0f ? (float)(1.0 / scale) : 1.0f;
    t->stride = (int)ceilf(support) * 2 + 1;
    t->xmin = malloc((size_t)out * sizeof *t->xmin);
    t->n = malloc((size_t)out * sizeof *t->n);
    t->w = calloc((size_t)out * (size_t)t->stride, sizeof *t->w);
    if (!t->xmin || !t->n || !t->w) {
        samc_aa_taps_free(t);
        return samc_fail(NULL, SAMC_ERR_NOMEM, "resize_bilinear_aa: tap tables");
    }
    for (int i = 0; i < out; i++) {
        const float center = (float)(scale * (i + 0.5));
        int64_t lo = (int64_t)((double)(center - support) + 0.5); /* truncation, as static_cast */
        int64_t hi = (int64_t)((double)(center + support) + 0.5);
        lo = lo < 0 ? 0 : lo;
        hi = hi > in ? in : hi;
        t->xmin[i] = (int)lo;
        t->n[i] = (int)(hi - lo);
        float *w = t->w + (int64_t)i * t->stride, total = 0.0f;
        for (int j = 0; j < t->n[i]; j++) {
            w[j] = aa_filter((float)(((double)((float)(j + lo) - center) + 0.5) * invscale));
            total += w[j];
        }
        for (int j = 0; j < t->n[i] && total != 0.0f; j++)
            w[j] /= total;
    }
    return SAMC_OK;
}

/* Resample `rows` lines of length `in` (element step `step`, line step
 * `lstep`) into lines of length `out` with the same layout in y. */
static void aa_pass(const float *x, int64_t rows, int64_t lstep_in, int64_t lstep_out, int64_t step,
                    const samc_aa_taps *t, int out, float *y)
{
    for (int64_t r = 0; r < rows; r++)
        for (int i = 0; i < out; i++)
            y[r * lstep_out + i * step] = samc_aa_dot(x + r * lstep_in + t->xmin[i] * step, step,
                                                 t->w + (int64_t)i * t->stride, t->n[i]);
}

/* Horizontal pass (w -> W) on every row of every plane. */
static samc_status aa_horizontal(const float *x, int64_t planes, int h, int w, int W, float *y)
{
    samc_aa_taps t = {0};
    samc_status st = samc_aa_taps_make(w, W, &t);
    if (st)
        return st;
    aa_pass(x, planes * h, w, W, 1, &t, W, y);
    samc_aa_taps_free(&t);
    return SAMC_OK;
}

/* Vertical pass (h -> H): columns of each plane, element step W. */
static samc_status aa_vertical(const float *x, int64_t planes, int h, int H, int W, float *y)
{
    samc_aa_taps t = {0};
    samc_status st = samc_aa_taps_make(h, H, &t);
    if (st)
        return st;
    for (int64_t p = 0; p < planes; p++)
        aa_pass(x + p * h * W, W, 1, 1, W, &t, H, y + p * H * W);
    samc_aa_taps_free(&t);
    return SAMC_OK;
}

/* separable_upsample_generic_Nd_kernel_impl: horizontal first, an unchanged
 * axis skipped, float32 in between. */
samc_status samc_resize_bilinear_aa(const float *in, int64_t planes, int h, int w, int H, int W,
                                    float *out)
{
    if (planes < 0 || h < 1 || w < 1 || H < 1 || W < 1)
        return samc_fail(NULL, SAMC_ERR_ARG, "resize_bilinear_aa: bad sizes (%d,%d) -> (%d,%d)", h,
                         w, H, W);
    if (h == H && w == W) {
        memcpy(out, in, (size_t)(planes * h * w) * sizeof *out);
        return SAMC_OK;
    }
    if (h == H)
        return aa_horizontal(in, planes, h, w, W, out);
    if (w == W)
        return aa_vertical(in, planes, h, H, W, out);
    float *tmp = malloc((size_t)(planes * h * W) * sizeof *tmp);
    if (!tmp)
        return samc_fail(NULL, SAMC_ERR_NOMEM, "resize_bilinear_aa: intermediate");
    samc_status st = aa_horizontal(in, planes, h, w, W, tmp);
    if (!st)
        st = aa_vertical(tmp, planes, h, H, W, out);
    free(tmp);
    return st;
}
