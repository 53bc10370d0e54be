/* SPDX-License-Identifier: Apache-2.0 */
/* sgemm_avx512.c - the fp32 GEMM of level v4: C (M x N) = act(R + bias +
 * A (M x K) B (K x N)), B packed in FAST_NR-column panels (sgemm.c is the
 * driver: buffers, K blocks, the entry points).
 *
 * Why not OpenBLAS: its kernels are picked at run time from
 * OPENBLAS_CORETYPE, which these machines set to Haswell (AVX2, half the
 * FMA width), and even with its AVX-512 kernels it reaches only ~60% of
 * peak on Hiera's skinny shapes (K = 96..768, N = 3K), where packing the
 * big activation matrix costs as much as the product (docs/fast.md has the
 * profile). Here A is never packed: a 12-row block of A is broadcast
 * straight from its rows (any strides, so A^T works too) while it sits in
 * L1, and only B (the weights, a K or V block: small) is packed into
 * 32-column panels. Micro-kernel: 12 x 32, 24 zmm accumulators, two
 * 512-bit FMAs per broadcast; a 12 x 16 variant for column tails of up to
 * 16 (N = 144, 432, head widths 56 and 72), so a half-empty panel does not
 * cost a full one.
 *
 * What keeps it at the FMA peak (docs/fast.md, "Kernels"): in cache the
 * 12 x 32 loop runs at ~97% of the register-only FMA loop; streaming A from
 * memory cost 15-25% before the next row block's A was prefetched while the
 * current one computes (and the next C tile with prefetchw). K is cut into
 * blocks of equal size (at most KC), so no short last block runs the
 * micro-kernel's prologue and epilogue for little work.
 *
 * Compiled in every level's copy of fast/isa/, empty but in v4's. */
#include "fast/isa/isa_kernels.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#define MR 12
#define NR FAST_NR
#define NC_BYTES (512 * 1024)

/* Bp[p][k][j] = B(k0 + k, p*NR + j), zero past N. The rows of B as stored
 * (K rows of N, or N rows of K when transb) are B + r * ldb, or rows[r]
 * when rows is given (gathered windows). */
void ISA_FN(pack)(int N, int kc, int k0, const float *B, int64_t ldb, const float *const *rows, int transb, float *Bp,
                  int pa, int pb)
{
    for (int p = pa; p < pb; p++) {
        float *dst = Bp + (int64_t)p * kc * NR;
        const int n0 = p * NR, nv = N - n0 < NR ? N - n0 : NR;
        if (!transb) { /* B (K x N) row-major: rows of the panel are contiguous */
            for (int k = 0; k < kc; k++) {
                const float *src = BROW(k0 + k) + n0;
                float *d = dst + (int64_t)k * NR;
                if (nv == NR) {
                    _mm512_storeu_ps(d, _mm512_loadu_ps(src));
                    _mm512_storeu_ps(d + 16, _mm512_loadu_ps(src + 16));
                } else {
                    const __mmask16 m0 = nv >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nv) - 1);
                    const __mmask16 m1 = nv > 16 ? (__mmask16)((1u << (nv - 16)) - 1) : 0;
                    _mm512_storeu_ps(d, _mm512_maskz_loadu_ps(m0, src));
                    _mm512_storeu_ps(d + 16, _mm512_maskz_loadu_ps(m1, src + 16));
                }
            }
        } else { /* B given as (N x K) row-major: transpose 32 rows, 16x16 blocks */
            int k = 0;
            for (; k + 16 <= kc; k += 16)
                for (int h = 0; h < 2; h++) {
                    __m512 r[16];
                    for (int j = 0; j < 16; j++) {
                        const int n = h * 16 + j;
                        r[j] = n < nv ? _mm512_loadu_ps(BROW(n0 + n) + k0 + k) : _mm512_setzero_ps();
                    }
                    vtranspose16(r);
                    for (int t = 0; t < 16; t++)
                        _mm512_storeu_ps(dst + (int64_t)(k + t) * NR + h * 16, r[t]);
                }
            if (k == kc)
                continue;
            for (int j = 0; j < NR; j++) {
                const float *src = j < nv ? BROW(n0 + j) + k0 : NULL;
                for (int kk = k; kk < kc; kk++)
                    dst[(int64_t)kk * NR + j] = src ? src[kk] : 0.0f;
            }
        }
    }
}

