/* SPDX-License-Identifier: Apache-2.0 */
/* test_gemm_kernels.c - the pack-once GEMM (fast_wpack, samc__fast_gemm*) in fp32
 * and bf16 against double-precision references, on random shapes with
 * ragged edges (rows not a multiple of the 12-row block, columns not a
 * multiple of the 16/32-column panels, K not a multiple of the K block or
 * of the bf16 pair), every epilogue (bias, accumulate, GELU, ReLU), several
 * thread counts and grids, and every bf16 kernel this CPU can run (the
 * AMX one through its C model of the tile instructions). */
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

static double gelu_d(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }

typedef struct problem {
    int M, N, K, flags, bias;
    int64_t lda, ldc;
    float *A, *W, *b, *C0;
} problem;

static void make(problem *p, int M, int N, int K, int flags, int bias, unsigned seed)
{
    unsigned s = seed;
    p->M = M, p->N = N, p->K = K, p->flags = flags, p->bias = bias;
    p->lda = K + 3, p->ldc = N + 5;
    p->A = malloc(sizeof(float) * (size_t)M * p->lda);
    p->W = malloc(sizeof(float) * (size_t)N * (K + 1));
    p->b = malloc(sizeof(float) * (size_t)N);
    p->C0 = malloc(sizeof(float) * (size_t)M * p->ldc);
    for (int64_t i = 0; i < (int64_t)M * p->lda; i++)
        p->A[i] = frand(&s);
    for (int64_t i = 0; i < (int64_t)N * (K + 1); i++)
        p->W[i] = frand(&s);
    for (int i = 0; i < N; i++)
        p->b[i] = frand(&s);
    for (int64_t i = 0; i < (int64_t)M * p->ldc; i++)
        p->C0[i] = frand(&s);
}

static void unmake(problem *p) { free(p->A), free(p->W), free(p->b), free(p->C0); }

/* worst |C - ref| / (1 + sqrt(K)) over the product; padding columns of C
 * must be untouched. round_bf16: reference on bf16-rounded A and W. */
static double check(const problem *p, const float *C, int round_bf16)
{
    double worst = 0;
    for (int i = 0; i < p->M; i++) {
        for (int j = 0; j < p->N; j++) {
            double r = (p->flags & FAST_GEMM_ACC ? p->C0[(int64_t)i * p->ldc + j] : 0.0) + (p->bias ? p->b[j] : 0.0);
            for (int k = 0; k < p->K; k++) {
                float a = p->A[(int64_t)i * p->lda + k], w = p->W[(int64_t)j * (p->K + 1) + k];
                if (round_bf16)
                    a = fast_bf16_to_f32(fast_f32_to_bf16(a)), w = fast_bf16_to_f32(fast_f32_to_bf16(w));
                r += (double)a * w;
            }
            if (p->flags & FAST_GEMM_GELU)
                r = gelu_d(r);
            if (p->flags & FAST_GEMM_RELU)
                r = r > 0 ? r : 0;
            const double e = fabs(r - C[(int64_t)i * p->ldc + j]) / (1.0 + sqrt((double)p->K));
            worst = e > worst || isnan(e) ? e : worst;
        }
        for (int64_t j = p->N; j < p->ldc; j++)
            assert_true(C[(int64_t)i * p->ldc + j] == p->C0[(int64_t)i * p->ldc + j]);
    }
    return worst;
}

static const int Ms[] = {1, 5, 12, 13, 25, 100}, Ns[] = {1, 16, 17, 31, 32, 33, 100, 144}, Ks[] = {1, 7, 96, 385, 800};
#define NEL(a) ((int)(sizeof(a) / sizeof *(a)))

static void run_all(fast_dtype dt, int kern, double tol, int round_bf16)
{
    float *C = malloc(sizeof(float) * 100 * (144 + 5));
    int n = 0;
    for (int a = 0; a < NEL(Ms); a++)
        for (int b = 0; b < NEL(Ns); b++)
            for (int c = 0; c < NEL(Ks); c++) {
                const int M = Ms[a], N = Ns[b], K = Ks[c];
                const int variant = (a + b + c) % 8;
                const int flags = (variant & 1 ? FAST_GEMM_ACC : 0) |
                                  (variant & 2 ? FAST_GEMM_GELU : variant & 4 ? FAST_GEMM_RELU : 0);
                problem p;
                make(&p, M, N, K, flags, (variant & 6) != 4, (unsigned)(M * 7919 + N * 131 + K));
                fast_wpack w;
                samc_status st = dt == FAST_F32 ? samc__fast_wpack_init(&w, p.W, K + 1, N, K, FAST_F32)
                                                : samc__fast_bf16_pack_for(&w, p.W, K + 1, N, K, kern);
                assert_int_equal(st, SAMC_OK);
                memcpy(C, p.C0, sizeof(float) * (size_t)M * p.ldc);
                if (n % 3 == 0)
                    samc__fast_gemm_1t(M, p.A, p.lda, &w, p.bias ? p.b : NULL, C, p.ldc, flags);
                else
                    samc__fast_gemm(n % 3 == 1 ? 2 : 16, M, p.A, p.lda, &w, p.bias ? p.b : NULL, C, p.ldc, flags);
                const double e = check(&p, C, round_bf16);
                if (!(e <= tol))
                    print_error("dtype %d kern %d M %d N %d K %d flags %d bias %d: err %g\n", dt, kern, M, N, K,
                                flags, p.bias, e);
                assert_true(e <= tol);
                samc__fast_wpack_free(&w);
                unmake(&p);
                n++;
            }
    free(C);
}

