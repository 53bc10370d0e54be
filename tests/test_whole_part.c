/* SPDX-License-Identifier: Apache-2.0 */
/* test_whole_part.c - an implementation may own a whole part with one body.
 *
 * A test implementation, "whole", has a single body: MemoryAttention run
 * in one call (what a GPU implementation does to keep the part's
 * activations on the device). It does the part's work with its own copy of
 * the steps (here: ref's layer bodies), reports the part's inner parity
 * points through ctx->emit, and falls back to ref for everything else.
 * Tracking a video with it must give ref's results bit for bit, with the
 * same trace; an override that sends one row of the part elsewhere makes
 * the wiring run the part row by row again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/sam2_model.h"
#include "core/models/tracker/video.h"
#include "ref/ref_ops.h"
#include "util/testutil.h"

#define FIXTURE "fixtures/video/tiny_v1_sam21_s128"

static int whole_calls;

static samc_status t01(samc_ctx *ctx, const samc_tensor *a, samc_tensor *y)
{
    samc_status st = samc_tensor_allocv(y, ctx->err, 3, a->shape[1], a->shape[0], a->shape[2]);
    return st ? st : samc_ref_transpose01(ctx, a, y);
}

/* MemoryAttention.forward from ref's bodies, the inner points emitted. */
static samc_status whole_memory_attention(samc_ctx *ctx, const samc_memory_attention *ma, const samc_tensor *curr,
                                          const samc_tensor *memory, const samc_tensor *curr_pos,
                                          const samc_tensor *memory_pos, int n_ptr, samc_tensor *out)
{
    static const char *const slot0[] = {"0"};
    samc_tensor t = {0}, qp = {0}, mem = {0}, mp = {0}, y = {0}, n = {0};
    whole_calls++;
    samc_status st = t01(ctx, curr, &t);
    if (!st && curr_pos)
        st = t01(ctx, curr_pos, &qp);
    if (!st && ma->pos_enc_at_input && curr_pos)
        st = samc_ref_add(ctx, &t, &qp, 0.1f, &t);
    if (!st)
        st = t01(ctx, memory, &mem);
    if (!st && memory_pos)
        st = t01(ctx, memory_pos, &mp);
    for (int i = 0; !st && i < ma->n_layers; i++) {
        if ((st = samc_tensor_alloc(&y, t.ndim, t.shape, ctx->err)) ||
            (st = samc_ref_memory_attention_layer(ctx, &ma->layers[i], &t, &mem, memory_pos ? &mp : NULL,
                                                  curr_pos ? &qp : NULL, n_ptr, &y)))
            break;
        if (ctx->tracing) {
            const samc_tensor *o[] = {&y};
            ctx->emit(ctx, "layers.#", i, 1, slot0, o);
        }
        samc_tensor_release(&t);
        t = y;
        memset(&y, 0, sizeof y);
    }
    if (!st && !(st = samc_tensor_alloc(&n, t.ndim, t.shape, ctx->err)) &&
        !(st = samc_ref_layer_norm(ctx, &ma->norm, &t, &n)))
        st = samc_ref_transpose01(ctx, &n, out);
    samc_tensor *all[] = {&t, &qp, &mem, &mp, &y, &n};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        samc_tensor_release(all[i]);
    return st;
}

static const samc_tracker_ops whole_tracker_ops = {.memory_attention = whole_memory_attention};
static const samc_impl whole_impl = {
    .name = "whole",
    .about = "test only: MemoryAttention in one body, ref for the rest",
    .tol = 1e-5,
    .fallback = "ref",
    .ops = {[SAMC_OPS_TRACKER] = &whole_tracker_ops},
};

typedef struct run_log {
    uint64_t digest;   /* over every traced name and output, in order */
    int points;
    float *masks;
    size_t n, cap;
} run_log;

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

