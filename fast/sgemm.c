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
 * Without AVX-512 the same entry points call cblas_sgemm. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "fast.h"
#include "simd.h"

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

#if defined(__AVX512F__)
#include <immintrin.h>

#define MR 12
#define NR 32
#define NC_BYTES (512 * 1024)

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

/* Bp[p][k][j] = B(k0 + k, p*NR + j), zero past N. The rows of B as stored
 * (K rows of N, or N rows of K when transb) are B + r * ldb, or rows[r]
 * when rows is given (gathered windows). */
#define BROW(r) (rows ? rows[r] : B + (int64_t)(r) * ldb)
static void pack_b(int N, int kc, int k0, const float *B, int64_t ldb, const float *const *rows, int transb,
                   float *Bp, int pa, int pb)
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

/* What the micro-kernel does besides the product: C initialised from
 * memory and/or a bias row, and an activation on the final store. */
typedef struct epi {
    const float *bias; /* added to the first K block's initial value, or NULL */
    const float *res;  /* initial value (this tile's rows ldr apart), or NULL: 0 */
    int64_t ldr;
    int act;           /* FAST_ACT_* on the store (last K block only) */
} epi;

static inline __m512 act_apply(__m512 v, int act)
{
    if (act == FAST_ACT_GELU)
        return vgelu(v);
    if (act == FAST_ACT_RELU)
        return _mm512_max_ps(v, _mm512_setzero_ps());
    return v;
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
            c0[i] = act_apply(c0[i], e->act);
            if (nw == 2)
                c1[i] = act_apply(c1[i], e->act);
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

/* B packed for every K block: block k0 at Bp + k0 * Npad (samc__fast_kc cut). */
void samc__fast_pack_b(int N, int K, const float *B, int64_t ldb, int transb, float *Bp)
{
    const int64_t npad = (int64_t)((N + NR - 1) / NR) * NR;
    const int KC = samc__fast_kc(K);
    for (int k0 = 0; k0 < K; k0 += KC)
        pack_b(N, K - k0 < KC ? K - k0 : KC, k0, B, ldb, NULL, transb, Bp + k0 * npad, 0, (int)(npad / NR));
}

void samc__fast_pack_b_part(int N, int K, const float *B, int64_t ldb, int transb, float *Bp, int pa, int pb)
{
    const int64_t npad = (int64_t)((N + NR - 1) / NR) * NR;
    const int KC = samc__fast_kc(K);
    pb = pb < npad / NR ? pb : (int)(npad / NR);
    for (int k0 = 0; k0 < K; k0 += KC)
        pack_b(N, K - k0 < KC ? K - k0 : KC, k0, B, ldb, NULL, transb, Bp + k0 * npad, pa, pb);
}

void samc__fast_pack_b_rows(int N, int K, const float *const *rows, int transb, float *Bp)
{
    const int64_t npad = (int64_t)((N + NR - 1) / NR) * NR;
    const int KC = samc__fast_kc(K);
    for (int k0 = 0; k0 < K; k0 += KC)
        pack_b(N, K - k0 < KC ? K - k0 : KC, k0, NULL, 0, rows, transb, Bp + k0 * npad, 0, (int)(npad / NR));
}

/* The blocked product on rows [0, M) and panels [pa, pb) of a packed B.
 * Loop order: K block, L2-sized chunk of B panels, 12-row block of A (in L1
 * for the whole chunk), panel. */
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
    if (K > 0 && !Bp) { /* out of memory: let OpenBLAS do it */
        cblas_sgemm(CblasRowMajor, csa == 1 ? CblasNoTrans : CblasTrans, transb ? CblasTrans : CblasNoTrans, M, N,
                    K, 1.0f, A, (int)(csa == 1 ? rsa : csa), B, (int)ldb, accumulate ? 1.0f : 0.0f, C, (int)ldc);
        return;
    }
    if (K > 0)
        samc__fast_pack_b(N, K, B, ldb, transb, Bp);
    samc__fast_sgemm_packed(M, N, K, A, rsa, csa, Bp, C, ldc, accumulate);
}

#else /* no AVX-512: OpenBLAS; "packed" B is B as a (K x N) row-major copy */

static _Thread_local float *tls_pack[FAST_PACK_BUFFERS];
static _Thread_local size_t tls_pack_n[FAST_PACK_BUFFERS];

