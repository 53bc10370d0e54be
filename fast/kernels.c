/* SPDX-License-Identifier: Apache-2.0 */
/* kernels.c - the row and element-wise entry points of fast.h: threads and
 * chunking here, the vector code in the level the CPU runs (fast/isa.h,
 * fast/isa/rows.c). */
#include <omp.h>

#include "fast.h"
#include "isa.h"

/* ---- LayerNorm over rows -------------------------------------------------- */

void samc__fast_layer_norm_rows(const float *x, int64_t ldx, int64_t rows, const samc_norm *n, float *y,
                          int64_t ldy)
{
    const fast_isa *isa = samc__fast_isa();
    for (int64_t r = 0; r < rows; r++)
        isa->layer_norm_row(x + r * ldx, n, y + r * ldy);
}

/* Threads worth starting for `units` pieces of work: no more than there
 * are pieces (an idle thread still pays its wake-up, ~10-50 us at 16
 * threads with passive waiting, more than a small op costs). */
static int threads_for(int nt, int64_t units) { return units < nt ? (int)(units > 1 ? units : 1) : nt; }

void samc__fast_layer_norm(int nt, const float *x, int64_t rows, const samc_norm *n, float *y)
{
    const fast_isa *isa = samc__fast_isa();
    nt = threads_for(nt, rows / 32); /* >= 32 rows (8K+ floats) per thread */
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t r = 0; r < rows; r++)
        isa->layer_norm_row(x + r * n->dim, n, y + r * n->dim);
}

/* LayerNorm2d: statistics over C at each pixel of (C, hw) planes; threads
 * over ranges of 64-pixel blocks (whole vectors at every level, so the
 * split does not change which pixels take the scalar tail). */
void samc__fast_layer_norm2d(int nt, const float *x, int C, int64_t hw, const samc_norm *n, float *y)
{
    const fast_isa *isa = samc__fast_isa();
    enum { BLK = 64 };
    const int64_t nblk = (hw + BLK - 1) / BLK;
    nt = threads_for(nt, hw * C / 32768);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t b = 0; b < nblk; b++)
        isa->layer_norm2d(x, C, hw, n, y, b * BLK, (b + 1) * BLK < hw ? (b + 1) * BLK : hw);
}

/* ---- element-wise --------------------------------------------------------- */

void samc__fast_gelu(float *x, int64_t n) { samc__fast_isa()->gelu(x, n); }

void samc__fast_gelu_mt(int nt, float *x, int64_t n)
{
    const fast_isa *isa = samc__fast_isa();
    const int64_t chunk = 16384;
    const int64_t nc = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads_for(nt, nc)) schedule(static) if (nc > 1)
    for (int64_t c = 0; c < nc; c++) {
        const int64_t a = c * chunk, len = a + chunk <= n ? chunk : n - a;
        isa->gelu(x + a, len);
    }
}

void samc__fast_add_gelu_mt(int nt, float *y, const float *a, int64_t n)
{
    const fast_isa *isa = samc__fast_isa();
    const int64_t chunk = 16384;
    const int64_t nc = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads_for(nt, nc)) schedule(static) if (nc > 1)
    for (int64_t c = 0; c < nc; c++) {
        const int64_t s = c * chunk, len = s + chunk <= n ? chunk : n - s;
        isa->add_gelu(y + s, a + s, len);
    }
}

void samc__fast_relu(float *x, int64_t n) { samc__fast_isa()->relu(x, n); }

void samc__fast_sigmoid(float *x, int64_t n) { samc__fast_isa()->sigmoid(x, n); }

void samc__fast_add(float *y, const float *a, const float *b, int64_t n) { samc__fast_isa()->add(y, a, b, n); }

void samc__fast_add_mt(int nt, float *y, const float *a, const float *b, int64_t n)
{
    const fast_isa *isa = samc__fast_isa();
    const int64_t chunk = 65536;
    const int64_t nc = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads_for(nt, nc)) schedule(static) if (nc > 1)
    for (int64_t c = 0; c < nc; c++) {
        const int64_t s = c * chunk, len = s + chunk <= n ? chunk : n - s;
        isa->add(y + s, a + s, b + s, len);
    }
}

void samc__fast_add_bias_rows(float *y, int64_t ldy, int64_t rows, const float *b, int n)
{
    const fast_isa *isa = samc__fast_isa();
    for (int64_t r = 0; r < rows; r++)
        isa->add(y + r * ldy, y + r * ldy, b, n);
}

void samc__fast_softmax_scaled(float *x, int n, float scale) { samc__fast_isa()->softmax_scaled(x, n, scale); }

void samc__fast_transpose(const float *src, int64_t lds, int rows, int cols, float *dst, int64_t ldd)
{
    samc__fast_isa()->transpose(src, lds, rows, cols, dst, ldd);
}

/* ---- the bodies' loops (fast/sam2/) ---------------------------------------- */

void samc__fast_mask_product(int M, int C, const float *hyper, const float *up, int64_t ld, int n, float *out)
{
    samc__fast_isa()->mask_product(M, C, hyper, up, ld, n, out);
}

void samc__fast_lerp_rows(const float *a, const float *c, float h0, float h1, int n, float *y)
{
    samc__fast_isa()->lerp_rows(a, c, h0, h1, n, y);
}

void samc__fast_standardize(float *x, int n, float mean, float std) { samc__fast_isa()->standardize(x, n, mean, std); }

void samc__fast_max_rows(float *o, const float *const *rows, int nrows, int n)
{
    samc__fast_isa()->max_rows(o, rows, nrows, n);
}

void samc__fast_lerp_taps(const float *x, const samc_lin_tap *t, int W, float *y)
{
    samc__fast_isa()->lerp_taps(x, t, W, y);
}
