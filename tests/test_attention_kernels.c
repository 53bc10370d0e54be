/* SPDX-License-Identifier: Apache-2.0 */
/* test_attention_kernels.c - the fused attention kernel (fast_attn:
 * samc__fast_flash_attention, samc__fast_flash_attention_1t, and the older entry points
 * on top of it) against a double-precision softmax(scale q k^T + bias) v,
 * on random shapes with ragged edges: query counts that are not multiples
 * of the 48-row task or the 12-row block, key counts around the 256-key
 * block (one block, exactly one, several, a short last one), head widths
 * that are not multiples of 16 (56, 72) and heads side by side; with an
 * additive per-head bias, key padding (-INFINITY) including a query row
 * whose keys are all masked, rows given by pointers (a permuted gather and
 * dropped output rows), on 1 and several threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/fast.h"

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

enum { OPT_BIAS = 1, OPT_KMASK = 2, OPT_ROWS = 4, OPT_MT = 8, OPT_1T = 16, OPT_BF16 = 32, OPT_EXACT_REF = 64,
       OPT_DV = 128 /* value/output heads narrower than d (fast_attn.dv) */ };

static float rb(float x) { return fast_bf16_to_f32(fast_f32_to_bf16(x)); }

/* Worst |out - ref| over all heads, rows, columns (values are O(1)). */
static double run_case(int Lq, int Lk, int d, int heads, int opts, unsigned seed)
{
    unsigned s = seed;
    const int C = heads * d;
    const int64_t ld = C + 5; /* q, k, v, o row stride */
    float *q = malloc(sizeof(float) * (size_t)Lq * ld), *k = malloc(sizeof(float) * (size_t)Lk * ld);
    float *v = malloc(sizeof(float) * (size_t)Lk * ld), *o = malloc(sizeof(float) * (size_t)Lq * ld);
    const int64_t ldb = Lk + 3, bstride = (int64_t)Lq * ldb;
    float *bias = opts & OPT_BIAS ? malloc(sizeof(float) * (size_t)heads * bstride) : NULL;
    float *kb = opts & OPT_KMASK ? malloc(sizeof(float) * (size_t)Lk) : NULL;
    for (int64_t i = 0; i < (int64_t)Lq * ld; i++)
        q[i] = 2.0f * frand(&s), o[i] = 12345.0f;
    for (int64_t i = 0; i < (int64_t)Lk * ld; i++)
        k[i] = 2.0f * frand(&s), v[i] = frand(&s);
    if (bias)
        for (int64_t i = 0; i < heads * bstride; i++)
            bias[i] = 3.0f * frand(&s);
    if (kb)
        for (int j = 0; j < Lk; j++)
            kb[j] = j % 3 == 1 ? -INFINITY : 0.25f * frand(&s);
    /* with a bias and key padding, mask every key of query row 0 of head 0 */
    if (bias && kb)
        for (int j = 0; j < Lk; j++)
            bias[j] = -INFINITY;
    const float scale = 1.0f / sqrtf((float)d);
    const int dv = opts & OPT_DV ? (d >= 128 ? d / 4 : (d + 1) / 2) : d; /* heads of v and o: h * dv */
    fast_attn a = {.Lq = Lq, .Lk = Lk, .d = d, .scale = scale, .q = q, .k = k, .v = v, .ldq = ld, .ldk = ld,
                   .ldv = ld, .o = o, .ldo = ld, .bias = bias, .ldbias = ldb, .kbias = kb, .dv = opts & OPT_DV ? dv : 0};
    /* rows by pointer: keys and values gathered in reverse order (and the
     * key bias reversed with them), every third output row dropped */
    const float **kr = NULL, **vr = NULL, **qr = NULL;
    float **orow = NULL, *kbr = NULL;
    if (opts & OPT_ROWS) {
        kr = malloc(sizeof *kr * (size_t)Lk), vr = malloc(sizeof *vr * (size_t)Lk);
        qr = malloc(sizeof *qr * (size_t)Lq), orow = malloc(sizeof *orow * (size_t)Lq);
        for (int j = 0; j < Lk; j++)
            kr[j] = k + (int64_t)(Lk - 1 - j) * ld, vr[j] = v + (int64_t)(Lk - 1 - j) * ld;
        for (int i = 0; i < Lq; i++)
            qr[i] = q + (int64_t)i * ld, orow[i] = i % 3 == 2 ? NULL : o + (int64_t)i * ld;
        a.krows = kr, a.vrows = vr, a.qrows = qr, a.orows = orow;
        a.q = a.k = a.v = NULL, a.o = NULL;
        if (kb) {
            kbr = malloc(sizeof(float) * (size_t)Lk);
            for (int j = 0; j < Lk; j++)
                kbr[j] = kb[Lk - 1 - j];
            a.kbias = kbr;
        }
        if (bias) { /* reverse the bias columns too */
            for (int64_t r = 0; r < (int64_t)heads * Lq; r++) {
                float *b = bias + r * ldb;
                for (int j = 0; j < Lk / 2; j++) {
                    const float t = b[j];
                    b[j] = b[Lk - 1 - j], b[Lk - 1 - j] = t;
                }
            }
        }
    }
    if (opts & OPT_BF16) {
        if (opts & OPT_1T) {
            samc__fast_flash_attention_bf16_1t(&a, heads, bstride);
        } else {
            float *kv = malloc(sizeof(float) * (size_t)heads * samc__fast_flash_kv_size_bf16(Lk, d));
            samc__fast_flash_attention_bf16(opts & OPT_MT ? 3 : 1, &a, heads, bstride, kv);
            free(kv);
        }
    } else if (opts & OPT_1T) {
        samc__fast_flash_attention_1t(&a, heads, bstride);
    } else {
        float *kv = malloc(sizeof(float) * (size_t)heads * samc__fast_flash_kv_size(Lk, d));
        samc__fast_flash_attention(opts & OPT_MT ? 3 : 1, &a, heads, bstride, kv);
        free(kv);
    }
    /* bf16: the reference on the bf16-rounded q, k, v (unless OPT_EXACT_REF) */
    const int rnd = (opts & OPT_BF16) && !(opts & OPT_EXACT_REF);
    /* reference in the original (unpermuted) order */
    double worst = 0;
    double *p = malloc(sizeof(double) * (size_t)Lk);
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < Lq; i++) {
            double mx = -INFINITY;
            for (int j = 0; j < Lk; j++) {
                double t = 0;
                for (int c = 0; c < d; c++) {
                    const float qa = q[(int64_t)i * ld + h * d + c], ka = k[(int64_t)j * ld + h * d + c];
                    t += rnd ? (double)rb(qa) * rb(ka) : (double)qa * ka;
                }
                t *= scale;
                const int jb = opts & OPT_ROWS ? Lk - 1 - j : j; /* column of the (permuted) bias */
                if (bias)
                    t += bias[h * bstride + (int64_t)i * ldb + jb];
                if (kb)
                    t += kb[j];
                p[j] = t;
                mx = t > mx ? t : mx;
            }
            double sum = 0;
            for (int j = 0; j < Lk; j++)
                sum += p[j] = mx == -INFINITY ? 0.0 : exp(p[j] - mx);
            const int dropped = (opts & OPT_ROWS) && i % 3 == 2;
            for (int c = 0; c < dv; c++) {
                double r = 0;
                for (int j = 0; j < Lk; j++)
                    r += p[j] * (rnd ? rb(v[(int64_t)j * ld + h * dv + c]) : v[(int64_t)j * ld + h * dv + c]);
                r = sum > 0 ? r / sum : 0.0;
                const float got = o[(int64_t)i * ld + h * dv + c];
                const double e = dropped ? (got == 12345.0f ? 0.0 : 1.0) : fabs(got - r);
                worst = e > worst || isnan(e) ? e : worst;
            }
        }
    for (int i = 0; i < Lq; i++) /* the padding columns past the heads are untouched */
        for (int64_t c = (int64_t)heads * dv; c < ld; c++)
            assert_true(o[i * ld + c] == 12345.0f);
    free(p), free(q), free(k), free(v), free(o), free(bias), free(kb), free(kbr);
    free(kr), free(vr), free(qr), free(orow);
    return worst;
}

