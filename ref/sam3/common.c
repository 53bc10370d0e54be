/* SPDX-License-Identifier: Apache-2.0 */
/* common.c - helpers shared by the SAM 3 ref bodies: nn.MultiheadAttention
 * (its heads on ref/prims.c's attention core), seq-first / batch-first row
 * access, GroupNorm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

samc_status samc_ref_sam3_mha(const samc_attention *a, const float *q, int Lq, const float *k,
                              const float *v, int Lk, const float *bias, const float *kpm,
                              float *out)
{
    const int d = a->internal_dim, hd = d / a->heads;
    const float scale = (float)(1.0 / sqrt((double)hd));
    float *qp = malloc((size_t)Lq * d * sizeof *qp), *kp = malloc((size_t)Lk * d * sizeof *kp);
    float *vp = malloc((size_t)Lk * d * sizeof *vp), *o = malloc((size_t)Lq * d * sizeof *o);
    samc_status st = SAMC_OK;
    if (!qp || !kp || !vp || !o) {
        st = samc_fail(NULL, SAMC_ERR_NOMEM, "attention: %dx%d tokens", Lq, Lk);
        goto done;
    }
    samc_ref_linear(q, Lq, &a->q, qp);
    samc_ref_linear(k, Lk, &a->k, kp);
    samc_ref_linear(v, Lk, &a->v, vp);
    for (int h = 0; h < a->heads && !st; h++) { /* scores and probabilities in double */
        const samc_ref_attn_opts opts = {.bias = bias ? bias + (int64_t)h * Lq * Lk : NULL, .kpm = kpm};
        st = samc_ref_attention(qp + h * hd, d, kp + h * hd, d, vp + h * hd, d, Lq, Lk, hd, hd, scale, &opts,
                                o + h * hd, d);
    }
    if (!st)
        samc_ref_linear(o, Lq, &a->out, out);
done:
    free(qp), free(kp), free(vp), free(o);
    return st;
}

void samc_ref_sam3_gather(const float *t, int L, int B, int C, bool batch_first, int b, float *dst)
{
    for (int i = 0; i < L; i++) {
        const int64_t row = batch_first ? (int64_t)b * L + i : (int64_t)i * B + b;
        memcpy(dst + (int64_t)i * C, t + row * C, (size_t)C * sizeof *dst);
    }
}

void samc_ref_sam3_scatter(const float *src, int L, int B, int C, bool batch_first, int b, float *t)
{
    for (int i = 0; i < L; i++) {
        const int64_t row = batch_first ? (int64_t)b * L + i : (int64_t)i * B + b;
        memcpy(t + row * C, src + (int64_t)i * C, (size_t)C * sizeof *t);
    }
}

void samc_ref_group_norm(const float *x, int B, int H, int W, const samc_group_norm *g, float *y)
{
    const int64_t hw = (int64_t)H * W;
    const int cg = g->C / g->groups;
    for (int b = 0; b < B; b++)
        for (int gr = 0; gr < g->groups; gr++) {
            const float *xg = x + ((int64_t)b * g->C + (int64_t)gr * cg) * hw;
            float *yg = y + ((int64_t)b * g->C + (int64_t)gr * cg) * hw;
            const int64_t n = (int64_t)cg * hw;
            double mean = 0, var = 0;
            for (int64_t i = 0; i < n; i++)
                mean += xg[i];
            mean /= (double)n;
            for (int64_t i = 0; i < n; i++)
                var += (xg[i] - mean) * (xg[i] - mean);
            var /= (double)n;
            const double rstd = 1.0 / sqrt(var + (double)g->eps);
            for (int c = 0; c < cg; c++) {
                const int ch = gr * cg + c;
                for (int64_t p = 0; p < hw; p++)
                    yg[c * hw + p] = (float)((xg[c * hw + p] - mean) * rstd * g->w[ch] + g->b[ch]);
            }
        }
}

bool samc_ref_sam3_shape_is(const samc_tensor *t, int ndim, const int64_t *dims)
{
    if (!t || !t->data || t->ndim != ndim)
        return false;
    for (int i = 0; i < ndim; i++)
        if (dims[i] >= 0 && t->shape[i] != dims[i])
            return false;
    return true;
}
