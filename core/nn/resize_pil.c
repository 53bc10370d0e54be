/* SPDX-License-Identifier: Apache-2.0 */
/* resize_pil.c - Pillow ImagingResample (BICUBIC, BILINEAR; 8 bits per channel). */
#include "core/nn/resize_pil.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

#define PRECISION_BITS (32 - 8 - 2)

/* Pillow's bicubic_filter with a = -0.5. */
static double bicubic(double x)
{
    const double a = -0.5;
    if (x < 0.0)
        x = -x;
    if (x < 1.0)
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0)
        return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

/* Pillow's bilinear_filter (a triangle). */
static double bilinear(double x)
{
    if (x < 0.0)
        x = -x;
    return x < 1.0 ? 1.0 - x : 0.0;
}

/* precompute_coeffs + normalize_coeffs_8bpc for one axis: `bounds` gets
 * (first tap, tap count) per output, `kk` ksize fixed-point weights each. */
static int coeffs(int in_size, int out_size, samc_pil_filter filter, int **bounds_out, int32_t **kk_out)
{
    double (*const fn)(double) = filter == SAMC_PIL_BILINEAR ? bilinear : bicubic;
    const double scale = (double)in_size / out_size;
    const double filterscale = scale < 1.0 ? 1.0 : scale;
    const double support = (filter == SAMC_PIL_BILINEAR ? 1.0 : 2.0) * filterscale;
    const int ksize = (int)ceil(support) * 2 + 1;
    double *pre = calloc((size_t)out_size * ksize, sizeof *pre);
    int *bounds = malloc((size_t)out_size * 2 * sizeof *bounds);
    int32_t *kk = malloc((size_t)out_size * ksize * sizeof *kk);
    if (!pre || !bounds || !kk) {
        free(pre), free(bounds), free(kk);
        return -1;
    }
    for (int xx = 0; xx < out_size; xx++) {
        const double center = (xx + 0.5) * scale, ss = 1.0 / filterscale;
        int xmin = (int)(center - support + 0.5), xmax = (int)(center + support + 0.5);
        if (xmin < 0)
            xmin = 0;
        if (xmax > in_size)
            xmax = in_size;
        xmax -= xmin;
        double *k = pre + (size_t)xx * ksize, ww = 0.0;
        for (int x = 0; x < xmax; x++) {
            k[x] = fn((x + xmin - center + 0.5) * ss);
            ww += k[x];
        }
        for (int x = 0; x < xmax; x++)
            if (ww != 0.0)
                k[x] /= ww;
        bounds[2 * xx] = xmin, bounds[2 * xx + 1] = xmax;
    }
    for (int i = 0; i < out_size * ksize; i++) /* round half away from zero, then truncate */
        kk[i] = pre[i] < 0 ? (int32_t)(-0.5 + pre[i] * (1 << PRECISION_BITS))
                           : (int32_t)(0.5 + pre[i] * (1 << PRECISION_BITS));
    free(pre);
    *bounds_out = bounds, *kk_out = kk;
    return ksize;
}

static uint8_t clip8(int64_t v)
{
    v >>= PRECISION_BITS;
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

samc_status samc_resize_pil_rgb(const uint8_t *rgb, int h, int w, int H, int W, samc_pil_filter filter, uint8_t *out)
{
    if (h <= 0 || w <= 0 || H <= 0 || W <= 0)
        return samc_fail(NULL, SAMC_ERR_ARG, "resize: empty image");
    int *bh = NULL, *bv = NULL;
    int32_t *kh = NULL, *kv = NULL;
    const int ksh = coeffs(w, W, filter, &bh, &kh), ksv = coeffs(h, H, filter, &bv, &kv);
    /* Only the source rows the vertical pass reads go through the horizontal pass. */
    const int y0 = ksv > 0 ? bv[0] : 0, y1 = ksv > 0 ? bv[2 * (H - 1)] + bv[2 * (H - 1) + 1] : 0;
    uint8_t *tmp = (ksh > 0 && ksv > 0) ? malloc((size_t)(y1 - y0) * W * 3) : NULL;
    if (!tmp) {
        free(bh), free(bv), free(kh), free(kv);
        return SAMC_ERR_NOMEM;
    }
    const bool need_h = W != w, need_v = H != h;
    for (int y = y0; y < y1; y++) /* horizontal pass (or a copy when the width is unchanged) */
        for (int xx = 0; xx < W; xx++)
            for (int c = 0; c < 3; c++) {
                if (!need_h) {
                    tmp[((size_t)(y - y0) * W + xx) * 3 + c] = rgb[((size_t)y * w + xx) * 3 + c];
                    continue;
                }
                const int xmin = bh[2 * xx], n = bh[2 * xx + 1];
                const int32_t *k = kh + (size_t)xx * ksh;
                int64_t ss = 1 << (PRECISION_BITS - 1);
                for (int x = 0; x < n; x++)
                    ss += (int64_t)rgb[((size_t)y * w + x + xmin) * 3 + c] * k[x];
                tmp[((size_t)(y - y0) * W + xx) * 3 + c] = clip8(ss);
            }
    for (int yy = 0; yy < H; yy++) /* vertical pass */
        for (int xx = 0; xx < W; xx++)
            for (int c = 0; c < 3; c++) {
                if (!need_v) {
                    out[((size_t)yy * W + xx) * 3 + c] = tmp[((size_t)(yy - y0) * W + xx) * 3 + c];
                    continue;
                }
                const int ymin = bv[2 * yy] - y0, n = bv[2 * yy + 1];
                const int32_t *k = kv + (size_t)yy * ksv;
                int64_t ss = 1 << (PRECISION_BITS - 1);
                for (int y = 0; y < n; y++)
                    ss += (int64_t)tmp[((size_t)(y + ymin) * W + xx) * 3 + c] * k[y];
                out[((size_t)yy * W + xx) * 3 + c] = clip8(ss);
            }
    free(tmp), free(bh), free(bv), free(kh), free(kv);
    return SAMC_OK;
}
