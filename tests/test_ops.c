/* SPDX-License-Identifier: Apache-2.0 */
/* test_ops.c - every op of every implementation against ref, at the real
 * shapes of each built-in config (sam2.1 t, s, b+, l at 1024, and the
 * released SAM 3 image model at 1008), in the manner of ggml's
 * test-backend-ops.
 *
 * The table is the layer registry itself: every row with an isolated runner
 * and an example (core/runtime/exec.h) is run on seeded inputs once with ref
 * and once with each other implementation of the implementation registry,
 * and every output slot is compared: max|out - ref| / max(max|ref|, 1)
 * against the implementation's tolerance, and NMSE reported. A new op is covered
 * by its registry row, a new implementation by its registry row.
 *
 * Shapes: channels, heads, windows and pooling are the config's own. By
 * default the model runs at 512 and the token grids are reduced (two windows
 * across, 16 x 16 for global attention) so that the scalar reference fits the
 * CI budget (SAM 3: at 112 px, an 8 x 8 grid, windowed blocks on one whole
 * 24 x 24 window); SAMC_OPTEST_FULL=1 runs the models at 1024 (1008) with
 * their real grids (minutes per config; docs/architecture.md records a
 * run). SAMC_OPTEST_CONFIGS=t,l,sam3 picks configs. SAMC_OPTEST_REF=fast
 * takes another implementation as the reference (the GPU's op test: ref at
 * the real shapes of l takes hours), SAMC_OPTEST_IMPLS=cuda,cuda-bf16 runs
 * only those (a plugin's are loaded by name; docs/gpu.md),
 * SAMC_OPTEST_THREADS sets the CPU implementations' threads (2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/models/sam2/sam2_model.h"
#include "core/models/sam3/sam3_model.h"
#include "parity/parity.h"
#include "util/testutil.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double max_abs(const float *x, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fabs((double)x[i]) > m ? fabs((double)x[i]) : m;
    return m;
}

/* The worst slot of `got` against the reference outputs `ref`. */
static samc_status compare(const samc_layer *L, const samc_layer_out *ref, const samc_layer_out *got, double *rel,
                           double *nmse, samc_error *err)
{
    *rel = *nmse = 0;
    if (ref->n != got->n)
        return samc_fail(err, SAMC_ERR_INTERNAL, "%s: ref produced %d outputs, %s %d", L->name, ref->n,
                         L->impl->name, got->n);
    for (int k = 0; k < ref->n; k++) {
        if (!samc_tensor_same_shape(&ref->t[k], &got->t[k]))
            return samc_fail(err, SAMC_ERR_SHAPE, "%s slot %s: shapes differ", L->name, ref->names[k]);
        double mx, r, e;
        samc_parity_metrics(got->t[k].data, ref->t[k].data, samc_numel(&ref->t[k]), &mx, &r, &e);
        /* relative to max(max|ref|, 1): the inputs are O(1), and a single
         * output near 0 (an object-score logit) would make rel meaningless */
        r = mx / fmax(max_abs(ref->t[k].data, samc_numel(&ref->t[k])), 1.0);
        *rel = r > *rel ? r : *rel;
        *nmse = e > *nmse ? e : *nmse;
    }
    return SAMC_OK;
}

typedef struct op_run {
    const char *config;
    samc_exec *execs; /* [0] ref, then every other available implementation */
    int n_execs;
    int failures;
    double worst_rel, worst_nmse;
} op_run;

/* One row: ref once, then each implementation, every output slot compared. */
static samc_status run_row(op_run *o, const samc_layer *L, samc_layer_inputs *in, samc_error *err)
{
    const samc_layer_io io = samc_inputs_io(in);
    samc_layer_out ref = {0};
    double t0 = now_s();
    samc_status st = L->def->isolated(&o->execs[0], L, &io, &ref, err);
    const double t_ref = now_s() - t0;
    for (int k = 1; !st && k < o->n_execs; k++) {
        const samc_layer *Li = samc_exec_find(&o->execs[k], L->name);
        samc_layer_out got = {0};
        double rel, nmse;
        t0 = now_s();
        st = Li->def->isolated(&o->execs[k], Li, &io, &got, err);
        const double t_impl = now_s() - t0;
        if (!st)
            st = compare(Li, &ref, &got, &rel, &nmse, err);
        samc_layer_out_free(&got);
        if (st)
            break;
        const bool ok = rel <= Li->impl->tol;
        o->failures += !ok;
        o->worst_rel = rel > o->worst_rel ? rel : o->worst_rel;
        o->worst_nmse = nmse > o->worst_nmse ? nmse : o->worst_nmse;
        printf("%-15s %-6s %-42s%s rel %.3e nmse %.3e  ref %7.3f s  %-6s %7.3f s  %s\n", o->config, Li->impl->name,
               L->name, in->video ? " (video)" : "        ", rel, nmse, t_ref, Li->impl->name, t_impl,
               ok ? "ok" : "FAIL");
    }
    samc_layer_out_free(&ref);
    return st;
}

