/* SPDX-License-Identifier: Apache-2.0 */
/* gemm_bf16.c - C = act(A W^T + b (+ C)) with W packed once as bfloat16,
 * A rounded to bfloat16 a row block at a time, fp32 accumulation.
 *
 * Three kernels, chosen at run time by CPUID (cpu_features.c), all reading
 * the same packed weight:
 *   - AVX512_BF16 (Zen 4/5, Cooper Lake, Sapphire Rapids): a 12 x 32 tile in
 *     24 zmm accumulators, one vdpbf16ps per row and 16 columns per k-pair
 *     (32 multiply-adds per instruction, twice fp32's 16);
 *   - AMX-BF16 (Sapphire Rapids and later): 32 x 32 tiles, tdpbf16ps on 4
 *     accumulator tiles (amx_kernel.h). NOT TESTED ON HARDWARE: no machine of
 *     this project has AMX; the same source is unit-tested through a C model
 *     of the tile instructions (FAST_KERN_AMX_EMU);
 *   - aarch64 with the BF16 extension (Armv8.6-A, Neoverse V1/N2, Graviton
 *     3+, Apple M2+): a 6 x 16 tile of BFDOT (vbfdotq_f32: the same k-pair
 *     dot product per 32-bit lane as vdpbf16ps), chosen by HWCAP2_BF16;
 *   - a portable fallback: the bf16 values widened back to fp32 and run
 *     through the fp32 GEMM (same rounding of the inputs, other summation
 *     order).
 *
 * Packed layout: K padded to Kp (a multiple of 2, or of 32 for AMX), cut in
 * equal blocks of kc <= 768 (384 for the fallback); block k0 starts at
 * data + k0 * Npad; in it, panel p (32 columns) holds [kc/2][32][2] bf16:
 * the k-pair (k, k+1) of a column is one 32-bit lane, which is what both
 * vdpbf16ps and an AMX B tile read. */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "fast.h"

#define BNR 32
#define BMR 12
#define NC_BYTES (512 * 1024)

#if defined(__x86_64__) && ((defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11) || \
                            (defined(__clang__) && __clang_major__ >= 12))
#define SAMC_BF16_X86 1
#include <immintrin.h>
#define BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
#endif

#if defined(__aarch64__) && defined(__GNUC__) && (__GNUC__ >= 10 || defined(__clang__))
#define SAMC_BF16_NEON 1
#include <arm_neon.h>
#endif

static int kern_step(int kern) { return kern == FAST_KERN_AMX || kern == FAST_KERN_AMX_EMU ? 32 : 2; }

/* K block of the packed layout (equal blocks, multiples of the step). */
static int bf16_kc(int Kp, int kern)
{
    const int step = kern_step(kern), kmax = kern == FAST_KERN_FALLBACK ? FAST_KC : 768;
    if (Kp <= kmax)
        return Kp;
    const int nb = (Kp + kmax - 1) / kmax;
    const int kc = (Kp + nb - 1) / nb;
    return (kc + step - 1) / step * step;
}

static int forced_kern = -1; /* tests: samc__fast_bf16_force_kernel */
static inline int forced_kern_get(void) { return forced_kern; }

/* ---- conversion ------------------------------------------------------------ */

static void to_bf16_scalar(const float *x, uint16_t *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = fast_f32_to_bf16(x[i]);
}

#ifdef SAMC_BF16_X86
BF16_TARGET static void to_bf16_avx512(const float *x, uint16_t *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
        _mm512_storeu_si512((void *)(y + i), (__m512i)v);
    }
    for (; i < n; i++)
        y[i] = fast_f32_to_bf16(x[i]);
}
#endif

void samc__fast_f32_to_bf16_row(const float *x, uint16_t *y, int64_t n)
{
#ifdef SAMC_BF16_X86
    if (samc__fast_bf16_kernel() != FAST_KERN_FALLBACK) {
        to_bf16_avx512(x, y, n);
        return;
    }
#endif
    to_bf16_scalar(x, y, n);
}

/* ---- packing (once, at load) ------------------------------------------------- */