static void test_f32_wpack(void **st)
{
    (void)st;
    run_all(FAST_F32, 0, 2e-6, 0);
}

/* fp32: the result does not depend on the thread grid, and equals
 * samc__fast_linear's bit for bit (the layers can switch without parity
 * moving): every level's kernel takes each element's products in k order. */
#define assert_same(a, b, n) assert_memory_equal(a, b, n)
static void test_f32_grids_bitwise(void **st)
{
    (void)st;
    const int shapes[][3] = {{301, 288, 96}, {1000, 100, 385}, {64, 2304, 768}, {37, 33, 800}};
    for (int s = 0; s < 4; s++) {
        const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        problem p;
        make(&p, M, N, K, FAST_GEMM_ACC, 1, 11u + (unsigned)s);
        fast_wpack w;
        assert_int_equal(samc__fast_wpack_init(&w, p.W, K + 1, N, K, FAST_F32), SAMC_OK);
        const size_t sz = sizeof(float) * (size_t)M * p.ldc;
        float *C1 = malloc(sz), *C2 = malloc(sz);
        memcpy(C1, p.C0, sz);
        samc__fast_gemm_1t(M, p.A, p.lda, &w, p.b, C1, p.ldc, FAST_GEMM_ACC);
        const int nts[] = {2, 3, 7, 16};
        for (int t = 0; t < 4; t++) {
            memcpy(C2, p.C0, sz);
            samc__fast_gemm(nts[t], M, p.A, p.lda, &w, p.b, C2, p.ldc, FAST_GEMM_ACC);
            assert_same(C1, C2, sz);
        }
        /* samc__fast_linear on the same weight (rows ldw = K + 1 apart are not
         * what samc_linear holds, so repack contiguously) */
        float *Wc = malloc(sizeof(float) * (size_t)N * K);
        for (int j = 0; j < N; j++)
            memcpy(Wc + (int64_t)j * K, p.W + (int64_t)j * (K + 1), sizeof(float) * (size_t)K);
        const samc_linear l = {.w = Wc, .b = p.b, .in = K, .out = N};
        memcpy(C2, p.C0, sz);
        samc__fast_linear(2, p.A, p.lda, M, &l, C2, p.ldc, 1);
        assert_same(C1, C2, sz);
        assert_true(check(&p, C1, 0) < 2e-6);
        free(Wc), free(C1), free(C2);
        samc__fast_wpack_free(&w);
        unmake(&p);
    }
}

/* The grid uses every thread on the encoders' shapes at 16 threads, and no
 * more than it has. */
static void test_grid(void **st)
{
    (void)st;
    const int shapes[][3] = {{65536, 288, 96}, {65536, 96, 384}, {16384, 576, 192}, {4096, 1152, 384},
                             {4096, 384, 1536}, {1024, 2304, 768}, {1024, 768, 3072}, {64, 2048, 256},
                             {8, 256, 256}, {4096, 144, 576}};
    for (int s = 0; s < 10; s++)
        for (int nt = 1; nt <= 16; nt++) {
            int gm, gn;
            samc__fast_gemm_grid(nt, shapes[s][0], shapes[s][1], shapes[s][2], &gm, &gn);
            assert_true(gm >= 1 && gn >= 1 && gm * gn <= nt);
            if (nt == 16 && s < 7) {
                if (gm * gn < 15)
                    print_error("shape %d: grid %d x %d at 16 threads\n", s, gm, gn);
                assert_true(gm * gn >= 15);
            }
        }
}