static void on_trace(void *user, const char *module, const samc_scope *sc, int nslots, const char *const *slots,
                     const samc_tensor *const *t)
{
    run_log *log = user;
    log->points++;
    log->digest = fnv(module, strlen(module), log->digest);
    log->digest = fnv(sc, sizeof *sc, log->digest);
    for (int i = 0; i < nslots; i++)
        log->digest = fnv(t[i]->data, (size_t)samc_numel(t[i]) * sizeof(float), fnv(slots[i], strlen(slots[i]),
                                                                                     log->digest));
}

static samc_status on_frame(void *user, const samc_video_masks *m)
{
    run_log *log = user;
    const size_t n = (size_t)m->n_obj * m->height * m->width;
    if (log->n + n > log->cap) {
        log->cap = 2 * (log->n + n);
        log->masks = realloc(log->masks, log->cap * sizeof *log->masks);
    }
    memcpy(log->masks + log->n, m->logits, n * sizeof *log->masks);
    log->n += n;
    return SAMC_OK;
}

static void track(samc_sam2_model *m, const char *impl, const char *override, run_log *log)
{
    samc_error err = {0};
    samc_exec x;
    samc_frames *fr = NULL;
    char *dir = tu_src_path(FIXTURE "_frames");
    assert_int_equal(samc_exec_init_impl(&x, &samc_sam2_family, m, &m->base, impl, &err), SAMC_OK);
    if (override)
        assert_int_equal(samc_exec_add_override(&x, override, &err), SAMC_OK);
    const samc_layer *A = samc_exec_find(&x, "memory_attention");
    assert_non_null(A);
    assert_true((A->whole_ops != NULL) == (!strcmp(impl, "whole") && !override));
    assert_int_equal(samc_frames_open_dir(dir, &fr, &err), SAMC_OK);
    const samc_feature_source src = samc_sam2_feature_source(m);
    samc_video *v = NULL;
    log->digest = 14695981039346656037ull;
    samc_exec_set_trace(&x, on_trace, log);
    assert_int_equal(samc_video_init(&x, &m->tracker, &src, fr, NULL, &v, &err), SAMC_OK);
    const float pt[2] = {50, 40};
    const int32_t pos[1] = {1};
    samc_video_masks vm = {0};
    assert_int_equal(samc_video_add_points(v, 0, 1, pt, pos, 1, NULL, true, false, &vm, &err), SAMC_OK);
    samc_video_masks_free(&vm);
    if (samc_video_propagate(v, -1, 4, false, on_frame, log, &err))
        print_error("%s\n", err.msg);
    samc_video_free(v);
    samc_exec_free(&x);
    free(dir);
}

static void test_whole_part_body(void **s)
{
    (void)s;
    samc_error err = {0};
    char *dump = tu_src_path(FIXTURE ".h5");
    samc_sam2_model *m = NULL;
    assert_int_equal(samc_sam2_model_load(dump, NULL, false, &m, &err), SAMC_OK);
    assert_int_equal(samc_impl_register(&whole_impl, &err), SAMC_OK);
    run_log ref = {0}, whole = {0}, mixed = {0};
    track(m, "ref", NULL, &ref);
    whole_calls = 0;
    track(m, "whole", NULL, &whole);
    assert_true(whole_calls >= 3); /* every frame after the first attends to memory */
    whole_calls = 0;
    track(m, "whole", "memory_attention.norm=fast", &mixed);
    assert_int_equal(whole_calls, 0); /* one row elsewhere: row by row */
    assert_true(ref.n > 0 && ref.points > 20);
    assert_int_equal(ref.n, whole.n);
    assert_memory_equal(ref.masks, whole.masks, ref.n * sizeof(float));
    assert_int_equal(ref.points, whole.points);
    assert_true(ref.digest == whole.digest); /* the same trace: names, scopes, bytes */
    assert_int_equal(ref.points, mixed.points);
    printf("whole-part body: %d traced points and %zu mask logits identical to ref\n", ref.points, ref.n);
    samc_impl_unregister(&whole_impl);
    free(ref.masks), free(whole.masks), free(mixed.masks);
    samc_sam2_model_free(m);
    free(dump);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_whole_part_body)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