samc_status samc__fast_bf16_pack_for(fast_wpack *p, const float *W, int64_t ldw, int N, int K, int kern)
{
    memset(p, 0, sizeof *p);
    if (N <= 0 || K <= 0 || !W)
        return samc_fail(NULL, SAMC_ERR_ARG, "fast: cannot pack a %d x %d weight", N, K);
    const int step = kern_step(kern);
    const int Kp = (K + step - 1) / step * step, np = (N + BNR - 1) / BNR;
    const int64_t npad = (int64_t)np * BNR;
    p->N = N, p->K = K, p->Kp = Kp, p->dtype = FAST_BF16, p->kern = kern;
    p->bytes = (size_t)npad * (size_t)Kp * sizeof(uint16_t);
    uint16_t *d = aligned_alloc(64, (p->bytes + 63) / 64 * 64);
    if (!d)
        return samc_fail(NULL, SAMC_ERR_NOMEM, "fast: packed bf16 weight of %zu bytes", p->bytes);
    p->data = d;
    const int kc = bf16_kc(Kp, kern);
    for (int k0 = 0; k0 < Kp; k0 += kc) {
        const int kcb = Kp - k0 < kc ? Kp - k0 : kc;
        for (int pn = 0; pn < np; pn++) {
            uint16_t *pan = d + (int64_t)k0 * npad + (int64_t)pn * kcb * BNR;
            for (int kk = 0; kk < kcb; kk++)
                for (int j = 0; j < BNR; j++) {
                    const int n = pn * BNR + j, k = k0 + kk;
                    const float v = n < N && k < K ? W[(int64_t)n * ldw + k] : 0.0f;
                    pan[(kk / 2) * 2 * BNR + j * 2 + (kk & 1)] = fast_f32_to_bf16(v);
                }
        }
    }
    return SAMC_OK;
}

samc_status samc__fast_bf16_pack(fast_wpack *p, const float *W, int64_t ldw, int N, int K)
{
    return samc__fast_bf16_pack_for(p, W, ldw, N, K, samc__fast_bf16_kernel());
}

/* ---- shared driver pieces ---------------------------------------------------- */

static int flags_act(int flags)
{
    return flags & FAST_GEMM_GELU ? FAST_ACT_GELU : flags & FAST_GEMM_RELU ? FAST_ACT_RELU : FAST_ACT_NONE;
}

static void act_rows(float *C, int64_t ldc, int rows, int n, int act)
{
    if (!act || n <= 0)
        return;
    for (int i = 0; i < rows; i++) {
        if (act == FAST_ACT_GELU)
            samc__fast_gelu(C + i * ldc, n);
        else
            samc__fast_relu(C + i * ldc, n);
    }
}

/* Rows [0, mr) x columns [k0, k0 + kcb) of A as bf16, row-major with
 * leading dimension ld; zero past K and for rows mr..rows_pad. */
static void convert_a(const float *A, int64_t lda, int mr, int rows_pad, int k0, int kcb, int K, uint16_t *dst,
                      int64_t ld, int fast)
{
    const int kv = K - k0 < kcb ? K - k0 : kcb;
    for (int i = 0; i < rows_pad; i++) {
        uint16_t *d = dst + i * ld;
        if (i < mr) {
#ifdef SAMC_BF16_X86
            if (fast)
                to_bf16_avx512(A + i * lda + k0, d, kv);
            else
#endif
                to_bf16_scalar(A + i * lda + k0, d, kv);
            if (kv < kcb)
                memset(d + kv, 0, (size_t)(kcb - kv) * sizeof *d);
        } else {
            memset(d, 0, (size_t)kcb * sizeof *d);
        }
    }
    (void)fast;
}

/* Rows of the bf16 copy of A are BLDA elements apart, a compile-time
 * constant: the micro-kernel then reaches its 12 rows by constant
 * displacements from one register (a run-time stride cost 12 registers and
 * spills in the k loop). 1600 bytes: no 4 KiB aliasing between the rows. */
#define BLDA FAST_BF16_LDA
static int64_t ld_bf16(int kc) { return kc <= BLDA - 32 ? BLDA : (kc * 2) % 512 == 0 ? kc + 32 : kc; }

/* K block [k0, k0 + kcb) of a packed weight, where the products of its
 * tiles start from (R, or 0, for the first block; C, what the blocks before
 * summed, for the others), and whether the activation follows it. */
typedef struct kblock {
    int kcb, last;
    const float *init; /* rows ldi apart, or NULL: 0 */
    int64_t ldi;
    const uint16_t *B; /* the block's panels */
} kblock;

static kblock kblock_at(const fast_wpack *W, int k0, int kc, const float *R, int64_t ldr, const float *C, int64_t ldc)
{
    const int Kp = W->Kp, kcb = Kp - k0 < kc ? Kp - k0 : kc;
    const int64_t npad = (int64_t)((W->N + BNR - 1) / BNR) * BNR;
    return (kblock){kcb, k0 + kcb >= Kp, k0 == 0 ? R : C, k0 == 0 ? ldr : ldc,
                    (const uint16_t *)W->data + (int64_t)k0 * npad};
}

/* What a micro-kernel starts its tile from: a bias row and/or an initial value. */
typedef struct bepi {
    const float *bias;
    const float *res; /* initial value (rows ldr apart) or NULL: 0 */
    int64_t ldr;
} bepi;

/* ---- fallback: widen and use the fp32 GEMM ------------------------------------ */

