/* SPDX-License-Identifier: Apache-2.0 */
/* twoway_folded.c - the two-way transformer's cross attentions between a
 * few tokens (Nq, ~8) and the image (Nk = 4096 at 1024) with the image-side
 * projections folded into the token side. Attention.forward computes
 *
 *   tokens -> image:  softmax(s (q Wq_h^T + bq_h)(k Wk_h^T + bk_h)^T) (v Wv_h^T + bv_h)
 *
 * whose k and v projections run over all Nk image rows (2 Nk D C FLOPs
 * each). Per head the same product is (q_h Wk_h) k^T (+ a constant per row,
 * which the softmax drops) and (P_h v) Wv_h^T + bv_h (rows of P sum to 1),
 * so the image rows meet only heads * Nq folded rows of width D: 2 Nk D
 * (heads Nq) FLOPs each, 72 instead of 128 columns for SAM 2's decoder.
 * Image -> tokens folds the q projection into the keys (S = q (kp_h Wq_h)^T
 * + bq_h . kp_h) and the out projection into the values (out = P (vp_h
 * Wo_h^T) + bo). The results differ from the unfolded order by fp32
 * rounding only (parity tolerance 1e-4 holds; docs/fast.md). */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "fast/fast.h"
#include "fast/fast_ops.h"
#include "fast/tracker/twoway_folded.h"

/* Folding pays when heads * Nq rows are clearly fewer than the C columns
 * of the projections it replaces. */
int samc__fast_twoway_fold_ok(const samc_attention *a, int Nq)
{
    return a->heads * Nq * 4 <= a->internal_dim * 3 && a->q.w && a->k.w && a->v.w && a->out.w;
}

size_t samc__fast_twoway_fold_need(const samc_attention *a, int Nk, int D)
{
    const int R = a->internal_dim; /* the most folded rows */
    return (size_t)R * fast_ld(Nk) + samc__fast_pack_size(R, Nk) + (size_t)D * R + (size_t)R * D + 2 * (size_t)R + 64;
}

/* F[h*n + j][e] = sum_c X[j][h*hd + c] W[h*hd + c][e]: n token rows of
 * width C (heads side by side) through each head's slice of W (C x D, an
 * nn.Linear weight (out C, in D)), and fb[h*n + j] = sum_c b[h*hd + c]
 * X[j][h*hd + c] when fb is given. */
static void fold_rows(const float *X, int n, int heads, int hd, const float *W, const float *b, int D, float *F,
                      float *fb)
{
    const int C = heads * hd;
    for (int h = 0; h < heads; h++)
        for (int j = 0; j < n; j++) {
            float *f = F + (int64_t)(h * n + j) * D;
            const float *x = X + (int64_t)j * C + h * hd;
            memset(f, 0, (size_t)D * sizeof *f);
            for (int c = 0; c < hd; c++) {
                const float xc = x[c], *w = W + (int64_t)(h * hd + c) * D;
                for (int e = 0; e < D; e++)
                    f[e] += xc * w[e];
            }
            if (fb) {
                float s = 0.0f;
                for (int c = 0; c < hd; c++)
                    s += (b ? b[h * hd + c] : 0.0f) * x[c];
                fb[h * n + j] = s;
            }
        }
}

