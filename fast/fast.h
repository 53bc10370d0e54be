/* SPDX-License-Identifier: Apache-2.0 */
/* fast.h - internals shared by the fast/ layer bodies.
 *
 * Threading model (docs/fast.md): OpenMP in fast/ only; the GEMM, attention
 * and element-wise kernels are samc's own (fast/isa/, one copy per
 * instruction-set level, chosen at run time: isa.h), called on a panel of
 * rows from inside our own parallel regions. No second thread pool.
 *
 * Memory: each model's samc_ctx owns one workspace (ctx->scratch). A layer
 * asks for all its temporaries at once (samc__fast_ws_get); the arena grows to
 * the largest request seen and is then reused by every later call, so a
 * forward pass allocates nothing after the first one.
 */
#ifndef SAMC_FAST_FAST_H
#define SAMC_FAST_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "core/nn/records.h"
#include "core/nn/resize_bilinear.h"
#include "core/runtime/impl.h"

/* ---- threads ------------------------------------------------------------ */

/* Thread count for this call: ctx->num_threads, or OpenMP's default when
 * that is 0. */
int samc__fast_threads(const samc_ctx *ctx);
/* Threads for an element-wise or layout pass over n floats: the call's
 * count, but no more than one per 64K floats (waking a thread costs more
 * than a smaller share of the work). */
int samc__fast_threads_for(const samc_ctx *ctx, int64_t n);

/* ---- workspace ---------------------------------------------------------- */

/* Carve n float buffers of the given element counts out of ctx's arena
 * (64-byte aligned, contents undefined). Pointers stay valid until the next
 * samc__fast_ws_get on the same ctx. Returns SAMC_ERR_NOMEM on failure. */
samc_status samc__fast_ws_get(samc_ctx *ctx, int n, const size_t *counts, float **out);
/* Frees a workspace (installed as ctx->scratch_free). */
void samc__fast_ws_free(void *ws);

/* ---- GEMM --------------------------------------------------------------- */

/* y[r,:] = x[r,:] W^T (+ b) (+ y when accumulate), rows split over threads.
 * x rows are ldx floats apart, y rows ldy. */
void samc__fast_linear(int nt, const float *x, int64_t ldx, int64_t rows, const samc_linear *l, float *y,
                 int64_t ldy, int accumulate);
/* The same on the calling thread only (inside a parallel region); Wp is
 * l->w packed by samc__fast_pack_linear, or NULL (then packed here, per call). */
void samc__fast_linear_1t(const float *x, int64_t ldx, int64_t rows, const samc_linear *l, const float *Wp, float *y,
                    int64_t ldy, int accumulate);
/* Pack l->w into Wp (samc__fast_pack_size(l->out, l->in) floats). */
void samc__fast_pack_linear(const samc_linear *l, float *Wp);
/* B pre-packed for samc__fast_sgemm_packed: samc__fast_pack_size(N, K) floats, filled
 * by samc__fast_pack_b (same B conventions as samc__fast_sgemm). Packing a weight once
 * per layer call and sharing it across threads and row chunks is what
 * keeps the per-chunk GEMMs at kernel speed. */
size_t samc__fast_pack_size(int N, int K);
void samc__fast_pack_b(int N, int K, const float *B, int64_t ldb, int transb, float *Bp);
/* The same with B's stored rows given by pointers (rows[r]: K rows of N
 * floats, or N rows of K when transb), e.g. the tokens of a window. */
void samc__fast_pack_b_rows(int N, int K, const float *const *rows, int transb, float *Bp);
/* Only the panels [pa, pb) of samc__fast_pack_b (threads pack a weight together). */
void samc__fast_pack_b_part(int N, int K, const float *B, int64_t ldb, int transb, float *Bp, int pa, int pb);
void samc__fast_sgemm_packed(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bp, float *C,
                       int64_t ldc, int accumulate);
/* The calling thread's packing buffer `which` (0: samc__fast_sgemm's own, 1:
 * free for a layer, 2: the attention kernels'), at least n floats; NULL
 * when out of memory. */
