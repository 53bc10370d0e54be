/* test_sam3_ref_layers.c - every SAM 3 image parity point of a dump, run
 * alone by its isolated runner with the ref bodies on the recorded inputs and
 * compared slot by slot with the recorded outputs (rel = max|out-ref| /
 * max|ref| <= 1e-5; @preprocess at one uint8 level, as the format says).
 *
 * Dumps: $SAMC_SAM3_DUMPS (colon-separated .h5 paths), else every
 * fixtures/sam3/ *.h5; skipped when there is none. Also checked per dump: the
 * RoPE tables computed from the config against the recorded attn.freqs_cis,
 * and, on every decoder-layer record, the query sine embedding, query
 * position and boxRPB bias recomputed from the recorded reference boxes
 * against the recorded layer inputs.
 *
 * The samc_layer_io over a dump record below is the one the parity harness
 * will use (its "input_ids" slot: the ids of the @tokenize call before a
 * backbone.language_backbone record). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_runners.h"
#include "parity/dump.h"
#include "util/testutil.h"

#define TOL 1e-5
#define TOL_PRE (2.0 / 255.0 * 1.0001) /* one uint8 level after (x/255 - 0.5) / 0.5 */

/* ---- samc_layer_io over a dump record ------------------------------------------- */

typedef struct dump_io {
    samc_dump *d;
    int index;          /* the record's NNNNNN */
    int tokenize_index; /* last @tokenize record before it, -1 if none */
} dump_io;

static samc_status io_tensor(void *user, const char *name, const char *pos, samc_tensor *out, samc_error *err)
{
    dump_io *u = user;
    char path[256];
    if (!strcmp(name, "input_ids")) {
        if (u->tokenize_index < 0)
            return samc_fail(err, SAMC_ERR_KEY, "no @tokenize record before record %d", u->index);
        snprintf(path, sizeof path, "/trace/%06d/out/0", u->tokenize_index);
        return samc_dump_read(u->d, path, out, err);
    }
    snprintf(path, sizeof path, "/trace/%06d/in/%s", u->index, name);
    if (!samc_dump_exists(u->d, path) && pos)
        snprintf(path, sizeof path, "/trace/%06d/in/%s", u->index, pos);
    if (!samc_dump_exists(u->d, path))
        return samc_fail(err, SAMC_ERR_KEY, "record %d has no tensor input '%s'", u->index, name);
    return samc_dump_read(u->d, path, out, err);
}

static bool io_has(void *user, const char *name)
{
    dump_io *u = user;
    char path[256], grp[64];
    if (!strcmp(name, "input_ids"))
        return u->tokenize_index >= 0;
    snprintf(path, sizeof path, "/trace/%06d/in/%s", u->index, name);
    snprintf(grp, sizeof grp, "/trace/%06d/in", u->index);
    return samc_dump_exists(u->d, path) || samc_dump_has_attr(u->d, grp, name);
}

static samc_status io_scalar(void *user, const char *name, const char *pos, double *v, bool *is_none, samc_error *err)
{
    dump_io *u = user;
    char grp[64];
    snprintf(grp, sizeof grp, "/trace/%06d/in", u->index);
    const char *n = samc_dump_has_attr(u->d, grp, name) || !pos ? name : pos;
    if (!samc_dump_has_attr(u->d, grp, n))
        return samc_fail(err, SAMC_ERR_KEY, "record %d has no scalar input '%s'", u->index, name);
    return samc_dump_attr_num(u->d, grp, n, v, is_none, err);
}

static samc_status io_string(void *user, const char *name, const char *pos, char **out, samc_error *err)
{
    dump_io *u = user;
    char grp[64];
    snprintf(grp, sizeof grp, "/trace/%06d/in", u->index);
    return samc_dump_attr_str(u->d, grp, samc_dump_has_attr(u->d, grp, name) || !pos ? name : pos, out, err);
}

/* ---- comparison ------------------------------------------------------------------ */

typedef struct worst {
    char kind[96];
    double rel, max_abs;
    int n;
} worst;

#define MAX_KINDS 64
static worst g_kinds[MAX_KINDS];
static int g_nkinds;

