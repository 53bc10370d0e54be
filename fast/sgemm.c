/* SPDX-License-Identifier: Apache-2.0 */
/* sgemm.c - samc's own single-threaded sgemm for the shapes of SAM 2 and
 * SAM 3: C (M x N) [+]= A (M x K) B (K x N), the driver around the kernels
 * of the level the CPU runs (fast/isa.h: fast/isa/sgemm_avx512.c, or
 * sgemm_vec.c for AVX2, SSE4.2, NEON). It owns what every level shares:
 * the per-thread packing buffers, the K blocking, the packed layout of B
 * (FAST_NR-column panels: block k0 at Bp + k0 * Npad, in it panel p holds
 * kc rows of FAST_NR floats) and the entry points of fast.h. A is never
 * packed (the kernels broadcast it from its rows, any strides); why this
 * beats OpenBLAS on these skinny shapes is in sgemm_avx512.c. */
#include <stdlib.h>
#include <string.h>

#include "fast.h"
#include "isa.h"

#define NR FAST_NR

/* Every live per-thread packing buffer, also in one global table: the
 * buffers of OpenMP's worker threads live as long as the process, and a
 * leak checker that cannot see the workers' thread-local storage (LSan)
 * then still finds them reachable. */
static void *pack_live[1024];

static void pack_registry(void *old, void *now)
{
#pragma omp critical(samc_fast_pack_registry)
    {
        int put = now == NULL;
        for (int i = 0; i < 1024; i++) {
            if (old && pack_live[i] == old) {
                pack_live[i] = NULL;
                old = NULL;
            }
            if (!put && !pack_live[i]) {
                pack_live[i] = now;
                put = 1;
            }
        }
    }
}

/* K blocks of equal size, at most KC: the same cut for packing and use. */
int samc__fast_kc(int K)
{
    if (K <= FAST_KC)
        return K > 0 ? K : 1;
    const int nb = (K + FAST_KC - 1) / FAST_KC;
    return (K + nb - 1) / nb;
}

/* Per-thread packing buffers, grown on first use and then reused for the
 * life of the thread (OpenMP's workers live as long as the process):
 * [0] for samc__fast_sgemm's B, [1] for the weight samc__fast_linear packs for its
 * worker threads, [2] free for a layer or kernel (attention). */
static _Thread_local float *tls_pack[FAST_PACK_BUFFERS];
static _Thread_local size_t tls_pack_n[FAST_PACK_BUFFERS];

float *samc__fast_pack_buffer(int which, size_t n)
{
    if (n > tls_pack_n[which]) {
        float *old = tls_pack[which];
        tls_pack[which] = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
        tls_pack_n[which] = tls_pack[which] ? n : 0;
        pack_registry(old, tls_pack[which]);
        free(old);
    }
    return tls_pack[which];
}

size_t samc__fast_pack_size(int N, int K) { return (size_t)((N + NR - 1) / NR) * NR * (size_t)(K > 0 ? K : 1); }

/* Panels [pa, pb) of every K block (rows: B's stored rows, or NULL). */
static void pack_blocks(int N, int K, const float *B, int64_t ldb, const float *const *rows, int transb, float *Bp,
                        int pa, int pb)
{
    const fast_isa *isa = samc__fast_isa();
    const int64_t npad = (int64_t)((N + NR - 1) / NR) * NR;
    const int KC = samc__fast_kc(K);
    pb = pb < npad / NR ? pb : (int)(npad / NR);
    for (int k0 = 0; k0 < K; k0 += KC)
        isa->pack(N, K - k0 < KC ? K - k0 : KC, k0, B, ldb, rows, transb, Bp + k0 * npad, pa, pb);
}

void samc__fast_pack_b(int N, int K, const float *B, int64_t ldb, int transb, float *Bp)
{
    pack_blocks(N, K, B, ldb, NULL, transb, Bp, 0, (N + NR - 1) / NR);
}

void samc__fast_pack_b_part(int N, int K, const float *B, int64_t ldb, int transb, float *Bp, int pa, int pb)
{
    pack_blocks(N, K, B, ldb, NULL, transb, Bp, pa, pb);
}

void samc__fast_pack_b_rows(int N, int K, const float *const *rows, int transb, float *Bp)
{
    pack_blocks(N, K, NULL, 0, rows, transb, Bp, 0, (N + NR - 1) / NR);
}

void samc__fast_sgemm_packed_res(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bpk, int pa,
                           int pb, const float *R, int64_t ldr, float *C, int64_t ldc, const float *bias, int act)
{
    const int np = (N + NR - 1) / NR;
    pb = pb < np ? pb : np;
    if (M <= 0 || N <= 0 || pa >= pb)
        return;
    if (K <= 0) { /* C = act((R or 0) + bias) */
        for (int i = 0; i < M; i++)
            for (int j = pa * NR; j < N && j < pb * NR; j++) {
                float v = (R ? R[(int64_t)i * ldr + j] : 0.0f) + (bias ? bias[j] : 0.0f);
                if (act == FAST_ACT_RELU)
                    v = v > 0.0f ? v : 0.0f;
                else if (act == FAST_ACT_GELU)
                    samc__fast_gelu(&v, 1);
                C[(int64_t)i * ldc + j] = v;
            }
        return;
    }
    samc__fast_isa()->gemm(M, N, K, A, rsa, csa, Bpk, pa, pb, R, ldr, C, ldc, bias, act);
}

void samc__fast_sgemm_packed_ex(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bpk,
                          int pa, int pb, float *C, int64_t ldc, int accumulate, const float *bias, int act)
{
    samc__fast_sgemm_packed_res(M, N, K, A, rsa, csa, Bpk, pa, pb, accumulate ? C : NULL, ldc, C, ldc, bias, act);
}

void samc__fast_sgemm_packed(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bpk, float *C,
                       int64_t ldc, int accumulate)
{
    samc__fast_sgemm_packed_ex(M, N, K, A, rsa, csa, Bpk, 0, (N + NR - 1) / NR, C, ldc, accumulate, NULL, 0);
}

void samc__fast_sgemm(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *B, int64_t ldb,
                int transb, float *C, int64_t ldc, int accumulate)
{
    if (M <= 0 || N <= 0)
        return;
    float *Bp = K > 0 ? samc__fast_pack_buffer(0, samc__fast_pack_size(N, K)) : NULL;
    if (K > 0 && !Bp) { /* out of memory for the packed copy: the plain loops, same k order */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float acc = accumulate ? C[(int64_t)i * ldc + j] : 0.0f;
                for (int k = 0; k < K; k++)
                    acc += A[(int64_t)i * rsa + (int64_t)k * csa] * (transb ? B[(int64_t)j * ldb + k] : B[(int64_t)k * ldb + j]);
                C[(int64_t)i * ldc + j] = acc;
            }
        return;
    }
    if (K > 0)
        samc__fast_pack_b(N, K, B, ldb, transb, Bp);
    samc__fast_sgemm_packed(M, N, K, A, rsa, csa, Bp, C, ldc, accumulate);
}
