/* SPDX-License-Identifier: Apache-2.0 */
/* twoway_folded.h - the fast two-way transformer's folded cross attentions
 * (twoway_folded.c), shared with tests/test_twoway_fold.c. */
#ifndef SAMC_FAST_TRACKER_TWOWAY_FOLDED_H
#define SAMC_FAST_TRACKER_TWOWAY_FOLDED_H

#include <stddef.h>

#include "core/nn/records.h"

/* The two-way transformer's token <-> image cross attentions with the
 * image-side projections folded into the few token rows
 * (twoway_folded.c). fold_ok: whether it pays for Nq tokens; fold_need:
 * floats of f. t2i: qp >= Nq * C, St >= Nk * heads * Nq floats. i2t: kp >=
 * 2 * Nq * C, S >= Nk * heads * Nq. */
int samc__fast_twoway_fold_ok(const samc_attention *a, int Nq);
size_t samc__fast_twoway_fold_need(const samc_attention *a, int Nk, int D);
void samc__fast_t2i_folded(const samc_ctx *ctx, int nt, const samc_attention *a, const float *q, int Nq,
                           const float *k, const float *v, int Nk, float *out, float *qp, float *St, float *f);
void samc__fast_i2t_folded(const samc_ctx *ctx, int nt, const samc_attention *a, const float *q, int Nk,
                           const float *k, const float *v, int Nq, float *out, float *kp, float *S, float *f);

#endif
