/* SPDX-License-Identifier: Apache-2.0 */
/* sgemm_vec.c - the fp32 GEMM of every level below AVX-512 (v3: AVX2+FMA,
 * v2: SSE4.2, aarch64: NEON), on simd.h's vectors: C (M x N) = act(R + bias
 * + A (M x K) B (K x N)), B packed in FAST_NR-column panels exactly as
 * sgemm_avx512.c packs it (one layout for every level: weights packed at
 * load serve whichever runs).
 *
 * The same scheme as v4's kernel, narrower: A is never packed (an MR-row
 * block is broadcast from its rows while it sits in L1), a panel is taken
 * TW = NW vectors at a time, and each C element starts from R + bias and
 * takes its products in k order, one vmadd each, so the FMA levels (v3,
 * NEON) give v4's results bit for bit; v2 rounds each product and sum (no
 * FMA). Tiles: v3 6 x 16 (12 ymm accumulators of 16), v2 6 x 8 (12 of 16
 * xmm), NEON 6 x 16 (24 of 32 q registers). Column tails narrower than TW
 * go through a small tile on the stack. */
#include "fast/isa/isa_kernels.h"

#if !defined(__AVX512F__)
#include <string.h>

#if VL == 8
#define MR 6
#define NW 2
#elif defined(__aarch64__)
#define MR 6
#define NW 4
#else
#define MR 6
#define NW 2
#endif
#define TW (NW * VL)
#define NR FAST_NR
#define NC_BYTES (512 * 1024)

void ISA_FN(pack)(int N, int kc, int k0, const float *B, int64_t ldb, const float *const *rows, int transb, float *Bp,
                  int pa, int pb)
{
    for (int p = pa; p < pb; p++) {
        float *dst = Bp + (int64_t)p * kc * NR;
        const int n0 = p * NR, nv = N - n0 < NR ? N - n0 : NR;
        if (!transb) { /* K rows of N: each k-row of the panel is contiguous */
            for (int k = 0; k < kc; k++) {
                memcpy(dst + (int64_t)k * NR, BROW(k0 + k) + n0, (size_t)nv * sizeof *dst);
                memset(dst + (int64_t)k * NR + nv, 0, (size_t)(NR - nv) * sizeof *dst);
            }
            continue;
        }
        /* N rows of K: 4 columns at a time, read along their rows */
        int j = 0;
        for (; j + 4 <= nv; j += 4) {
            const float *s0 = BROW(n0 + j) + k0, *s1 = BROW(n0 + j + 1) + k0;
            const float *s2 = BROW(n0 + j + 2) + k0, *s3 = BROW(n0 + j + 3) + k0;
            for (int k = 0; k < kc; k++) {
                float *d = dst + (int64_t)k * NR + j;
                d[0] = s0[k], d[1] = s1[k], d[2] = s2[k], d[3] = s3[k];
            }
        }
        for (; j < nv; j++) {
            const float *s0 = BROW(n0 + j) + k0;
            for (int k = 0; k < kc; k++)
                dst[(int64_t)k * NR + j] = s0[k];
        }
        if (nv < NR)
            for (int k = 0; k < kc; k++)
                memset(dst + (int64_t)k * NR + nv, 0, (size_t)(NR - nv) * sizeof *dst);
    }
}

/* C[0..mr, 0..TW) = act(init + A[0..mr, 0..kc) Bp), mr a compile-time
 * constant at every call: the accumulators live in registers. */
