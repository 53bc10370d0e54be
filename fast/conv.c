/* SPDX-License-Identifier: Apache-2.0 */
/* conv.c - Conv2d and ConvTranspose2d (kernel == stride) as sgemm on NCHW
 * images, threads over panels of pixels (output pixels for Conv2d, input
 * pixels for ConvTranspose2d). ConvTranspose2d serves SAM 2's output
 * upscaling (fast/tracker/mask_decoder.c) and SAM 3's neck (fast/sam3/neck.c). */
#include <omp.h>
#include <string.h>

#include "core/base/error.h"
#include "fast.h"


/* Output pixels per im2col panel. */
#define CONV_PANEL 1024

static int is_pointwise(const samc_conv2d *c)
{
    return c->kh == 1 && c->kw == 1 && c->stride == 1 && c->pad == 0 && c->groups == 1;
}

/* Per thread: the im2col panel (not for 1x1) and a C tile with a padded
 * leading dimension. The output planes are H*W floats apart, often a
 * multiple of 4 KiB: written directly, the 12 rows of a micro-kernel tile
 * would share one L1 set, so the GEMM writes the tile and it is copied. */
static size_t scratch_per_thread(const samc_conv2d *c)
{
    const size_t tile = (size_t)(c->cout / c->groups) * (size_t)fast_ld(CONV_PANEL);
    if (is_pointwise(c))
        return tile;
    return (size_t)(c->cin / c->groups) * c->kh * c->kw * CONV_PANEL + tile;
}

size_t samc__fast_conv2d_scratch(const samc_conv2d *c, int H, int W, int nt)
{
    (void)H, (void)W;
    return scratch_per_thread(c) * (size_t)(nt > 0 ? nt : 1);
}

/* im2col of output pixels [p0, p0+n) of group g: col (K x n), K in the
 * weight's (ci, ky, kx) order. */
static void im2col(const samc_conv2d *c, const float *x, int H, int W, int Wo, int g, int64_t p0, int n,
                   float *col)
{
    const int cin_g = c->cin / c->groups;
    int k = 0;
    for (int ci = 0; ci < cin_g; ci++) {
        const float *xc = x + (int64_t)(g * cin_g + ci) * H * W;
        for (int ky = 0; ky < c->kh; ky++)
            for (int kx = 0; kx < c->kw; kx++, k++) {
                float *row = col + (int64_t)k * n;
                for (int j = 0; j < n; j++) {
                    const int64_t p = p0 + j;
                    const int oy = (int)(p / Wo), ox = (int)(p % Wo);
                    const int iy = oy * c->stride - c->pad + ky, ix = ox * c->stride - c->pad + kx;
                    row[j] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? xc[(int64_t)iy * W + ix] : 0.0f;
                }
            }
    }
}

/* y (cout, Ho*Wo) = W (cout, K) col (K, n) + b, on pixel panel [p0, p0+n). */
static void conv_panel(const samc_conv2d *c, const float *x, int H, int W, int Wo, int64_t HWo, int64_t p0,
                       int n, float *y, float *col)
{
    const int cin_g = c->cin / c->groups, cout_g = c->cout / c->groups, K = cin_g * c->kh * c->kw;
    const int64_t ldt = fast_ld(CONV_PANEL);
    float *tile = is_pointwise(c) ? col : col + (size_t)K * CONV_PANEL;
    for (int g = 0; g < c->groups; g++) {
        const float *wg = c->w + (int64_t)g * cout_g * K;
        for (int o = 0; o < cout_g; o++) {
            const float b = c->b ? c->b[g * cout_g + o] : 0.0f;
            for (int j = 0; j < n; j++)
                tile[o * ldt + j] = b;
        }
        if (is_pointwise(c)) {
            samc__fast_sgemm(cout_g, n, K, wg, K, 1, x + p0, HWo, 0, tile, ldt, 1);
        } else {
            im2col(c, x, H, W, Wo, g, p0, n, col);
            samc__fast_sgemm(cout_g, n, K, wg, K, 1, col, n, 0, tile, ldt, 1);
        }
        for (int o = 0; o < cout_g; o++)
            memcpy(y + (int64_t)(g * cout_g + o) * HWo + p0, tile + o * ldt, (size_t)n * sizeof *y);
    }
}

