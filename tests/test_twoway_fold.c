/* SPDX-License-Identifier: Apache-2.0 */
/* test_twoway_fold.c - the two-way transformer's folded cross attentions
 * (fast/tracker/twoway_folded.c: image-side projections folded into the token
 * rows) against Attention.forward computed plainly in double precision:
 * projections, per-head softmax(scale q k^T) v, out projection. Tokens ->
 * image and image -> tokens, at SAM 2's decoder shapes (D 256, C 128, 8
 * heads, 9 tokens) on a 1024-pixel key map and at ragged small shapes, on
 * 1 and 3 threads; and the rule that decides when folding pays. The
 * parity fixtures' tiny decoders (8 heads on C 16) never fold, so this is
 * where the folded path is checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/fast.h"
#include "fast/fast_ops.h"
#include "fast/tracker/twoway_folded.h"

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

static float *rnd(size_t n, float amp, unsigned *s)
{
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++)
        x[i] = amp * frand(s);
    return x;
}

static void lin_init(samc_linear *l, int in, int out, unsigned *s)
{
    *l = (samc_linear){.in = in, .out = out};
    l->w = rnd((size_t)in * out, 1.0f / sqrtf((float)in), s);
    l->b = rnd((size_t)out, 0.1f, s);
}

static void lin_free(samc_linear *l) { free((void *)l->w), free((void *)l->b); }

/* y (n, l->out) = x l->w^T + l->b in double */
static double *lin_ref(const samc_linear *l, const float *x, int n)
{
    double *y = malloc(sizeof *y * (size_t)n * l->out);
    assert_non_null(y);
    for (int i = 0; i < n; i++)
        for (int o = 0; o < l->out; o++) {
            double s = l->b[o];
            for (int e = 0; e < l->in; e++)
                s += (double)x[(size_t)i * l->in + e] * l->w[(size_t)o * l->in + e];
            y[(size_t)i * l->out + o] = s;
        }
    return y;
}

/* Attention.forward: q (Lq, D), k, v (Lk, D) -> (Lq, D), double. */
static double *attention_ref(const samc_attention *a, const float *q, int Lq, const float *k, const float *v, int Lk)
{
    const int C = a->internal_dim, hd = C / a->heads, D = a->out.out;
    double *qp = lin_ref(&a->q, q, Lq), *kp = lin_ref(&a->k, k, Lk), *vp = lin_ref(&a->v, v, Lk);
    double *o = calloc((size_t)Lq * C, sizeof *o), *p = malloc(sizeof *p * (size_t)Lk), *y = malloc(sizeof *y * (size_t)Lq * D);
    assert_non_null(o), assert_non_null(p), assert_non_null(y);
    for (int h = 0; h < a->heads; h++)
        for (int i = 0; i < Lq; i++) {
            double mx = -INFINITY, sum = 0.0;
            for (int j = 0; j < Lk; j++) {
                double s = 0.0;
                for (int c = 0; c < hd; c++)
                    s += qp[(size_t)i * C + h * hd + c] * kp[(size_t)j * C + h * hd + c];
                p[j] = s / sqrt((double)hd);
                mx = p[j] > mx ? p[j] : mx;
            }
            for (int j = 0; j < Lk; j++)
                sum += (p[j] = exp(p[j] - mx));
            for (int j = 0; j < Lk; j++)
                for (int c = 0; c < hd; c++)
                    o[(size_t)i * C + h * hd + c] += p[j] / sum * vp[(size_t)j * C + h * hd + c];
        }
    for (int i = 0; i < Lq; i++)
        for (int e = 0; e < D; e++) {
            double s = a->out.b[e];
            for (int c = 0; c < C; c++)
                s += o[(size_t)i * C + c] * a->out.w[(size_t)e * C + c];
            y[(size_t)i * D + e] = s;
        }
    free(qp), free(kp), free(vp), free(o), free(p);
    return y;
}

/* max |got - ref| / max |ref| */
static double rel_err(const float *got, const double *ref, size_t n)
{
    double e = 0.0, m = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs(got[i] - ref[i]);
        e = d > e ? d : e;
        m = fabs(ref[i]) > m ? fabs(ref[i]) : m;
    }
    return e / m;
}