#define FAST_PACK_BUFFERS 4
float *samc__fast_pack_buffer(int which, size_t n);
/* Panel width of packed B and the largest K block (sgemm.c). K is cut into
 * blocks of equal size samc__fast_kc(K) <= FAST_KC; packing and product agree. */
#define FAST_NR 32
#define FAST_KC 384
int samc__fast_kc(int K);
/* Activations a GEMM can apply on its final store. */
enum { FAST_ACT_NONE = 0, FAST_ACT_GELU = 1, FAST_ACT_RELU = 2 };
/* samc__fast_sgemm_packed on the packed panels [pa, pb) only (columns
 * [pa*FAST_NR, min(pb*FAST_NR, N))), with an optional bias row (bias[j]
 * for column j; added to the initial value, C or 0, before the products,
 * the order samc__fast_linear always had) and activation on the result. */
void samc__fast_sgemm_packed_ex(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bp, int pa,
                          int pb, float *C, int64_t ldc, int accumulate, const float *bias, int act);
/* The same with the initial value read from R (rows ldr apart; R == C is
 * accumulate, NULL is 0): C = act(R + bias + A B), residual adds without a
 * copy. */
void samc__fast_sgemm_packed_res(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bp, int pa,
                           int pb, const float *R, int64_t ldr, float *C, int64_t ldc, const float *bias, int act);
/* C (M x N) = A (M x K) B (K x N) (+ C when accumulate), one thread
 * (sgemm.c). A(i,k) = A[i*rsa + k*csa]; B(k,n) = B[k*ldb + n], or
 * B[n*ldb + k] when transb (B given as N x K, e.g. a linear weight). */
void samc__fast_sgemm(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *B, int64_t ldb,
                int transb, float *C, int64_t ldc, int accumulate);

/* ---- weights packed once (gemm.c, gemm_bf16.c) ---------------------------
 *
 * A linear weight W (N x K, nn.Linear's (out, in) layout, rows ldw floats
 * apart) packed at load time into the micro-kernel's panel format, then
 * used by any number of threads with no per-call packing:
 *
 *   load:      samc__fast_wpack_init(&p, l->w, l->in, l->out, l->in, FAST_F32 or FAST_BF16)
 *   per layer: samc__fast_gemm(nt, rows, x, ldx, &p, l->b, y, ldy, flags)      (threads inside)
 *              samc__fast_gemm_1t(rows, x, ldx, &p, l->b, y, ldy, flags)       (inside a parallel region)
 *   unload:    samc__fast_wpack_free(&p)
 *
 * y = act(x W^T + b (+ y when FAST_GEMM_ACC)), with act = FAST_GEMM_GELU /
 * FAST_GEMM_RELU or none. FAST_F32 keeps fp32 products and accumulation
 * (the same results as samc__fast_linear, bit for bit). FAST_BF16 stores W as
 * bfloat16 (round to nearest even), rounds each row block of x to bfloat16
 * on the fly and accumulates in fp32: AVX512_BF16 vdpbf16ps where the CPU
 * has it, AMX-BF16 tiles where it has those (fast_cpu_*), else the fp32
 * kernel on the bf16-rounded values. Error: docs/fast.md, "bf16". */
typedef enum { FAST_F32 = 0, FAST_BF16 = 1 } fast_dtype;
typedef struct fast_wpack {
    int N, K;         /* logical shape of W (out, in) */
    int Kp;           /* K as packed (bf16: padded to the kernel's K step) */
    fast_dtype dtype;
    int kern;         /* bf16: FAST_KERN_* chosen at pack time */
    size_t bytes;
    void *data;       /* 64-byte aligned, owned */
} fast_wpack;
enum { FAST_GEMM_ACC = 1, FAST_GEMM_GELU = 2, FAST_GEMM_RELU = 4 };
samc_status samc__fast_wpack_init(fast_wpack *p, const float *W, int64_t ldw, int N, int K, fast_dtype dtype);
void samc__fast_wpack_free(fast_wpack *p);
void samc__fast_gemm_1t(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias, float *C,
                  int64_t ldc, int flags);
