/* SPDX-License-Identifier: Apache-2.0 */
/* fast_sam3.h - what the fast/ bodies of the SAM 3 kinds share (the
 * bodies themselves are declared in fast/fast_ops.h; contracts in
 * core/models/sam3/sam3_layers.h). */
#ifndef SAMC_FAST_SAM3_H
#define SAMC_FAST_SAM3_H

#include <stdbool.h>

#include "core/models/sam3/sam3_layers.h"
#include "fast/fast_ops.h"

/* A (rows, cols) view of data, for the shared MLP body. */
static inline samc_tensor fast_view2(float *data, int64_t rows, int64_t cols)
{
    samc_tensor t = {0};
    t.data = data, t.ndim = 2, t.shape[0] = rows, t.shape[1] = cols, t.owns = false;
    return t;
}

/* ---- nn.MultiheadAttention on one batch element (mha.c) ---------------------------- */

typedef struct fast_mha_io {
    const float *q, *k, *v;      /* query rows (Lq), key and value rows (Lk), ld* floats apart */
    int64_t ldq, ldk, ldv;
    int Lq, Lk;
    const float *bias;           /* additive float mask, head h at bias + h * bias_hstride (Lq x Lk), or NULL */
    int64_t bias_hstride;        /* 0: one mask for every head */
    const float *kpm;            /* key padding mask (Lk), nonzero = masked, or NULL */
    float *out;                  /* Lq rows after out_proj, ldo apart */
    int64_t ldo;
    bool accumulate;             /* out += attention (a residual add) */
} fast_mha_io;

/* Floats of scratch samc__fast_sam3_mha needs. */
size_t samc__fast_sam3_mha_scratch(const samc_attention *a, int Lq, int Lk);
void samc__fast_sam3_mha(samc_ctx *ctx, int nt, const samc_attention *a, const fast_mha_io *io, float *scratch);

#endif