static void part_fallback(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias,
                          const float *R, int64_t ldr, float *C, int64_t ldc, int flags, int pa, int pb)
{
    const int N = W->N, Kp = W->Kp, kc = bf16_kc(Kp, W->kern), np = (N + BNR - 1) / BNR;
    const int64_t npad = (int64_t)np * BNR;
    const int n0 = pa * BNR, n1 = pb * BNR < N ? pb * BNR : N, nn = n1 - n0;
    enum { RB = 96 };
    float *Wd = samc__fast_pack_buffer(3, (size_t)kc * nn + (size_t)RB * kc);
    if (!Wd || nn <= 0)
        return; /* out of memory: nothing sensible left to do */
    float *Ab = Wd + (size_t)kc * nn;
    if (bias || R != C)
        for (int64_t i = 0; i < M; i++)
            for (int j = n0; j < n1; j++)
                C[i * ldc + j] = (R ? R[i * ldr + j] : 0.0f) + (bias ? bias[j] : 0.0f);
    for (int k0 = 0; k0 < Kp; k0 += kc) {
        const int kcb = Kp - k0 < kc ? Kp - k0 : kc;
        /* W^T block, (kcb x nn) row-major, widened */
        for (int kk = 0; kk < kcb; kk++)
            for (int j = 0; j < nn; j++) {
                const int n = n0 + j, pn = n / BNR, jj = n % BNR;
                const uint16_t *pan = (const uint16_t *)W->data + (int64_t)k0 * npad + (int64_t)pn * kcb * BNR;
                Wd[(int64_t)kk * nn + j] = fast_bf16_to_f32(pan[(kk / 2) * 2 * BNR + jj * 2 + (kk & 1)]);
            }
        for (int64_t m0 = 0; m0 < M; m0 += RB) {
            const int mr = (int)(M - m0 < RB ? M - m0 : RB);
            for (int i = 0; i < mr; i++)
                for (int kk = 0; kk < kcb; kk++) {
                    const int k = k0 + kk;
                    Ab[i * kcb + kk] = k < W->K ? fast_bf16_to_f32(fast_f32_to_bf16(A[(m0 + i) * lda + k])) : 0.0f;
                }
            samc__fast_sgemm(mr, nn, kcb, Ab, kcb, 1, Wd, nn, 0, C + m0 * ldc + n0, ldc, 1);
        }
    }
    for (int64_t m0 = 0; m0 < M; m0 += 4096)
        act_rows(C + m0 * ldc + n0, ldc, (int)(M - m0 < 4096 ? M - m0 : 4096), nn, flags_act(flags));
}

#ifdef SAMC_BF16_X86

/* ---- AVX512_BF16: 12 x 32 vdpbf16ps micro-kernel ------------------------------ */

static inline __attribute__((always_inline)) BF16_TARGET void
ukb(const int mr, const int nw, int kp, const uint16_t *Ab, const uint16_t *Bp, float *C, int64_t ldc, int nv,
    const bepi *e, const float *pfc)
{
    const int64_t ldab = BLDA;
    if (pfc) /* the next C tile, for writing */
        for (int i = 0; i < BMR; i++) {
            __builtin_prefetch(pfc + i * ldc, 1, 3);
            __builtin_prefetch(pfc + i * ldc + 16, 1, 3);
        }
    __m512 c0[BMR], c1[BMR];
    const __mmask16 m0 = nv >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nv) - 1);
    const __mmask16 m1 = nv >= 32 ? (__mmask16)0xFFFF : nv > 16 ? (__mmask16)((1u << (nv - 16)) - 1) : 0;
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        c0[i] = e->res ? _mm512_maskz_loadu_ps(m0, e->res + i * e->ldr) : _mm512_setzero_ps();
        if (nw == 2)
            c1[i] = e->res ? _mm512_maskz_loadu_ps(m1, e->res + i * e->ldr + 16) : _mm512_setzero_ps();
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
    for (int k = 0; k < kp; k++) {
        const __m512i b0 = _mm512_loadu_si512((const void *)(Bp + (int64_t)k * 2 * BNR));
        const __m512i b1 = nw == 2 ? _mm512_loadu_si512((const void *)(Bp + (int64_t)k * 2 * BNR + BNR)) : b0;
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            int32_t pair;
            memcpy(&pair, Ab + i * ldab + 2 * k, sizeof pair);
            const __m512i av = _mm512_set1_epi32(pair);
            c0[i] = _mm512_dpbf16_ps(c0[i], (__m512bh)av, (__m512bh)b0);
            if (nw == 2)
                c1[i] = _mm512_dpbf16_ps(c1[i], (__m512bh)av, (__m512bh)b1);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        _mm512_mask_storeu_ps(C + i * ldc, m0, c0[i]);
        if (nw == 2)
            _mm512_mask_storeu_ps(C + i * ldc + 16, m1, c1[i]);
    }
}

