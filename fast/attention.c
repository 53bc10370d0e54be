/* SPDX-License-Identifier: Apache-2.0 */
/* attention.c - fused ("flash") attention on the CPU, fp32:
 * out = softmax(scale q k^T + bias) v, one pass over the keys per block of
 * queries, never a full score matrix.
 *
 * For a task of FA_MQ query rows of one head: S = Q K_j^T for a block of
 * FA_NK keys (the sgemm micro-kernel on K_j^T packed once per head), the
 * running row maximum m and sum l updated online (O rescaled by
 * exp(m_old - m_new) when the maximum grows), S turned into probabilities
 * in place, O += P V_j (the micro-kernel on V_j packed once per head), and
 * at the end O / l. S (FA_MQ x FA_NK floats, 48 KiB) and O stay in L1/L2;
 * K and V of the head are read once per task. With a single key block
 * (windows, Lk <= FA_NK) the softmax is the plain one, normalised before
 * P V: bit for bit what fast/ computed before this kernel existed.
 *
 * Inputs are rows (q, k, v, out: a base and a row stride, or one pointer
 * per row so a window's tokens are read where they lie in the raster map,
 * and out rows can be dropped), heads side by side (head h = columns
 * [h*d, (h+1)*d)), an optional additive bias (Lq x Lk per head: SAM 3's
 * relative position bias) and an optional additive per-key bias (0 or
 * -INFINITY: key padding masks). RoPE is the caller's: rotate q and k
 * first. A query row whose keys are all masked gets zeros (PyTorch's math
 * path gives NaN there). */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "fast.h"
#include "isa.h"

#ifndef FA_MQ
#define FA_MQ 48
#endif
#ifndef FA_NK
#define FA_NK 256
#endif

static int nkblocks(int Lk) { return (Lk + FA_NK - 1) / FA_NK; }
/* floats of one key block's packed K^T and V (the last block uses less) */
static size_t kv_block(int d) { return samc__fast_pack_size(FA_NK, d) + samc__fast_pack_size(d, FA_NK); }

size_t samc__fast_flash_kv_size(int Lk, int d) { return (size_t)nkblocks(Lk) * kv_block(d); }

static const float *row_of(const float *base, int64_t ld, const float *const *rows, int i, int64_t col)
{
    return (rows ? rows[i] : base + (int64_t)i * ld) + col;
}

/* Pack key blocks [jb0, jb1) of head h into kv (the head's region). */
static void pack_kv(const fast_attn *a, int h, int jb0, int jb1, float *kv)
{
    const int d = a->d, dv = fast_attn_dv(a);
    const float *rp[FA_NK];
    for (int jb = jb0; jb < jb1; jb++) {
        const int j0 = jb * FA_NK, nk = a->Lk - j0 < FA_NK ? a->Lk - j0 : FA_NK;
        float *Kp = kv + (size_t)jb * kv_block(d), *Vp = Kp + samc__fast_pack_size(FA_NK, d);
        for (int j = 0; j < nk; j++)
            rp[j] = row_of(a->k, a->ldk, a->krows, j0 + j, (int64_t)h * d);
        samc__fast_pack_b_rows(nk, d, rp, 1, Kp);
        for (int j = 0; j < nk; j++)
            rp[j] = row_of(a->v, a->ldv, a->vrows, j0 + j, (int64_t)h * dv);
        samc__fast_pack_b_rows(dv, nk, rp, 0, Vp);
    }
}

/* floats of per-thread scratch for a task */
static size_t task_scratch(int d, int Lk)
{
    const int nk = Lk < FA_NK ? Lk : FA_NK;
    return (size_t)FA_MQ * (2 * (size_t)d + (size_t)fast_ld(nk) + 2) + 64;
}

