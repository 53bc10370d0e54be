/* SPDX-License-Identifier: Apache-2.0 */
/* kernels.h - the plugin's own kernels (kernels.cu, attention.cu): the
 * element-wise, normalisation and layout work between the matrix
 * products, each a single pass that does its neighbours' layout work on
 * the way (window partition in the layer norm, unpartition in the
 * residual sum, transposes in the copies out). `bf` says the T buffers
 * are bf16 (else fp32); the residual stream is always fp32. */
#ifndef SAMC_CUDA_KERNELS_H
#define SAMC_CUDA_KERNELS_H

#include "cuda/cu_common.h"

/* A map of B x H x W tokens cut into windows of wh x ww (padded at the
 * bottom/right to nwh x nww windows); global attention is one window of
 * H x W. The window layout puts window (b, wy, wx)'s tokens in raster
 * order at rows ((b * nwh + wy) * nww + wx) * wh * ww. */
struct cu_win {
    int B, H, W, wh, ww, nwh, nww;
    __host__ __device__ int64_t windows() const { return (int64_t)B * nwh * nww; }
    __host__ __device__ int64_t rows() const { return windows() * wh * ww; }
    __host__ __device__ bool padded() const { return nwh * wh != H || nww * ww != W; }
};

/* LayerNorm of rows of D floats: x (rows, D) -> y (rows, ldy) in T. */
void k_ln_rows(cudaStream_t s, const float *x, int64_t rows, int D, const float *w, const float *b, float eps, void *y,
               int64_t ldy, bool bf);
/* norm1 + window_partition: x (B,H,W,D) raster -> ywin (g.rows(), D) in
 * window layout, pad rows left alone (the caller zeroes them once), and
 * also y (B*H*W, D) raster when y is not NULL. */
void k_ln_window(cudaStream_t s, const float *x, cu_win g, int D, const float *w, const float *b, float eps, void *ywin,
                 void *y, bool bf);
/* window_unpartition + residual + norm2: for every token of the pooled
 * map gq (B, Ho, Wo in windows qh x qw): x = sc + a[its window row];
 * xo = x (fp32, may be sc), xn = LN2(x) in T. */
void k_unpart_add_ln(cudaStream_t s, const float *a, cu_win gq, const float *sc, float *xo, int D, const float *w,
                     const float *b, float eps, void *xn, bool bf);
/* x = GELU(x) (erf), in place. */
void k_gelu(cudaStream_t s, void *x, int64_t n, bool bf);
/* y = relu(x) or x, then optional sigmoid; in place allowed. */
void k_relu(cudaStream_t s, float *x, int64_t n);
/* MaxPool2d(s, s) over tokens: x (B,H,W,D) -> y (B,H/s,W/s,D), fp32. */
void k_maxpool(cudaStream_t s, const float *x, int B, int H, int W, int D, int st, float *y);
/* The q-pool of MultiScaleAttention: q of each window (qkv columns 0..D)
 * max-pooled by st -> qp (windows * qh * qw, D). */
void k_pool_q(cudaStream_t s, const void *qkv, cu_win g, int D, int st, int qh, int qw, void *qp, bool bf);
/* im2col of an NCHW fp32 image for a conv as a GEMM: cols (B*Ho*Wo, kpad)
 * in T, kernel order (c, ky, kx), zero padding and zero columns past K. */
void k_im2col(cudaStream_t s, const float *img, int B, int C, int H, int W, int kh, int kw, int stride, int pad,
              int Ho, int Wo, int kpad, void *cols, bool bf);
/* Row-wise softmax of S (rows, n) fp32 into P (rows, n) in T (P may be S
 * when fp32). */
void k_softmax(cudaStream_t s, float *S, int64_t rows, int n, void *P, bool bf);
/* fp32 -> bf16. */
void k_to_bf16(cudaStream_t s, const float *x, bf16 *y, int64_t n);
/* (B, N, C) tokens -> (B, C, N) planes, + add[c] when add is not NULL. */
void k_tokens_to_planes(cudaStream_t s, const float *x, int B, int64_t N, int C, float *y, const float *add);
/* (B, C, N) planes -> (B, N, C) tokens (+ add (Ba, C, N) planes, Ba 1 or B). */
void k_planes_to_tokens(cudaStream_t s, const float *x, int B, int C, int64_t N, float *y);
/* FpnNeck's top-down sum in token layout: lat (B, H*W, C) += up2(prev
 * (B, H/2*W/2, C)) (nearest, or bilinear align_corners False), then /2
 * when avg. */
void k_fpn_topdown(cudaStream_t s, float *lat, const float *prev, int B, int H, int W, int C, bool bilinear, bool avg);
/* y = a + scale * b, element-wise fp32 (y may be a). */
void k_add(cudaStream_t s, const float *a, const float *b, float scale, float *y, int64_t n);
/* y[b, c, ...] = x[b, c, ...] + scale * v[c] over (B, C, inner). */
void k_add_channel(cudaStream_t s, const float *x, const float *v, float scale, float *y, int64_t B, int C,
                   int64_t inner);
/* (A, B, C) -> (B, A, C). */
void k_transpose01(cudaStream_t s, const float *x, int64_t A, int64_t B, int64_t C, float *y);

/* y[b, i] = x[b, i] + pe[i] over (B, n): a batch-1 encoding added to every
 * batch element (y may be x). */
void k_add_bcast(cudaStream_t s, const float *x, const float *pe, int64_t B, int64_t n, float *y);
/* The pixel shuffle after a ConvTranspose2d (kernel = stride = 2) computed
 * as a GEMM on tokens: g (B, h*w, c*4) [co*4 + dy*2 + dx] -> out (B, 2h*2w, c)
 * tokens, + bias[co], + feat (1 or B, c, 2h, 2w) planes when feat is not
 * NULL (feat_batched: B), then LayerNorm over c (when nw is not NULL) and
 * GELU (when gelu). */
void k_convt_shuffle(cudaStream_t s, const float *g, int B, int h, int w, int c, const float *bias, const float *feat,
                     bool feat_batched, const float *nw, const float *nb, float eps, bool gelu, float *out);
/* F.interpolate(bilinear, align_corners False, no antialias) with the taps
 * of each axis given (ty: H, tx: W entries of samc_lin_tap): x (planes, h, w)
 * -> y (planes, H, W). */
void k_resize_bilinear(cudaStream_t s, const float *x, int64_t planes, int h, int w, const samc_lin_tap *ty, int H,
                       const samc_lin_tap *tx, int W, float *y);

/* Attention of every window and head in one kernel, for windows of at most
 * 64 keys (Hiera's early stages): q (max-pooled by st when st > 1), k, v
 * from qkv (window layout, [q | k | v] head-major); o (windows * qh * qw, D)
 * in T. */
bool k_attn_small_fits(int nk, int hd);
void k_attn_small(cudaStream_t s, const void *qkv, cu_win g, int heads, int hd, int st, int qh, int qw, float scale,
                  void *o, bool bf);

#endif