BF16_TARGET static void ukb_any(int mr, int nw, int kp, const uint16_t *Ab, const uint16_t *Bp, float *C,
                                int64_t ldc, int nv, const bepi *e, const float *pfc)
{
    if (nw == 2) {
        switch (mr) {
#define CASE(n) \
    case n: ukb(n, 2, kp, Ab, Bp, C, ldc, nv, e, pfc); break;
            CASE(12) CASE(11) CASE(10) CASE(9) CASE(8) CASE(7) CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
#undef CASE
        default: break;
        }
    } else {
        switch (mr) {
#define CASE(n) \
    case n: ukb(n, 1, kp, Ab, Bp, C, ldc, nv, e, pfc); break;
            CASE(12) CASE(11) CASE(10) CASE(9) CASE(8) CASE(7) CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
#undef CASE
        default: break;
        }
    }
}

static void part_avx512(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias,
                        const float *R, int64_t ldr, float *C, int64_t ldc, int flags, int pa, int pb)
{
    const int N = W->N, Kp = W->Kp, kc = bf16_kc(Kp, W->kern);
    const int64_t ldab = ld_bf16(kc);
    uint16_t *Ab = (uint16_t *)samc__fast_pack_buffer(3, (size_t)(BMR * ldab + 1) / 2 + 16);
    if (!Ab)
        return;
    const int act = flags_act(flags);
    for (int k0 = 0; k0 < Kp; k0 += kc) {
        const kblock kb = kblock_at(W, k0, kc, R, ldr, C, ldc);
        int ncp = (int)(NC_BYTES / ((size_t)kb.kcb * BNR * sizeof(uint16_t)));
        ncp = ncp < 1 ? 1 : ncp;
        for (int p0 = pa; p0 < pb; p0 += ncp) {
            const int p1 = p0 + ncp < pb ? p0 + ncp : pb;
            for (int64_t m0 = 0; m0 < M; m0 += BMR) {
                const int mr = (int)(M - m0 < BMR ? M - m0 : BMR);
                convert_a(A + m0 * lda, lda, mr, mr, k0, kb.kcb, W->K, Ab, ldab, 1);
                if (m0 + 2 * BMR <= M) /* the next block's rows, while this one computes */
                    for (int i = 0; i < BMR; i++)
                        for (int k = 0; k < kb.kcb && k0 + k < W->K; k += 16)
                            _mm_prefetch((const char *)(A + (m0 + BMR + i) * lda + k0 + k), _MM_HINT_T0);
                for (int p = p0; p < p1; p++) {
                    const int n0 = p * BNR, nv = N - n0 < BNR ? N - n0 : BNR;
                    const bepi ep = {k0 == 0 && bias ? bias + n0 : NULL, kb.init ? kb.init + m0 * kb.ldi + n0 : NULL, kb.ldi};
                    float *Ct = C + m0 * ldc + n0;
                    const float *pfc = p + 1 < p1 ? Ct + BNR : m0 + 2 * BMR <= M ? C + (m0 + BMR) * ldc + p0 * BNR : NULL;
                    ukb_any(mr, nv > 16 ? 2 : 1, kb.kcb / 2, Ab, kb.B + (int64_t)p * kb.kcb * BNR, Ct, ldc, nv, &ep,
                            mr == BMR ? pfc : NULL);
                }
                if (kb.last && act) {
                    const int c0 = p0 * BNR, c1 = p1 * BNR < N ? p1 * BNR : N;
                    act_rows(C + m0 * ldc + c0, ldc, mr, c1 - c0, act);
                }
            }
        }
    }
}

/* ---- AMX-BF16 ---------------------------------------------------------------- */

/* The tile instructions (GCC's macros: immediate tile numbers; GCC expands
 * them to inline assembly, clang to builtins that need the AMX target on the
 * function) ... */
#ifdef __clang__
#define AMX_ATTR __attribute__((target("amx-tile,amx-bf16")))
#else
#define AMX_ATTR
#endif
#define AMX_NAME(x) x##_hw
#define TZERO(t) _tile_zero(t)
#define TLOAD(t, p, s) _tile_loadd(t, p, s)
#define TDP(c, a, b) _tile_dpbf16ps(c, a, b)
#define TSTORE(t, p, s) _tile_stored(t, p, s)
#include "amx_kernel.h"
#undef AMX_ATTR
#undef AMX_NAME
#undef TZERO
#undef TLOAD
#undef TDP
#undef TSTORE
#endif /* SAMC_BF16_X86 */

/* ... and a C model of them (Intel SDM pseudo-code of TDPBF16PS: per
 * k-pair, the even product then the odd one, fp32 adds; the hardware also
 * flushes denormals, which the model does not), every tile 16 rows of 64
 * bytes as configured by amx_config. */
typedef struct emu_tiles {
    unsigned char t[8][16 * 64];
} emu_tiles;
static _Thread_local emu_tiles emu;

