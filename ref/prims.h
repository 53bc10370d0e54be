/* SPDX-License-Identifier: Apache-2.0 */
/* prims.h - scalar building blocks shared by the ref/ layer bodies.
 *
 * Straight loops, one thread. Dot products accumulate in double so the
 * reference is at least as accurate as PyTorch's float32 BLAS sums; the
 * stored results are float32 like PyTorch's.
 */
#ifndef SAMC_REF_PRIMS_H
#define SAMC_REF_PRIMS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/nn/records.h"

/* y[r,:] = x[r,:] W^T + b for r < rows. x is (rows, l->in), y (rows, l->out).
 * y must not alias x. */
void samc_ref_linear(const float *x, int64_t rows, const samc_linear *l, float *y);

/* LayerNorm over the last dimension (n->dim), biased variance. May be in place. */
void samc_ref_layer_norm_rows(const float *x, int64_t rows, const samc_norm *n, float *y);

/* LayerNorm2d: x (B,C,H,W), normalised over C at every pixel. May be in place. */
void samc_ref_layer_norm2d(const float *x, int B, int H, int W, const samc_norm *n, float *y);

void samc_ref_gelu(float *x, int64_t n);    /* exact erf GELU, in place */
void samc_ref_relu(float *x, int64_t n);    /* in place */
void samc_ref_sigmoid(float *x, int64_t n); /* in place */

/* The optional terms of an attention head and where its arithmetic rounds. */
typedef struct samc_ref_attn_opts {
    const float *bias;      /* an additive float attn_mask (Lq, Lk) on the scores, or NULL */
    const float *kpm;       /* a key padding mask (Lk): nonzero keys take no weight (-inf), or NULL */
    /* true: the scores (after the bias) and the softmax probabilities are
     * rounded to float32 where PyTorch stores them, and the weighted sum
     * takes the normalised probabilities (SAM 2's reference); false: both
     * stay in double and the sum is normalised at the end (SAM 3's). */
    bool f32_probs;
} samc_ref_attn_opts;

/* The attention core: one head, out[i,:] = softmax(scale * q[i,:] . k[j,:]
 * + bias[i,j]) v[j,:], a masked key taking no weight (a row whose every key
 * is masked yields NaN, as PyTorch's). Rows are strided by ld* floats; d =
 * q/k width, dv = v width. Dot products and sums in double. */
samc_status samc_ref_attention(const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv,
                               int Lq, int Lk, int d, int dv, float scale, const samc_ref_attn_opts *o, float *out,
                               int64_t ldo);

/* One plain head (no bias, no mask) with float32 probabilities. */
static inline samc_status samc_ref_attention_head(const float *q, int64_t ldq, const float *k, int64_t ldk,
                                                  const float *v, int64_t ldv, int Lq, int Lk, int d, int dv,
                                                  float scale, float *out, int64_t ldo)
{
    const samc_ref_attn_opts o = {.f32_probs = true};
    return samc_ref_attention(q, ldq, k, ldk, v, ldv, Lq, Lk, d, dv, scale, &o, out, ldo);
}

/* Conv2d on NCHW x (B, cin, H, W) -> y (B, cout, Ho, Wo), zero padding. */
void samc_ref_conv2d_nchw(const float *x, int B, int H, int W, const samc_conv2d *c, float *y);

/* ConvTranspose2d, kernel == stride: (B,cin,H,W) -> (B,cout,k*H,k*W). */
void samc_ref_conv_t2d(const float *x, int B, int H, int W, const samc_conv_t2d *c, float *y);

/* sam2_utils.MLP on rows: Linear, ReLU, ..., Linear [, sigmoid]. */
samc_status samc_ref_mlp_rows(const float *x, int64_t rows, const samc_mlp *m, float *y);

#endif