/* The module name with its block/layer index replaced by {i}. */
static void kind_of(const char *module, char *kind, size_t n)
{
    size_t j = 0;
    for (const char *p = module; *p && j + 4 < n;) {
        if (*p >= '0' && *p <= '9' && p > module && p[-1] == '.') {
            memcpy(kind + j, "{i}", 3), j += 3;
            while (*p >= '0' && *p <= '9')
                p++;
        } else {
            kind[j++] = *p++;
        }
    }
    kind[j] = '\0';
}

static void note(const char *kind, double rel, double max_abs)
{
    int i = 0;
    while (i < g_nkinds && strcmp(g_kinds[i].kind, kind))
        i++;
    if (i == g_nkinds) {
        if (g_nkinds == MAX_KINDS)
            return;
        snprintf(g_kinds[g_nkinds++].kind, sizeof g_kinds[0].kind, "%s", kind);
        g_kinds[i].rel = g_kinds[i].max_abs = 0;
    }
    g_kinds[i].n++;
    if (rel > g_kinds[i].rel || isnan(rel))
        g_kinds[i].rel = rel;
    if (max_abs > g_kinds[i].max_abs || isnan(max_abs))
        g_kinds[i].max_abs = max_abs;
}

static void compare(const samc_tensor *out, const samc_tensor *ref, double *max_abs, double *rel)
{
    double ma = 0, sc = 0;
    for (int64_t i = 0; i < samc_numel(ref); i++) {
        const double d = fabs((double)out->data[i] - ref->data[i]);
        ma = (d > ma || isnan(d)) ? d : ma;
        sc = fabs((double)ref->data[i]) > sc ? fabs((double)ref->data[i]) : sc;
    }
    *max_abs = ma, *rel = ma / (sc > 1e-12 ? sc : 1e-12);
}

/* ---- extra checks ---------------------------------------------------------------- */

/* RoPE tables computed by the bind (a store without attn.freqs_cis, so
 * samc_sam3_model_bind computes them from the config) vs the recorded buffers. */
static int check_rope(const cJSON *cfg, const samc_weights *w, double *worst_abs)
{
    samc_weights *w2 = samc_weights_new("no-freqs_cis");
    samc_error e = {0};
    for (size_t i = 0; i < samc_weights_count(w); i++) {
        const char *key = samc_weights_key(w, i);
        if (strstr(key, ".attn.freqs_cis"))
            continue;
        const samc_tensor *t = samc_weights_at(w, i);
        float *copy = malloc((size_t)(samc_numel(t) ? samc_numel(t) : 1) * sizeof *copy);
        assert_non_null(copy);
        memcpy(copy, t->data, (size_t)samc_numel(t) * sizeof *copy);
        assert_int_equal(samc_weights_add(w2, key, t->ndim, t->shape, copy, &e), SAMC_OK);
    }
    samc_sam3_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    if (samc_sam3_model_bind(m, cfg, w2, &e))
        fail_msg("bind without freqs_cis: %s", e.msg);
    int n = 0;
    *worst_abs = 0;
    for (int i = 0; i < m->n_blocks; i++) {
        char key[160];
        snprintf(key, sizeof key, "backbone.vision_backbone.trunk.blocks.%d.attn.freqs_cis", i);
        const samc_tensor *t = samc_weights_find(w, key);
        if (!t || !m->blocks[i].freqs_cis)
            continue;
        for (int64_t k = 0; k < samc_numel(t); k++) {
            const double d = fabs((double)m->blocks[i].freqs_cis[k] - t->data[k]);
            *worst_abs = d > *worst_abs ? d : *worst_abs;
        }
        n++;
    }
    samc_sam3_model_free(m);
    free(m);
    samc_weights_free(w2);
    return n;
}

/* On a decoder-layer record: sine embedding, query pos and boxRPB from the
 * recorded reference points vs the recorded layer inputs. */
