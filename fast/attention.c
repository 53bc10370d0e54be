/* attention.c - softmax(scale q k^T) v a block of query rows at a time.
 *
 * The score block S (rows x Lk) is the only quadratic buffer: at most
 * FAST_ATT_BLOCK x Lk floats per thread (1 MiB for the 4096-token global
 * blocks), produced by one sgemm, turned into probabilities in place by the
 * fused scale/max/exp/sum/normalise pass, and consumed by the second sgemm
 * while it is still in cache. The full Lq x Lk matrix is never formed. */
#include <omp.h>

#include "fast.h"

void fast_attention_rows(const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v,
                         int64_t ldv, int nr, int Lk, int d, float scale, float *out, int64_t ldo,
                         float *s)
{
    const int64_t lds = fast_ld(Lk);
    fast_sgemm(nr, Lk, d, q, ldq, 1, k, ldk, 1, s, lds, 0);
    for (int i = 0; i < nr; i++)
        fast_softmax_scaled(s + i * lds, Lk, scale);
    fast_sgemm(nr, d, Lk, s, lds, 1, v, ldv, 0, out, ldo, 0);
}

size_t fast_attention_mh_scratch(int nt, int Lk, int heads, int d)
{
    return (size_t)nt * FAST_ATT_BLOCK * fast_ld(Lk) + (size_t)heads * (fast_pack_size(Lk, d) + fast_pack_size(d, Lk));
}

void fast_attention_mh(int nt, const float *q, int64_t ldq, const float *k, int64_t ldk,
                       const float *v, int64_t ldv, int Lq, int Lk, int heads, int d, float scale,
                       float *out, int64_t ldo, float *s)
{
    const int nblk = (Lq + FAST_ATT_BLOCK - 1) / FAST_ATT_BLOCK;
    const int tasks = heads * nblk;
    const int64_t lds = fast_ld(Lk);
    /* K^T and V of every head packed once, shared by all its row blocks */
    const size_t pk = fast_pack_size(Lk, d), pv = fast_pack_size(d, Lk);
    float *packed = s + (size_t)nt * FAST_ATT_BLOCK * lds;
#pragma omp parallel num_threads(nt) if (tasks > 1)
    {
#pragma omp for schedule(static)
        for (int t = 0; t < 2 * heads; t++) {
            const int h = t / 2;
            float *dst = packed + (size_t)h * (pk + pv);
            if (t % 2 == 0)
                fast_pack_b(Lk, d, k + (int64_t)h * d, ldk, 1, dst);
            else
                fast_pack_b(d, Lk, v + (int64_t)h * d, ldv, 0, dst + pk);
        }
#pragma omp for schedule(dynamic, 1)
        for (int t = 0; t < tasks; t++) {
            const int h = t / nblk, r0 = (t % nblk) * FAST_ATT_BLOCK;
            const int nr = Lq - r0 < FAST_ATT_BLOCK ? Lq - r0 : FAST_ATT_BLOCK;
            float *st = s + (int64_t)omp_get_thread_num() * FAST_ATT_BLOCK * lds;
            const float *Kp = packed + (size_t)h * (pk + pv), *Vp = Kp + pk;
            fast_sgemm_packed(nr, Lk, d, q + r0 * ldq + (int64_t)h * d, ldq, 1, Kp, st, lds, 0);
            for (int i = 0; i < nr; i++)
                fast_softmax_scaled(st + i * lds, Lk, scale);
            fast_sgemm_packed(nr, d, Lk, st, lds, 1, Vp, out + r0 * ldo + (int64_t)h * d, ldo, 0);
        }
    }
}