/* The instances to run: the first of each op class. */
static bool first_of_class(const samc_layer *L)
{
    const samc_layer_def *d = L->def;
    if (!d->op_class)
        return L->index == 0;
    const int c = d->op_class(L->self, L->index);
    for (int i = 0; i < L->index; i++)
        if (d->op_class(L->self, i) == c)
            return false;
    return true;
}

/* SAM 3's tracker resizes the mask before its downsampler (interpol_size
 * 1152 at 1008 px, backbone stride 14: 72 x 72 features): the memory
 * encoder again with that geometry, scaled to 448 px (512, 32 x 32). */
typedef struct variant {
    const char *label;
    const char *only;       /* run only the layers under this prefix (NULL: all) */
    bool sam3_mask_size;
} variant;

/* Whether `name` is in the comma-separated `list` (NULL or empty: all). */
static bool listed(const char *list, const char *name)
{
    if (!list || !*list)
        return true;
    const size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

/* An exec of `model` per implementation that can serve its family: the
 * reference (SAMC_OPTEST_REF, ref) first, then every other available one
 * (SAMC_OPTEST_IMPLS: those listed; one lacking the family's bodies, as
 * bf16 SAM 3's, is left out: it falls back nowhere). */
static samc_status open_execs(op_run *o, const samc_layer_family *fam, const void *model, samc_model_base *base,
                              samc_error *err)
{
    samc_status st = SAMC_OK;
    const char *ref = getenv("SAMC_OPTEST_REF"), *only = getenv("SAMC_OPTEST_IMPLS"), *nt = getenv("SAMC_OPTEST_THREADS");
    ref = ref && *ref ? ref : "ref";
    for (int k = -1; !st && k < samc_impl_count() && o->n_execs < 8; k++) { /* the reference first */
        const samc_impl *impl = k < 0 ? samc_impl_lookup(ref, "SAMC_OPTEST_REF", &st, err) : samc_impl_get(k);
        if (!impl || (k >= 0 && (!strcmp(impl->name, ref) || !listed(only, impl->name))) ||
            (impl->available && !impl->available(NULL)))
            continue;
        samc_error e = {0};
        samc_status s2 = samc_exec_init_impl(&o->execs[o->n_execs], fam, model, base, impl->name, &e);
        if (s2 && (!strcmp(impl->name, ref) || !strcmp(impl->name, "fast")))
            st = samc_fail(err, s2, "%s", e.msg);
        else if (s2)
            printf("%-15s %-6s skipped: %s\n", o->config, impl->name, e.msg);
        else
            samc_exec_set_threads(&o->execs[o->n_execs++], nt ? atoi(nt) : 2);
    }
    return st;
}

/* Every row with a runner and op-test inputs (the first instance of each
 * class), on ref and on each other implementation. */
static samc_status run_rows(op_run *o, const variant *var, bool full, samc_error *err)
{
    samc_status st = SAMC_OK;
    for (int i = 0; !st && o->n_execs && i < o->execs[0].n_layers; i++) {
        const samc_layer *L = &o->execs[0].layers[i];
        if (!L->def->isolated || !L->def->example || !first_of_class(L) ||
            (var->only && strncmp(L->name, var->only, strlen(var->only))))
            continue;
        for (int video = 0; !st && video < 2; video++) { /* the second body, where a row has one */
            if (video && !L->def->body2)
                break;
            samc_layer_inputs in = {0};
            st = L->def->example(L->self, L->index, 1000 + (uint64_t)i, full, &in, err);
            in.video = video;
            if (!st)
                st = run_row(o, L, &in, err);
            samc_inputs_free(&in);
        }
    }
    return st;
}

static int finish(op_run *o, samc_status st, const samc_error *err, double *worst_rel, double *worst_nmse)
{
    if (st)
        print_error("%s: %s\n", o->config, err->msg);
    for (int k = 0; k < o->n_execs; k++)
        samc_exec_free(&o->execs[k]);
    *worst_rel = o->worst_rel > *worst_rel ? o->worst_rel : *worst_rel;
    *worst_nmse = o->worst_nmse > *worst_nmse ? o->worst_nmse : *worst_nmse;
    return st ? -1 : o->failures;
}

static int run_config(const char *config, const variant *var, bool full, double *worst_rel, double *worst_nmse)
{
    samc_error err = {0};
    samc_sam2_config cfg;
    samc_weights *w = NULL;
    samc_sam2_model *m = NULL;
    samc_exec execs[8];
    op_run o = {.config = var->label ? var->label : config, .execs = execs};
    samc_status st = samc_sam2_config_preset(config, &cfg, &err);
    cfg.image_size = full ? 1024 : 512;
    if (var->sam3_mask_size) {
        cfg.image_size = full ? 1008 : 448, cfg.backbone_stride = 14;
        cfg.mem_enc.ds_interpol_h = cfg.mem_enc.ds_interpol_w = cfg.image_size * 8 / 7;
        /* 1008 px is a 252 x 252 patch grid, which Hiera's 8 x 8 position
         * window does not tile (only the memory encoder runs here) */
        cfg.trunk.window_spec[0] = full ? 7 : cfg.trunk.window_spec[0];
    }
    if (!st)
        st = samc_sam2_random_weights(&cfg, 11, &w, &err);
    if (!st)
        st = samc_sam2_model_init(&m, w, &cfg, &err);
    if (!st)
        st = open_execs(&o, &samc_sam2_family, m, &m->base, &err);
    if (!st)
        st = run_rows(&o, var, full, &err);
    const int r = finish(&o, st, &err, worst_rel, worst_nmse);
    samc_sam2_model_free(m);
    return r;
}

/* The released SAM 3 image model (with the tracker's neck copy, so that
 * sam2_convs is covered) on random weights: every width, head count,
 * window and depth of the release; its image at 112 px (an 8 x 8 token
 * grid: global blocks on 64 tokens, windowed ones on one whole 24 x 24
 * window) unless `full` (1008 px). */
static int run_sam3(bool full, double *worst_rel, double *worst_nmse)
{
    samc_error err = {0};
    samc_sam3_config cfg;
    samc_weights *w = NULL;
    samc_sam3_model *m = NULL;
    samc_exec execs[8];
    op_run o = {.config = "sam3", .execs = execs};
    const variant all = {0};
    samc_status st = samc_sam3_config_released(true, &cfg, &err);
    if (!full)
        cfg.resolution = cfg.vision.trunk.img_size = 8 * cfg.vision.trunk.patch_size;
    if (!st)
        st = samc_sam3_random_weights(&cfg, 11, &w, &err);
    if (!st)
        st = samc_sam3_model_init(&m, w, &cfg, "", "sam3 (released, random weights)", &err);
    if (!st)
        st = open_execs(&o, &samc_sam3_family, m, &m->base, &err);
    if (!st)
        st = run_rows(&o, &all, full, &err);
    const int r = finish(&o, st, &err, worst_rel, worst_nmse);
    samc_sam3_model_free(m);
    return r;
}

static void test_ops(void **s)
{
    (void)s;
    const char *only = getenv("SAMC_OPTEST_IMPLS");
    if (only && *only) { /* a plugin's implementations are loaded by name */
        char names[128];
        snprintf(names, sizeof names, "%s", only);
        for (char *save = NULL, *tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            samc_error err = {0};
            samc_status st = SAMC_OK;
            if (!samc_impl_lookup(tok, "SAMC_OPTEST_IMPLS", &st, &err))
                print_error("%s\n", err.msg);
            assert_int_equal(st, SAMC_OK);
        }
    }
    const char *full_env = getenv("SAMC_OPTEST_FULL");
    const bool full = full_env && atoi(full_env) != 0;
    const char *env = getenv("SAMC_OPTEST_CONFIGS");
    char list[64];
    snprintf(list, sizeof list, "%s", env && *env ? env : "t,s,b+,l,sam3");
    double worst_rel = 0, worst_nmse = 0;
    int failures = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (!strcmp(tok, "sam3")) {
            const int f = run_sam3(full, &worst_rel, &worst_nmse);
            assert_true(f >= 0);
            failures += f;
            continue;
        }
        char config[32];
        snprintf(config, sizeof config, "sam2.1_hiera_%s", tok);
        const variant plain = {0};
        const int f = run_config(config, &plain, full, &worst_rel, &worst_nmse);
        assert_true(f >= 0);
        failures += f;
        if (!strcmp(tok, "t")) {
            const variant sam3 = {"t+sam3_mask", "memory_encoder", true};
            const int g = run_config(config, &sam3, full, &worst_rel, &worst_nmse);
            assert_true(g >= 0);
            failures += g;
        }
    }
    printf("op table (%s grids): worst rel %.3e, worst nmse %.3e, %d over tolerance\n", full ? "real" : "reduced",
           worst_rel, worst_nmse, failures);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ops)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
