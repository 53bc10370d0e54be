/* conv.c - Conv2d and ConvTranspose2d (kernel == stride) as sgemm on NCHW
 * images, threads over panels of output pixels; the plain Conv2d layer. */
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
size_t samc__fast_conv2d_scratch(const samc_conv2d *c, int H, int W)
{
    (void)H, (void)W;
    const size_t tile = (size_t)(c->cout / c->groups) * (size_t)fast_ld(CONV_PANEL);
    if (is_pointwise(c))
        return tile;
    return (size_t)(c->cin / c->groups) * c->kh * c->kw * CONV_PANEL + tile;
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
    const size_t per = samc__fast_conv2d_scratch(c, H, W);
#pragma omp parallel for num_threads(nt) schedule(static) if (np > 1)
    for (int64_t p = 0; p < np; p++) {
        const int64_t p0 = p * pp;
        const int n = (int)(HWo - p0 < pp ? HWo - p0 : pp);
        conv_panel(c, x, H, W, Wo, HWo, p0, n, y, col + per * omp_get_thread_num());
    }
}
