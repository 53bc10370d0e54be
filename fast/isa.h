/* SPDX-License-Identifier: Apache-2.0 */
/* isa.h - the kernels that need an instruction set, chosen at run time.
 *
 * samc is compiled for the baseline (x86-64-v2; aarch64: armv8-a with NEON)
 * except fast/isa/, which is compiled once per level, each copy filling one
 * table of this type: x86-64 v2 (SSE4.2), v3 (AVX2 + FMA), v4 (AVX-512),
 * aarch64 NEON. cpu_features.c picks the best level the CPU has, once per
 * process (CPUID / XGETBV, HWCAP); SAMC_ISA=v2|v3|v4 caps it (tests,
 * benchmarks, A/B runs: never above what the CPU has). Everything else of
 * fast/ calls these through samc__fast_isa(); the bf16 kernels of
 * gemm_bf16.c (AVX512_BF16, AMX) are chosen at run time on their own
 * (samc__fast_bf16_kernel) and are off below v4.
 *
 * Every level packs B the same way (FAST_NR-column panels, K cut by
 * samc__fast_kc), so weights packed at load serve whichever level runs. */
#ifndef SAMC_FAST_ISA_H
#define SAMC_FAST_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "core/nn/records.h"
#include "core/nn/resize_bilinear.h"

enum { SAMC_ISA_SCALAR = 0, SAMC_ISA_V2 = 2, SAMC_ISA_V3 = 3, SAMC_ISA_V4 = 4, SAMC_ISA_NEON = 10 };

typedef struct fast_isa {
    const char *name;   /* "v4 (avx512)", "v3 (avx2+fma)", "v2 (sse4.2)", "neon" */
    int level;          /* SAMC_ISA_* */
    int lanes;          /* floats per vector */
    /* ---- the GEMM (sgemm.c is the driver around these) ---- */
    /* Panels [pa, pb) of K block [k0, k0 + kc) of B (K x N, or N x K when
     * transb; rows B + r * ldb, or rows[r]) into Bp, zero past N. */
    void (*pack)(int N, int kc, int k0, const float *B, int64_t ldb, const float *const *rows, int transb, float *Bp,
                 int pa, int pb);
    /* C = act(R + bias + A Bp) on rows [0, M) and panels [pa, pb)
     * (samc__fast_sgemm_packed_res). */
    void (*gemm)(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bp, int pa, int pb,
                 const float *R, int64_t ldr, float *C, int64_t ldc, const float *bias, int act);
    /* ---- rows and element-wise (kernels.c, attention.c, gemm.c, resize.c) ---- */
    void (*layer_norm_row)(const float *x, const samc_norm *n, float *y);
    /* LayerNorm2d on pixels [p0, p1) of (C, hw) planes */
    void (*layer_norm2d)(const float *x, int C, int64_t hw, const samc_norm *n, float *y, int64_t p0, int64_t p1);
    void (*gelu)(float *x, int64_t n);
    void (*add_gelu)(float *y, const float *a, int64_t n); /* y = GELU(y + a) */
    void (*relu)(float *x, int64_t n);
    void (*sigmoid)(float *x, int64_t n);
    void (*add)(float *y, const float *a, const float *b, int64_t n);
    void (*scale)(float *y, const float *x, int64_t n, float f); /* y = x f (may be in place) */
    void (*softmax_scaled)(float *x, int n, float scale);
    /* attention's online softmax step (attention.c, online_row) */
    float (*online_row)(float *s, int n, float scale, const float *b1, const float *b2, float *m, float *l);
    void (*transpose)(const float *src, int64_t lds, int rows, int cols, float *dst, int64_t ldd);
    float (*dot)(const float *x, const float *w, int n);
    /* ---- the bodies' own loops (fast/resize.c, fast/sam2/) ---- */
    /* y[j] = sum_k w[k] x0[k * W + j], j < W, in samc_aa_dot's float steps */
    void (*aa_column_dot)(const float *x0, int W, const float *w, int n, float *y);
    /* y = a h0 + c h1 as fmaf(a, h0, c * h1) */
    void (*lerp_rows)(const float *a, const float *c, float h0, float h1, int n, float *y);
    /* x = (x - mean) / std */
    void (*standardize)(float *x, int n, float mean, float std);
    /* o[k] = max over rows[0..nrows)[k], k < n, NaN propagating (PyTorch's
     * max pooling: a NaN anywhere wins) */
    void (*max_rows)(float *o, const float *const *rows, int nrows, int n);
    /* the antialiased resize's horizontal pass on one row: y[i] =
     * samc_aa_dot(x + xmin[i], 1, taps of i), i < W (fast/resize.c) */
    void (*aa_row)(const float *x, const int *xmin, const int *ntaps, const float *w, int stride, int W, float *y);
    /* bilinear along x: y[j] = fmaf(x[t[j].i0], t[j].l0, x[t[j].i1] * t[j].l1) (the
     * core kernel's steps; fast/tracker/postprocess.c) */
    void (*lerp_taps)(const float *x, const samc_lin_tap *t, int W, float *y);
    /* out[t, p] = sum_c hyper[t, c] up[c, p], t < M, p < n */
    void (*mask_product)(int M, int C, const float *hyper, const float *up, int64_t ld, int n, float *out);
    /* ---- the level's multiply-add peak (benchmarks): n iterations of 12
     * independent chains on each of `threads` threads, 2 * lanes * 12 * n
     * FLOP per thread; returns a value that depends on the result ---- */
    float (*fma_loop)(int threads, long n);
} fast_isa;

/* The level this process runs (decided once, cpu_features.c). */
const fast_isa *samc__fast_isa(void);
/* The best level the CPU has, before SAMC_ISA (SAMC_ISA_*). */
int samc__fast_isa_cpu_level(void);
/* The table of `level` when this build has it and the CPU runs it, else NULL
 * (tests and benchmarks compare levels in one process). */
const fast_isa *samc__fast_isa_table(int level);

/* The tables fast/isa/table.c defines, one per compilation. */
extern const fast_isa samc__fast_isa_v2, samc__fast_isa_v3, samc__fast_isa_v4, samc__fast_isa_neon,
    samc__fast_isa_scalar;

#endif
