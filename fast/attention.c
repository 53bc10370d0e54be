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

void fast_attention_mh(int nt, const float *q, int64_t ldq, const float *k, int64_t ldk,
                       const float *v, int64_t ldv, int Lq, int Lk, int heads, int d, float scale,
                       float *out, int64_t ldo, float *s)
{
    const int nblk = (Lq + FAST_ATT_BLOCK - 1) / FAST_ATT_BLOCK;
    const int tasks = heads * nblk;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (tasks > 1)
    for (int t = 0; t < tasks; t++) {
        const int h = t / nblk, r0 = (t % nblk) * FAST_ATT_BLOCK;
        const int nr = Lq - r0 < FAST_ATT_BLOCK ? Lq - r0 : FAST_ATT_BLOCK;
        float *st = s + (int64_t)omp_get_thread_num() * FAST_ATT_BLOCK * fast_ld(Lk);
        const int64_t c = (int64_t)h * d;
        fast_attention_rows(q + r0 * ldq + c, ldq, k + c, ldk, v + c, ldv, nr, Lk, d, scale,
                            out + r0 * ldo + c, ldo, st);
    }
}