static void emu_zero(int t) { memset(emu.t[t], 0, sizeof emu.t[t]); }
static void emu_load(int t, const void *p, int64_t stride)
{
    for (int r = 0; r < 16; r++)
        memcpy(emu.t[t] + r * 64, (const unsigned char *)p + r * stride, 64);
}
static void emu_store(int t, void *p, int64_t stride)
{
    for (int r = 0; r < 16; r++)
        memcpy((unsigned char *)p + r * stride, emu.t[t] + r * 64, 64);
}
static void emu_dp(int c, int a, int b)
{
    float acc[16][16];
    uint16_t av[16][32], bv[16][32];
    memcpy(acc, emu.t[c], sizeof acc);
    memcpy(av, emu.t[a], sizeof av);
    memcpy(bv, emu.t[b], sizeof bv);
    for (int m = 0; m < 16; m++)
        for (int k = 0; k < 16; k++)
            for (int n = 0; n < 16; n++) {
                acc[m][n] += fast_bf16_to_f32(av[m][2 * k]) * fast_bf16_to_f32(bv[k][2 * n]);
                acc[m][n] += fast_bf16_to_f32(av[m][2 * k + 1]) * fast_bf16_to_f32(bv[k][2 * n + 1]);
            }
    memcpy(emu.t[c], acc, sizeof acc);
}
#ifndef AMX_ATTR
#define AMX_ATTR
#endif
#define AMX_NAME(x) x##_emu
#define TZERO(t) emu_zero(t)
#define TLOAD(t, p, s) emu_load(t, p, s)
#define TDP(c, a, b) emu_dp(c, a, b)
#define TSTORE(t, p, s) emu_store(t, p, s)
#include "amx_kernel.h"

#ifdef SAMC_BF16_X86
typedef struct amx_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_cfg;
static const amx_cfg amx_config = {
    1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};
#endif

static void part_amx(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias, const float *R,
                     int64_t ldr, float *C, int64_t ldc, int flags, int pa, int pb, int hw)
{
    enum { AMR = 32 };
    const int N = W->N, Kp = W->Kp, kc = bf16_kc(Kp, W->kern);
    const int64_t ldab = ld_bf16(kc);
    float *ctmp = samc__fast_pack_buffer(3, (size_t)(AMR * ldab + 1) / 2 + 16 + AMR * 32);
    if (!ctmp)
        return;
    uint16_t *Ab = (uint16_t *)(ctmp + AMR * 32);
    const int act = flags_act(flags);
#ifdef SAMC_BF16_X86
    if (hw)
        __asm__ volatile("ldtilecfg %0" ::"m"(amx_config));
#else
    (void)hw;
#endif
    for (int k0 = 0; k0 < Kp; k0 += kc) {
        const kblock kb = kblock_at(W, k0, kc, R, ldr, C, ldc);
        const float *bk = k0 == 0 ? bias : NULL;
        int ncp = (int)(NC_BYTES / ((size_t)kb.kcb * BNR * sizeof(uint16_t)));
        ncp = ncp < 1 ? 1 : ncp;
        for (int p0 = pa; p0 < pb; p0 += ncp) {
            const int p1 = p0 + ncp < pb ? p0 + ncp : pb;
            for (int64_t m0 = 0; m0 < M; m0 += AMR) {
                const int mr = (int)(M - m0 < AMR ? M - m0 : AMR);
#ifdef SAMC_BF16_X86
                convert_a(A + m0 * lda, lda, mr, AMR, k0, kb.kcb, W->K, Ab, ldab, hw);
#else
                convert_a(A + m0 * lda, lda, mr, AMR, k0, kb.kcb, W->K, Ab, ldab, 0);
#endif
                for (int p = p0; p < p1; p++) {
                    const int n0 = p * BNR, nv = N - n0 < BNR ? N - n0 : BNR;
                    const uint16_t *Bp = kb.B + (int64_t)p * kb.kcb * BNR;
#ifdef SAMC_BF16_X86
                    if (hw) {
                        __asm__ volatile("" ::: "memory"); /* the tile loads read Ab: no store may sink past */
                        amx_tile_32x32_hw(kb.kcb, Ab, ldab, Bp, ctmp);
                    } else
#endif
                        amx_tile_32x32_emu(kb.kcb, Ab, ldab, Bp, ctmp);
                    for (int i = 0; i < mr; i++) {
                        float *c = C + (m0 + i) * ldc + n0;
                        const float *r = kb.init ? kb.init + (m0 + i) * kb.ldi + n0 : NULL;
                        for (int j = 0; j < nv; j++)
                            c[j] = (r ? r[j] : 0.0f) + (bk ? bk[n0 + j] : 0.0f) + ctmp[i * 32 + j];
                    }
                }
                if (kb.last && act) {
                    const int c0 = p0 * BNR, c1 = p1 * BNR < N ? p1 * BNR : N;
                    act_rows(C + m0 * ldc + c0, ldc, mr, c1 - c0, act);
                }
            }
        }
    }
#ifdef SAMC_BF16_X86
    if (hw)
        __asm__ volatile("tilerelease" ::: "memory");
#endif
}