/* C[0..mr, 0..nv) (+)= A[0..mr, 0..kc) Bp. mr, nw (zmm columns: 1 or 2) and
 * pfm (prefetch of the next A block: 0 none, 1 A row-major, 2 A
 * column-major) are compile-time constants at every call, so the
 * accumulators live in registers and the k loop carries no branch. */
static inline __attribute__((always_inline)) void ukernel(const int mr, const int nw, const int pfm, int kc,
                                                          const float *A, int64_t rsa, int64_t csa, const float *Bp,
                                                          float *C, int64_t ldc, int nv, const epi *e,
                                                          const float *pfa, const float *pfc)
{
    __m512 c0[MR], c1[MR];
    const __mmask16 m0 = nv >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nv) - 1);
    const __mmask16 m1 = nv >= 32 ? (__mmask16)0xFFFF : nv > 16 ? (__mmask16)((1u << (nv - 16)) - 1) : 0;
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        if (e->res) {
            c0[i] = _mm512_maskz_loadu_ps(m0, e->res + i * e->ldr);
            if (nw == 2)
                c1[i] = _mm512_maskz_loadu_ps(m1, e->res + i * e->ldr + 16);
        } else {
            c0[i] = _mm512_setzero_ps();
            if (nw == 2)
                c1[i] = _mm512_setzero_ps();
        }
    }
    if (e->bias) {
        const __m512 b0 = _mm512_maskz_loadu_ps(m0, e->bias);
        const __m512 b1 = nw == 2 ? _mm512_maskz_loadu_ps(m1, e->bias + 16) : b0;
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            c0[i] = _mm512_add_ps(c0[i], b0);
            if (nw == 2)
                c1[i] = _mm512_add_ps(c1[i], b1);
        }
    }
    if (pfc)
        for (int i = 0; i < MR; i++) {
            __builtin_prefetch(pfc + i * ldc, 1, 3);
            __builtin_prefetch(pfc + i * ldc + 16, 1, 3);
        }
    for (int k = 0; k < kc; k++) {
        const __m512 b0 = _mm512_loadu_ps(Bp + (int64_t)k * NR);
        const __m512 b1 = nw == 2 ? _mm512_loadu_ps(Bp + (int64_t)k * NR + 16) : b0;
        const float *a = A + k * csa;
        if (pfm == 1 && (k & 15) == 0) {
#pragma GCC unroll 12
            for (int i = 0; i < MR; i++)
                _mm_prefetch((const char *)(pfa + i * rsa + k), _MM_HINT_T0);
        } else if (pfm == 2) {
            _mm_prefetch((const char *)(pfa + k * csa), _MM_HINT_T0);
            _mm_prefetch((const char *)(pfa + k * csa + MR - 1), _MM_HINT_T0);
        }
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            const __m512 av = _mm512_set1_ps(a[i * rsa]);
            c0[i] = _mm512_fmadd_ps(av, b0, c0[i]);
            if (nw == 2)
                c1[i] = _mm512_fmadd_ps(av, b1, c1[i]);
        }
    }
    if (e->act) {
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            c0[i] = isa_act(c0[i], e->act);
            if (nw == 2)
                c1[i] = isa_act(c1[i], e->act);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        _mm512_mask_storeu_ps(C + i * ldc, m0, c0[i]);
        if (nw == 2)
            _mm512_mask_storeu_ps(C + i * ldc + 16, m1, c1[i]);
    }
}

/* The full-height kernels, with and without prefetching the next A block. */
static void uk12(int nw, int pfm, int kc, const float *A, int64_t rsa, int64_t csa, const float *Bp, float *C,
                 int64_t ldc, int nv, const epi *e, const float *pfa, const float *pfc)
{
#define UK(NW, PF)                                                                                                   \
    if (nw == NW && pfm == PF) {                                                                                      \
        ukernel(MR, NW, PF, kc, A, rsa, csa, Bp, C, ldc, nv, e, pfa, pfc);                                           \
        return;                                                                                                       \
    }
    UK(2, 0) UK(2, 1) UK(2, 2) UK(1, 0) UK(1, 1) UK(1, 2)
#undef UK
}