static void test_bf16_kernels(void **st)
{
    (void)st;
    const int kerns[] = {FAST_KERN_FALLBACK, FAST_KERN_AVX512BF16, FAST_KERN_AMX_EMU, FAST_KERN_AMX, FAST_KERN_NEON_BF16};
    for (int i = 0; i < 5; i++) {
        if (!samc__fast_cpu_has_kernel(kerns[i])) {
            printf("  bf16 kernel %s: not on this CPU, skipped\n", samc__fast_bf16_kernel_name(kerns[i]));
            continue;
        }
        samc__fast_bf16_force_kernel(kerns[i]);
        /* against the exact product of the bf16-rounded operands: only
         * fp32 accumulation error remains */
        run_all(FAST_BF16, kerns[i], 2e-6, 1);
        printf("  bf16 kernel %s: ok\n", samc__fast_bf16_kernel_name(kerns[i]));
    }
    samc__fast_bf16_force_kernel(-1);
}

/* A weight packed for AMX (K in 32s) runs on the other kernels too. */
static void test_bf16_layouts_interchange(void **st)
{
    (void)st;
    problem p;
    make(&p, 29, 70, 100, FAST_GEMM_ACC, 1, 5);
    fast_wpack w;
    assert_int_equal(samc__fast_bf16_pack_for(&w, p.W, p.K + 1, p.N, p.K, FAST_KERN_AMX), SAMC_OK);
    assert_int_equal(w.Kp, 128);
    float *C = malloc(sizeof(float) * (size_t)p.M * p.ldc);
    const int kerns[] = {FAST_KERN_FALLBACK, FAST_KERN_AVX512BF16, FAST_KERN_AMX_EMU, FAST_KERN_NEON_BF16};
    for (int i = 0; i < 4; i++) {
        if (!samc__fast_cpu_has_kernel(kerns[i]))
            continue;
        samc__fast_bf16_force_kernel(kerns[i]);
        memcpy(C, p.C0, sizeof(float) * (size_t)p.M * p.ldc);
        samc__fast_gemm(2, p.M, p.A, p.lda, &w, p.b, C, p.ldc, FAST_GEMM_ACC);
        assert_true(check(&p, C, 1) < 2e-6);
    }
    samc__fast_bf16_force_kernel(-1);
    free(C);
    samc__fast_wpack_free(&w);
    unmake(&p);
}

/* bf16 rounding: nearest even, NaN stays NaN, infinities stay. */
static void test_bf16_rounding(void **st)
{
    (void)st;
    assert_int_equal(fast_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(fast_f32_to_bf16(1.00390625f), 0x3f80);  /* halfway, even stays */
    assert_int_equal(fast_f32_to_bf16(1.01171875f), 0x3f82);  /* halfway, odd rounds up */
    assert_int_equal(fast_f32_to_bf16(-INFINITY), 0xff80);
    assert_true(isnan(fast_bf16_to_f32(fast_f32_to_bf16(NAN))));
    unsigned s = 1;
    float x[100];
    uint16_t y[100];
    for (int i = 0; i < 100; i++)
        x[i] = frand(&s) * 1000.0f;
    samc__fast_f32_to_bf16_row(x, y, 100);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(y[i], fast_f32_to_bf16(x[i]));
        assert_true(fabs(fast_bf16_to_f32(y[i]) - x[i]) <= fabs(x[i]) * (1.0 / 256.0));
    }
}

/* C = act(A W^T + b + R) with R a separate buffer: the same as copying R
 * into C and accumulating, for fp32 and every bf16 kernel, R untouched. */
static void test_residual_input(void **st)
{
    (void)st;
    const int kerns[] = {-2 /* fp32 */, FAST_KERN_FALLBACK, FAST_KERN_AVX512BF16, FAST_KERN_AMX_EMU, FAST_KERN_NEON_BF16};
    for (int kk = 0; kk < 5; kk++) {
        if (kerns[kk] >= 0 && !samc__fast_cpu_has_kernel(kerns[kk]))
            continue;
        for (int v = 0; v < 3; v++) {
            const int M = 37 + 11 * v, N = 70 + 29 * v, K = 100 + 300 * v;
            problem p;
            make(&p, M, N, K, FAST_GEMM_ACC | (v == 1 ? FAST_GEMM_GELU : 0), v != 2, 40u + (unsigned)v);
            fast_wpack w;
            assert_int_equal(kerns[kk] < 0 ? samc__fast_wpack_init(&w, p.W, K + 1, N, K, FAST_F32)
                                           : samc__fast_bf16_pack_for(&w, p.W, K + 1, N, K, kerns[kk]),
                             SAMC_OK);
            if (kerns[kk] >= 0)
                samc__fast_bf16_force_kernel(kerns[kk]);
            const size_t sz = sizeof(float) * (size_t)M * p.ldc;
            float *C = malloc(sz), *R = malloc(sz);
            memcpy(R, p.C0, sz);
            for (size_t i = 0; i < (size_t)M * p.ldc; i++)
                C[i] = p.C0[i]; /* padding columns must stay */
            for (int i = 0; i < M; i++) /* garbage in C's product area: it must not be read */
                for (int j = 0; j < N; j++)
                    C[(int64_t)i * p.ldc + j] = NAN;
            samc__fast_gemm_res(v + 1, M, p.A, p.lda, &w, p.bias ? p.b : NULL, R, p.ldc, C, p.ldc, p.flags & ~FAST_GEMM_ACC);
            assert_memory_equal(R, p.C0, sz);
            const double e = check(&p, C, kerns[kk] >= 0);
            if (!(e <= 2e-6))
                print_error("kern %d v %d: err %g\n", kerns[kk], v, e);
            assert_true(e <= 2e-6);
            samc__fast_bf16_force_kernel(-1);
            free(C), free(R);
            samc__fast_wpack_free(&w);
            unmake(&p);
        }
    }
}