static void test_flash_shapes(void **st)
{
    (void)st;
    const int Lqs[] = {1, 13, 49, 64, 100}, Lks[] = {1, 16, 49, 256, 257, 600}, ds[] = {8, 56, 72, 96};
    int n = 0;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 6; b++)
            for (int c = 0; c < 4; c++, n++) {
                const int heads = 1 + n % 3, opts = (n * 7) % 32;
                const double e = run_case(Lqs[a], Lks[b], ds[c], heads, opts, 100u + (unsigned)n);
                if (!(e <= 2e-6))
                    print_error("Lq %d Lk %d d %d heads %d opts %d: err %g\n", Lqs[a], Lks[b], ds[c], heads, opts, e);
                assert_true(e <= 2e-6);
            }
}

/* Every option on the big shapes of the encoder and the memory attention. */
static void test_flash_real_shapes(void **st)
{
    (void)st;
    const int cases[][5] = {
        {96, 4096, 96, 1, OPT_MT},          /* global block rows (t, s) */
        {48, 4096, 72, 2, OPT_MT | OPT_BIAS}, /* l's head width, bias */
        {64, 1100, 64, 2, OPT_MT | OPT_KMASK | OPT_ROWS},
        {196, 196, 96, 1, OPT_1T | OPT_ROWS}, /* a 14x14 window */
        {16, 16, 96, 2, OPT_1T},            /* a 4x4 window */
        {96, 1100, 256, 1, OPT_MT | OPT_DV}, /* memory cross attention: 64-wide values */
        {60, 200, 256, 1, OPT_1T | OPT_DV},  /* one key block */
        {50, 300, 56, 2, OPT_MT | OPT_DV | OPT_ROWS | OPT_KMASK},
    };
    for (int i = 0; i < 8; i++) {
        const double e = run_case(cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], 7u + (unsigned)i);
        if (!(e <= 2e-6))
            print_error("case %d: err %g\n", i, e);
        assert_true(e <= 2e-6);
    }
}

