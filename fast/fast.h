/* fast.h - internals shared by the fast/ layer bodies.
 *
 * Threading model (docs/fast.md): OpenMP in fast/ only. Every GEMM is called
 * from inside our own parallel regions on a panel of rows, so OpenBLAS always
 * runs single-threaded: the OpenMP build of OpenBLAS does that by itself
 * inside a parallel region, the pthreads build is told so once
 * (openblas_set_num_threads(1)). No two thread pools ever compete for the
 * two cores.
 *
 * Memory: each model's samc_ctx owns one workspace (ctx->scratch). A layer
 * asks for all its temporaries at once (fast_ws_get); the arena grows to
 * the largest request seen and is then reused by every later call, so a
 * forward pass allocates nothing after the first one.
 */
#ifndef SAMC_FAST_FAST_H
#define SAMC_FAST_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "core/layers.h"

/* ---- threads ------------------------------------------------------------ */

/* Thread count for this call: ctx->num_threads, or OpenMP's default when
 * that is 0. Also makes sure OpenBLAS is single-threaded. */
int fast_threads(const samc_ctx *ctx);

/* ---- workspace ---------------------------------------------------------- */

/* Carve n float buffers of the given element counts out of ctx's arena
 * (64-byte aligned, contents undefined). Pointers stay valid until the next
 * fast_ws_get on the same ctx. Returns SAMC_ERR_NOMEM on failure. */
samc_status fast_ws_get(samc_ctx *ctx, int n, const size_t *counts, float **out);
/* Frees a workspace (installed as ctx->scratch_free). */
void fast_ws_free(void *ws);

/* ---- GEMM --------------------------------------------------------------- */

/* y[r,:] = x[r,:] W^T (+ b) (+ y when accumulate), rows split over threads.
 * x rows are ldx floats apart, y rows ldy. */
void fast_linear(int nt, const float *x, int64_t ldx, int64_t rows, const samc_linear *l, float *y,
                 int64_t ldy, int accumulate);
/* The same on the calling thread only (inside a parallel region). */
void fast_linear_1t(const float *x, int64_t ldx, int64_t rows, const samc_linear *l, float *y,
                    int64_t ldy, int accumulate);
/* C = A B (row-major, A m x k, B k x n), one thread. */
void fast_gemm_nn(int m, int n, int k, const float *A, int lda, const float *B, int ldb, float *C, int ldc);

/* ---- element-wise and row kernels (kernels.c) ----------------------------- */

void fast_layer_norm_rows(const float *x, int64_t ldx, int64_t rows, const samc_norm *n, float *y,
                          int64_t ldy); /* one thread; may be in place */
void fast_layer_norm(int nt, const float *x, int64_t rows, const samc_norm *n, float *y);
/* LayerNorm2d on (C, hw) planes of one image, threads over pixel blocks. */
void fast_layer_norm2d(int nt, const float *x, int C, int64_t hw, const samc_norm *n, float *y);
void fast_gelu(float *x, int64_t n);                 /* one thread */
void fast_gelu_mt(int nt, float *x, int64_t n);
void fast_relu(float *x, int64_t n);
void fast_sigmoid(float *x, int64_t n);
void fast_add(float *y, const float *a, const float *b, int64_t n); /* y = a + b */
void fast_add_mt(int nt, float *y, const float *a, const float *b, int64_t n);
void fast_add_bias_rows(float *y, int64_t ldy, int64_t rows, const float *b, int n);
/* In place softmax(scale * x) of one row of n; returns nothing. */
void fast_softmax_scaled(float *x, int n, float scale);
/* Transpose a (rows, cols) block: dst[c * ldd + r] = src[r * lds + c]. */
void fast_transpose(const float *src, int64_t lds, int rows, int cols, float *dst, int64_t ldd);

/* ---- attention (attention.c) -------------------------------------------- */

/* Rows per block of the score matrix: S (ATT_BLOCK x Lk) is the only
 * quadratic buffer, per thread. */
#define FAST_ATT_BLOCK 64

/* One head, rows [r0, r0+nr) of the queries: out = softmax(scale q k^T) v.
 * q/k/v/out rows ld* floats apart, d = head width. s: scratch >= nr * Lk. */
void fast_attention_rows(const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v,
                         int64_t ldv, int nr, int Lk, int d, float scale, float *out, int64_t ldo,
                         float *s);
/* All heads of a multi-head attention (head h owns columns [h*d, (h+1)*d)),
 * parallel over (head, row block). s: nt * FAST_ATT_BLOCK * Lk floats. */
void fast_attention_mh(int nt, const float *q, int64_t ldq, const float *k, int64_t ldk,
                       const float *v, int64_t ldv, int Lq, int Lk, int heads, int d, float scale,
                       float *out, int64_t ldo, float *s);

/* ---- shared geometry ------------------------------------------------------ */

int fast_conv_out(int in, int k, int stride, int pad);
/* Conv2d on one NCHW image (cin, H, W) -> (cout, Ho, Wo) as GEMMs (1x1 and
 * kernel == stride convs without im2col), threads over output channels or
 * pixels. col: scratch of fast_conv2d_scratch() floats. */
size_t fast_conv2d_scratch(const samc_conv2d *c, int H, int W);
void fast_conv2d(int nt, const samc_conv2d *c, const float *x, int H, int W, float *y, float *col);

/* ---- test-only fault injection (fault.c, fast/fast_testing.h) ------------ */

/* fault.c: the faulty table for the planted layer, else NULL (used by core/sam2_impl.c). */
const samc_ops *samc_fast_fault_ops_for(const char *layer);

#endif