void samc__fast_conv2d(int nt, const samc_conv2d *c, const float *x, int H, int W, float *y, float *col)
{
    const int Ho = samc_conv2d_out_dim(H, c->kh, c->stride, c->pad), Wo = samc_conv2d_out_dim(W, c->kw, c->stride, c->pad);
    const int64_t HWo = (int64_t)Ho * Wo;
    /* panels of at most CONV_PANEL pixels but one per thread where the map
     * allows (the neck's 32x32 level was one panel: one busy thread of 16),
     * not under 256 pixels */
    int64_t pp = (HWo + nt - 1) / nt;
    pp = (pp + 31) / 32 * 32;
    pp = pp < 256 ? 256 : pp > CONV_PANEL ? CONV_PANEL : pp;
    const int64_t np = (HWo + pp - 1) / pp;
    const size_t per = scratch_per_thread(c);
#pragma omp parallel for num_threads(nt) schedule(static) if (np > 1)
    for (int64_t p = 0; p < np; p++) {
        const int64_t p0 = p * pp;
        const int n = (int)(HWo - p0 < pp ? HWo - p0 : pp);
        conv_panel(c, x, H, W, Wo, HWo, p0, n, y, col + per * omp_get_thread_num());
    }
}

/* ---- ConvTranspose2d, kernel == stride == k ------------------------------- */

/* Input pixels per GEMM panel. */
#define CONVT_PANEL 2048

/* Panels of at most CONVT_PANEL pixels, but at least one per thread (the
 * 64 x 64 map of SAM 2's up0 is 2 panels of 2048: 2 busy threads of 16);
 * not under 256 pixels, where packing the panel would outweigh its product. */
static int64_t conv_t2d_panel(int64_t hw, int nt)
{
    int64_t pp = (hw + nt - 1) / nt;
    pp = (pp + 31) / 32 * 32;
    return pp < 256 ? 256 : pp > CONVT_PANEL ? CONVT_PANEL : pp;
}

size_t samc__fast_conv_t2d_scratch(const samc_conv_t2d *c, int h, int w, int nt)
{
    return (size_t)nt * c->cout * c->k * c->k * (size_t)fast_ld(conv_t2d_panel((int64_t)h * w, nt));
}

/* One GEMM per panel of input pixels: (cout*k*k) x cin (the weight (cin, cout,
 * k, k) read as a (cin, cout*k*k) matrix, transposed) times cin x pixels,
 * then the k*k taps of each pixel scattered to the output with the bias. */
void samc__fast_conv_t2d(int nt, const samc_conv_t2d *c, const float *x, int h, int w, float *y, float *z)
{
    const int k = c->k, N = c->cout * k * k, W = w * k;
    const int64_t hw = (int64_t)h * w, pp = conv_t2d_panel(hw, nt), np = (hw + pp - 1) / pp, ldz = fast_ld(pp);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t p = 0; p < np; p++) {
        const int64_t p0 = p * pp;
        const int n = (int)(hw - p0 < pp ? hw - p0 : pp);
        float *zt = z + (size_t)omp_get_thread_num() * N * ldz;
        samc__fast_sgemm(N, n, c->cin, c->w, 1, N, x + p0, hw, 0, zt, ldz, 0);
        for (int o = 0; o < c->cout; o++) {
            const float b = c->b ? c->b[o] : 0.0f;
            float *yo = y + (int64_t)o * hw * k * k;
            for (int dy = 0; dy < k; dy++) {
                const float *zr = zt + (int64_t)(o * k + dy) * k * ldz;
                /* one source row segment at a time: its k outputs per pixel
                 * are adjacent in the output row (k == 2: interleaved
                 * stores the compiler vectorises) */
                for (int j0 = 0; j0 < n;) {
                    const int64_t iy = (p0 + j0) / w, ix = (p0 + j0) % w;
                    const int len = (int)(w - ix < n - j0 ? w - ix : n - j0);
                    float *dst = yo + (iy * k + dy) * W + ix * k;
                    if (k == 2) {
                        const float *z0 = zr + j0, *z1 = zr + ldz + j0;
                        for (int j = 0; j < len; j++)
                            dst[2 * j] = z0[j] + b, dst[2 * j + 1] = z1[j] + b;
                    } else {
                        for (int dx = 0; dx < k; dx++)
                            for (int j = 0; j < len; j++)
                                dst[j * k + dx] = zr[dx * ldz + j0 + j] + b;
                    }
                    j0 += len;
                }
            }
        }
    }
}
