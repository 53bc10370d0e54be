/* kernels.c - vectorised row and element-wise kernels: LayerNorm, GELU(erf),
 * ReLU, sigmoid, add, fused scaled softmax, transpose (see simd.h for the
 * ISA choice). Statistics accumulate in float vectors with a final double
 * reduction; every kernel has a scalar tail with the same formula. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "fast.h"
#include "simd.h"

static inline float gelu1(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

/* ---- LayerNorm over rows -------------------------------------------------- */

static void layer_norm_row(const float *x, const samc_norm *n, float *y)
{
    const int C = n->dim;
    int i = 0;
    vf s = vset1(0.0f);
    for (; i + VL <= C; i += VL)
        s = vadd(s, vload(x + i));
    double sum = vhsum(s);
    for (; i < C; i++)
        sum += x[i];
    const float mean = (float)(sum / C);
    const vf vm = vset1(mean);
    vf q = vset1(0.0f);
    for (i = 0; i + VL <= C; i += VL) {
        const vf d = vsub(vload(x + i), vm);
        q = vfma(d, d, q);
    }
    double var = vhsum(q);
    for (; i < C; i++)
        var += (double)(x[i] - mean) * (x[i] - mean);
    const float rstd = (float)(1.0 / sqrt(var / C + (double)n->eps));
    const vf vr = vset1(rstd);
    for (i = 0; i + VL <= C; i += VL) {
        const vf d = vmul(vsub(vload(x + i), vm), vr);
        vstore(y + i, vfma(d, vload(n->w + i), vload(n->b + i)));
    }
    for (; i < C; i++)
        y[i] = (x[i] - mean) * rstd * n->w[i] + n->b[i];
}

void samc__fast_layer_norm_rows(const float *x, int64_t ldx, int64_t rows, const samc_norm *n, float *y,
                          int64_t ldy)
{
    for (int64_t r = 0; r < rows; r++)
        layer_norm_row(x + r * ldx, n, y + r * ldy);
}

/* Threads worth starting for `units` pieces of work: no more than there
 * are pieces (an idle thread still pays its wake-up, ~10-50 us at 16
 * threads with passive waiting, more than a small op costs). */
static int threads_for(int nt, int64_t units) { return units < nt ? (int)(units > 1 ? units : 1) : nt; }

void samc__fast_layer_norm(int nt, const float *x, int64_t rows, const samc_norm *n, float *y)
{
    nt = threads_for(nt, rows / 32); /* >= 32 rows (8K+ floats) per thread */
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t r = 0; r < rows; r++)
        layer_norm_row(x + r * n->dim, n, y + r * n->dim);
}

/* LayerNorm2d: statistics over C at each pixel of (C, hw) planes. Pixels are
 * taken VL at a time (contiguous in each plane), so the channel loop is a
 * strided walk of vectors. */
void samc__fast_layer_norm2d(int nt, const float *x, int C, int64_t hw, const samc_norm *n, float *y)
{
    const int64_t nblk = (hw + VL - 1) / VL;
    nt = threads_for(nt, hw * C / 32768);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t blk = 0; blk < nblk; blk++) {
        const int64_t p = blk * VL;
        if (p + VL <= hw) {
            vf s = vset1(0.0f);
            for (int c = 0; c < C; c++)
                s = vadd(s, vload(x + c * hw + p));
            const vf mean = vdiv(s, vset1((float)C));
            vf q = vset1(0.0f);
            for (int c = 0; c < C; c++) {
                const vf d = vsub(vload(x + c * hw + p), mean);
                q = vfma(d, d, q);
            }
            vf var = vadd(vdiv(q, vset1((float)C)), vset1(n->eps));
            float tmp[VL];
            vstore(tmp, var);
            for (int l = 0; l < VL; l++)
                tmp[l] = 1.0f / sqrtf(tmp[l]);
            const vf rstd = vload(tmp);
            for (int c = 0; c < C; c++) {
                const vf d = vmul(vsub(vload(x + c * hw + p), mean), rstd);
                vstore(y + c * hw + p, vfma(d, vset1(n->w[c]), vset1(n->b[c])));
            }
        } else {
            for (int64_t q = p; q < hw; q++) {
                double s = 0, v = 0;
                for (int c = 0; c < C; c++)
                    s += x[c * hw + q];
                const float mean = (float)(s / C);
                for (int c = 0; c < C; c++)
                    v += (double)(x[c * hw + q] - mean) * (x[c * hw + q] - mean);
                const float rstd = (float)(1.0 / sqrt(v / C + (double)n->eps));
                for (int c = 0; c < C; c++)
                    y[c * hw + q] = (x[c * hw + q] - mean) * rstd * n->w[c] + n->b[c];
            }
        }
    }
}

/* ---- element-wise --------------------------------------------------------- */

