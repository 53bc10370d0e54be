/* SPDX-License-Identifier: Apache-2.0 */
/* test_sam3_geo_prompt.c - fast's body of the SAM 3 geometry prompt encoding
 * (geometry_encoder.@encode_prompt) is the one that runs, and it agrees with
 * ref where the committed fixtures cannot show it:
 *  - an exec on fast resolves the layer to fast's own body (that no SAM 3
 *    body is left to a fallback is tests/test_registry.c's check);
 *  - on the tiny fixture model, fast and ref given the same inputs (points
 *    inside and outside the map, boxes tiny, full-image and at the border,
 *    padded entries in either part, labels 0 and 1, batch 2, points only,
 *    boxes only) produce the same mask and embeddings within fast's
 *    tolerance (the fixtures' sessions hold boxes only, batch 1), and so do
 *    random records of the released width (d 256, roi 7) on its 72 x 72 map;
 *  - both refuse a label other than 0 or 1 and mis-shaped outputs alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/rng.h"
#include "core/models/sam3/sam3_model.h"
#include "util/testutil.h"

#define FIXTURE "fixtures/sam3/tiny_s2_text_boxes.h5"
#define LAYER "geometry_encoder.@encode_prompt"

typedef struct fixture {
    samc_sam3_model *m;
    samc_exec fast, ref;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char *path = tu_src_path(FIXTURE);
    samc_error e = {0};
    samc_status st = samc_sam3_model_load(path, NULL, &f->m, &e);
    if (!st)
        st = samc_sam3_exec_init(&f->fast, f->m, "fast", &e);
    if (!st)
        st = samc_sam3_exec_init(&f->ref, f->m, "ref", &e);
    if (st)
        fprintf(stderr, "%s: %s\n", path, e.msg);
    else
        samc_exec_set_threads(&f->fast, 2);
    free(path);
    *state = f;
    return st != SAMC_OK;
}

static int teardown(void **state)
{
    fixture *f = *state;
    samc_exec_free(&f->fast), samc_exec_free(&f->ref);
    samc_sam3_model_free(f->m);
    free(f);
    return 0;
}

/* The fast exec runs fast's own geometry prompt body (that no SAM 3 body
 * is left to a fallback is tests/test_registry.c's). */
static void test_fast_serves_geo_prompt(void **state)
{
    fixture *f = *state;
    const samc_impl *fast = samc_impl_find("fast");
    assert_ptr_equal(samc_exec_find(&f->fast, LAYER)->impl, fast);
    assert_ptr_equal(((const samc_sam3_ops *)samc_exec_find(&f->fast, LAYER)->ops)->sam3_geo_prompt,
                     ((const samc_sam3_ops *)fast->ops[SAMC_OPS_SAM3])->sam3_geo_prompt);
}

/* One call's tensors: (n,B,k) prompts, (B,n) masks, (n,B) labels. */
typedef struct geo_in {
    samc_tensor pts, pmask, plab, box, bmask, blab, img;
    int H, W;
} geo_in;

static void alloc_t(samc_tensor *t, int nd, int64_t a, int64_t b, int64_t c)
{
    const int64_t s[3] = {a, b, c};
    assert_int_equal(samc_tensor_alloc(t, nd, s, NULL), SAMC_OK);
}

