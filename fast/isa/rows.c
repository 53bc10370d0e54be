/* SPDX-License-Identifier: Apache-2.0 */
/* rows.c - the row and element-wise kernels of one level: LayerNorm,
 * GELU(erf), ReLU, sigmoid, add, scale, the scaled softmax and attention's
 * online-softmax step, transpose, dot products, and the loops of the bodies
 * that only vectorise with the level's vectors (the antialiased resize's
 * column dot, the bilinear row blend, standardisation, the mask product).
 * Statistics accumulate in float vectors with a final double reduction;
 * every kernel has a scalar tail with the same formula. Callers: kernels.c,
 * attention.c, gemm.c, resize.c, fast/sam2/ (through samc__fast_isa()). */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/nn/resize_bilinear.h"
#include "fast/isa/isa_kernels.h"

static inline float gelu1(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

void ISA_FN(layer_norm_row)(const float *x, const samc_norm *n, float *y)
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
        q = vmadd(d, d, q);
    }
    double var = vhsum(q);
    for (; i < C; i++)
        var += (double)(x[i] - mean) * (x[i] - mean);
    const float rstd = (float)(1.0 / sqrt(var / C + (double)n->eps));
    const vf vr = vset1(rstd);
    for (i = 0; i + VL <= C; i += VL) {
        const vf d = vmul(vsub(vload(x + i), vm), vr);
        vstore(y + i, vmadd(d, vload(n->w + i), vload(n->b + i)));
    }
    for (; i < C; i++)
        y[i] = (x[i] - mean) * rstd * n->w[i] + n->b[i];
}

/* Statistics over C at each pixel; pixels VL at a time (contiguous in each
 * plane), so the channel loop is a strided walk of vectors. */
void ISA_FN(layer_norm2d)(const float *x, int C, int64_t hw, const samc_norm *n, float *y, int64_t p0, int64_t p1)
{
    int64_t p = p0;
    for (; p + VL <= p1; p += VL) {
        vf s = vset1(0.0f);
        for (int c = 0; c < C; c++)
            s = vadd(s, vload(x + c * hw + p));
        const vf mean = vdiv(s, vset1((float)C));
        vf q = vset1(0.0f);
        for (int c = 0; c < C; c++) {
            const vf d = vsub(vload(x + c * hw + p), mean);
            q = vmadd(d, d, q);
        }
        vf var = vadd(vdiv(q, vset1((float)C)), vset1(n->eps));
        float tmp[VL];
        vstore(tmp, var);
        for (int l = 0; l < VL; l++)
            tmp[l] = 1.0f / sqrtf(tmp[l]);
        const vf rstd = vload(tmp);
        for (int c = 0; c < C; c++) {
            const vf d = vmul(vsub(vload(x + c * hw + p), mean), rstd);
            vstore(y + c * hw + p, vmadd(d, vset1(n->w[c]), vset1(n->b[c])));
        }
    }
    for (; p < p1; p++) {
        double s = 0, v = 0;
        for (int c = 0; c < C; c++)
            s += x[c * hw + p];
        const float mean = (float)(s / C);
        for (int c = 0; c < C; c++)
            v += (double)(x[c * hw + p] - mean) * (x[c * hw + p] - mean);
        const float rstd = (float)(1.0 / sqrt(v / C + (double)n->eps));
        for (int c = 0; c < C; c++)
            y[c * hw + p] = (x[c * hw + p] - mean) * rstd * n->w[c] + n->b[c];
    }
}

void ISA_FN(gelu)(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        vstore(x + i, vgelu(vload(x + i)));
    for (; i < n; i++)
        x[i] = gelu1(x[i]);
}

void ISA_FN(add_gelu)(float *y, const float *a, int64_t n)
{
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        vstore(y + i, vgelu(vadd(vload(y + i), vload(a + i))));
    for (; i < n; i++)
        y[i] = gelu1(y[i] + a[i]);
}

void ISA_FN(relu)(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        vstore(x + i, vmax(vload(x + i), vset1(0.0f)));
    for (; i < n; i++)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void ISA_FN(sigmoid)(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + VL <= n; i += VL) {
        const vf e = vexp(vsub(vset1(0.0f), vload(x + i)));
        vstore(x + i, vdiv(vset1(1.0f), vadd(vset1(1.0f), e)));
    }
    for (; i < n; i++)
        x[i] = 1.0f / (1.0f + expf(-x[i]));
}

void ISA_FN(add)(float *y, const float *a, const float *b, int64_t n)
{
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        vstore(y + i, vadd(vload(a + i), vload(b + i)));
    for (; i < n; i++)
        y[i] = a[i] + b[i];
}