static inline __attribute__((always_inline)) void ukernel(const int mr, int kc, const float *A, int64_t rsa,
                                                          int64_t csa, const float *Bp, float *C, int64_t ldc,
                                                          const epi *e)
{
    vf c[MR][NW];
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
        for (int j = 0; j < NW; j++)
            c[i][j] = e->res ? vload(e->res + i * e->ldr + j * VL) : vset1(0.0f);
    if (e->bias)
#pragma GCC unroll 4
        for (int j = 0; j < NW; j++) {
            const vf b = vload(e->bias + j * VL);
#pragma GCC unroll 8
            for (int i = 0; i < mr; i++)
                c[i][j] = vadd(c[i][j], b);
        }
    for (int k = 0; k < kc; k++) {
        vf b[NW];
#pragma GCC unroll 4
        for (int j = 0; j < NW; j++)
            b[j] = vload(Bp + (int64_t)k * NR + j * VL);
        const float *a = A + k * csa;
#pragma GCC unroll 8
        for (int i = 0; i < mr; i++) {
            const vf av = vset1(a[i * rsa]);
#pragma GCC unroll 4
            for (int j = 0; j < NW; j++)
                c[i][j] = vmadd(av, b[j], c[i][j]);
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
        for (int j = 0; j < NW; j++)
            vstore(C + i * ldc + j * VL, e->act ? isa_act(c[i][j], e->act) : c[i][j]);
}

static void uk_rows(int mr, int kc, const float *A, int64_t rsa, int64_t csa, const float *Bp, float *C, int64_t ldc,
                    const epi *e)
{
    switch (mr) {
#define CASE(n) \
    case n: ukernel(n, kc, A, rsa, csa, Bp, C, ldc, e); break;
        CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
#undef CASE
    default: break;
    }
}

/* A tile of nv < TW columns: computed whole on a copy, nv columns stored. */
static void uk_narrow(int mr, int nv, int kc, const float *A, int64_t rsa, int64_t csa, const float *Bp, float *C,
                      int64_t ldc, const epi *e)
{
    float t[MR * TW], b[TW];
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < TW; j++)
            t[i * TW + j] = j < nv && e->res ? e->res[i * e->ldr + j] : 0.0f;
    for (int j = 0; j < TW; j++)
        b[j] = j < nv && e->bias ? e->bias[j] : 0.0f;
    const epi et = {e->bias ? b : NULL, t, TW, e->act};
    uk_rows(mr, kc, A, rsa, csa, Bp, t, TW, &et);
    for (int i = 0; i < mr; i++)
        memcpy(C + i * ldc, t + i * TW, (size_t)nv * sizeof *C);
}

/* Loop order: K block, L2-sized chunk of B panels, MR-row block of A (in
 * L1 for the whole chunk), panel, TW-column tile. */
void ISA_FN(gemm)(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bpk, int pa, int pb,
                  const float *R, int64_t ldr, float *C, int64_t ldc, const float *bias, int act)
{
    const int np = (N + NR - 1) / NR;
    const int KC = samc__fast_kc(K);
    for (int k0 = 0; k0 < K; k0 += KC) {
        const int kc = K - k0 < KC ? K - k0 : KC, last = k0 + kc >= K;
        const float *rk = k0 == 0 ? R : C; /* the first K block starts from R (or 0), the others from C */
        const int64_t ldk = k0 == 0 ? ldr : ldc;
        const float *Bp = Bpk + (int64_t)k0 * np * NR;
        int ncp = (int)(NC_BYTES / ((size_t)kc * NR * sizeof(float)));
        ncp = ncp < 1 ? 1 : ncp;
        for (int p0 = pa; p0 < pb; p0 += ncp) {
            const int p1 = p0 + ncp < pb ? p0 + ncp : pb;
            for (int m0 = 0; m0 < M; m0 += MR) {
                const int mr = M - m0 < MR ? M - m0 : MR;
                const float *Am = A + (int64_t)m0 * rsa + (int64_t)k0 * csa;
                if (m0 + 2 * MR <= M && csa == 1) /* the next block's rows, while this one computes */
                    for (int i = 0; i < MR; i++)
                        for (int k = 0; k < kc; k += 16)
                            __builtin_prefetch(Am + (int64_t)(MR + i) * rsa + k, 0, 3);
                for (int p = p0; p < p1; p++)
                    for (int s = 0; s < NR / TW; s++) {
                        const int n0 = p * NR + s * TW;
                        if (n0 >= N)
                            break;
                        const int nv = N - n0 < TW ? N - n0 : TW;
                        const epi ep = {k0 == 0 && bias ? bias + n0 : NULL, rk ? rk + (int64_t)m0 * ldk + n0 : NULL,
                                        ldk, last ? act : 0};
                        const float *Bs = Bp + (int64_t)p * kc * NR + s * TW;
                        float *Ct = C + (int64_t)m0 * ldc + n0;
                        if (nv == TW && mr == MR)
                            ukernel(MR, kc, Am, rsa, csa, Bs, Ct, ldc, &ep);
                        else if (nv == TW)
                            uk_rows(mr, kc, Am, rsa, csa, Bs, Ct, ldc, &ep);
                        else
                            uk_narrow(mr, nv, kc, Am, rsa, csa, Bs, Ct, ldc, &ep);
                    }
            }
        }
    }
}

#endif