/* Query rows [r0, r0 + nr) (nr <= FA_MQ) of head h against every key. */
static void flash_task(const fast_attn *a, int h, int r0, int nr, const float *bias, const float *kv, float *ws)
{
    const fast_isa *isa = samc__fast_isa();
    const int d = a->d, dv = fast_attn_dv(a), Lk = a->Lk, nkb = nkblocks(Lk);
    const int64_t lds = fast_ld(Lk < FA_NK ? Lk : FA_NK);
    float *Q = ws, *S = Q + (size_t)FA_MQ * d, *O = S + (size_t)FA_MQ * lds;
    float *m = O + (size_t)FA_MQ * d, *l = m + FA_MQ;
    const float *qp;
    int64_t ldq;
    if (a->qrows) {
        for (int i = 0; i < nr; i++)
            memcpy(Q + (size_t)i * d, a->qrows[r0 + i] + (int64_t)h * d, (size_t)d * sizeof *Q);
        qp = Q, ldq = d;
    } else {
        qp = a->q + (int64_t)r0 * a->ldq + (int64_t)h * d, ldq = a->ldq;
    }
    const int npd = (dv + FAST_NR - 1) / FAST_NR; /* O is nr x dv, rows dv apart */
    if (nkb == 1 && !bias && !a->kbias) {
        /* One key block: the plain softmax, normalised before P V, which is
         * what fast/ always computed (bit for bit: the parity fixtures'
         * bf16-stored memories sit on rounding midpoints, docs/parity.md) */
        samc__fast_sgemm_packed_ex(nr, Lk, d, qp, ldq, 1, kv, 0, (Lk + FAST_NR - 1) / FAST_NR, S, lds, 0, NULL, 0);
        for (int i = 0; i < nr; i++)
            samc__fast_softmax_scaled(S + i * lds, Lk, a->scale);
        const float *Vp = kv + samc__fast_pack_size(FA_NK, d);
        if (!a->orows) {
            samc__fast_sgemm_packed_ex(nr, dv, Lk, S, lds, 1, Vp, 0, npd, a->o + (int64_t)r0 * a->ldo + (int64_t)h * dv,
                                 a->ldo, 0, NULL, 0);
            return;
        }
        samc__fast_sgemm_packed_ex(nr, dv, Lk, S, lds, 1, Vp, 0, npd, O, dv, 0, NULL, 0);
        for (int i = 0; i < nr; i++)
            if (a->orows[r0 + i])
                memcpy(a->orows[r0 + i] + (int64_t)h * dv, O + (size_t)i * dv, (size_t)dv * sizeof *O);
        return;
    }
    for (int i = 0; i < nr; i++)
        m[i] = -INFINITY, l[i] = 0.0f;
    for (int jb = 0; jb < nkb; jb++) {
        const int j0 = jb * FA_NK, nk = Lk - j0 < FA_NK ? Lk - j0 : FA_NK;
        const float *Kp = kv + (size_t)jb * kv_block(d), *Vp = Kp + samc__fast_pack_size(FA_NK, d);
        samc__fast_sgemm_packed_ex(nr, nk, d, qp, ldq, 1, Kp, 0, (nk + FAST_NR - 1) / FAST_NR, S, lds, 0, NULL, 0);
        for (int i = 0; i < nr; i++) {
            const float *b1 = bias ? bias + (int64_t)(r0 + i) * a->ldbias + j0 : NULL;
            const float *b2 = a->kbias ? a->kbias + j0 : NULL;
            const float corr = isa->online_row(S + i * lds, nk, a->scale, b1, b2, m + i, l + i);
            if (jb > 0 && corr != 1.0f)
                isa->scale(O + (size_t)i * dv, O + (size_t)i * dv, dv, corr);
        }
        samc__fast_sgemm_packed_ex(nr, dv, nk, S, lds, 1, Vp, 0, npd, O, dv, jb > 0, NULL, 0);
    }
    for (int i = 0; i < nr; i++) {
        float *o = a->orows ? a->orows[r0 + i] : a->o + (int64_t)(r0 + i) * a->ldo;
        if (!o)
            continue;
        o += (int64_t)h * dv;
        isa->scale(o, O + (size_t)i * dv, dv, l[i] > 0.0f ? 1.0f / l[i] : 0.0f);
    }
}

