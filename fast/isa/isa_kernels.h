/* SPDX-License-Identifier: Apache-2.0 */
/* isa_kernels.h - what the per-level sources of fast/isa/ share. Each of
 * them is compiled once per level (CMake: -march=x86-64-v2|v3|v4, aarch64's
 * NEON) with SAMC_ISA_SUFFIX naming the level, so the functions one level
 * compiles are told apart by ISA_FN: ISA_FN(gemm) is samc__v3_gemm in the
 * v3 copy. table.c gathers them into that level's samc__fast_isa. */
#ifndef SAMC_FAST_ISA_KERNELS_H
#define SAMC_FAST_ISA_KERNELS_H

#include <stdint.h>

#include "core/nn/records.h"
#include "fast/fast.h"
#include "fast/isa.h"
#include "fast/simd.h"

#ifndef SAMC_ISA_SUFFIX
#error "fast/isa/ is compiled once per level with -DSAMC_ISA_SUFFIX=<level> (CMakeLists.txt)"
#endif
#define ISA_CAT2(a, b, c) a##b##_##c
#define ISA_CAT(a, b, c) ISA_CAT2(a, b, c)
#define ISA_FN(name) ISA_CAT(samc__, SAMC_ISA_SUFFIX, name)

/* sgemm_avx512.c (AVX-512) or sgemm_vec.c (every other level) */
void ISA_FN(pack)(int N, int kc, int k0, const float *B, int64_t ldb, const float *const *rows, int transb, float *Bp,
                  int pa, int pb);
void ISA_FN(gemm)(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bp, int pa, int pb,
                  const float *R, int64_t ldr, float *C, int64_t ldc, const float *bias, int act);

/* rows.c */
void ISA_FN(layer_norm_row)(const float *x, const samc_norm *n, float *y);
void ISA_FN(layer_norm2d)(const float *x, int C, int64_t hw, const samc_norm *n, float *y, int64_t p0, int64_t p1);
void ISA_FN(gelu)(float *x, int64_t n);
void ISA_FN(add_gelu)(float *y, const float *a, int64_t n);
void ISA_FN(relu)(float *x, int64_t n);
void ISA_FN(sigmoid)(float *x, int64_t n);
void ISA_FN(add)(float *y, const float *a, const float *b, int64_t n);
void ISA_FN(scale)(float *y, const float *x, int64_t n, float f);
void ISA_FN(softmax_scaled)(float *x, int n, float scale);
float ISA_FN(online_row)(float *s, int n, float scale, const float *b1, const float *b2, float *m, float *l);
void ISA_FN(transpose)(const float *src, int64_t lds, int rows, int cols, float *dst, int64_t ldd);
float ISA_FN(dot)(const float *x, const float *w, int n);
void ISA_FN(aa_column_dot)(const float *x0, int W, const float *w, int n, float *y);
void ISA_FN(lerp_rows)(const float *a, const float *c, float h0, float h1, int n, float *y);
void ISA_FN(standardize)(float *x, int n, float mean, float std);
void ISA_FN(mask_product)(int M, int C, const float *hyper, const float *up, int64_t ld, int n, float *out);
void ISA_FN(max_rows)(float *o, const float *const *rows, int nrows, int n);
void ISA_FN(aa_row)(const float *x, const int *xmin, const int *ntaps, const float *w, int stride, int W, float *y);
void ISA_FN(lerp_taps)(const float *x, const samc_lin_tap *t, int W, float *y);
float ISA_FN(fma_loop)(int threads, long n);

/* The GEMM kernels' pieces (sgemm_avx512.c, sgemm_vec.c): row r of B as
 * stored (K rows of N, or N rows of K when transb), B + r * ldb or rows[r]
 * when the rows are given by pointer ... */
#define BROW(r) (rows ? rows[r] : B + (int64_t)(r) * ldb)

/* ... and what a micro-kernel does besides the product: C initialised from
 * memory and/or a bias row, an activation on the final store. */
typedef struct epi {
    const float *bias; /* added to the first K block's initial value, or NULL */
    const float *res;  /* initial value (this tile's rows ldr apart), or NULL: 0 */
    int64_t ldr;
    int act;           /* FAST_ACT_* on the store (last K block only) */
} epi;

/* The activation of a GEMM's final store, on one vector. */
static inline vf isa_act(vf v, int act)
{
    if (act == FAST_ACT_GELU)
        return vgelu(v);
    if (act == FAST_ACT_RELU)
        return vmax(v, vset1(0.0f));
    return v;
}

#endif