/* ---- products on operands already in bf16 (the attention kernels) ------------- */

#ifdef SAMC_BF16_X86
/* 16 x 16 transpose of 32-bit lanes in registers (simd.h's vtranspose16,
 * compiled here for the bf16 target whatever the build's flags). */
static inline __attribute__((always_inline)) BF16_TARGET void tr16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    }
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
        t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
        r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
        r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xDD);
    }
}

/* Vector packing: transb (rows are the N columns of B, K floats each):
 * 16 rows' k-pairs as 16 x 16 dwords, transposed in registers; !transb
 * (rows are the K rows of B): two rows' 16 columns converted together and
 * interleaved into 16 k-pair dwords. Full 16-column groups only. */
BF16_TARGET static void pack_rows_avx512(int N, int K, const float *const *rows, int transb, uint16_t *Bp)
{
    const int np = (N + BNR - 1) / BNR, Kp = (K + 1) & ~1;
    /* 0 a0 1 b0 ... : word i of the result is word (i/2) + 16*(i%2) of [a | b] */
    static const short il[32] = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
                                 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
    const __m512i perm = _mm512_loadu_si512((const void *)il);
    for (int pn = 0; pn < np; pn++) {
        uint32_t *pan = (uint32_t *)(Bp + (int64_t)pn * Kp * BNR);
        for (int h = 0; h < 2; h++) {
            const int j0 = pn * BNR + h * 16, nj = N - j0 < 16 ? (N - j0 > 0 ? N - j0 : 0) : 16;
            if (transb) {
                for (int k = 0; k < Kp; k += 32) { /* 16 k-pairs of 16 columns */
                    __m512 r[16];
                    const int kv = K - k < 32 ? K - k : 32;
                    const __mmask16 ma = kv >= 16 ? 0xFFFF : (__mmask16)((1u << kv) - 1);
                    const __mmask16 mb = kv >= 32 ? 0xFFFF : kv > 16 ? (__mmask16)((1u << (kv - 16)) - 1) : 0;
                    for (int j = 0; j < 16; j++) {
                        if (j < nj) {
                            const float *src = rows[j0 + j] + k;
                            const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(mb, src + 16),
                                                                   _mm512_maskz_loadu_ps(ma, src));
                            r[j] = _mm512_castsi512_ps((__m512i)v);
                        } else {
                            r[j] = _mm512_setzero_ps();
                        }
                    }
                    tr16(r); /* r[t] = k-pair (k/2 + t) of the 16 columns */
                    const int npairs = (Kp - k) / 2 < 16 ? (Kp - k) / 2 : 16;
                    for (int t = 0; t < npairs; t++)
                        _mm512_storeu_ps((float *)(pan + (int64_t)(k / 2 + t) * BNR + h * 16), r[t]);
                }
            } else {
                const __mmask16 mj = nj >= 16 ? 0xFFFF : (__mmask16)((1u << nj) - 1);
                for (int k = 0; k < Kp; k += 2) {
                    const __m512 a = k < K ? _mm512_maskz_loadu_ps(mj, rows[k] + (j0 < N ? j0 : 0)) : _mm512_setzero_ps();
                    const __m512 b = k + 1 < K ? _mm512_maskz_loadu_ps(mj, rows[k + 1] + (j0 < N ? j0 : 0))
                                               : _mm512_setzero_ps();
                    const __m512i v = _mm512_permutexvar_epi16(perm, (__m512i)_mm512_cvtne2ps_pbh(b, a));
                    _mm512_storeu_si512((void *)(pan + (int64_t)(k / 2) * BNR + h * 16), v);
                }
            }
        }
    }
}
#endif

void samc__fast_bf16_pack_rows(int N, int K, const float *const *rows, int transb, uint16_t *Bp)
{
#ifdef SAMC_BF16_X86
    if (samc__fast_cpu_has_kernel(FAST_KERN_AVX512BF16)) {
        pack_rows_avx512(N, K, rows, transb, Bp);
        return;
    }
#endif
    const int np = (N + BNR - 1) / BNR, Kp = (K + 1) & ~1;
    for (int pn = 0; pn < np; pn++) {
        uint16_t *pan = Bp + (int64_t)pn * Kp * BNR;
        for (int j = 0; j < BNR; j++) {
            const int n = pn * BNR + j;
            for (int k = 0; k < Kp; k++) {
                float v = 0.0f;
                if (n < N && k < K)
                    v = transb ? rows[n][k] : rows[k][n];
                pan[(k / 2) * 2 * BNR + j * 2 + (k & 1)] = fast_f32_to_bf16(v);
            }
        }
    }
}