/* Np points and Nb boxes for batch B on an H x W map of C channels. */
static void make_inputs(geo_in *in, int Np, int Nb, int B, int C, uint64_t seed)
{
    static const float edge_pts[3][2] = {{1.05f, -0.02f}, {0.0f, 0.0f}, {1.0f, 0.999f}};
    static const float edge_boxes[3][4] = {{0.5f, 0.5f, 1.0f, 1.0f}, {0.2f, 0.7f, 0.01f, 0.01f},
                                           {0.95f, 0.05f, 0.2f, 0.3f}};
    memset(in, 0, sizeof *in);
    in->H = 9, in->W = 11;
    uint64_t s = seed;
    alloc_t(&in->img, 3, (int64_t)in->H * in->W, B, C);
    for (int64_t i = 0; i < samc_numel(&in->img); i++)
        in->img.data[i] = 2.0f * samc_rng_uniform(&s);
    alloc_t(&in->pts, 3, Np, B, 2), alloc_t(&in->pmask, 2, B, Np, 0), alloc_t(&in->plab, 2, Np, B, 0);
    alloc_t(&in->box, 3, Nb, B, 4), alloc_t(&in->bmask, 2, B, Nb, 0), alloc_t(&in->blab, 2, Nb, B, 0);
    for (int i = 0; i < Np; i++)
        for (int b = 0; b < B; b++) {
            float *p = in->pts.data + ((int64_t)i * B + b) * 2;
            const int e = (i + b) % 4;
            p[0] = e < 3 ? edge_pts[e][0] : 0.5f + 0.6f * samc_rng_uniform(&s);
            p[1] = e < 3 ? edge_pts[e][1] : 0.5f + 0.6f * samc_rng_uniform(&s);
            in->plab.data[i * B + b] = (float)((i + b) % 2);
            in->pmask.data[b * Np + i] = (b == 1 && i == Np - 1) ? 1.0f : 0.0f; /* batch 1: last padded */
        }
    for (int i = 0; i < Nb; i++)
        for (int b = 0; b < B; b++) {
            float *x = in->box.data + ((int64_t)i * B + b) * 4;
            const int e = (i + 2 * b) % 4;
            for (int k = 0; k < 4; k++)
                x[k] = e < 3 ? edge_boxes[e][k] : 0.4f + 0.2f * samc_rng_uniform(&s);
            in->blab.data[i * B + b] = (float)((i + b + 1) % 2);
            in->bmask.data[b * Nb + i] = (b == 0 && Nb > 1 && i == Nb - 1) ? 1.0f : 0.0f; /* batch 0: last padded */
        }
}

static void free_inputs(geo_in *in)
{
    samc_tensor *t[] = {&in->pts, &in->pmask, &in->plab, &in->box, &in->bmask, &in->blab, &in->img};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        samc_tensor_release(t[i]);
}

/* The body `x` resolves for LAYER on `in` -> embeds, mask. */
static samc_status run_body(samc_exec *x, const geo_in *in, samc_tensor *embeds, samc_tensor *mask, char *msg,
                            size_t n)
{
    const samc_layer *L = samc_exec_find(x, LAYER);
    const samc_sam3_model *m = x->model;
    samc_ctx *ctx = samc_layer_ctx(x, L);
    const samc_tensor *pts = samc_numel(&in->pts) ? &in->pts : NULL, *box = samc_numel(&in->box) ? &in->box : NULL;
    samc_status st = ((const samc_sam3_ops *)L->ops)
                         ->sam3_geo_prompt(ctx, &m->geo, pts, pts ? &in->pmask : NULL, pts ? &in->plab : NULL, box,
                                      box ? &in->bmask : NULL, box ? &in->blab : NULL, &in->img, in->H, in->W, embeds,
                                      mask);
    snprintf(msg, n, "%s", st ? ctx->err->msg : "");
    return st;
}

static double max_abs_diff(const samc_tensor *a, const samc_tensor *b, double *ref_max)
{
    double d = 0;
    *ref_max = 0;
    for (int64_t i = 0; i < samc_numel(a); i++) {
        d = fmax(d, fabs((double)a->data[i] - (double)b->data[i]));
        *ref_max = fmax(*ref_max, fabs((double)b->data[i]));
    }
    return d;
}