/* Gaussian-ish value (sum of 4 uniforms, variance 1) */
static float grand(unsigned *s)
{
    float t = 0;
    for (int i = 0; i < 4; i++)
        t += frand(s);
    return t * 0.8660254f; /* uniform(-1,1) has variance 1/3 */
}

/* What bf16 costs on realistic operands: activations ~ N(0, 1) (after a
 * LayerNorm), weights ~ N(0, 1/K) (trained linears are of that scale),
 * against a double reference on the fp32 operands. Reported as relative RMS
 * error (sqrt of the nmse) and max |error| / max |reference|; bounded
 * loosely (bf16 has 8 significant bits: ~2^-9 per operand). */
static void test_bf16_error_realistic(void **st)
{
    (void)st;
    const int shapes[][3] = {{512, 288, 96}, {512, 96, 384}, {256, 1536, 384}, {256, 384, 1536}, {128, 768, 3072}};
    for (int sh = 0; sh < 5; sh++) {
        const int M = shapes[sh][0], N = shapes[sh][1], K = shapes[sh][2];
        unsigned s = 99u + (unsigned)sh;
        float *A = malloc(sizeof(float) * (size_t)M * K), *W = malloc(sizeof(float) * (size_t)N * K);
        float *C = malloc(sizeof(float) * (size_t)M * N), *C32 = malloc(sizeof(float) * (size_t)M * N);
        for (int64_t i = 0; i < (int64_t)M * K; i++)
            A[i] = grand(&s);
        for (int64_t i = 0; i < (int64_t)N * K; i++)
            W[i] = grand(&s) / sqrtf((float)K);
        fast_wpack w16, w32;
        assert_int_equal(samc__fast_wpack_init(&w16, W, K, N, K, FAST_BF16), SAMC_OK);
        assert_int_equal(samc__fast_wpack_init(&w32, W, K, N, K, FAST_F32), SAMC_OK);
        samc__fast_gemm(2, M, A, K, &w16, NULL, C, N, 0);
        samc__fast_gemm(2, M, A, K, &w32, NULL, C32, N, 0);
        double se = 0, sr = 0, me = 0, mr = 0, se32 = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double r = 0;
                for (int k = 0; k < K; k++)
                    r += (double)A[(int64_t)i * K + k] * W[(int64_t)j * K + k];
                const double e = C[(int64_t)i * N + j] - r, e32 = C32[(int64_t)i * N + j] - r;
                se += e * e, sr += r * r, se32 += e32 * e32;
                me = fabs(e) > me ? fabs(e) : me;
                mr = fabs(r) > mr ? fabs(r) : mr;
            }
        printf("  bf16 GEMM %4d x %4d x %4d (%s): rel RMS error %.2e, max err / max |ref| %.2e (fp32: rel RMS %.1e)\n",
               M, N, K, samc__fast_bf16_kernel_name(w16.kern), sqrt(se / sr), me / mr, sqrt(se32 / sr));
        assert_true(sqrt(se / sr) < 1e-2 && me / mr < 3e-2);
        assert_true(sqrt(se32 / sr) < 1e-6);
        samc__fast_wpack_free(&w16), samc__fast_wpack_free(&w32);
        free(A), free(W), free(C), free(C32);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_wpack),       cmocka_unit_test(test_f32_grids_bitwise),
        cmocka_unit_test(test_grid),            cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_bf16_kernels),    cmocka_unit_test(test_bf16_layouts_interchange),
        cmocka_unit_test(test_bf16_error_realistic), cmocka_unit_test(test_residual_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