size_t samc__fast_bf16_pack_rows_size(int N, int K) { return (size_t)((N + BNR - 1) / BNR) * BNR * (size_t)((K + 1) & ~1); }

void samc__fast_bf16_gemm_pre(int M, int N, int K, const uint16_t *A, const uint16_t *Bp, float *C, int64_t ldc,
                        int accumulate)
{
    const int Kp = (K + 1) & ~1;
    if (M <= 0 || N <= 0)
        return;
#ifdef SAMC_BF16_X86
    const int np = (N + BNR - 1) / BNR;
    if (samc__fast_cpu_has_kernel(FAST_KERN_AVX512BF16) && forced_kern_get() != FAST_KERN_FALLBACK && Kp <= BLDA - 32) {
        for (int m0 = 0; m0 < M; m0 += BMR) {
            const int mr = M - m0 < BMR ? M - m0 : BMR;
            for (int p = 0; p < np; p++) {
                const int n0 = p * BNR, nv = N - n0 < BNR ? N - n0 : BNR;
                float *Ct = C + (int64_t)m0 * ldc + n0;
                const bepi e = {NULL, accumulate ? Ct : NULL, ldc};
                ukb_any(mr, nv > 16 ? 2 : 1, Kp / 2, A + (int64_t)m0 * BLDA, Bp + (int64_t)p * Kp * BNR, Ct, ldc, nv,
                        &e, NULL);
            }
        }
        return;
    }
#endif
    /* portable: widened to fp32, the same products in fp32 */
    float *Af = samc__fast_pack_buffer(3, (size_t)M * Kp + (size_t)Kp * N);
    if (!Af)
        return;
    float *Bf = Af + (size_t)M * Kp;
    for (int i = 0; i < M; i++)
        for (int k = 0; k < Kp; k++)
            Af[(int64_t)i * Kp + k] = fast_bf16_to_f32(A[(int64_t)i * BLDA + k]);
    for (int k = 0; k < Kp; k++)
        for (int n = 0; n < N; n++)
            Bf[(int64_t)k * N + n] = fast_bf16_to_f32(Bp[(int64_t)(n / BNR) * Kp * BNR + (k / 2) * 2 * BNR + (n % BNR) * 2 + (k & 1)]);
    samc__fast_sgemm(M, N, Kp, Af, Kp, 1, Bf, N, 0, C, ldc, accumulate);
}

#ifdef SAMC_BF16_NEON
/* ---- aarch64 BF16: 6 x 16 BFDOT micro-kernel -------------------------------------- */

#define NMR 6
#define NEON_BF16 __attribute__((target("arch=armv8.2-a+bf16")))

/* C[0..mr, 0..16) of panel column group g (16 of the panel's 32 columns):
 * each k-pair of a row of A is one 32-bit lane broadcast, BFDOT adds its
 * dot product with the pair of every column (as vdpbf16ps). */
static inline __attribute__((always_inline)) NEON_BF16 void ukn(const int mr, int kp, const uint16_t *Ab,
                                                               int64_t ldab, const uint16_t *Bp, float *C,
                                                               int64_t ldc, const bepi *e)
{
    float32x4_t c[NMR][4];
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            c[i][j] = e->res ? vld1q_f32(e->res + i * e->ldr + 4 * j) : vdupq_n_f32(0.0f);
            if (e->bias)
                c[i][j] = vaddq_f32(c[i][j], vld1q_f32(e->bias + 4 * j));
        }
    for (int k = 0; k < kp; k++) {
        bfloat16x8_t b[4];
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++)
            b[j] = vreinterpretq_bf16_u16(vld1q_u16(Bp + (int64_t)k * 2 * BNR + 8 * j));
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++) {
            uint32_t pair;
            memcpy(&pair, Ab + i * ldab + 2 * k, sizeof pair);
            const bfloat16x8_t av = vreinterpretq_bf16_u32(vdupq_n_u32(pair));
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++)
                c[i][j] = vbfdotq_f32(c[i][j], av, b[j]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++)
            vst1q_f32(C + i * ldc + 4 * j, c[i][j]);
}

NEON_BF16 static void ukn_any(int mr, int kp, const uint16_t *Ab, int64_t ldab, const uint16_t *Bp, float *C,
                              int64_t ldc, const bepi *e)
{
    switch (mr) {
#define CASE(n) \
    case n: ukn(n, kp, Ab, ldab, Bp, C, ldc, e); break;
        CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
#undef CASE
    default: break;
    }
}