void ISA_FN(scale)(float *y, const float *x, int64_t n, float f)
{
    int64_t i = 0;
    const vf vfac = vset1(f);
    for (; i + VL <= n; i += VL)
        vstore(y + i, vmul(vload(x + i), vfac));
    for (; i < n; i++)
        y[i] = x[i] * f;
}

/* softmax(scale * x), max-subtracted, in place. exp via vexp (2 ulp). */
void ISA_FN(softmax_scaled)(float *x, int n, float scale)
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
        const vf e = vexp(vmadd(vload(x + i), vs, vsub(vset1(0.0f), vms)));
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

/* One row of a key block (attention.c): s (n scores) -> probabilities
 * exp(t - m_new) in place, where t = scale s (+ bias + kbias); updates m,
 * l; returns the factor O must be multiplied by (1 when it need not be). */
float ISA_FN(online_row)(float *s, int n, float scale, const float *b1, const float *b2, float *m, float *l)
{
    int i;
    float mx;
    const int plain = !b1 && !b2 && scale > 0.0f;
    if (plain) { /* t = scale s: max of s, scaled (scale > 0) */
        vf vm = vset1(-INFINITY);
        for (i = 0; i + VL <= n; i += VL)
            vm = vmax(vm, vload(s + i));
        mx = vhmax(vm);
        for (; i < n; i++)
            mx = s[i] > mx ? s[i] : mx;
        mx *= scale;
    } else {
        const vf vs = vset1(scale);
        vf vm = vset1(-INFINITY);
        for (i = 0; i + VL <= n; i += VL) {
            vf t = vmul(vload(s + i), vs);
            if (b1)
                t = vadd(t, vload(b1 + i));
            if (b2)
                t = vadd(t, vload(b2 + i));
            vstore(s + i, t);
            vm = vmax(vm, t);
        }
        mx = vhmax(vm);
        for (; i < n; i++) {
            float t = s[i] * scale;
            if (b1)
                t += b1[i];
            if (b2)
                t += b2[i];
            s[i] = t;
            mx = t > mx ? t : mx;
        }
    }
    const float mnew = mx > *m ? mx : *m;
    if (mnew == -INFINITY) { /* every key so far masked */
        memset(s, 0, (size_t)n * sizeof *s);
        return 1.0f;
    }
    const float corr = *m == -INFINITY ? 0.0f : expf(*m - mnew);
    vf sum = vset1(0.0f);
    const vf nm = vset1(-mnew);
    if (plain) {
        const vf vs = vset1(scale);
        for (i = 0; i + VL <= n; i += VL) {
            const vf e = vexp(vmadd(vload(s + i), vs, nm));
            vstore(s + i, e);
            sum = vadd(sum, e);
        }
    } else {
        for (i = 0; i + VL <= n; i += VL) {
            const vf e = vexp(vadd(vload(s + i), nm));
            vstore(s + i, e);
            sum = vadd(sum, e);
        }
    }
    float sm = vhsum(sum);
    for (; i < n; i++) {
        s[i] = expf(plain ? fmaf(s[i], scale, -mnew) : s[i] - mnew);
        sm += s[i];
    }
    *l = *l * corr + sm;
    *m = mnew;
    return corr;
}

void ISA_FN(transpose)(const float *src, int64_t lds, int rows, int cols, float *dst, int64_t ldd)
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

float ISA_FN(dot)(const float *x, const float *w, int n)
{
    vf va = vset1(0.0f);
    int i = 0;
    for (; i + VL <= n; i += VL)
        va = vmadd(vload(x + i), vload(w + i), va);
    float acc = vhsum(va);
    for (; i < n; i++)
        acc += x[i] * w[i];
    return acc;
}

/* Output row of the antialiased resize's vertical pass (fast/resize.c): every
 * element takes samc_aa_dot's float steps, so the result is the core
 * kernel's bit for bit (vfma is fused on every level). */
void ISA_FN(aa_column_dot)(const float *x0, int W, const float *w, int n, float *y)
{
    const int vec_end = ((n - 1) / 4) * 4;
    int j = 0;
    for (; j + VL <= W; j += VL) {
        vf acc = vmul(vload(x0 + j), vset1(w[0]));
        for (int k = 1; k < n; k++) {
            const vf v = vload(x0 + (int64_t)k * W + j);
            acc = k <= vec_end ? vadd(acc, vmul(v, vset1(w[k]))) : vfma(v, vset1(w[k]), acc);
        }
        vstore(y + j, acc);
    }
    for (; j < W; j++)
        y[j] = samc_aa_dot(x0 + j, W, w, n);
}