void samc__fast_flash_attention_1t(const fast_attn *a, int heads, int64_t bias_hstride)
{
    if (a->Lq <= 0 || a->d <= 0)
        return;
    if (a->Lk <= 0) { /* no keys: zeros, as for fully masked rows */
        for (int i = 0; i < a->Lq; i++) {
            float *o = a->orows ? a->orows[i] : a->o + (int64_t)i * a->ldo;
            if (o)
                memset(o, 0, (size_t)heads * fast_attn_dv(a) * sizeof *o);
        }
        return;
    }
    const size_t kvn = samc__fast_flash_kv_size(a->Lk, a->d);
    float *kv = samc__fast_pack_buffer(2, kvn + task_scratch(a->d, a->Lk));
    if (!kv)
        return;
    float *ws = kv + kvn;
    for (int h = 0; h < heads; h++) {
        pack_kv(a, h, 0, nkblocks(a->Lk), kv);
        const float *bias = a->bias ? a->bias + (int64_t)h * bias_hstride : NULL;
        for (int r0 = 0; r0 < a->Lq; r0 += FA_MQ)
            flash_task(a, h, r0, a->Lq - r0 < FA_MQ ? a->Lq - r0 : FA_MQ, bias, kv, ws);
    }
}

void samc__fast_flash_attention(int nt, const fast_attn *a, int heads, int64_t bias_hstride, float *kv)
{
    if (a->Lq <= 0 || a->d <= 0)
        return;
    if (a->Lk <= 0 || nt <= 1) {
        samc__fast_flash_attention_1t(a, heads, bias_hstride);
        return;
    }
    const int nkb = nkblocks(a->Lk), nqb = (a->Lq + FA_MQ - 1) / FA_MQ;
    const size_t kvn = samc__fast_flash_kv_size(a->Lk, a->d);
    const int tasks = heads * nqb;
    /* no more threads than tasks, nor than ~4 MFLOP each */
    const double flops = 4.0 * a->Lq * (double)a->Lk * a->d * heads;
    int n = nt < tasks ? nt : tasks;
    while (n > 1 && flops / n < 4e6)
        n--;
#pragma omp parallel num_threads(n) if (n > 1)
    {
#pragma omp for schedule(dynamic, 1)
        for (int t = 0; t < heads * nkb; t++)
            pack_kv(a, t / nkb, t % nkb, t % nkb + 1, kv + (size_t)(t / nkb) * kvn);
        float *ws = samc__fast_pack_buffer(2, task_scratch(a->d, a->Lk));
#pragma omp for schedule(dynamic, 1)
        for (int t = 0; t < tasks; t++) {
            const int h = t / nqb, r0 = (t % nqb) * FA_MQ;
            if (ws)
                flash_task(a, h, r0, a->Lq - r0 < FA_MQ ? a->Lq - r0 : FA_MQ,
                           a->bias ? a->bias + (int64_t)h * bias_hstride : NULL, kv + (size_t)h * kvn, ws);
        }
    }
}

/* ---- bf16: Q, K, V and P rounded to bfloat16, fp32 scores, softmax and sums ---- */

/* floats (64-byte multiples) of one key block's bf16 K^T and V */
static size_t kv_block_bf16(int d)
{
    const size_t e = samc__fast_bf16_pack_rows_size(FA_NK, d) + samc__fast_bf16_pack_rows_size(d, FA_NK);
    return (e / 2 + 15) / 16 * 16;
}

size_t samc__fast_flash_kv_size_bf16(int Lk, int d) { return (size_t)nkblocks(Lk) * kv_block_bf16(d); }

static void pack_kv_bf16(const fast_attn *a, int h, int jb0, int jb1, float *kv)
{
    const int d = a->d, dv = fast_attn_dv(a);
    const float *rp[FA_NK];
    for (int jb = jb0; jb < jb1; jb++) {
        const int j0 = jb * FA_NK, nk = a->Lk - j0 < FA_NK ? a->Lk - j0 : FA_NK;
        uint16_t *Kb = (uint16_t *)(kv + (size_t)jb * kv_block_bf16(d));
        uint16_t *Vb = Kb + samc__fast_bf16_pack_rows_size(FA_NK, d);
        for (int j = 0; j < nk; j++)
            rp[j] = row_of(a->k, a->ldk, a->krows, j0 + j, (int64_t)h * d);
        samc__fast_bf16_pack_rows(nk, d, rp, 1, Kb);
        for (int j = 0; j < nk; j++)
            rp[j] = row_of(a->v, a->ldv, a->vrows, j0 + j, (int64_t)h * dv);
        samc__fast_bf16_pack_rows(dv, nk, rp, 0, Vb);
    }
}

static size_t task_scratch_bf16(int d, int Lk)
{
    const int nk = Lk < FA_NK ? Lk : FA_NK;
    return (size_t)FA_MQ * ((size_t)FAST_BF16_LDA + (size_t)d + (size_t)fast_ld(nk) + 2) + 64;
}