/* A 16-column group of nv < 16 columns: computed whole on a copy. */
static void ukn_narrow(int mr, int nv, int kp, const uint16_t *Ab, int64_t ldab, const uint16_t *Bp, float *C,
                       int64_t ldc, const bepi *e)
{
    float t[NMR * 16], b[16];
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < 16; j++)
            t[i * 16 + j] = j < nv && e->res ? e->res[i * e->ldr + j] : 0.0f;
    for (int j = 0; j < 16; j++)
        b[j] = j < nv && e->bias ? e->bias[j] : 0.0f;
    const bepi et = {e->bias ? b : NULL, t, 16};
    ukn_any(mr, kp, Ab, ldab, Bp, t, 16, &et);
    for (int i = 0; i < mr; i++)
        memcpy(C + i * ldc, t + i * 16, (size_t)nv * sizeof *C);
}

static void part_neon(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias, const float *R,
                      int64_t ldr, float *C, int64_t ldc, int flags, int pa, int pb)
{
    const int N = W->N, Kp = W->Kp, kc = bf16_kc(Kp, W->kern);
    const int64_t ldab = ld_bf16(kc);
    uint16_t *Ab = (uint16_t *)samc__fast_pack_buffer(3, (size_t)(NMR * ldab + 1) / 2 + 16);
    if (!Ab)
        return;
    const int act = flags_act(flags);
    for (int k0 = 0; k0 < Kp; k0 += kc) {
        const kblock kb = kblock_at(W, k0, kc, R, ldr, C, ldc);
        for (int64_t m0 = 0; m0 < M; m0 += NMR) {
            const int mr = (int)(M - m0 < NMR ? M - m0 : NMR);
            convert_a(A + m0 * lda, lda, mr, mr, k0, kb.kcb, W->K, Ab, ldab, 0);
            for (int p = pa; p < pb; p++)
                for (int g = 0; g < 2; g++) {
                    const int n0 = p * BNR + 16 * g;
                    if (n0 >= N)
                        break;
                    const int nv = N - n0 < 16 ? N - n0 : 16;
                    const bepi ep = {k0 == 0 && bias ? bias + n0 : NULL, kb.init ? kb.init + m0 * kb.ldi + n0 : NULL, kb.ldi};
                    const uint16_t *Bs = kb.B + (int64_t)p * kb.kcb * BNR + 32 * g; /* columns 16 g.. of each k-pair row */
                    float *Ct = C + m0 * ldc + n0;
                    if (nv == 16)
                        ukn_any(mr, kb.kcb / 2, Ab, ldab, Bs, Ct, ldc, &ep);
                    else
                        ukn_narrow(mr, nv, kb.kcb / 2, Ab, ldab, Bs, Ct, ldc, &ep);
                }
            if (kb.last && act) {
                const int c0 = pa * BNR, c1 = pb * BNR < N ? pb * BNR : N;
                act_rows(C + m0 * ldc + c0, ldc, mr, c1 - c0, act);
            }
        }
    }
}
#endif /* SAMC_BF16_NEON */

/* ---- dispatch ------------------------------------------------------------------ */

void samc__fast_bf16_force_kernel(int kern) { forced_kern = kern; }

void samc__fast_bf16_gemm_part(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias,
                         const float *R, int64_t ldr, float *C, int64_t ldc, int flags, int pa, int pb)
{
    const int np = (W->N + BNR - 1) / BNR;
    pb = pb < np ? pb : np;
    if (M <= 0 || pa >= pb)
        return;
    int k = forced_kern >= 0 ? forced_kern : samc__fast_bf16_kernel();
    /* a layout packed for AMX (K in 32s) runs on any kernel; the AMX kernel
     * needs it */
    if ((k == FAST_KERN_AMX || k == FAST_KERN_AMX_EMU) && kern_step(W->kern) != 32)
        k = samc__fast_cpu_has_kernel(FAST_KERN_AVX512BF16) ? FAST_KERN_AVX512BF16 : FAST_KERN_FALLBACK;
    if (!samc__fast_cpu_has_kernel(k))
        k = FAST_KERN_FALLBACK;
    switch (k) {
#ifdef SAMC_BF16_X86
    case FAST_KERN_AVX512BF16: part_avx512(M, A, lda, W, bias, R, ldr, C, ldc, flags, pa, pb); return;
    case FAST_KERN_AMX: part_amx(M, A, lda, W, bias, R, ldr, C, ldc, flags, pa, pb, 1); return;
#endif
#ifdef SAMC_BF16_NEON
    case FAST_KERN_NEON_BF16: part_neon(M, A, lda, W, bias, R, ldr, C, ldc, flags, pa, pb); return;
#endif
    case FAST_KERN_AMX_EMU: part_amx(M, A, lda, W, bias, R, ldr, C, ldc, flags, pa, pb, 0); return;
    default: part_fallback(M, A, lda, W, bias, R, ldr, C, ldc, flags, pa, pb); return;
    }
}