static void compare_case(fixture *f, int Np, int Nb, int B)
{
    const samc_sam3_model *m = f->m;
    const int C = m->geo.d_model, N = Np + Nb + (m->geo.cls_embed ? 1 : 0);
    geo_in in;
    make_inputs(&in, Np, Nb, B, C, 1000u + (uint64_t)(Np * 16 + Nb * 4 + B));
    samc_tensor e[2] = {{0}}, k[2] = {{0}};
    char msg[512];
    for (int j = 0; j < 2; j++) {
        alloc_t(&e[j], 3, N, B, C), alloc_t(&k[j], 2, B, N, 0);
        samc_status st = run_body(j ? &f->ref : &f->fast, &in, &e[j], &k[j], msg, sizeof msg);
        if (st)
            print_error("%s: %s\n", j ? "ref" : "fast", msg);
        assert_int_equal(st, SAMC_OK);
    }
    assert_memory_equal(k[0].data, k[1].data, (size_t)B * N * sizeof(float));
    double ref_max, d = max_abs_diff(&e[0], &e[1], &ref_max);
    const double rel = d / fmax(ref_max, 1e-30), tol = samc_impl_find("fast")->tol;
    printf("points %d, boxes %d, batch %d: fast vs ref rel %.3g (max|ref| %.3g, tol %g)\n", Np, Nb, B, rel, ref_max,
           tol);
    assert_true(ref_max > 0);
    assert_true(rel <= tol);
    for (int j = 0; j < 2; j++)
        samc_tensor_release(&e[j]), samc_tensor_release(&k[j]);
    free_inputs(&in);
}

static void test_fast_matches_ref(void **state)
{
    fixture *f = *state;
    compare_case(f, 4, 3, 2); /* points and boxes, padding in both parts */
    compare_case(f, 5, 0, 1); /* points only */
    compare_case(f, 0, 4, 1); /* boxes only */
    compare_case(f, 1, 1, 3);
}

/* Random records of the released width (d 256, roi 7, every option on),
 * weights ~ U(-1, 1) / sqrt(fan-in) so the activations stay O(1). */
typedef struct wide_geo {
    samc_sam3_geometry_encoder g;
    float *arena;
} wide_geo;

static float *take(float **p, size_t n, float scale, uint64_t *s)
{
    float *x = *p;
    for (size_t i = 0; i < n; i++)
        x[i] = scale * samc_rng_uniform(s);
    *p += n;
    return x;
}

static void wide_linear(samc_linear *l, int in, int out, float **p, uint64_t *s)
{
    l->in = in, l->out = out;
    l->w = take(p, (size_t)in * out, 1.0f / sqrtf((float)in), s);
    l->b = take(p, (size_t)out, 0.1f, s);
}

static void wide_norm(samc_norm *n, int d, float **p, uint64_t *s)
{
    n->dim = d, n->eps = 1e-5f;
    float *w = take(p, (size_t)d, 0.2f, s);
    for (int i = 0; i < d; i++)
        w[i] += 1.0f;
    n->w = w, n->b = take(p, (size_t)d, 0.1f, s);
}

static void make_wide(wide_geo *w)
{
    const int d = 256, R = 7;
    memset(w, 0, sizeof *w);
    samc_sam3_geometry_encoder *g = &w->g;
    const size_t n = (size_t)d * R * R * d + 8 * (size_t)d * (d + 2) + 64 * (size_t)d;
    w->arena = malloc(n * sizeof *w->arena);
    assert_non_null(w->arena);
    float *p = w->arena;
    uint64_t s = 42;
    g->d_model = d, g->roi_size = R;
    g->label_embed = take(&p, 2 * (size_t)d, 1.0f, &s);
    g->cls_embed = take(&p, (size_t)d, 1.0f, &s);
    wide_linear(&g->points_direct, 2, d, &p, &s);
    wide_linear(&g->points_pool, d, d, &p, &s);
    wide_linear(&g->points_pos, d, d, &p, &s);
    wide_linear(&g->boxes_direct, 4, d, &p, &s);
    wide_linear(&g->boxes_pos, d + 2, d, &p, &s);
    wide_linear(&g->final_proj, d, d, &p, &s);
    g->boxes_pool = (samc_conv2d){.cin = d, .cout = d, .kh = R, .kw = R, .stride = 1, .pad = 0, .groups = 1};
    g->boxes_pool.w = take(&p, (size_t)d * d * R * R, 1.0f / sqrtf((float)(d * R * R)), &s);
    g->boxes_pool.b = take(&p, (size_t)d, 0.1f, &s);
    g->has_img_pre_norm = g->has_final_proj = true;
    wide_norm(&g->img_pre_norm, d, &p, &s);
    wide_norm(&g->norm, d, &p, &s);
    g->pe = (samc_sine_pe){.num_pos_feats = d, .temperature = 10000.0f, .normalize = true,
                           .scale = (float)(2.0 * M_PI)};
    assert_true((size_t)(p - w->arena) <= n);
}