static void flash_task_bf16(const fast_attn *a, int h, int r0, int nr, const float *bias, const float *kv, float *ws)
{
    const fast_isa *isa = samc__fast_isa();
    const int d = a->d, dv = fast_attn_dv(a), Lk = a->Lk, nkb = nkblocks(Lk);
    const int64_t lds = fast_ld(Lk < FA_NK ? Lk : FA_NK);
    /* bf16 rows FAST_BF16_LDA apart: Q (FA_MQ rows), then P (FA_MQ rows) */
    uint16_t *Qb = (uint16_t *)ws, *P = Qb + (size_t)FA_MQ * FAST_BF16_LDA;
    float *S = ws + (size_t)FA_MQ * FAST_BF16_LDA, *O = S + (size_t)FA_MQ * lds;
    float *m = O + (size_t)FA_MQ * d, *l = m + FA_MQ;
    for (int i = 0; i < nr; i++) {
        const float *q = a->qrows ? a->qrows[r0 + i] + (int64_t)h * d : a->q + (int64_t)(r0 + i) * a->ldq + (int64_t)h * d;
        samc__fast_f32_to_bf16_row(q, Qb + (size_t)i * FAST_BF16_LDA, d);
        if (d & 1)
            Qb[(size_t)i * FAST_BF16_LDA + d] = 0;
    }
    for (int i = 0; i < nr; i++)
        m[i] = -INFINITY, l[i] = 0.0f;
    for (int jb = 0; jb < nkb; jb++) {
        const int j0 = jb * FA_NK, nk = Lk - j0 < FA_NK ? Lk - j0 : FA_NK;
        const uint16_t *Kb = (const uint16_t *)(kv + (size_t)jb * kv_block_bf16(d));
        const uint16_t *Vb = Kb + samc__fast_bf16_pack_rows_size(FA_NK, d);
        samc__fast_bf16_gemm_pre(nr, nk, d, Qb, Kb, S, lds, 0);
        for (int i = 0; i < nr; i++) {
            const float *b1 = bias ? bias + (int64_t)(r0 + i) * a->ldbias + j0 : NULL;
            const float *b2 = a->kbias ? a->kbias + j0 : NULL;
            const float corr = isa->online_row(S + i * lds, nk, a->scale, b1, b2, m + i, l + i);
            if (jb > 0 && corr != 1.0f)
                isa->scale(O + (size_t)i * dv, O + (size_t)i * dv, dv, corr);
        }
        /* P to bf16, fp32 sums of its products with V */
        for (int i = 0; i < nr; i++) {
            samc__fast_f32_to_bf16_row(S + i * lds, P + (size_t)i * FAST_BF16_LDA, nk);
            if (nk & 1)
                P[(size_t)i * FAST_BF16_LDA + nk] = 0;
        }
        samc__fast_bf16_gemm_pre(nr, dv, nk, P, Vb, O, dv, jb > 0);
    }
    for (int i = 0; i < nr; i++) {
        float *o = a->orows ? a->orows[r0 + i] : a->o + (int64_t)(r0 + i) * a->ldo;
        if (!o)
            continue;
        o += (int64_t)h * dv;
        isa->scale(o, O + (size_t)i * dv, dv, l[i] > 0.0f ? 1.0f / l[i] : 0.0f);
    }
}

void samc__fast_flash_attention_bf16_1t(const fast_attn *a, int heads, int64_t bias_hstride)
{
    if (a->d > FAST_BF16_LDA - 32) {
        samc__fast_flash_attention_1t(a, heads, bias_hstride);
        return;
    }
    if (a->Lq <= 0 || a->d <= 0 || a->Lk <= 0) {
        samc__fast_flash_attention_1t(a, heads, bias_hstride);
        return;
    }
    const size_t kvn = samc__fast_flash_kv_size_bf16(a->Lk, a->d);
    float *kv = samc__fast_pack_buffer(2, kvn + task_scratch_bf16(a->d, a->Lk));
    if (!kv)
        return;
    float *ws = kv + kvn;
    for (int h = 0; h < heads; h++) {
        pack_kv_bf16(a, h, 0, nkblocks(a->Lk), kv);
        const float *bias = a->bias ? a->bias + (int64_t)h * bias_hstride : NULL;
        for (int r0 = 0; r0 < a->Lq; r0 += FA_MQ)
            flash_task_bf16(a, h, r0, a->Lq - r0 < FA_MQ ? a->Lq - r0 : FA_MQ, bias, kv, ws);
    }
}

