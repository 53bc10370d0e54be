/* sgemm.c - samc's own single-threaded sgemm for the shapes of SAM 2:
 * C (M x N) [+]= A (M x K) B (K x N), AVX-512.
 *
 * Why not OpenBLAS everywhere: its kernels are picked at run time from
 * OPENBLAS_CORETYPE, which these machines set to Haswell (AVX2, half the
 * FMA width), and even with its AVX-512 kernels it reaches only ~60% of
 * peak on Hiera's skinny shapes (K = 96..768, N = 3K), where packing the
 * big activation matrix costs as much as the product (docs/fast.md has the
 * profile). Here A is never packed: a 12-row block of A is broadcast
 * straight from its rows (any strides, so A^T works too) while it sits in
 * L1, and only B (the weights, a K or V block: small) is packed into
 * 32-column panels. Micro-kernel: 12 x 32, 24 zmm accumulators, two
 * 512-bit FMAs per broadcast.
 *
 * Without AVX-512 the same entry point calls cblas_sgemm. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "fast.h"
#include "simd.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#define MR 12
#define NR 32
#define KC 384
#define NC_BYTES (512 * 1024)

/* Per-thread packing buffers, grown on first use and then reused for the
 * life of the thread (OpenMP's workers live as long as the process):
 * [0] for fast_sgemm's B, [1] for the weight fast_linear packs for its
 * worker threads. */
static _Thread_local float *tls_pack[2];
static _Thread_local size_t tls_pack_n[2];

float *fast_pack_buffer(int which, size_t n)
{
    if (n > tls_pack_n[which]) {
        free(tls_pack[which]);
        tls_pack[which] = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
        tls_pack_n[which] = tls_pack[which] ? n : 0;
    }
    return tls_pack[which];
}

size_t fast_pack_size(int N, int K) { return (size_t)((N + NR - 1) / NR) * NR * (size_t)(K > 0 ? K : 1); }

/* Bp[p][k][j] = B(k0 + k, p*NR + j), zero past N. */
static void pack_b(int N, int kc, int k0, const float *B, int64_t ldb, int transb, float *Bp)
{
    const int np = (N + NR - 1) / NR;
    for (int p = 0; p < np; p++) {
        float *dst = Bp + (int64_t)p * kc * NR;
        const int n0 = p * NR, nv = N - n0 < NR ? N - n0 : NR;
        if (!transb) { /* B (K x N) row-major: rows of the panel are contiguous */
            for (int k = 0; k < kc; k++) {
                const float *src = B + (int64_t)(k0 + k) * ldb + n0;
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
                        r[j] = n < nv ? _mm512_loadu_ps(B + (int64_t)(n0 + n) * ldb + k0 + k) : _mm512_setzero_ps();
                    }
                    vtranspose16(r);
                    for (int t = 0; t < 16; t++)
                        _mm512_storeu_ps(dst + (int64_t)(k + t) * NR + h * 16, r[t]);
                }
            if (k == kc)
                continue;
            for (int j = 0; j < NR; j++) {
                const float *src = B + (int64_t)(n0 + j) * ldb + k0;
                for (int kk = k; kk < kc; kk++)
                    dst[(int64_t)kk * NR + j] = j < nv ? src[kk] : 0.0f;
            }
        }
    }
}

/* C[0..mr, 0..nv) (+)= A[0..mr, 0..kc) Bp. mr is a compile-time constant
 * at every call (the switch below), so c0/c1 live in registers. */
static inline __attribute__((always_inline)) void ukernel(const int mr, int kc, const float *A, int64_t rsa,
                                                          int64_t csa, const float *Bp, float *C, int64_t ldc,
                                                          int nv, int load_c)
{
    __m512 c0[MR], c1[MR];
    const __mmask16 m0 = nv >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nv) - 1);
    const __mmask16 m1 = nv >= 32 ? (__mmask16)0xFFFF : nv > 16 ? (__mmask16)((1u << (nv - 16)) - 1) : 0;
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        if (load_c) {
            c0[i] = _mm512_maskz_loadu_ps(m0, C + i * ldc);
            c1[i] = _mm512_maskz_loadu_ps(m1, C + i * ldc + 16);
        } else {
            c0[i] = _mm512_setzero_ps();
            c1[i] = _mm512_setzero_ps();
        }
    }
    for (int k = 0; k < kc; k++) {
        const __m512 b0 = _mm512_loadu_ps(Bp + (int64_t)k * NR), b1 = _mm512_loadu_ps(Bp + (int64_t)k * NR + 16);
        const float *a = A + k * csa;
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            const __m512 av = _mm512_set1_ps(a[i * rsa]);
            c0[i] = _mm512_fmadd_ps(av, b0, c0[i]);
            c1[i] = _mm512_fmadd_ps(av, b1, c1[i]);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        _mm512_mask_storeu_ps(C + i * ldc, m0, c0[i]);
        _mm512_mask_storeu_ps(C + i * ldc + 16, m1, c1[i]);
    }
}