static void run_case(int D, int C, int heads, int Nq, int Nk, int nt, unsigned seed)
{
    unsigned s = seed;
    samc_attention a = {.heads = heads, .internal_dim = C};
    lin_init(&a.q, D, C, &s), lin_init(&a.k, D, C, &s), lin_init(&a.v, D, C, &s), lin_init(&a.out, C, D, &s);
    assert_true(samc__fast_twoway_fold_ok(&a, Nq));
    float *tok = rnd((size_t)Nq * D, 1.0f, &s), *tok_pe = rnd((size_t)Nq * D, 1.0f, &s);
    float *img = rnd((size_t)Nk * D, 1.0f, &s), *img_pe = rnd((size_t)Nk * D, 1.0f, &s);
    const size_t R = (size_t)heads * Nq, big = (size_t)(Nk > Nq ? Nk : Nq);
    float *buf1 = malloc(sizeof(float) * big * C), *buf2 = malloc(sizeof(float) * big * C);
    float *f = malloc(sizeof(float) * samc__fast_twoway_fold_need(&a, Nk, D));
    float *out = malloc(sizeof(float) * big * D);
    assert_non_null(buf1), assert_non_null(buf2), assert_non_null(f), assert_non_null(out);
    assert_true(R * Nk <= big * C);
    samc_error err = {0};
    samc_ctx ctx = {.err = &err, .prep_slot = -1, .num_threads = nt};

    /* tokens -> image: q = tokens + pe, k = image + pe, v = image */
    samc__fast_t2i_folded(&ctx, nt, &a, tok_pe, Nq, img_pe, img, Nk, out, buf1, buf2, f);
    double *ref = attention_ref(&a, tok_pe, Nq, img_pe, img, Nk);
    const double e1 = rel_err(out, ref, (size_t)Nq * D);
    free(ref);
    /* image -> tokens: q = image + pe, k = tokens + pe, v = tokens */
    samc__fast_i2t_folded(&ctx, nt, &a, img_pe, Nk, tok_pe, tok, Nq, out, buf1, buf2, f);
    ref = attention_ref(&a, img_pe, Nk, tok_pe, tok, Nq);
    const double e2 = rel_err(out, ref, (size_t)Nk * D);
    free(ref);
    print_message("D %d C %d heads %d Nq %d Nk %d threads %d: t2i rel %.2e, i2t rel %.2e\n", D, C, heads, Nq, Nk, nt,
                  e1, e2);
    assert_true(e1 < 2e-5);
    assert_true(e2 < 2e-5);
    free(tok), free(tok_pe), free(img), free(img_pe), free(buf1), free(buf2), free(f), free(out);
    lin_free(&a.q), lin_free(&a.k), lin_free(&a.v), lin_free(&a.out);
}

static void test_sam2_decoder_shapes(void **state)
{
    (void)state;
    run_case(256, 128, 8, 9, 1024, 1, 1u);
    run_case(256, 128, 8, 8, 1024, 3, 2u);
}

static void test_ragged_shapes(void **state)
{
    (void)state;
    run_case(40, 36, 3, 5, 301, 1, 3u);  /* head width 12, R 15, Nk not a block multiple */
    run_case(64, 32, 2, 7, 77, 3, 4u);
    run_case(24, 64, 4, 1, 17, 2, 5u);   /* one token */
}

static void test_fold_rule(void **state)
{
    (void)state;
    samc_attention a = {.heads = 8, .internal_dim = 128, .q.w = (const float *)1, .k.w = (const float *)1,
                        .v.w = (const float *)1, .out.w = (const float *)1};
    assert_true(samc__fast_twoway_fold_ok(&a, 9));   /* 72 rows for 128 columns */
    assert_true(samc__fast_twoway_fold_ok(&a, 12));  /* 96: the limit */
    assert_false(samc__fast_twoway_fold_ok(&a, 13)); /* many prompt tokens: the plain path */
    a.internal_dim = 16;                             /* the fixtures' tiny decoders */
    assert_false(samc__fast_twoway_fold_ok(&a, 9));
    a.internal_dim = 128, a.k.w = NULL;              /* no fp32 weight to fold */
    assert_false(samc__fast_twoway_fold_ok(&a, 9));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sam2_decoder_shapes),
        cmocka_unit_test(test_ragged_shapes),
        cmocka_unit_test(test_fold_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