void samc__fast_gemm(int nt, int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias, float *C,
               int64_t ldc, int flags);
/* C = act(A W^T + b + R): the residual R (rows ldr apart; may be C) read
 * as the initial value, so `x + proj(attn)` needs no copy of x. */
void samc__fast_gemm_res(int nt, int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias,
                   const float *R, int64_t ldr, float *C, int64_t ldc, int flags);
/* The same on rows [0, M) and packed column panels [pa, pb) (FAST_NR wide):
 * the unit the threaded driver hands to each thread. */
void samc__fast_gemm_part(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias, float *C,
                    int64_t ldc, int flags, int pa, int pb);
/* How samc__fast_gemm splits an M x N x K product over nt threads: gm row ranges
 * (whole 12-row blocks) times gn column ranges (whole panels); gm * gn <=
 * nt. Chosen for the shortest slowest thread, then the least traffic. */
void samc__fast_gemm_grid(int nt, int64_t M, int N, int K, int *gm, int *gn);

/* ---- weights packed at load (prepare.c) ---------------------------------- */

/* The packed copy of a record's weight for the implementation running the
 * body (ctx->prep_slot, core/runtime/impl.h), or NULL when it has none. */
static inline const fast_wpack *samc__fast_prepared(const samc_ctx *ctx, const void *const *prep)
{
    return ctx && ctx->prep_slot >= 0 ? (const fast_wpack *)prep[ctx->prep_slot] : NULL;
}
/* Whether the body runs in the bf16 implementation (its prepared copy of l
 * is bfloat16), and whether its attention kernels then run in bf16 too
 * (samc__fast_bf16_attention: on CPUs where that pays). */
static inline int samc__fast_bf16_on(const samc_ctx *ctx, const samc_linear *l)
{
    const fast_wpack *p = samc__fast_prepared(ctx, l->prep);
    return p && p->dtype == FAST_BF16;
}
/* bf16 attention where vdpbf16ps beats fp32 FMAs (AMD), fp32 elsewhere
 * (cpu_features.c; SAMC_BF16_ATTENTION=bf16|fp32 overrides). */
int samc__fast_bf16_attention(void);
static inline int samc__fast_bf16_attention_on(const samc_ctx *ctx, const samc_linear *l)
{
    return samc__fast_bf16_on(ctx, l) && samc__fast_bf16_attention();
}
/* y = act(x W^T + b (+ y with FAST_GEMM_ACC)) on the packed weight when the
 * model was prepared for this implementation, else packed per call. */
void samc__fast_linear_x(const samc_ctx *ctx, int nt, const float *x, int64_t ldx, int64_t rows, const samc_linear *l,
                         float *y, int64_t ldy, int flags);
/* y = R + (x W^T + b): a residual read from R (rows of ldr) instead of
 * copied into y first; the same bits as copying R and FAST_GEMM_ACC. */
void samc__fast_linear_res(const samc_ctx *ctx, int nt, const float *x, int64_t ldx, int64_t rows,
                           const samc_linear *l, const float *R, int64_t ldr, float *y, int64_t ldy);
/* The same on the calling thread (inside a parallel region); Wp: the
 * per-call packed weight for the unprepared case (or NULL). */
void samc__fast_linear_x_1t(const samc_ctx *ctx, const float *x, int64_t ldx, int64_t rows, const samc_linear *l,
                            const float *Wp, float *y, int64_t ldy, int flags);
/* The implementations' `prepare` and `release` (fp32 and bf16 copies). */
samc_status samc__fast_prepare_f32(const samc_param_list *params, int slot, void **arena, samc_error *err);
samc_status samc__fast_prepare_bf16(const samc_param_list *params, int slot, void **arena, samc_error *err);
void samc__fast_prepare_release(void *arena);

