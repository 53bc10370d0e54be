/* common.c - helpers shared by the SAM 3 ref bodies: nn.MultiheadAttention,
 * seq-first / batch-first row access, GroupNorm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

/* softmax(scale * q.k + bias) v for one head; -inf entries (key padding)
 * take no weight. A row whose every key is masked yields NaN, as PyTorch's. */
static void mha_head(const float *q, const float *k, const float *v, int Lq, int Lk, int d, int hd,
                     float scale, const float *bias, const float *kpm, double *p, float *out)
{
    for (int i = 0; i < Lq; i++) {
        const float *qi = q + (int64_t)i * d;
        double mx = -INFINITY;
        for (int j = 0; j < Lk; j++) {
            const float *kj = k + (int64_t)j * d;
            double acc = 0;
            for (int c = 0; c < hd; c++)
                acc += (double)qi[c] * kj[c];
            double s = acc * scale;
            if (bias)
                s += bias[(int64_t)i * Lk + j];
            if (kpm && kpm[j] != 0.0f)
                s = -INFINITY;
            p[j] = s;
            mx = s > mx ? s : mx;
        }
        double sum = 0;
        for (int j = 0; j < Lk; j++)
            sum += (p[j] = exp(p[j] - mx));
        float *oi = out + (int64_t)i * d;
        for (int c = 0; c < hd; c++) {
            double acc = 0;
            for (int j = 0; j < Lk; j++)
                acc += p[j] * v[(int64_t)j * d + c];
            oi[c] = (float)(acc / sum);
        }
    }
}

samc_status samc_ref_sam3_mha(const samc_attention *a, const float *q, int Lq, const float *k,
                              const float *v, int Lk, const float *bias, const float *kpm,
                              float *out)
{
    const int d = a->internal_dim, hd = d / a->heads;
    const float scale = (float)(1.0 / sqrt((double)hd));
    float *qp = malloc((size_t)Lq * d * sizeof *qp), *kp = malloc((size_t)Lk * d * sizeof *kp);
    float *vp = malloc((size_t)Lk * d * sizeof *vp), *o = malloc((size_t)Lq * d * sizeof *o);
    double *p = malloc((size_t)(Lk > 0 ? Lk : 1) * sizeof *p);
    samc_status st = SAMC_OK;
    if (!qp || !kp || !vp || !o || !p) {
        st = samc_fail(NULL, SAMC_ERR_NOMEM, "attention: %dx%d tokens", Lq, Lk);
        goto done;
    }
    samc_ref_linear(q, Lq, &a->q, qp);
    samc_ref_linear(k, Lk, &a->k, kp);
    samc_ref_linear(v, Lk, &a->v, vp);
    for (int h = 0; h < a->heads; h++)
        mha_head(qp + h * hd, kp + h * hd, vp + h * hd, Lq, Lk, d, hd, scale,
                 bias ? bias + (int64_t)h * Lq * Lk : NULL, kpm, p, o + h * hd);
    samc_ref_linear(o, Lq, &a->out, out);
done:
    free(qp), free(kp), free(vp), free(o), free(p);
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
