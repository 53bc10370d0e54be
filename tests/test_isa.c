/* SPDX-License-Identifier: Apache-2.0 */
/* test_isa.c - every instruction-set level this CPU runs (fast/isa.h), in
 * one process: the GEMM on shapes with row, column and K-block tails, with
 * and without the initial value, bias and activation, against a double
 * reference, and bit for bit between the levels that fuse (v3, v4, NEON:
 * the same products in the same order); the row and element-wise kernels
 * against plain formulas. The ctest runs per forced level (SAMC_ISA) check
 * the models; this checks the kernels of levels the CI machine does not
 * pick by itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/fast.h"
#include "fast/isa.h"

static float rnd(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

static float *vec(size_t n, unsigned seed)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = rnd(&seed);
    return x;
}

/* The levels this CPU runs, best first. */
static int levels(const fast_isa **out)
{
    static const int all[] = {SAMC_ISA_V4, SAMC_ISA_V3, SAMC_ISA_V2, SAMC_ISA_NEON, SAMC_ISA_SCALAR};
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (samc__fast_isa_table(all[i]))
            out[n++] = samc__fast_isa_table(all[i]);
    return n;
}

static int fuses(const fast_isa *t) { return t->level != SAMC_ISA_V2 && t->level != SAMC_ISA_SCALAR; }

static double gelu_ref(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }

static void test_gemm_levels(void **st)
{
    (void)st;
    const fast_isa *lv[8];
    const int nl = levels(lv);
    assert_true(nl >= 1);
    printf("levels: %d (best %s; this process runs %s)\n", nl, lv[0]->name, samc__fast_isa()->name);
    /* M, N, K: full tiles, row tails (mr 1..11), column tails inside a
     * panel and a vector, K over one block (samc__fast_kc cuts 800 in 2) */
    const int shapes[][3] = {{1, 1, 1}, {13, 33, 7}, {12, 32, 96}, {7, 17, 385}, {25, 100, 800}, {6, 5, 3}, {50, 64, 64}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int variant = 0; variant < 4; variant++) {
            const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            const int with_r = variant & 1, act = variant == 2 ? FAST_ACT_GELU : variant == 3 ? FAST_ACT_RELU : 0;
            const int64_t lda = K + 3, ldc = N + 5;
            float *A = vec((size_t)M * lda, 1u + (unsigned)s), *B = vec((size_t)N * K, 7u + (unsigned)s);
            float *R = vec((size_t)M * ldc, 3u), *bias = vec((size_t)N, 5u);
            float *Bp = malloc(samc__fast_pack_size(N, K) * sizeof *Bp);
            float *C[8];
            for (int l = 0; l < nl; l++) {
                C[l] = malloc((size_t)M * ldc * sizeof *C[l]);
                /* pack with this level too: every level's layout is the same */
                const int KC = samc__fast_kc(K), npad = (N + FAST_NR - 1) / FAST_NR * FAST_NR;
                for (int k0 = 0; k0 < K; k0 += KC)
                    lv[l]->pack(N, K - k0 < KC ? K - k0 : KC, k0, B, K, NULL, 1, Bp + (int64_t)k0 * npad, 0,
                                npad / FAST_NR);
                lv[l]->gemm(M, N, K, A, lda, 1, Bp, 0, npad / FAST_NR, with_r ? R : NULL, ldc, C[l], ldc, bias, act);
            }
            for (int l = 0; l < nl; l++)
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < N; j++) {
                        double ref = (with_r ? R[(int64_t)i * ldc + j] : 0.0) + bias[j];
                        for (int k = 0; k < K; k++)
                            ref += (double)A[(int64_t)i * lda + k] * B[(int64_t)j * K + k];
                        ref = act == FAST_ACT_GELU ? gelu_ref(ref) : act == FAST_ACT_RELU ? (ref > 0 ? ref : 0) : ref;
                        const float got = C[l][(int64_t)i * ldc + j];
                        if (fabs(got - ref) > 1e-5 * (1.0 + sqrt((double)K)) * (1.0 + fabs(ref))) {
                            printf("%s: M %d N %d K %d variant %d: C[%d,%d] %g, expected %g\n", lv[l]->name, M, N, K,
                                   variant, i, j, (double)got, ref);
                            fail();
                        }
                    }
            for (int l = 1; l < nl; l++)
                if (fuses(lv[0]) && fuses(lv[l]))
                    for (int i = 0; i < M; i++)
                        assert_memory_equal(C[0] + (int64_t)i * ldc, C[l] + (int64_t)i * ldc, (size_t)N * sizeof(float));
            for (int l = 0; l < nl; l++)
                free(C[l]);
            free(A), free(B), free(R), free(bias), free(Bp);
        }
}