/* Row tails (mr < 12): no prefetching. */
static void uk_tail(int mr, int nw, int kc, const float *A, int64_t rsa, int64_t csa, const float *Bp, float *C,
                    int64_t ldc, int nv, const epi *e)
{
    if (nw == 2) {
        switch (mr) {
#define CASE(n) \
    case n: ukernel(n, 2, 0, kc, A, rsa, csa, Bp, C, ldc, nv, e, NULL, NULL); break;
            CASE(11) CASE(10) CASE(9) CASE(8) CASE(7) CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
#undef CASE
        default: break;
        }
    } else {
        switch (mr) {
#define CASE(n) \
    case n: ukernel(n, 1, 0, kc, A, rsa, csa, Bp, C, ldc, nv, e, NULL, NULL); break;
            CASE(11) CASE(10) CASE(9) CASE(8) CASE(7) CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
#undef CASE
        default: break;
        }
    }
}

/* The blocked product on rows [0, M) and panels [pa, pb) (pa < pb <= the
 * panels of N) of a packed B, K > 0 (sgemm.c checks and cuts).
 * Loop order: K block, L2-sized chunk of B panels, 12-row block of A (in L1
 * for the whole chunk), panel. */
void ISA_FN(gemm)(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bpk, int pa, int pb,
                  const float *R, int64_t ldr, float *C, int64_t ldc, const float *bias, int act)
{
    const int np = (N + NR - 1) / NR;
    const int KC = samc__fast_kc(K);
    const int pfm = csa == 1 ? 1 : rsa == 1 ? 2 : 0;
    for (int k0 = 0; k0 < K; k0 += KC) {
        const int kc = K - k0 < KC ? K - k0 : KC, last = k0 + kc >= K;
        /* the first K block starts from R (or 0), the others from C */
        const float *rk = k0 == 0 ? R : C;
        const int64_t ldk = k0 == 0 ? ldr : ldc;
        const float *Bp = Bpk + (int64_t)k0 * np * NR;
        int ncp = (int)(NC_BYTES / ((size_t)kc * NR * sizeof(float))); /* panels per L2-sized chunk */
        ncp = ncp < 1 ? 1 : ncp;
        for (int p0 = pa; p0 < pb; p0 += ncp) {
            const int p1 = p0 + ncp < pb ? p0 + ncp : pb;
            for (int m0 = 0; m0 < M; m0 += MR) {
                const int mr = M - m0 < MR ? M - m0 : MR;
                const float *Am = A + (int64_t)m0 * rsa + (int64_t)k0 * csa;
                const int has_next = m0 + 2 * MR <= M; /* a full next block to prefetch */
                for (int p = p0; p < p1; p++) {
                    const int n0 = p * NR, nv = N - n0 < NR ? N - n0 : NR, nw = nv > 16 ? 2 : 1;
                    float *Ct = C + (int64_t)m0 * ldc + n0;
                    const epi ep = {k0 == 0 && bias ? bias + n0 : NULL, rk ? rk + (int64_t)m0 * ldk + n0 : NULL, ldk,
                                    last ? act : 0};
                    if (mr == MR) {
                        const int pf = p == p0 && has_next ? pfm : 0;
                        const float *pfc = p + 1 < p1 ? Ct + NR : has_next ? C + (int64_t)(m0 + MR) * ldc + p0 * NR : NULL;
                        uk12(nw, pf, kc, Am, rsa, csa, Bp + (int64_t)p * kc * NR, Ct, ldc, nv, &ep,
                             Am + (int64_t)MR * rsa, pfc);
                    } else {
                        uk_tail(mr, nw, kc, Am, rsa, csa, Bp + (int64_t)p * kc * NR, Ct, ldc, nv, &ep);
                    }
                }
            }
        }
    }
}

#endif