void samc__fast_flash_attention_bf16(int nt, const fast_attn *a, int heads, int64_t bias_hstride, float *kv)
{
    if (a->Lq <= 0 || a->d <= 0 || a->Lk <= 0 || nt <= 1 || a->d > FAST_BF16_LDA - 32) {
        samc__fast_flash_attention_bf16_1t(a, heads, bias_hstride);
        return;
    }
    const int nkb = nkblocks(a->Lk), nqb = (a->Lq + FA_MQ - 1) / FA_MQ;
    const size_t kvn = samc__fast_flash_kv_size_bf16(a->Lk, a->d);
    const int tasks = heads * nqb;
    const double flops = 4.0 * a->Lq * (double)a->Lk * a->d * heads;
    int n = nt < tasks ? nt : tasks;
    while (n > 1 && flops / n < 4e6)
        n--;
#pragma omp parallel num_threads(n) if (n > 1)
    {
#pragma omp for schedule(dynamic, 1)
        for (int t = 0; t < heads * nkb; t++)
            pack_kv_bf16(a, t / nkb, t % nkb, t % nkb + 1, kv + (size_t)(t / nkb) * kvn);
        float *ws = samc__fast_pack_buffer(2, task_scratch_bf16(a->d, a->Lk));
#pragma omp for schedule(dynamic, 1)
        for (int t = 0; t < tasks; t++) {
            const int h = t / nqb, r0 = (t % nqb) * FA_MQ;
            if (ws)
                flash_task_bf16(a, h, r0, a->Lq - r0 < FA_MQ ? a->Lq - r0 : FA_MQ,
                                a->bias ? a->bias + (int64_t)h * bias_hstride : NULL, kv + (size_t)h * kvn, ws);
        }
    }
}

/* ---- the earlier entry points, on the fused kernel ------------------------------ */

void samc__fast_attention_rows(const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v,
                         int64_t ldv, int nr, int Lk, int d, float scale, float *out, int64_t ldo,
                         float *s)
{
    (void)s;
    const fast_attn a = {.Lq = nr, .Lk = Lk, .d = d, .scale = scale, .q = q, .ldq = ldq, .k = k, .ldk = ldk,
                         .v = v, .ldv = ldv, .o = out, .ldo = ldo};
    samc__fast_flash_attention_1t(&a, 1, 0);
}

size_t samc__fast_attention_mh_scratch(int nt, int Lk, int heads, int d)
{
    (void)nt;
    const size_t f = samc__fast_flash_kv_size(Lk, d), b = samc__fast_flash_kv_size_bf16(Lk, d);
    return (size_t)heads * (f > b ? f : b);
}

void samc__fast_attention_mh(int nt, const float *q, int64_t ldq, const float *k, int64_t ldk,
                       const float *v, int64_t ldv, int Lq, int Lk, int heads, int d, float scale,
                       float *out, int64_t ldo, float *s)
{
    const fast_attn a = {.Lq = Lq, .Lk = Lk, .d = d, .scale = scale, .q = q, .ldq = ldq, .k = k, .ldk = ldk,
                         .v = v, .ldv = ldv, .o = out, .ldo = ldo};
    samc__fast_flash_attention(nt, &a, heads, 0, s);
}

void samc__fast_attention_mh_x(int nt, int bf16, const float *q, int64_t ldq, const float *k, int64_t ldk,
                               const float *v, int64_t ldv, int Lq, int Lk, int heads, int d, float scale, float *out,
                               int64_t ldo, float *s)
{
    const fast_attn a = {.Lq = Lq, .Lk = Lk, .d = d, .scale = scale, .q = q, .ldq = ldq, .k = k, .ldk = ldk,
                         .v = v, .ldv = ldv, .o = out, .ldo = ldo};
    if (bf16)
        samc__fast_flash_attention_bf16(nt, &a, heads, 0, s);
    else
        samc__fast_flash_attention(nt, &a, heads, 0, s);
}