/* tokens -> image: q (Nq, D) attends to k, v (Nk, D); out (Nq, D). */
void samc__fast_t2i_folded(const samc_ctx *ctx, int nt, const samc_attention *a, const float *q, int Nq,
                           const float *k, const float *v, int Nk, float *out, float *qp, float *St, float *f)
{
    const int C = a->internal_dim, heads = a->heads, hd = C / heads, D = a->k.in, R = heads * Nq;
    const float scale = (float)(1.0 / sqrt((double)hd));
    const int64_t ldp = fast_ld(Nk);
    float *P = f, *Pp = P + (size_t)R * ldp, *Xt = Pp + samc__fast_pack_size(R, Nk), *Qf = Xt + (size_t)D * R;
    samc__fast_linear_x(ctx, nt, q, a->q.in, Nq, &a->q, qp, C, 0);
    fold_rows(qp, Nq, heads, hd, a->k.w, NULL, D, Qf, NULL);
    /* S^T (Nk, R) = k Qf^T, then P (R, Nk) its transpose */
    const samc_linear lq = {.in = D, .out = R, .w = Qf};
    samc__fast_linear(nt, k, D, Nk, &lq, St, R, 0);
    const int np = (R + FAST_NR - 1) / FAST_NR;
    const int nmb = (D + 11) / 12; /* the micro-kernel's 12-row blocks of X^T: 22 tasks for D 256 */
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
#pragma omp for schedule(static)
        for (int64_t j0 = 0; j0 < Nk; j0 += 256)
            samc__fast_transpose(St + j0 * R, R, (int)(Nk - j0 < 256 ? Nk - j0 : 256), R, P + j0, ldp);
#pragma omp for schedule(static)
        for (int r = 0; r < R; r++)
            samc__fast_softmax_scaled(P + r * ldp, Nk, scale);
        /* B(k, n) = P[n][k]: P^T packed once, shared */
#pragma omp for schedule(static)
        for (int p = 0; p < np; p++)
            samc__fast_pack_b_part(R, Nk, P, ldp, 1, Pp, p, p + 1);
        /* X^T (D, R) = v^T P^T: A = v read transposed (row stride 1) */
#pragma omp for schedule(static)
        for (int mb = 0; mb < nmb; mb++) {
            const int m0 = mb * 12, m = D - m0 < 12 ? D - m0 : 12;
            samc__fast_sgemm_packed(m, R, Nk, v + m0, 1, D, Pp, Xt + (int64_t)m0 * R, R, 0);
        }
    }
    /* O[i][h*hd + c] = sum_e X[h*Nq + i][e] Wv[h*hd + c][e] + bv */
    float *O = qp;
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < Nq; i++)
            for (int c = 0; c < hd; c++) {
                const float *w = a->v.w + (int64_t)(h * hd + c) * D;
                float s = 0.0f;
                for (int e = 0; e < D; e++)
                    s += Xt[(int64_t)e * R + h * Nq + i] * w[e];
                O[(int64_t)i * C + h * hd + c] = s + (a->v.b ? a->v.b[h * hd + c] : 0.0f);
            }
    samc__fast_linear_x(ctx, nt, O, C, Nq, &a->out, out, a->out.out, 0);
}

/* image -> tokens: q (Nk, D) attends to k, v (Nq, D); out (Nk, D). */
void samc__fast_i2t_folded(const samc_ctx *ctx, int nt, const samc_attention *a, const float *q, int Nk,
                           const float *k, const float *v, int Nq, float *out, float *kp, float *S, float *f)
{
    const int C = a->internal_dim, heads = a->heads, hd = C / heads, D = a->q.in, R = heads * Nq;
    const float scale = (float)(1.0 / sqrt((double)hd));
    float *vp = kp + (size_t)Nq * C, *Kf = f, *Vt = Kf + (size_t)R * D, *cb = Vt + (size_t)D * R;
    samc__fast_linear_x(ctx, nt, k, a->k.in, Nq, &a->k, kp, C, 0);
    samc__fast_linear_x(ctx, nt, v, a->v.in, Nq, &a->v, vp, C, 0);
    fold_rows(kp, Nq, heads, hd, a->q.w, a->q.b, D, Kf, cb);
    /* Vt[e][h*Nq + j] = sum_c Wo[e][h*hd + c] vp[j][h*hd + c] */
    for (int e = 0; e < D; e++)
        for (int h = 0; h < heads; h++)
            for (int j = 0; j < Nq; j++) {
                const float *w = a->out.w + (int64_t)e * C + h * hd, *x = vp + (int64_t)j * C + h * hd;
                float s = 0.0f;
                for (int c = 0; c < hd; c++)
                    s += w[c] * x[c];
                Vt[(int64_t)e * R + h * Nq + j] = s;
            }
    const samc_linear lk = {.in = D, .out = R, .w = Kf, .b = cb};
    samc__fast_linear(nt, q, D, Nk, &lk, S, R, 0);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t r = 0; r < Nk; r++)
        for (int h = 0; h < heads; h++)
            samc__fast_softmax_scaled(S + r * R + h * Nq, Nq, scale);
    const samc_linear lo = {.in = R, .out = D, .w = Vt, .b = a->out.b};
    samc__fast_linear(nt, S, R, Nk, &lo, out, D, 0);
}