/* bf16 (gemm_bf16.c). Which kernel the CPU runs (CPUID, once). */
enum {
    FAST_KERN_FALLBACK = 0,
    FAST_KERN_AVX512BF16 = 1,
    FAST_KERN_AMX = 2,
    FAST_KERN_AMX_EMU = 3, /* tests */
    FAST_KERN_NEON_BF16 = 4 /* aarch64 BFDOT */
};
/* The best one this CPU has (cpu_features.c); the environment variable
 * SAMC_BF16_KERNEL=fallback|avx512 caps it (A/B runs). */
int samc__fast_bf16_kernel(void);
int samc__fast_cpu_has_kernel(int kern);
const char *samc__fast_bf16_kernel_name(int kern);
/* Round to bfloat16 (nearest even; NaN stays NaN) and back. */
static inline uint16_t fast_f32_to_bf16(float f)
{
    union { float f; uint32_t u; } v = {f};
    if ((v.u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((v.u >> 16) | 0x40u);
    return (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}
static inline float fast_bf16_to_f32(uint16_t h)
{
    union { uint32_t u; float f; } v = {(uint32_t)h << 16};
    return v.f;
}
void samc__fast_f32_to_bf16_row(const float *x, uint16_t *y, int64_t n);
/* Internals of FAST_BF16 (gemm_bf16.c), reached through samc__fast_wpack_init
 * and samc__fast_gemm_part. */
samc_status samc__fast_bf16_pack(fast_wpack *p, const float *W, int64_t ldw, int N, int K);
void samc__fast_bf16_gemm_part(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias,
                         const float *R, int64_t ldr, float *C, int64_t ldc, int flags, int pa, int pb);
/* Pack with a given kernel's layout (tests: every kernel on one CPU). */
samc_status samc__fast_bf16_pack_for(fast_wpack *p, const float *W, int64_t ldw, int N, int K, int kern);
/* Tests: run every bf16 product with kernel `kern` (-1: the CPU's best). */
void samc__fast_bf16_force_kernel(int kern);
/* bf16 products on operands already converted (the bf16 attention): Bp
 * holds B (K x N) in the packed bf16 layout of one K block (K padded to
 * even), from stored rows like samc__fast_pack_b_rows; A is M rows of bf16,
 * FAST_BF16_LDA elements apart (K <= FAST_BF16_LDA - 32). */
#define FAST_BF16_LDA 800
size_t samc__fast_bf16_pack_rows_size(int N, int K); /* uint16_t elements */
void samc__fast_bf16_pack_rows(int N, int K, const float *const *rows, int transb, uint16_t *Bp);
void samc__fast_bf16_gemm_pre(int M, int N, int K, const uint16_t *A, const uint16_t *Bp, float *C, int64_t ldc,
                        int accumulate);

/* ---- antialiased resize (resize.c) ------------------------------------------ */

/* samc_resize_bilinear_aa (planes, h, w) -> (planes, H, W) on nt threads,
 * bit for bit; scratch: samc__fast_resize_aa_scratch floats (may be 0). */
size_t samc__fast_resize_aa_scratch(int64_t planes, int h, int w, int H, int W);
samc_status samc__fast_resize_aa(int nt, const float *in, int64_t planes, int h, int w, int H, int W, float *out,
                                 float *scratch);

/* ---- element-wise and row kernels (kernels.c) ----------------------------- */

void samc__fast_layer_norm_rows(const float *x, int64_t ldx, int64_t rows, const samc_norm *n, float *y,
                          int64_t ldy); /* one thread; may be in place */
void samc__fast_layer_norm(int nt, const float *x, int64_t rows, const samc_norm *n, float *y);
/* LayerNorm2d on (C, hw) planes of one image, threads over pixel blocks. */
void samc__fast_layer_norm2d(int nt, const float *x, int C, int64_t hw, const samc_norm *n, float *y);
void samc__fast_gelu(float *x, int64_t n);                 /* one thread */
void samc__fast_gelu_mt(int nt, float *x, int64_t n);
void samc__fast_add_gelu_mt(int nt, float *y, const float *a, int64_t n); /* y = GELU(y + a) */
void samc__fast_relu(float *x, int64_t n);
void samc__fast_sigmoid(float *x, int64_t n);
void samc__fast_add(float *y, const float *a, const float *b, int64_t n); /* y = a + b */
void samc__fast_add_mt(int nt, float *y, const float *a, const float *b, int64_t n);
void samc__fast_add_bias_rows(float *y, int64_t ldy, int64_t rows, const float *b, int n);
/* In place softmax(scale * x) of one row of n; returns nothing. */
void samc__fast_softmax_scaled(float *x, int n, float scale);
/* Transpose a (rows, cols) block: dst[c * ldd + r] = src[r * lds + c]. */
void samc__fast_transpose(const float *src, int64_t lds, int rows, int cols, float *dst, int64_t ldd);
/* out[t, p] = sum_c hyper[t, c] up[c, p] for t < M and n pixels (rows of up
 * and out ld apart): the hypernetwork product. */
void samc__fast_mask_product(int M, int C, const float *hyper, const float *up, int64_t ld, int n, float *out);
/* y = a h0 + c h1 in the float steps fmaf(a, h0, c * h1) (bilinear rows). */
void samc__fast_lerp_rows(const float *a, const float *c, float h0, float h1, int n, float *y);
/* x = (x - mean) / std, in place. */
void samc__fast_standardize(float *x, int n, float mean, float std);
/* o[k] = the maximum of rows[0..nrows)[k] for k < n, a NaN winning (PyTorch's
 * max pooling). */
void samc__fast_max_rows(float *o, const float *const *rows, int nrows, int n);
/* Bilinear along x: y[j] = fmaf(x[t[j].i0], t[j].l0, x[t[j].i1] * t[j].l1), j < W. */
void samc__fast_lerp_taps(const float *x, const samc_lin_tap *t, int W, float *y);

/* ---- attention (attention.c) -------------------------------------------- */

/* Fused ("flash") attention, fp32: out = softmax(scale q k^T + bias +
 * kbias) v per head, one pass over the keys per block of 48 query rows,
 * online softmax, no score matrix beyond a 48 x 256 block per thread.
 * Heads sit side by side: head h is columns [h*d, (h+1)*d) of every q, k,
 * v and out row. Rows are base + i * ld, or rows[i] when the pointer array
 * is given (a window's tokens where they lie in the raster map; orows[i] =
 * NULL drops output row i). bias: optional (Lq x Lk, rows ldbias apart,
 * head h at bias + h * bias_hstride), added after scaling; kbias: optional
 * per key (Lk), e.g. 0 / -INFINITY for key padding. RoPE: rotate q and k
 * before. A row whose keys are all masked gets zeros. */
typedef struct fast_attn {
    int Lq, Lk, d;
    float scale;
    const float *q, *k, *v;
    int64_t ldq, ldk, ldv;
    const float *const *qrows, *const *krows, *const *vrows; /* optional */
    float *o;
    int64_t ldo;
    float *const *orows; /* optional */
    const float *bias;   /* optional */
    int64_t ldbias;
    const float *kbias;  /* optional */
    int dv;              /* width of a head of v and out when it differs from d (0: d); at
                          * most d (the scratch sizes are d's) */
} fast_attn;
static inline int fast_attn_dv(const fast_attn *a) { return a->dv > 0 ? a->dv : a->d; }
/* On the calling thread (inside a parallel region: one window or head per
 * task); scratch is the thread's own (samc__fast_pack_buffer 2). */
void samc__fast_flash_attention_1t(const fast_attn *a, int heads, int64_t bias_hstride);
/* Threads over (head, 48-row block) tasks; K and V of every head are
 * packed once into kv (heads * samc__fast_flash_kv_size(Lk, d) floats). */
size_t samc__fast_flash_kv_size(int Lk, int d);
void samc__fast_flash_attention(int nt, const fast_attn *a, int heads, int64_t bias_hstride, float *kv);
/* The same with q, k, v and the probabilities rounded to bfloat16 (fp32
 * scores, softmax, sums and output): the bf16 products of gemm_bf16.c
 * (vdpbf16ps where the CPU has it). Head width up to FAST_BF16_LDA - 32
 * (wider heads take the fp32 kernel). kv: heads * samc__fast_flash_kv_size_bf16. */
size_t samc__fast_flash_kv_size_bf16(int Lk, int d);
void samc__fast_flash_attention_bf16_1t(const fast_attn *a, int heads, int64_t bias_hstride);
void samc__fast_flash_attention_bf16(int nt, const fast_attn *a, int heads, int64_t bias_hstride, float *kv);

/* Leading dimension for a row of n floats that sgemm reads as its A
 * operand: a multiple of 256 floats would put every row of a 12-row block
 * in the same L1 set (4 KiB aliasing), so it is padded by 16. */
static inline int64_t fast_ld(int64_t n) { return n % 256 == 0 ? n + 16 : n; }

/* The earlier entry points, now on the fused kernel. One head, rows [0, nr)
 * of the queries: out = softmax(scale q k^T) v (s: unused, kept for the
 * callers). */
#define FAST_ATT_BLOCK 64
void samc__fast_attention_rows(const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v,
                         int64_t ldv, int nr, int Lk, int d, float scale, float *out, int64_t ldo,
                         float *s);
/* All heads; s: samc__fast_attention_mh_scratch() floats (the packed K and V;
 * enough for either precision). bf16: q, k, v and the probabilities rounded
 * to bfloat16 (samc__fast_flash_attention_bf16), for the bf16 implementation. */
size_t samc__fast_attention_mh_scratch(int nt, int Lk, int heads, int d);
void samc__fast_attention_mh(int nt, const float *q, int64_t ldq, const float *k, int64_t ldk,
                       const float *v, int64_t ldv, int Lq, int Lk, int heads, int d, float scale,
                       float *out, int64_t ldo, float *s);
void samc__fast_attention_mh_x(int nt, int bf16, const float *q, int64_t ldq, const float *k, int64_t ldk,
                               const float *v, int64_t ldv, int Lq, int Lk, int heads, int d, float scale, float *out,
                               int64_t ldo, float *s);

/* ---- shared geometry ------------------------------------------------------ */

/* Conv2d on one NCHW image (cin, H, W) -> (cout, Ho, Wo) as GEMMs (1x1 and
 * kernel == stride convs without im2col), threads over output channels or
 * pixels. col: scratch of samc__fast_conv2d_scratch(c, H, W, nt) floats (one
 * share per thread). */
size_t samc__fast_conv2d_scratch(const samc_conv2d *c, int H, int W, int nt);
void samc__fast_conv2d(int nt, const samc_conv2d *c, const float *x, int H, int W, float *y, float *col);
/* ConvTranspose2d with kernel == stride == k (no overlap) on one NCHW image
 * x (cin, h, w) -> y (cout, k*h, k*w): one GEMM per panel of input pixels,
 * then each pixel's k*k taps scattered with the bias; threads over panels.
 * z: samc__fast_conv_t2d_scratch(c, h, w, nt) floats (every thread's). */
size_t samc__fast_conv_t2d_scratch(const samc_conv_t2d *c, int h, int w, int nt);
void samc__fast_conv_t2d(int nt, const samc_conv_t2d *c, const float *x, int h, int w, float *y, float *z);

/* ---- per-exec caches ----------------------------------------------------- */

/* Per-exec caches kept next to the workspace (fast/workspace.c). */
enum { FAST_CACHE_DENSE_PE, FAST_CACHE_ROPE, FAST_CACHE_N };
/* A zeroed block of `size` bytes for `slot`, kept until the exec is freed;
 * NULL when out of memory. */
void *samc__fast_ws_cache(samc_ctx *ctx, int slot, size_t size);
void samc__fast_dense_pe_cache_free(void *cache);
/* The RoPE tables cached per exec (FAST_CACHE_ROPE). */
void samc__fast_rope_cache_free(void *cache);

#endif
