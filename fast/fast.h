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
/* The same on the calling thread only (inside a parallel region); Wp is
 * l->w packed by fast_pack_linear, or NULL (then packed here, per call). */
void fast_linear_1t(const float *x, int64_t ldx, int64_t rows, const samc_linear *l, const float *Wp, float *y,
                    int64_t ldy, int accumulate);
/* Pack l->w into Wp (fast_pack_size(l->out, l->in) floats). */
void fast_pack_linear(const samc_linear *l, float *Wp);
/* B pre-packed for fast_sgemm_packed: fast_pack_size(N, K) floats, filled
 * by fast_pack_b (same B conventions as fast_sgemm). Packing a weight once
 * per layer call and sharing it across threads and row chunks is what
 * keeps the per-chunk GEMMs at kernel speed. */
size_t fast_pack_size(int N, int K);
void fast_pack_b(int N, int K, const float *B, int64_t ldb, int transb, float *Bp);
void fast_sgemm_packed(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bp, float *C,
                       int64_t ldc, int accumulate);
/* The calling thread's packing buffer `which` (0: fast_sgemm's own, 1:
 * free for a layer), at least n floats; NULL when out of memory. */
float *fast_pack_buffer(int which, size_t n);
/* C (M x N) = A (M x K) B (K x N) (+ C when accumulate), one thread
 * (sgemm.c). A(i,k) = A[i*rsa + k*csa]; B(k,n) = B[k*ldb + n], or
 * B[n*ldb + k] when transb (B given as N x K, e.g. a linear weight). */
void fast_sgemm(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *B, int64_t ldb,
                int transb, float *C, int64_t ldc, int accumulate);

/* ---- element-wise and row kernels (kernels.c) ----------------------------- */

void fast_layer_norm_rows(const float *x, int64_t ldx, int64_t rows, const samc_norm *n, float *y,
                          int64_t ldy); /* one thread; may be in place */
void fast_layer_norm(int nt, const float *x, int64_t rows, const samc_norm *n, float *y);
/* LayerNorm2d on (C, hw) planes of one image, threads over pixel blocks. */
void fast_layer_norm2d(int nt, const float *x, int C, int64_t hw, const samc_norm *n, float *y);
void fast_gelu(float *x, int64_t n);                 /* one thread */
void fast_gelu_mt(int nt, float *x, int64_t n);
void fast_add_gelu_mt(int nt, float *y, const float *a, int64_t n); /* y = GELU(y + a) */
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
/* Leading dimension for a row of n floats that sgemm reads as its A
 * operand: a multiple of 256 floats would put every row of a 12-row block
 * in the same L1 set (4 KiB aliasing), so it is padded by 16. */
static inline int64_t fast_ld(int64_t n) { return n % 256 == 0 ? n + 16 : n; }

/* One head, rows [r0, r0+nr) of the queries: out = softmax(scale q k^T) v.
 * q/k/v/out rows ld* floats apart, d = head width. s: scratch >= nr * fast_ld(Lk). */
void fast_attention_rows(const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v,
                         int64_t ldv, int nr, int Lk, int d, float scale, float *out, int64_t ldo,
                         float *s);
/* All heads of a multi-head attention (head h owns columns [h*d, (h+1)*d)),
 * parallel over (head, row block); K^T and V of each head are packed once
 * and shared by its row blocks. s: fast_attention_mh_scratch() floats. */
size_t fast_attention_mh_scratch(int nt, int Lk, int heads, int d);
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