/* The released width on a 72 x 72 map (1008 px): points and boxes, a box
 * over the whole map (11 x 11 samples per bin), fast against ref. */
static void test_released_width(void **state)
{
    fixture *f = *state;
    wide_geo w;
    make_wide(&w);
    const int C = w.g.d_model, B = 1, Np = 3, Nb = 4, N = Np + Nb + 1;
    geo_in in;
    make_inputs(&in, Np, Nb, B, C, 99);
    samc_tensor_release(&in.img);
    in.H = in.W = 72;
    alloc_t(&in.img, 3, (int64_t)in.H * in.W, B, C);
    uint64_t s = 5;
    for (int64_t i = 0; i < samc_numel(&in.img); i++)
        in.img.data[i] = 3.0f * samc_rng_uniform(&s);
    samc_tensor e[2] = {{0}}, k[2] = {{0}};
    samc_exec *x[2] = {&f->fast, &f->ref};
    for (int j = 0; j < 2; j++) {
        const samc_layer *L = samc_exec_find(x[j], LAYER);
        samc_ctx *ctx = samc_layer_ctx(x[j], L);
        alloc_t(&e[j], 3, N, B, C), alloc_t(&k[j], 2, B, N, 0);
        samc_status st = ((const samc_sam3_ops *)L->ops)
                             ->sam3_geo_prompt(ctx, &w.g, &in.pts, &in.pmask, &in.plab, &in.box, &in.bmask, &in.blab,
                                          &in.img, in.H, in.W, &e[j], &k[j]);
        if (st)
            print_error("%s: %s\n", L->impl->name, ctx->err->msg);
        assert_int_equal(st, SAMC_OK);
    }
    assert_memory_equal(k[0].data, k[1].data, (size_t)B * N * sizeof(float));
    double ref_max, d = max_abs_diff(&e[0], &e[1], &ref_max);
    printf("released width (d %d, roi 7, 72x72): fast vs ref rel %.3g (max|ref| %.3g)\n", C, d / ref_max, ref_max);
    assert_true(ref_max > 0 && d / ref_max <= samc_impl_find("fast")->tol);
    for (int j = 0; j < 2; j++)
        samc_tensor_release(&e[j]), samc_tensor_release(&k[j]);
    free_inputs(&in);
    free(w.arena);
}

/* The same refusal from both bodies. */
static void expect_refused(fixture *f, geo_in *in, int N, int B, int C, const char *want)
{
    for (int j = 0; j < 2; j++) {
        samc_tensor e = {0}, k = {0};
        char msg[512];
        alloc_t(&e, 3, N, B, C), alloc_t(&k, 2, B, N, 0);
        samc_status st = run_body(j ? &f->ref : &f->fast, in, &e, &k, msg, sizeof msg);
        printf("%s: %d: %s\n", j ? "ref" : "fast", st, msg);
        assert_int_not_equal(st, SAMC_OK);
        tu_assert_contains(msg, want);
        samc_tensor_release(&e), samc_tensor_release(&k);
    }
}

static void test_refusals(void **state)
{
    fixture *f = *state;
    const int C = f->m->geo.d_model, N = 2 + 2 + (f->m->geo.cls_embed ? 1 : 0);
    geo_in in;
    make_inputs(&in, 2, 2, 1, C, 7);
    in.blab.data[1] = 2.0f;
    expect_refused(f, &in, N, 1, C, "label 2 is not 0 or 1");
    in.blab.data[1] = 1.0f;
    expect_refused(f, &in, N + 1, 1, C, "outputs must be");
    free_inputs(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_serves_geo_prompt),
        cmocka_unit_test(test_fast_matches_ref),
        cmocka_unit_test(test_released_width),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