void samc__fast_gelu(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        vstore(x + i, vgelu(vload(x + i)));
    for (; i < n; i++)
        x[i] = gelu1(x[i]);
}

void samc__fast_gelu_mt(int nt, float *x, int64_t n)
{
    const int64_t chunk = 16384;
    const int64_t nc = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads_for(nt, nc)) schedule(static) if (nc > 1)
    for (int64_t c = 0; c < nc; c++) {
        const int64_t a = c * chunk, len = a + chunk <= n ? chunk : n - a;
        samc__fast_gelu(x + a, len);
    }
}

void samc__fast_add_gelu_mt(int nt, float *y, const float *a, int64_t n)
{
    const int64_t chunk = 16384;
    const int64_t nc = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads_for(nt, nc)) schedule(static) if (nc > 1)
    for (int64_t c = 0; c < nc; c++) {
        const int64_t s = c * chunk, e = s + chunk <= n ? s + chunk : n;
        int64_t i = s;
        for (; i + VL <= e; i += VL)
            vstore(y + i, vgelu(vadd(vload(y + i), vload(a + i))));
        for (; i < e; i++)
            y[i] = gelu1(y[i] + a[i]);
    }
}

void samc__fast_relu(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        vstore(x + i, vmax(vload(x + i), vset1(0.0f)));
    for (; i < n; i++)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void samc__fast_sigmoid(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + VL <= n; i += VL) {
        const vf e = vexp(vsub(vset1(0.0f), vload(x + i)));
        vstore(x + i, vdiv(vset1(1.0f), vadd(vset1(1.0f), e)));
    }
    for (; i < n; i++)
        x[i] = 1.0f / (1.0f + expf(-x[i]));
}

void samc__fast_add(float *y, const float *a, const float *b, int64_t n)
{
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        vstore(y + i, vadd(vload(a + i), vload(b + i)));
    for (; i < n; i++)
        y[i] = a[i] + b[i];
}

void samc__fast_add_mt(int nt, float *y, const float *a, const float *b, int64_t n)
{
    const int64_t chunk = 65536;
    const int64_t nc = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads_for(nt, nc)) schedule(static) if (nc > 1)
    for (int64_t c = 0; c < nc; c++) {
        const int64_t s = c * chunk, len = s + chunk <= n ? chunk : n - s;
        samc__fast_add(y + s, a + s, b + s, len);
    }
}

void samc__fast_add_bias_rows(float *y, int64_t ldy, int64_t rows, const float *b, int n)
{
    for (int64_t r = 0; r < rows; r++)
        samc__fast_add(y + r * ldy, y + r * ldy, b, n);
}

/* softmax(scale * x), max-subtracted, in place. exp via vexp (2 ulp). */
void samc__fast_softmax_scaled(float *x, int n, float scale)
{
    int i = 0;
    vf m = vset1(-INFINITY);
    for (; i + VL <= n; i += VL)
        m = vmax(m, vload(x + i));
    float mx = vhmax(m);
    for (; i < n; i++)
        mx = x[i] > mx ? x[i] : mx;
    const vf vs = vset1(scale), vms = vset1(mx * scale);
    vf s = vset1(0.0f);
    for (i = 0; i + VL <= n; i += VL) {
        const vf e = vexp(vfma(vload(x + i), vs, vsub(vset1(0.0f), vms)));
        vstore(x + i, e);
        s = vadd(s, e);
    }
    double sum = vhsum(s);
    for (; i < n; i++) {
        x[i] = expf(x[i] * scale - mx * scale);
        sum += x[i];
    }
    const vf inv = vset1((float)(1.0 / sum));
    for (i = 0; i + VL <= n; i += VL)
        vstore(x + i, vmul(vload(x + i), inv));
    for (; i < n; i++)
        x[i] = x[i] * (float)(1.0 / sum);
}

void samc__fast_transpose(const float *src, int64_t lds, int rows, int cols, float *dst, int64_t ldd)
{
    enum { T = 16 };
    for (int r0 = 0; r0 < rows; r0 += T)
        for (int c0 = 0; c0 < cols; c0 += T) {
            const int r1 = r0 + T < rows ? r0 + T : rows, c1 = c0 + T < cols ? c0 + T : cols;
#if defined(__AVX512F__)
            if (r1 - r0 == T && c1 - c0 == T) { /* a full block: in registers */
                __m512 v[16];
                for (int r = 0; r < T; r++)
                    v[r] = _mm512_loadu_ps(src + (int64_t)(r0 + r) * lds + c0);
                vtranspose16(v);
                for (int c = 0; c < T; c++)
                    _mm512_storeu_ps(dst + (int64_t)(c0 + c) * ldd + r0, v[c]);
                continue;
            }
#endif
            for (int r = r0; r < r1; r++)
                for (int c = c0; c < c1; c++)
                    dst[(int64_t)c * ldd + r] = src[(int64_t)r * lds + c];
        }
}