/* The bilinear blend of two interpolated rows (fast/tracker/postprocess.c), in the
 * per-pixel form's float steps fmaf(a, h0, c * h1). */
void ISA_FN(lerp_rows)(const float *a, const float *c, float h0, float h1, int n, float *y)
{
    const vf v0 = vset1(h0), v1 = vset1(h1);
    int j = 0;
    for (; j + VL <= n; j += VL)
        vstore(y + j, vfma(vload(a + j), v0, vmul(vload(c + j), v1)));
    for (; j < n; j++)
        y[j] = fmaf(a[j], h0, c[j] * h1);
}

void ISA_FN(standardize)(float *x, int n, float mean, float std)
{
    const vf m = vset1(mean), s = vset1(std);
    int i = 0;
    for (; i + VL <= n; i += VL)
        vstore(x + i, vdiv(vsub(vload(x + i), m), s));
    for (; i < n; i++)
        x[i] = (x[i] - mean) / std;
}

/* out[t, p] = sum_c hyper[t, c] up[c, p] (fast/tracker/mask_decoder.c): one
 * pass over up per 8 rows t, vectors of pixels, 8 accumulators. */
void ISA_FN(mask_product)(int M, int C, const float *hyper, const float *up, int64_t ld, int n, float *out)
{
    enum { T = 8 };
    for (int t0 = 0; t0 < M; t0 += T) {
        const int tn = M - t0 < T ? M - t0 : T;
        const float *h = hyper + (int64_t)t0 * C;
        float *o = out + t0 * ld;
        int p = 0;
        for (; p + VL <= n; p += VL) {
            vf acc[T];
            for (int t = 0; t < tn; t++)
                acc[t] = vset1(0.0f);
            for (int c = 0; c < C; c++) {
                const vf u = vload(up + c * ld + p);
                for (int t = 0; t < tn; t++)
                    acc[t] = vmadd(vset1(h[t * C + c]), u, acc[t]);
            }
            for (int t = 0; t < tn; t++)
                vstore(o + t * ld + p, acc[t]);
        }
        for (; p < n; p++)
            for (int t = 0; t < tn; t++) {
                float acc = 0.0f;
                for (int c = 0; c < C; c++)
                    acc = fmaf(h[t * C + c], up[c * ld + p], acc);
                o[t * ld + p] = acc;
            }
    }
}

void ISA_FN(max_rows)(float *o, const float *const *rows, int nrows, int n)
{
    int k = 0;
    for (; k + VL <= n; k += VL) {
        vf m = vset1(-INFINITY);
        for (int r = 0; r < nrows; r++)
            m = vmaxnan(m, vload(rows[r] + k));
        vstore(o + k, m);
    }
    for (; k < n; k++) {
        float m = -INFINITY;
        for (int r = 0; r < nrows; r++)
            if (rows[r][k] > m || isnan(rows[r][k]))
                m = rows[r][k];
        o[k] = m;
    }
}

/* The horizontal pass of the antialiased resize on one row (samc_aa_dot is
 * inline: compiled here, its fmaf is the level's instruction). */
void ISA_FN(aa_row)(const float *x, const int *xmin, const int *ntaps, const float *w, int stride, int W, float *y)
{
    for (int i = 0; i < W; i++)
        y[i] = samc_aa_dot(x + xmin[i], 1, w + (int64_t)i * stride, ntaps[i]);
}

void ISA_FN(lerp_taps)(const float *x, const samc_lin_tap *t, int W, float *y)
{
    for (int j = 0; j < W; j++)
        y[j] = fmaf(x[t[j].i0], t[j].l0, x[t[j].i1] * t[j].l1);
}

/* The level's multiply-add peak (benchmarks time it): 12 independent
 * chains per thread in registers (no memory), on every thread at once. */
float ISA_FN(fma_loop)(int threads, long n)
{
    float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    {
        vf a[12];
        for (int i = 0; i < 12; i++)
            a[i] = vset1(1.0f + 0.1f * (float)(i + omp_get_thread_num()));
        const vf b = vset1(0.9999999f), c = vset1(1e-8f);
        for (long it = 0; it < n; it++) {
#pragma GCC unroll 12
            for (int i = 0; i < 12; i++)
                a[i] = vmadd(a[i], b, c);
        }
        float tmp[VL];
        for (int i = 0; i < 12; i++) {
            vstore(tmp, a[i]);
            sink += tmp[0];
        }
    }
    return sink;
}
