/* SPDX-License-Identifier: Apache-2.0 */
/* mha.c - nn.MultiheadAttention (F.multi_head_attention_forward, no
 * dropout) for one batch element on fast's kernels: the q/k/v projections
 * and out_proj as GEMMs, the fused attention kernel with the additive mask
 * as its bias and the key padding mask as -inf key biases. Same contract as
 * ref/sam3/common.c samc_ref_sam3_mha, rows `ld` floats apart (a seq-first
 * tensor's rows of one batch element are B*C apart). One difference, by the
 * kernel's rule: a query row whose every key is masked gets zeros where
 * PyTorch (and ref) give NaN. */
#include <math.h>

#include "fast/fast.h"
#include "fast/sam3/fast_sam3.h"

size_t samc__fast_sam3_mha_scratch(const samc_attention *a, int Lq, int Lk)
{
    const int d = a->internal_dim, hd = d / a->heads;
    return (size_t)(2 * Lq + 2 * Lk) * d + (size_t)Lk + (size_t)a->heads * samc__fast_flash_kv_size(Lk, hd);
}

void samc__fast_sam3_mha(samc_ctx *ctx, int nt, const samc_attention *a, const fast_mha_io *io, float *scratch)
{
    const int d = a->internal_dim, hd = d / a->heads, Lq = io->Lq, Lk = io->Lk;
    float *qp = scratch, *kp = qp + (size_t)Lq * d, *vp = kp + (size_t)Lk * d, *o = vp + (size_t)Lk * d;
    float *kbias = o + (size_t)Lq * d, *kv = kbias + Lk;
    samc__fast_linear_x(ctx, nt, io->q, io->ldq, Lq, &a->q, qp, d, 0);
    samc__fast_linear_x(ctx, nt, io->k, io->ldk, Lk, &a->k, kp, d, 0);
    samc__fast_linear_x(ctx, nt, io->v, io->ldv, Lk, &a->v, vp, d, 0);
    for (int j = 0; j < Lk && io->kpm; j++)
        kbias[j] = io->kpm[j] != 0.0f ? -INFINITY : 0.0f;
    const fast_attn at = {.Lq = Lq, .Lk = Lk, .d = hd, .scale = (float)(1.0 / sqrt((double)hd)), .q = qp,
                          .k = kp, .v = vp, .ldq = d, .ldk = d, .ldv = d, .o = o, .ldo = d, .bias = io->bias,
                          .ldbias = Lk, .kbias = io->kpm ? kbias : NULL};
    samc__fast_flash_attention(nt, &at, a->heads, io->bias_hstride, kv);
    samc__fast_linear_x(ctx, nt, o, d, Lq, &a->out, io->out, io->ldo, io->accumulate ? FAST_GEMM_ACC : 0);
}