static void test_rows_levels(void **st)
{
    (void)st;
    const fast_isa *lv[8];
    const int nl = levels(lv);
    enum { N = 203 }; /* a vector tail at every level */
    float *x = vec(N, 11u), *w = vec(N, 12u), *b = vec(N, 13u), *y = malloc(N * sizeof *y);
    float *z = malloc(N * sizeof *z);
    for (int i = 0; i < N; i++)
        x[i] *= 4.0f;
    for (int l = 0; l < nl; l++) {
        const fast_isa *t = lv[l];
        /* LayerNorm */
        const samc_norm nrm = {.dim = N, .w = w, .b = b, .eps = 1e-6f};
        t->layer_norm_row(x, &nrm, y);
        double mean = 0, var = 0;
        for (int i = 0; i < N; i++)
            mean += x[i];
        mean /= N;
        for (int i = 0; i < N; i++)
            var += (x[i] - mean) * (x[i] - mean);
        var /= N;
        for (int i = 0; i < N; i++)
            assert_true(fabs(y[i] - ((x[i] - mean) / sqrt(var + 1e-6) * w[i] + b[i])) < 1e-5);
        /* GELU, sigmoid, ReLU, add, scale */
        memcpy(y, x, N * sizeof *y);
        t->gelu(y, N);
        for (int i = 0; i < N; i++)
            assert_true(fabs(y[i] - gelu_ref(x[i])) < 2e-6 * (1 + fabs(x[i])));
        memcpy(y, x, N * sizeof *y);
        t->sigmoid(y, N);
        for (int i = 0; i < N; i++)
            assert_true(fabs(y[i] - 1.0 / (1.0 + exp(-x[i]))) < 1e-6);
        memcpy(y, x, N * sizeof *y);
        t->relu(y, N);
        for (int i = 0; i < N; i++)
            assert_true(y[i] == (x[i] > 0 ? x[i] : 0.0f));
        t->add(y, x, w, N);
        for (int i = 0; i < N; i++)
            assert_true(y[i] == x[i] + w[i]);
        t->scale(y, x, N, 0.5f);
        for (int i = 0; i < N; i++)
            assert_true(y[i] == x[i] * 0.5f);
        /* softmax */
        memcpy(y, x, N * sizeof *y);
        t->softmax_scaled(y, N, 0.7f);
        double sum = 0, mx = -INFINITY;
        for (int i = 0; i < N; i++)
            mx = x[i] > mx ? x[i] : mx;
        for (int i = 0; i < N; i++)
            sum += exp(0.7 * (x[i] - mx));
        for (int i = 0; i < N; i++)
            assert_true(fabs(y[i] - exp(0.7 * (x[i] - mx)) / sum) < 1e-6);
        /* dot, transpose */
        double d = 0;
        for (int i = 0; i < N; i++)
            d += (double)x[i] * w[i];
        assert_true(fabs(t->dot(x, w, N) - d) < 1e-4);
        float tin[37 * 21], tout[21 * 37];
        for (int i = 0; i < 37 * 21; i++)
            tin[i] = (float)i;
        t->transpose(tin, 21, 37, 21, tout, 37);
        for (int r = 0; r < 37; r++)
            for (int c = 0; c < 21; c++)
                assert_true(tout[c * 37 + r] == tin[r * 21 + c]);
        /* the bilinear blend: fmaf's steps, bit for bit on every level */
        t->lerp_rows(x, w, 0.25f, 0.75f, N, y);
        for (int i = 0; i < N; i++)
            assert_true(y[i] == fmaf(x[i], 0.25f, w[i] * 0.75f));
        /* mask product: 3 rows of hyper against 5 channels */
        float hyper[3 * 5], up[5 * 40], out[3 * 40];
        for (int i = 0; i < 15; i++)
            hyper[i] = x[i];
        for (int i = 0; i < 200; i++)
            up[i] = w[i % N];
        t->mask_product(3, 5, hyper, up, 40, 37, out);
        for (int q = 0; q < 3; q++)
            for (int p = 0; p < 37; p++) {
                double acc = 0;
                for (int c = 0; c < 5; c++)
                    acc += (double)hyper[q * 5 + c] * up[c * 40 + p];
                assert_true(fabs(out[q * 40 + p] - acc) < 1e-5);
            }
        /* max pooling rows, NaN winning wherever it is */
        const float *rows[3] = {x, w, b};
        float wn[N];
        memcpy(wn, w, sizeof wn);
        wn[5] = NAN, wn[N - 1] = NAN;
        rows[1] = wn;
        t->max_rows(z, rows, 3, N);
        for (int i = 0; i < N; i++) {
            if (isnan(wn[i]))
                assert_true(isnan(z[i]));
            else
                assert_true(z[i] == fmaxf(fmaxf(x[i], wn[i]), b[i]));
        }
        /* bilinear taps along x and the antialiased row: the core kernels' steps */
        samc_lin_tap taps[40];
        samc_bilinear_taps(N, 40, taps);
        t->lerp_taps(x, taps, 40, y);
        for (int j = 0; j < 40; j++)
            assert_true(y[j] == fmaf(x[taps[j].i0], taps[j].l0, x[taps[j].i1] * taps[j].l1));
        samc_aa_taps aa = {0};
        assert_int_equal(samc_aa_taps_make(N, 37, &aa), SAMC_OK);
        t->aa_row(x, aa.xmin, aa.n, aa.w, aa.stride, 37, y);
        for (int j = 0; j < 37; j++)
            assert_true(y[j] == samc_aa_dot(x + aa.xmin[j], 1, aa.w + (int64_t)j * aa.stride, aa.n[j]));
        samc_aa_taps_free(&aa);
    }
    free(x), free(w), free(b), free(y), free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gemm_levels), cmocka_unit_test(test_rows_levels)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