static void check_decoder_inputs(const samc_sam3_model *m, samc_dump *d, int index)
{
    char path[128];
    samc_tensor rp = {0}, sine = {0}, qpos = {0}, cam = {0}, mss = {0};
    samc_error e = {0};
#define RD(t, slot)                                                              \
    snprintf(path, sizeof path, "/trace/%06d/in/%s", index, slot);               \
    assert_int_equal(samc_dump_read(d, path, &t, &e), SAMC_OK)
    RD(rp, "tgt_reference_points");
    RD(sine, "tgt_query_sine_embed");
    RD(qpos, "tgt_query_pos");
    RD(cam, "cross_attn_mask");
    RD(mss, "memory_spatial_shapes");
#undef RD
    samc_tensor ref = rp; /* (nq, B, 1, 4) -> (nq, B, 4) */
    ref.ndim = 3, ref.shape[2] = 4, ref.owns = false;
    samc_tensor s2 = {0}, q2 = {0}, c2 = {0};
    assert_int_equal(samc_tensor_alloc(&s2, sine.ndim, sine.shape, NULL), SAMC_OK);
    assert_int_equal(samc_tensor_alloc(&q2, qpos.ndim, qpos.shape, NULL), SAMC_OK);
    assert_int_equal(samc_tensor_alloc(&c2, cam.ndim, cam.shape, NULL), SAMC_OK);
    assert_int_equal(m->ops->dec_query_pos(m->ctx, &m->dec, &ref, &s2, &q2), SAMC_OK);
    assert_int_equal(m->ops->dec_boxrpb(m->ctx, &m->dec, &ref, (int)mss.data[0], (int)mss.data[1], &c2), SAMC_OK);
    double ma, rel;
    compare(&s2, &sine, &ma, &rel);
    note("(decoder) gen_sineembed_for_position", rel, ma);
    compare(&q2, &qpos, &ma, &rel);
    note("(decoder) ref_point_head", rel, ma);
    compare(&c2, &cam, &ma, &rel);
    note("(decoder) _get_rpb_matrix", rel, ma);
    samc_tensor_release(&s2), samc_tensor_release(&q2), samc_tensor_release(&c2);
    samc_tensor_release(&rp), samc_tensor_release(&sine), samc_tensor_release(&qpos);
    samc_tensor_release(&cam), samc_tensor_release(&mss);
}

/* ---- one dump --------------------------------------------------------------------- */

