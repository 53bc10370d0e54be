/* SPDX-License-Identifier: Apache-2.0 */
/* simd.h - one small vector vocabulary for fast/'s kernels, five ISAs.
 *
 * The kernels of fast/isa/ are written once against these wrappers: `vf` is
 * a vector of VL floats (16 with AVX-512F, 8 with AVX2+FMA, 4 with SSE4 or
 * NEON, 1 otherwise: a plain float). fast/isa/ is compiled once per level
 * (x86-64-v2, v3, v4; aarch64 NEON) and the level is chosen at run time
 * (fast/isa.h), so the choice here follows each compilation's target flags.
 * Only fast/isa/ includes this header: the rest of samc is compiled for the
 * baseline and calls the kernels through the chosen level's table.
 *
 * vfma(a, b, c) is a*b + c rounded once, on every ISA (SSE4 has no FMA: it
 * takes fmaf per lane, slow but exact, for the kernels that must match a
 * scalar fmaf bit for bit); vmadd(a, b, c) is a*b + c fused where the ISA
 * fuses, else two roundings: the GEMM, statistics and polynomials.
 */
#ifndef SAMC_FAST_SIMD_H
#define SAMC_FAST_SIMD_H

#include <math.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define SAMC_SIMD_NAME "avx512"
#define VL 16
typedef __m512 vf;
typedef __m512i vi;
static inline vf vload(const float *p) { return _mm512_loadu_ps(p); }
static inline void vstore(float *p, vf v) { _mm512_storeu_ps(p, v); }
static inline vf vset1(float x) { return _mm512_set1_ps(x); }
static inline vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vdiv(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf vfma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf vmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
/* o where neither v > o nor v is NaN, else v (max pooling that propagates NaN) */
static inline vf vmaxnan(vf o, vf v)
{
    const __mmask16 m = _mm512_cmp_ps_mask(v, o, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(m, o, v);
}
static inline vf vmin(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf vabs(vf a) { return _mm512_abs_ps(a); }
static inline float vhsum(vf a) { return _mm512_reduce_add_ps(a); }
static inline float vhmax(vf a) { return _mm512_reduce_max_ps(a); }
static inline vf vround(vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vi vcvt(vf a) { return _mm512_cvtps_epi32(a); }
/* 2^n for integer-valued n in [-126, 127] */
static inline vf vpow2i(vi n) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n, _mm512_set1_epi32(127)), 23)); }
/* copysign(a, s) */
static inline vf vcopysign(vf a, vf s)
{
    const __m512i m = _mm512_set1_epi32(0x80000000);
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_andnot_si512(m, _mm512_castps_si512(a)),
                                               _mm512_and_si512(m, _mm512_castps_si512(s))));
}
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define SAMC_SIMD_NAME "avx2"
#define VL 8
typedef __m256 vf;
typedef __m256i vi;
static inline vf vload(const float *p) { return _mm256_loadu_ps(p); }
static inline void vstore(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline vf vset1(float x) { return _mm256_set1_ps(x); }
static inline vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vdiv(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vmaxnan(vf o, vf v)
{
    const vf m = _mm256_or_ps(_mm256_cmp_ps(v, o, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_ps(o, v, m);
}
static inline vf vmin(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf vabs(vf a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
static inline float vhsum(vf a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float vhmax(vf a)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline vf vround(vf a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vi vcvt(vf a) { return _mm256_cvtps_epi32(a); }
static inline vf vpow2i(vi n) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23)); }
static inline vf vcopysign(vf a, vf s)
{
    const vf m = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(m, a), _mm256_and_ps(m, s));
}
#elif defined(__SSE4_1__)
#include <smmintrin.h>
#define SAMC_SIMD_NAME "sse4"
#define VL 4
typedef __m128 vf;
typedef __m128i vi;
static inline vf vload(const float *p) { return _mm_loadu_ps(p); }
static inline void vstore(float *p, vf v) { _mm_storeu_ps(p, v); }
static inline vf vset1(float x) { return _mm_set1_ps(x); }
static inline vf vadd(vf a, vf b) { return _mm_add_ps(a, b); }
static inline vf vsub(vf a, vf b) { return _mm_sub_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm_mul_ps(a, b); }
static inline vf vdiv(vf a, vf b) { return _mm_div_ps(a, b); }
static inline vf vfma(vf a, vf b, vf c)
{
    float x[4], y[4], z[4];
    _mm_storeu_ps(x, a), _mm_storeu_ps(y, b), _mm_storeu_ps(z, c);
    for (int i = 0; i < 4; i++)
        x[i] = fmaf(x[i], y[i], z[i]);
    return _mm_loadu_ps(x);
}
static inline vf vmadd(vf a, vf b, vf c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
static inline vf vmax(vf a, vf b) { return _mm_max_ps(a, b); }
static inline vf vmaxnan(vf o, vf v) { return _mm_blendv_ps(o, v, _mm_or_ps(_mm_cmpgt_ps(v, o), _mm_cmpunord_ps(v, v))); }
static inline vf vmin(vf a, vf b) { return _mm_min_ps(a, b); }
static inline vf vabs(vf a) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), a); }
static inline float vhsum(vf a)
{
    __m128 s = _mm_add_ps(a, _mm_movehl_ps(a, a));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float vhmax(vf a)
{
    __m128 s = _mm_max_ps(a, _mm_movehl_ps(a, a));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline vf vround(vf a) { return _mm_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vi vcvt(vf a) { return _mm_cvtps_epi32(a); }
static inline vf vpow2i(vi n) { return _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n, _mm_set1_epi32(127)), 23)); }
static inline vf vcopysign(vf a, vf s)
{
    const vf m = _mm_set1_ps(-0.0f);
    return _mm_or_ps(_mm_andnot_ps(m, a), _mm_and_ps(m, s));
}
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define SAMC_SIMD_NAME "neon"
#define VL 4
typedef float32x4_t vf;
typedef int32x4_t vi;
static inline vf vload(const float *p) { return vld1q_f32(p); }
static inline void vstore(float *p, vf v) { vst1q_f32(p, v); }
static inline vf vset1(float x) { return vdupq_n_f32(x); }
static inline vf vadd(vf a, vf b) { return vaddq_f32(a, b); }
static inline vf vsub(vf a, vf b) { return vsubq_f32(a, b); }
static inline vf vmul(vf a, vf b) { return vmulq_f32(a, b); }
static inline vf vdiv(vf a, vf b) { return vdivq_f32(a, b); }
static inline vf vfma(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }
static inline vf vmadd(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }
static inline vf vmax(vf a, vf b) { return vmaxq_f32(a, b); }
static inline vf vmaxnan(vf o, vf v) { return vbslq_f32(vorrq_u32(vcgtq_f32(v, o), vmvnq_u32(vceqq_f32(v, v))), v, o); }
static inline vf vmin(vf a, vf b) { return vminq_f32(a, b); }
static inline vf vabs(vf a) { return vabsq_f32(a); }
static inline float vhsum(vf a) { return vaddvq_f32(a); }
static inline float vhmax(vf a) { return vmaxvq_f32(a); }
static inline vf vround(vf a) { return vrndnq_f32(a); }
static inline vi vcvt(vf a) { return vcvtnq_s32_f32(a); }
static inline vf vpow2i(vi n) { return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n, vdupq_n_s32(127)), 23)); }
static inline vf vcopysign(vf a, vf s)
{
    return vbslq_f32(vdupq_n_u32(0x80000000u), s, a);
}
#else
#define SAMC_SIMD_NAME "scalar"
#define VL 1
typedef float vf;
typedef int vi;
static inline vf vload(const float *p) { return *p; }
static inline void vstore(float *p, vf v) { *p = v; }
static inline vf vset1(float x) { return x; }
static inline vf vadd(vf a, vf b) { return a + b; }
static inline vf vsub(vf a, vf b) { return a - b; }
static inline vf vmul(vf a, vf b) { return a * b; }
static inline vf vdiv(vf a, vf b) { return a / b; }
static inline vf vfma(vf a, vf b, vf c) { return fmaf(a, b, c); }
static inline vf vmadd(vf a, vf b, vf c) { return a * b + c; }
static inline vf vmax(vf a, vf b) { return a > b ? a : b; }
static inline vf vmaxnan(vf o, vf v) { return v > o || isnan(v) ? v : o; }
static inline vf vmin(vf a, vf b) { return a < b ? a : b; }
static inline vf vabs(vf a) { return fabsf(a); }
static inline float vhsum(vf a) { return a; }
static inline float vhmax(vf a) { return a; }
static inline vf vround(vf a) { return nearbyintf(a); }
static inline vi vcvt(vf a) { return (int)nearbyintf(a); }
static inline vf vpow2i(vi n) { return ldexpf(1.0f, n); }
static inline vf vcopysign(vf a, vf s) { return copysignf(a, s); }
#endif

