/* SPDX-License-Identifier: Apache-2.0 */
/* ref_sam3.h - the helpers the ref/ bodies of the SAM 3 kinds share (the
 * bodies themselves are declared in ref/ref_ops.h; contracts in
 * core/models/sam3/sam3_layers.h). */
#ifndef SAMC_REF_SAM3_H
#define SAMC_REF_SAM3_H

#include <stdbool.h>

#include "core/models/sam3/sam3_layers.h"
#include "ref/ref_ops.h"

/* ---- helpers (ref/sam3/common.c) ------------------------------------------ */

/* nn.MultiheadAttention (F.multi_head_attention_forward, no dropout) for one
 * batch element: q (Lq, d), k and v (Lk, d) as contiguous rows. bias (heads,
 * Lq, Lk) is the additive float attn_mask or NULL; kpm (Lk) the key padding
 * mask (nonzero = -inf) or NULL. out (Lq, d) after out_proj. */
samc_status samc_ref_sam3_mha(const samc_attention *a, const float *q, int Lq, const float *k,
                              const float *v, int Lk, const float *bias, const float *kpm,
                              float *out);

/* Rows of batch element b of a (L,B,C) (seq-first) or (B,L,C) (batch-first)
 * tensor, copied to / from a contiguous (L, C) block. */
void samc_ref_sam3_gather(const float *t, int L, int B, int C, bool batch_first, int b, float *dst);
void samc_ref_sam3_scatter(const float *src, int L, int B, int C, bool batch_first, int b, float *t);

/* GroupNorm over NCHW x (B, C, H, W), in place allowed. */
void samc_ref_group_norm(const float *x, int B, int H, int W, const samc_group_norm *g, float *y);

/* A samc_tensor shape check: ndim and each dim (-1 = any). */
bool samc_ref_sam3_shape_is(const samc_tensor *t, int ndim, const int64_t *dims);

#endif