static void ukernel_mr(int mr, int kc, const float *A, int64_t rsa, int64_t csa, const float *Bp, float *C,
                       int64_t ldc, int nv, int load_c)
{
    switch (mr) {
#define CASE(n) \
    case n: ukernel(n, kc, A, rsa, csa, Bp, C, ldc, nv, load_c); break;
        CASE(12) CASE(11) CASE(10) CASE(9) CASE(8) CASE(7) CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
#undef CASE
    default: break;
    }
}

/* B packed for every K block: block k0 at Bp + k0 * Npad. */
void fast_pack_b(int N, int K, const float *B, int64_t ldb, int transb, float *Bp)
{
    const int64_t npad = (int64_t)((N + NR - 1) / NR) * NR;
    for (int k0 = 0; k0 < K; k0 += KC)
        pack_b(N, K - k0 < KC ? K - k0 : KC, k0, B, ldb, transb, Bp + k0 * npad);
}

void fast_sgemm_packed(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bpk, float *C,
                       int64_t ldc, int accumulate)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        if (!accumulate)
            for (int i = 0; i < M; i++)
                memset(C + (int64_t)i * ldc, 0, (size_t)N * sizeof *C);
        return;
    }
    const int np = (N + NR - 1) / NR;
    for (int k0 = 0; k0 < K; k0 += KC) {
        const int kc = K - k0 < KC ? K - k0 : KC;
        const int load_c = accumulate || k0 > 0;
        const float *Bp = Bpk + (int64_t)k0 * np * NR;
        int ncp = (int)(NC_BYTES / ((size_t)kc * NR * sizeof(float))); /* panels per L2-sized chunk */
        ncp = ncp < 1 ? 1 : ncp;
        for (int p0 = 0; p0 < np; p0 += ncp) {
            const int p1 = p0 + ncp < np ? p0 + ncp : np;
            for (int m0 = 0; m0 < M; m0 += MR) {
                const int mr = M - m0 < MR ? M - m0 : MR;
                const float *Am = A + (int64_t)m0 * rsa + (int64_t)k0 * csa;
                for (int p = p0; p < p1; p++) {
                    const int n0 = p * NR, nv = N - n0 < NR ? N - n0 : NR;
                    ukernel_mr(mr, kc, Am, rsa, csa, Bp + (int64_t)p * kc * NR, C + (int64_t)m0 * ldc + n0, ldc,
                               nv, load_c);
                }
            }
        }
    }
}

void fast_sgemm(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *B, int64_t ldb,
                int transb, float *C, int64_t ldc, int accumulate)
{
    if (M <= 0 || N <= 0)
        return;
    float *Bp = K > 0 ? fast_pack_buffer(0, fast_pack_size(N, K)) : NULL;
    if (K > 0 && !Bp) { /* out of memory: let OpenBLAS do it */
        cblas_sgemm(CblasRowMajor, csa == 1 ? CblasNoTrans : CblasTrans, transb ? CblasTrans : CblasNoTrans, M, N,
                    K, 1.0f, A, (int)(csa == 1 ? rsa : csa), B, (int)ldb, accumulate ? 1.0f : 0.0f, C, (int)ldc);
        return;
    }
    if (K > 0)
        fast_pack_b(N, K, B, ldb, transb, Bp);
    fast_sgemm_packed(M, N, K, A, rsa, csa, Bp, C, ldc, accumulate);
}

#else /* no AVX-512: OpenBLAS; "packed" B is B as a (K x N) row-major copy */

static _Thread_local float *tls_pack[2];
static _Thread_local size_t tls_pack_n[2];

float *fast_pack_buffer(int which, size_t n)
{
    if (n > tls_pack_n[which]) {
        free(tls_pack[which]);
        tls_pack[which] = malloc(n * sizeof(float));
        tls_pack_n[which] = tls_pack[which] ? n : 0;
    }
    return tls_pack[which];
}

size_t fast_pack_size(int N, int K) { return (size_t)N * (size_t)(K > 0 ? K : 1); }

void fast_pack_b(int N, int K, const float *B, int64_t ldb, int transb, float *Bp)
{
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++)
            Bp[(int64_t)k * N + n] = transb ? B[(int64_t)n * ldb + k] : B[(int64_t)k * ldb + n];
}

void fast_sgemm_packed(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bp, float *C,
                       int64_t ldc, int accumulate)
{
    if (M <= 0 || N <= 0)
        return;
    cblas_sgemm(CblasRowMajor, csa == 1 ? CblasNoTrans : CblasTrans, CblasNoTrans, M, N, K, 1.0f, A,
                (int)(csa == 1 ? rsa : csa), Bp, N, accumulate ? 1.0f : 0.0f, C, (int)ldc);
}

void fast_sgemm(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *B, int64_t ldb,
                int transb, float *C, int64_t ldc, int accumulate)
{
    if (M <= 0 || N <= 0)
        return;
    cblas_sgemm(CblasRowMajor, csa == 1 ? CblasNoTrans : CblasTrans, transb ? CblasTrans : CblasNoTrans, M, N, K,
                1.0f, A, (int)(csa == 1 ? rsa : csa), B, (int)ldb, accumulate ? 1.0f : 0.0f, C, (int)ldc);
}

#endif