#if defined(__AVX512F__)
/* 16x16 transpose: rows r[i] (16 floats each) -> columns, in registers. */
static inline void vtranspose16(__m512 r[16])
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
    /* r[4q + s] now holds, per 128-bit lane L, element s of rows 4L'.. of group q */
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

#endif

/* exp(x), |rel err| ~ 2 ulp over the range where the result is normal;
 * inputs below -87.3 flush to 0 (softmax and erf only need that range).
 * Cephes expf: x = n ln2 + r, |r| <= ln2/2, degree-6 polynomial. */
static inline vf vexp(vf x)
{
    x = vmax(vmin(x, vset1(88.3762626647949f)), vset1(-87.3f));
    const vf n = vround(vmul(x, vset1(1.44269504088896341f)));
    vf r = vmadd(n, vset1(-0.693359375f), x);
    r = vmadd(n, vset1(2.12194440e-4f), r);
    vf p = vset1(1.9875691500e-4f);
    p = vmadd(p, r, vset1(1.3981999507e-3f));
    p = vmadd(p, r, vset1(8.3334519073e-3f));
    p = vmadd(p, r, vset1(4.1665795894e-2f));
    p = vmadd(p, r, vset1(1.6666665459e-1f));
    p = vmadd(p, r, vset1(5.0000001201e-1f));
    p = vmadd(p, vmul(r, r), vadd(r, vset1(1.0f)));
#if defined(__AVX512F__)
    /* p 2^n in one instruction; n is in [-126, 127] after the clamp, so the
     * result is bit for bit the integer construction's (checked on every
     * 7th float) */
    return _mm512_scalef_ps(p, n);
#else
    return vmul(p, vpow2i(vcvt(n)));
#endif
}

/* erf(x): Abramowitz & Stegun 7.1.26 as ATen's Vectorized<float>::erf does
 * (|abs err| <= 1.5e-7), the same approximation PyTorch's CPU GELU uses. */
static inline vf verf(vf x)
{
    const vf ax = vabs(x);
    const vf t = vdiv(vset1(1.0f), vmadd(vset1(0.3275911f), ax, vset1(1.0f)));
    vf p = vset1(1.061405429f);
    p = vmadd(p, t, vset1(-1.453152027f));
    p = vmadd(p, t, vset1(1.421413741f));
    p = vmadd(p, t, vset1(-0.284496736f));
    p = vmadd(p, t, vset1(0.254829592f));
    p = vmul(p, t);
    const vf e = vexp(vmul(vsub(vset1(0.0f), ax), ax));
    const vf y = vsub(vset1(1.0f), vmul(p, e));
    return vcopysign(y, x);
}

/* GELU(x) = x/2 (1 + erf(x / sqrt 2)) */
static inline vf vgelu(vf x)
{
    const vf e = verf(vmul(x, vset1(0.70710678118654752f)));
    return vmul(vmul(x, vset1(0.5f)), vadd(e, vset1(1.0f)));
}

#endif