static int run_dump(const char *path)
{
    samc_error e = {0};
    samc_dump *d = NULL;
    samc_weights *w = NULL;
    char *cfg_text = NULL, *family = NULL;
    assert_int_equal(samc_dump_open(path, &d, &e), SAMC_OK);
    assert_int_equal(samc_dump_attr_str(d, "/model", "family", &family, &e), SAMC_OK);
    if (strcmp(family, "sam3")) {
        free(family);
        samc_dump_close(d);
        return 0;
    }
    assert_int_equal(samc_dump_attr_str(d, "/model", "config_json", &cfg_text, &e), SAMC_OK);
    cJSON *cfg = cJSON_Parse(cfg_text);
    assert_non_null(cfg);
    if (samc_weights_open_h5(path, &w, &e))
        fail_msg("%s: %s", path, e.msg);
    samc_sam3_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    if (samc_sam3_model_bind(m, cfg, w, &e))
        fail_msg("%s: bind: %s", path, e.msg);
    samc_ctx ctx = {0};
    m->ops = &samc_ref_sam3_ops;
    m->ctx = &ctx;

    double rope_abs;
    const int nrope = check_rope(cfg, w, &rope_abs);
    printf("%s: RoPE tables from the config vs attn.freqs_cis: %d blocks, max |diff| %.3g\n", path,
           nrope, rope_abs);
    int rope_fail = rope_abs > 1e-6; /* bit-exact here; an ulp of slack for another libm */

    samc_dump_record *recs = NULL;
    int nrec = 0, failures = rope_fail, tokenize = -1;
    assert_int_equal(samc_dump_records(d, &recs, &nrec, &e), SAMC_OK);
    for (int i = 0; i < nrec; i++) {
        const samc_dump_record *rc = &recs[i];
        if (!strcmp(rc->module, "@tokenize")) {
            tokenize = rc->index;
            continue;
        }
        int idx = -1;
        samc_sam3_runner run = samc_sam3_runner_find(rc->module, &idx);
        if (!run) {
            printf("  %06d %-58s (no runner)\n", rc->index, rc->module);
            continue;
        }
        if (!strncmp(rc->module, "transformer.decoder.layers.", 27))
            check_decoder_inputs(m, d, rc->index);
        dump_io u = {d, rc->index, tokenize};
        samc_layer_io io = {.user = &u, .tensor = io_tensor, .has = io_has, .scalar = io_scalar, .string = io_string};
        samc_layer_out out = {0};
        samc_error re = {0};
        samc_status st = run(m, idx, &io, &out, &re);
        if (st) {
            printf("  %06d %-58s call %d: FAILED to run: %s\n", rc->index, rc->module, rc->call, re.msg);
            failures++;
            continue;
        }
        char kind[96];
        kind_of(rc->module, kind, sizeof kind);
        /* every recorded output dataset must have been produced */
        char grp[64], **names = NULL;
        int nn = 0;
        snprintf(grp, sizeof grp, "/trace/%06d/out", rc->index);
        assert_int_equal(samc_dump_list(d, grp, &names, &nn, &e), SAMC_OK);
        for (int k = 0; k < nn; k++) {
            int j = 0;
            while (j < out.n && strcmp(out.names[j], names[k]))
                j++;
            if (j == out.n) {
                printf("  %06d %-58s slot %s: not produced\n", rc->index, rc->module, names[k]);
                failures++;
            }
        }
        samc_dump_free_names(names, nn);
        for (int j = 0; j < out.n; j++) {
            char p[160];
            samc_tensor ref = {0};
            snprintf(p, sizeof p, "/trace/%06d/out/%s", rc->index, out.names[j]);
            if (samc_dump_read(d, p, &ref, &e)) {
                printf("  %06d %-58s slot %s: produced but not recorded\n", rc->index, rc->module, out.names[j]);
                failures++;
                continue;
            }
            char s1[64], s2[64];
            if (!samc_tensor_same_shape(&ref, &out.t[j])) {
                printf("  %06d %-58s slot %s: shape %s, recorded %s\n", rc->index, rc->module, out.names[j],
                       samc_shape_str(out.t[j].ndim, out.t[j].shape, s1, sizeof s1),
                       samc_shape_str(ref.ndim, ref.shape, s2, sizeof s2));
                failures++;
                samc_tensor_release(&ref);
                continue;
            }
            double ma, rel;
            compare(&out.t[j], &ref, &ma, &rel);
            const bool pre = !strcmp(rc->module, "@preprocess");
            const bool pass = pre ? ma <= TOL_PRE : rel <= TOL;
            note(kind, pre ? ma : rel, ma);
            printf("  %06d %-58s call %d slot %-18s %-18s max_abs %.3e rel %.3e%s\n", rc->index,
                   rc->module, rc->call, out.names[j], samc_shape_str(ref.ndim, ref.shape, s1, sizeof s1),
                   ma, rel, pass ? "" : "  FAIL");
            failures += !pass;
            samc_tensor_release(&ref);
        }
        samc_layer_out_free(&out);
    }
    free(recs);
    samc_sam3_model_free(m);
    free(m);
    samc_weights_free(w);
    cJSON_Delete(cfg);
    free(cfg_text), free(family);
    samc_dump_close(d);
    return failures;
}

static void test_sam3_layers(void **state)
{
    (void)state;
    char *list[64];
    int n = 0;
    const char *env = getenv("SAMC_SAM3_DUMPS");
    glob_t g = {0};
    if (env && *env) {
        char *copy = strdup(env), *save = NULL;
        for (char *p = strtok_r(copy, ":", &save); p && n < 64; p = strtok_r(NULL, ":", &save))
            list[n++] = strdup(p);
        free(copy);
    } else {
        char *pat = tu_src_path("fixtures/sam3/*.h5");
        if (glob(pat, 0, NULL, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc && n < 64; i++)
                list[n++] = strdup(g.gl_pathv[i]);
        free(pat);
        globfree(&g);
    }
    if (n == 0) {
        printf("no SAM 3 dumps (fixtures/sam3/*.h5 or $SAMC_SAM3_DUMPS): skipped\n");
        skip();
    }
    int failures = 0;
    for (int i = 0; i < n; i++) {
        g_nkinds = 0;
        failures += run_dump(list[i]);
        printf("%s: worst per layer kind (rel; @preprocess: max_abs)\n", list[i]);
        for (int k = 0; k < g_nkinds; k++)
            printf("  %-66s %3d slots  worst %.3e  (max_abs %.3e)\n", g_kinds[k].kind, g_kinds[k].n,
                   g_kinds[k].rel, g_kinds[k].max_abs);
        free(list[i]);
    }
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sam3_layers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