/* The old entry points agree with the kernel (and the one-block path keeps
 * the old rounding: probabilities normalised before P V). */
static void test_old_entry_points(void **st)
{
    (void)st;
    unsigned s = 9;
    const int L = 300, d = 64, heads = 2, C = heads * d;
    float *qkv = malloc(sizeof(float) * (size_t)L * 3 * C), *o1 = malloc(sizeof(float) * (size_t)L * C);
    float *o2 = malloc(sizeof(float) * (size_t)L * C);
    for (int i = 0; i < L * 3 * C; i++)
        qkv[i] = frand(&s);
    float *scr = malloc(sizeof(float) * samc__fast_attention_mh_scratch(2, L, heads, d));
    samc__fast_attention_mh(2, qkv, 3 * C, qkv + C, 3 * C, qkv + 2 * C, 3 * C, L, L, heads, d, 0.125f, o1, C, scr);
    for (int h = 0; h < heads; h++)
        samc__fast_attention_rows(qkv + h * d, 3 * C, qkv + C + h * d, 3 * C, qkv + 2 * C + h * d, 3 * C, L, L, d, 0.125f,
                            o2 + h * d, C, NULL);
    assert_memory_equal(o1, o2, sizeof(float) * (size_t)L * C);
    free(qkv), free(o1), free(o2), free(scr);
}

/* bf16: against the reference on bf16-rounded q, k, v the error left is
 * the probabilities' rounding (2^-9 relative) and fp32 sums. */
static void test_flash_bf16(void **st)
{
    (void)st;
    const int Lqs[] = {1, 13, 64}, Lks[] = {1, 49, 256, 600}, ds[] = {56, 72, 96};
    int n = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 3; c++, n++) {
                const int opts = OPT_BF16 | ((n * 7) % 32);
                const double e = run_case(Lqs[a], Lks[b], ds[c], 1 + n % 2, opts, 300u + (unsigned)n);
                if (!(e <= 4e-3))
                    print_error("bf16 Lq %d Lk %d d %d opts %d: err %g\n", Lqs[a], Lks[b], ds[c], opts, e);
                assert_true(e <= 4e-3);
            }
    /* the portable path (no vdpbf16ps) gives the same within the bound */
    samc__fast_bf16_force_kernel(FAST_KERN_FALLBACK);
    for (int i = 0; i < 3; i++) {
        const double e = run_case(Lqs[i], Lks[i + 1], ds[i], 2, OPT_BF16 | OPT_BIAS | (i ? OPT_MT : OPT_1T), 500u + (unsigned)i);
        assert_true(e <= 4e-3);
    }
    samc__fast_bf16_force_kernel(-1);
    /* and what bf16 costs against exact fp32 inputs (reported, bounded loosely) */
    for (int i = 0; i < 2; i++) { /* 64-wide values (memory attention), both kernels */
        const double e = run_case(64, 700, 256, 1, OPT_BF16 | OPT_DV | (i ? OPT_MT : OPT_1T), 600u + (unsigned)i);
        assert_true(e <= 4e-3);
    }
    const int real[][3] = {{96, 4096, 96}, {64, 64, 96}, {196, 196, 96}, {96, 4096, 72}};
    for (int i = 0; i < 4; i++) {
        const double e = run_case(real[i][0], real[i][1], real[i][2], 1, OPT_BF16 | OPT_EXACT_REF | OPT_MT, 77u + (unsigned)i);
        printf("  bf16 attention Lq %d Lk %d d %d: max abs error %.2e vs fp64 on fp32 inputs (|v| <= 1)\n", real[i][0],
               real[i][1], real[i][2], e);
        assert_true(e <= 2e-2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flash_shapes),
        cmocka_unit_test(test_flash_real_shapes),
        cmocka_unit_test(test_old_entry_points),
        cmocka_unit_test(test_flash_bf16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