float *samc__fast_pack_buffer(int which, size_t n)
{
    if (n > tls_pack_n[which]) {
        float *old = tls_pack[which];
        tls_pack[which] = malloc(n * sizeof(float));
        tls_pack_n[which] = tls_pack[which] ? n : 0;
        pack_registry(old, tls_pack[which]);
        free(old);
    }
    return tls_pack[which];
}

size_t samc__fast_pack_size(int N, int K) { return (size_t)N * (size_t)(K > 0 ? K : 1); }

void samc__fast_pack_b(int N, int K, const float *B, int64_t ldb, int transb, float *Bp)
{
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++)
            Bp[(int64_t)k * N + n] = transb ? B[(int64_t)n * ldb + k] : B[(int64_t)k * ldb + n];
}

void samc__fast_pack_b_part(int N, int K, const float *B, int64_t ldb, int transb, float *Bp, int pa, int pb)
{
    const int n0 = pa * FAST_NR, n1 = pb * FAST_NR < N ? pb * FAST_NR : N;
    for (int k = 0; k < K; k++)
        for (int n = n0; n < n1; n++)
            Bp[(int64_t)k * N + n] = transb ? B[(int64_t)n * ldb + k] : B[(int64_t)k * ldb + n];
}

void samc__fast_pack_b_rows(int N, int K, const float *const *rows, int transb, float *Bp)
{
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++)
            Bp[(int64_t)k * N + n] = transb ? rows[n][k] : rows[k][n];
}

/* Panels are FAST_NR columns of the (K x N) copy here too, so the threaded
 * drivers can split N the same way on every build. */
void samc__fast_sgemm_packed_res(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bp, int pa,
                           int pb, const float *R, int64_t ldr, float *C, int64_t ldc, const float *bias, int act)
{
    const int n0 = pa * FAST_NR, n1 = pb * FAST_NR < N ? pb * FAST_NR : N;
    if (M <= 0 || n1 <= n0)
        return;
    const int accumulate = R != NULL;
    if (bias || (R && R != C))
        for (int i = 0; i < M; i++)
            for (int j = n0; j < n1; j++)
                C[(int64_t)i * ldc + j] = (R ? R[(int64_t)i * ldr + j] : 0.0f) + (bias ? bias[j] : 0.0f);
    if (K > 0)
        cblas_sgemm(CblasRowMajor, csa == 1 ? CblasNoTrans : CblasTrans, CblasNoTrans, M, n1 - n0, K, 1.0f, A,
                    (int)(csa == 1 ? rsa : csa), Bp + n0, N, accumulate || bias ? 1.0f : 0.0f, C + n0, (int)ldc);
    else if (!accumulate && !bias)
        for (int i = 0; i < M; i++)
            memset(C + (int64_t)i * ldc + n0, 0, (size_t)(n1 - n0) * sizeof *C);
    if (act)
        for (int i = 0; i < M; i++) {
            float *c = C + (int64_t)i * ldc + n0;
            if (act == FAST_ACT_GELU)
                samc__fast_gelu(c, n1 - n0);
            else
                samc__fast_relu(c, n1 - n0);
        }
}

void samc__fast_sgemm_packed_ex(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bp, int pa,
                          int pb, float *C, int64_t ldc, int accumulate, const float *bias, int act)
{
    samc__fast_sgemm_packed_res(M, N, K, A, rsa, csa, Bp, pa, pb, accumulate ? C : NULL, ldc, C, ldc, bias, act);
}

void samc__fast_sgemm_packed(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *Bp, float *C,
                       int64_t ldc, int accumulate)
{
    samc__fast_sgemm_packed_ex(M, N, K, A, rsa, csa, Bp, 0, (N + FAST_NR - 1) / FAST_NR, C, ldc, accumulate, NULL, 0);
}

void samc__fast_sgemm(int M, int N, int K, const float *A, int64_t rsa, int64_t csa, const float *B, int64_t ldb,
                int transb, float *C, int64_t ldc, int accumulate)
{
    if (M <= 0 || N <= 0)
        return;
    cblas_sgemm(CblasRowMajor, csa == 1 ? CblasNoTrans : CblasTrans, transb ? CblasTrans : CblasNoTrans, M, N, K,
                1.0f, A, (int)(csa == 1 ? rsa : csa), B, (int)ldb, accumulate ? 1.0f : 0.0f, C, (int)ldc);
}

#endif
