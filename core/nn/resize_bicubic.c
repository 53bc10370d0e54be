/* SPDX-License-Identifier: Apache-2.0 */
/* resize_bicubic.c - PyTorch's CPU bicubic interpolation (float32 input).
 *
 * PyTorch computes 4 taps per output row and per output column once
 * (HelperInterpCubic::compute_indices_weights: float scale, float cubic
 * weights), then evaluates each output as a separable sum in float: for each
 * of the 4 row taps a sum over the 4 column taps, then the sum of those
 * weighted by the row weights (Interpolate<2>::eval: outer H, inner W). We
 * keep that order. The result is not bit-identical to torch 1.13's AVX2
 * binary, which the compiler evaluated with fused multiply-adds in places;
 * measured against it the difference is a few float ulps (max abs 2e-6 on
 * unit-variance input over random up/down sizes, 5e-7 for 7 -> 256).
 */
#include "core/nn/resize_bicubic.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/base/error.h"

/* The 4 taps of one output index along one axis. */
typedef struct cubic_taps {
    int idx[4];
    float w[4];
} cubic_taps;

/* upsample_bicubic2d uses the cubic convolution kernel with A = -0.75
 * (UpSample.h: get_cubic_upsample_coefficients). */
#define CUBIC_A (-0.75f)

static float cubic_conv1(float x) /* |x| <= 1 */
{
    return ((CUBIC_A + 2.0f) * x - (CUBIC_A + 3.0f)) * x * x + 1.0f;
}

static float cubic_conv2(float x) /* 1 < |x| < 2 */
{
    return ((CUBIC_A * x - 5.0f * CUBIC_A) * x + 8.0f * CUBIC_A) * x - 4.0f * CUBIC_A;
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Taps for output index i when resizing `in` -> `out` samples
 * (HelperInterpCubic::compute_indices_weights). */
static cubic_taps taps_for(int in, int out, int i)
{
    /* area_pixel_compute_scale: in/out as float (sizes given, no scale factor). */
    const float scale = (float)in / (float)out;
    /* area_pixel_compute_source_index(..., cubic=true), not clamped at 0.
     * Torch 1.13 writes `scale * (dst_index + 0.5) - 0.5` with double
     * literals, and its fraction behaves as if the source coordinate were not
     * rounded to float before the floor is taken (measured against torch:
     * rounding it first is off by up to 1.6e-5 for 300 -> 17). The product of
     * a float and i + 0.5 is exact in double, so this is the exact value. */
    const double src = (double)scale * ((double)i + 0.5) - 0.5;
    const double fl = floor(src); /* src < in - 0.5: no upper guard needed */
    const int f = (int)fl;
    const float t = (float)(src - fl);

    cubic_taps c; /* get_cubic_upsample_coefficients, in float */
    c.w[0] = cubic_conv2(t + 1.0f);
    c.w[1] = cubic_conv1(t);
    c.w[2] = cubic_conv1(1.0f - t);
    c.w[3] = cubic_conv2((1.0f - t) + 1.0f);
    for (int j = 0; j < 4; j++) /* border replicate */
        c.idx[j] = clampi(f - 1 + j, 0, in - 1);
    return c;
}

static void resize_plane(const float *x, int w, const cubic_taps *ty, int H,
                         const cubic_taps *tx, int W, float *y)
{
    for (int oy = 0; oy < H; oy++)
        for (int ox = 0; ox < W; ox++) {
            float acc = 0.0f;
            for (int a = 0; a < 4; a++) {
                const float *row = x + (int64_t)ty[oy].idx[a] * w;
                float t = row[tx[ox].idx[0]] * tx[ox].w[0];
                for (int b = 1; b < 4; b++)
                    t += row[tx[ox].idx[b]] * tx[ox].w[b];
                acc = a == 0 ? t * ty[oy].w[0] : acc + t * ty[oy].w[a];
            }
            y[(int64_t)oy * W + ox] = acc;
        }
}

samc_status samc_resize_bicubic(const float *in, int planes, int h, int w, int H, int W,
                                float *out)
{
    if (planes < 0 || h < 1 || w < 1 || H < 1 || W < 1)
        return samc_fail(NULL, SAMC_ERR_ARG, "bicubic resize: bad sizes");
    cubic_taps *ty = malloc((size_t)H * sizeof *ty);
    cubic_taps *tx = malloc((size_t)W * sizeof *tx);
    if (!ty || !tx) {
        free(ty);
        free(tx);
        return samc_fail(NULL, SAMC_ERR_NOMEM, "bicubic resize: tap tables");
    }
    for (int i = 0; i < H; i++)
        ty[i] = taps_for(h, H, i);
    for (int i = 0; i < W; i++)
        tx[i] = taps_for(w, W, i);
    for (int p = 0; p < planes; p++)
        resize_plane(in + (int64_t)p * h * w, w, ty, H, tx, W, out + (int64_t)p * H * W);
    free(ty);
    free(tx);
    return SAMC_OK;
}
