/* SPDX-License-Identifier: Apache-2.0 */
/* test_fast_kernels.c - fast/'s building blocks against plain double loops:
 * the own sgemm (every micro-kernel height, column tails, K blocking, both B
 * layouts, A given transposed, accumulate), packed weights, softmax,
 * LayerNorm and GELU(erf), so a kernel bug is caught before parity has to
 * find it through a whole layer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "fast/fast.h"

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

static void check_gemm(int M, int N, int K, int transa, int transb, int acc)
{
    unsigned s = (unsigned)(M * 131 + N * 17 + K);
    const int lda = transa ? M + 3 : K + 5, ldb = transb ? K + 2 : N + 1, ldc = N + 7;
    float *A = malloc(sizeof(float) * (size_t)(transa ? K : M) * lda);
    float *B = malloc(sizeof(float) * (size_t)(transb ? N : K) * ldb);
    float *C = malloc(sizeof(float) * (size_t)M * ldc), *C0 = malloc(sizeof(float) * (size_t)M * ldc);
    for (int i = 0; i < (transa ? K : M) * lda; i++)
        A[i] = frand(&s);
    for (int i = 0; i < (transb ? N : K) * ldb; i++)
        B[i] = frand(&s);
    for (int i = 0; i < M * ldc; i++)
        C[i] = C0[i] = frand(&s);
    const int64_t rsa = transa ? 1 : lda, csa = transa ? lda : 1;
    samc__fast_sgemm(M, N, K, A, rsa, csa, B, ldb, transb, C, ldc, acc);
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double r = acc ? C0[i * ldc + j] : 0.0;
            for (int k = 0; k < K; k++)
                r += (double)A[i * rsa + k * csa] * (transb ? B[j * ldb + k] : B[k * ldb + j]);
            worst = fmax(worst, fabs(r - C[i * ldc + j]) / (1.0 + sqrt((double)K)));
        }
    for (int i = 0; i < M; i++) /* padding columns untouched */
        for (int j = N; j < ldc; j++)
            assert_true(C[i * ldc + j] == C0[i * ldc + j]);
    if (worst > 1e-5)
        print_error("M %d N %d K %d ta %d tb %d acc %d: err %g\n", M, N, K, transa, transb, acc, worst);
    assert_true(worst <= 1e-5);
    free(A), free(B), free(C), free(C0);
}

static void test_sgemm(void **st)
{
    (void)st;
    const int Ms[] = {1, 5, 12, 13, 25, 64}, Ns[] = {1, 16, 31, 32, 33, 96, 100}, Ks[] = {1, 7, 16, 96, 385, 800};
    for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
        for (size_t b = 0; b < sizeof Ns / sizeof *Ns; b++)
            for (size_t c = 0; c < sizeof Ks / sizeof *Ks; c++)
                for (int t = 0; t < 8; t++)
                    check_gemm(Ms[a], Ns[b], Ks[c], t & 1, (t >> 1) & 1, (t >> 2) & 1);
}

static void test_linear_packed_and_threads(void **st)
{
    (void)st;
    unsigned s = 7;
    const int rows = 301, in = 96, out = 288;
    float *x = malloc(sizeof(float) * rows * in), *w = malloc(sizeof(float) * out * in), *b = malloc(sizeof(float) * out);
    float *y = malloc(sizeof(float) * rows * out), *Wp = malloc(sizeof(float) * samc__fast_pack_size(out, in));
    for (int i = 0; i < rows * in; i++)
        x[i] = frand(&s);
    for (int i = 0; i < out * in; i++)
        w[i] = frand(&s);
    for (int i = 0; i < out; i++)
        b[i] = frand(&s);
    const samc_linear l = {.w = w, .b = b, .in = in, .out = out};
    samc_ctx ctx = {.num_threads = 2};
    for (int mode = 0; mode < 3; mode++) {
        if (mode == 0)
            samc__fast_linear(samc__fast_threads(&ctx), x, in, rows, &l, y, out, 0);
        else if (mode == 1) {
            samc__fast_pack_linear(&l, Wp);
            samc__fast_linear_1t(x, in, rows, &l, Wp, y, out, 0);
        } else
            samc__fast_linear_1t(x, in, 2, &l, NULL, y, out, 0); /* GEMV path */
        const int nr = mode == 2 ? 2 : rows;
        for (int r = 0; r < nr; r++)
            for (int o = 0; o < out; o++) {
                double ref = b[o];
                for (int i = 0; i < in; i++)
                    ref += (double)x[r * in + i] * w[o * in + i];
                assert_true(fabs(ref - y[r * out + o]) < 1e-4);
            }
    }
    free(x), free(w), free(b), free(y), free(Wp);
}

static void test_row_kernels(void **st)
{
    (void)st;
    unsigned s = 3;
    enum { N = 4099 };
    static float x[N], y[N], g[N], wn[N], bn[N];
    for (int i = 0; i < N; i++)
        x[i] = 8.0f * frand(&s), wn[i] = frand(&s), bn[i] = frand(&s);
    /* softmax(scale * x) */
    for (int i = 0; i < N; i++)
        y[i] = x[i];
    samc__fast_softmax_scaled(y, N, 0.37f);
    double mx = -INFINITY, sum = 0;
    for (int i = 0; i < N; i++)
        mx = fmax(mx, 0.37 * x[i]);
    for (int i = 0; i < N; i++)
        sum += exp(0.37 * x[i] - mx);
    for (int i = 0; i < N; i++)
        assert_true(fabs(y[i] - exp(0.37 * x[i] - mx) / sum) <= 4e-6 * (exp(0.37 * x[i] - mx) / sum) + 1e-12); /* float32 argument: |arg| ulp */
    /* GELU (erf) */
    for (int i = 0; i < N; i++)
        g[i] = x[i] * 0.75f;
    samc__fast_gelu(g, N);
    for (int i = 0; i < N; i++) {
        const double v = x[i] * 0.75f, ref = 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
        assert_true(fabs(g[i] - ref) <= 2e-6 * (1.0 + fabs(ref)));
    }
    /* LayerNorm over a row */
    const samc_norm n = {wn, bn, N, 1e-6f};
    samc__fast_layer_norm_rows(x, N, 1, &n, y, N);
    double mean = 0, var = 0;
    for (int i = 0; i < N; i++)
        mean += x[i];
    mean /= N;
    for (int i = 0; i < N; i++)
        var += (x[i] - mean) * (x[i] - mean);
    var /= N;
    for (int i = 0; i < N; i++) {
        const double ref = (x[i] - mean) / sqrt(var + 1e-6) * wn[i] + bn[i];
        assert_true(fabs(y[i] - ref) <= 1e-5 * (1.0 + fabs(ref)));
    }
}

static void test_transpose(void **st)
{
    (void)st;
    const int shapes[][2] = {{16, 16}, {37, 50}, {256, 64}, {5, 3}};
    for (int s = 0; s < 4; s++) {
        const int R = shapes[s][0], C = shapes[s][1], lds = C + 3, ldd = R + 5;
        float *a = malloc(sizeof(float) * R * lds), *b = calloc((size_t)C * ldd, sizeof(float));
        for (int i = 0; i < R * lds; i++)
            a[i] = (float)i;
        samc__fast_transpose(a, lds, R, C, b, ldd);
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++)
                assert_true(b[c * ldd + r] == a[r * lds + c]);
        free(a), free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgemm),
        cmocka_unit_test(test_linear_packed_and_threads),
        cmocka_unit_test(test_row_kernels),
        cmocka_unit_test(test_transpose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
