/* SPDX-License-Identifier: Apache-2.0 */
/* test_sam3_model.c - loading the SAM 3 image model from a parity dump
 * through the one state_dict walk, and what the parity harness does not see
 * by itself:
 *  - the strict check names the problem before any compute: a missing key,
 *    a mis-shaped key (expected and actual shape), an unexpected key;
 *  - the RoPE tables computed from the config when a store has no
 *    attn.freqs_cis equal the recorded buffers;
 *  - on every decoder-layer record, the query sine embedding, query position
 *    and boxRPB bias recomputed (ref bodies, through the registry) from the
 *    recorded reference boxes equal the recorded layer inputs.
 * Every parity point itself is run by the CTest entries parity_*_sam3_*. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_model.h"
#include "parity/dump.h"
#include "util/testutil.h"

#define FIXTURE "fixtures/sam3/tiny_s2_text_boxes.h5"

typedef struct loaded {
    char *path;
    samc_dump *d;
    samc_sam3_config cfg_value;
    const samc_sam3_config *cfg;
} loaded;

static void open_fixture(loaded *f)
{
    samc_error e = {0};
    char *text = NULL;
    f->path = tu_src_path(FIXTURE);
    assert_int_equal(samc_dump_open(f->path, &f->d, &e), SAMC_OK);
    assert_int_equal(samc_dump_attr_str(f->d, "/model", "config_json", &text, &e), SAMC_OK);
    assert_int_equal(samc_sam3_config_parse(text, "fixture", &f->cfg_value, &e), SAMC_OK);
    f->cfg = &f->cfg_value;
    free(text);
}

static void close_fixture(loaded *f)
{
    samc_dump_close(f->d);
    free(f->path);
}

/* A copy of the dump's weights: without keys containing `drop`, with key
 * `reshape` given one more row, plus an `extra` key (each NULL: none). */
static samc_weights *edited(const char *path, const char *drop, const char *reshape, const char *extra)
{
    samc_weights *w = NULL, *out = samc_weights_new("edited");
    samc_error e = {0};
    assert_int_equal(samc_weights_open_h5(path, &w, &e), SAMC_OK);
    for (size_t i = 0; i < samc_weights_count(w); i++) {
        const char *key = samc_weights_key(w, i);
        if (drop && strstr(key, drop))
            continue;
        const samc_tensor *t = samc_weights_at(w, i);
        int64_t shape[SAMC_MAX_DIMS];
        memcpy(shape, t->shape, sizeof shape);
        if (reshape && !strcmp(key, reshape))
            shape[0]++;
        const int64_t n = samc_shape_numel(t->ndim, shape);
        float *copy = calloc((size_t)(n ? n : 1), sizeof *copy);
        assert_non_null(copy);
        memcpy(copy, t->data, (size_t)(n < samc_numel(t) ? n : samc_numel(t)) * sizeof *copy);
        assert_int_equal(samc_weights_add(out, key, t->ndim, shape, copy, &e), SAMC_OK);
    }
    if (extra) {
        float *one = calloc(1, sizeof *one);
        assert_int_equal(samc_weights_add(out, extra, 1, (const int64_t[]){1}, one, &e), SAMC_OK);
    }
    samc_weights_free(w);
    return out;
}

static void expect_refused(const loaded *f, samc_weights *w, samc_status want, const char *a, const char *b)
{
    samc_sam3_model *m = NULL;
    samc_error e = {0};
    const samc_status st = samc_sam3_model_init(&m, w, f->cfg, "", "fixture", &e);
    printf("refused: %s\n", e.msg);
    assert_int_equal(st, want);
    assert_null(m);
    assert_non_null(strstr(e.msg, a));
    assert_non_null(strstr(e.msg, b));
}

static void test_strict_check(void **state)
{
    (void)state;
    loaded f;
    open_fixture(&f);
    const char *k = "transformer.decoder.layers.1.linear1.weight";
    expect_refused(&f, edited(f.path, k, NULL, NULL), SAMC_ERR_KEY, "missing key", k);
    expect_refused(&f, edited(f.path, NULL, k, NULL), SAMC_ERR_SHAPE, k, "expected shape (64,16)");
    expect_refused(&f, edited(f.path, NULL, NULL, "transformer.decoder.extra"), SAMC_ERR_KEY, "unexpected",
                   "transformer.decoder.extra");
    /* the same weights under "detector." (a sam3.pt layout) load with base "detector." only */
    samc_sam3_model *m = NULL;
    samc_error e = {0};
    samc_weights *w = NULL;
    assert_int_equal(samc_weights_open_h5(f.path, &w, &e), SAMC_OK);
    assert_int_equal(samc_sam3_model_init(&m, w, f.cfg, "", "fixture", &e), SAMC_OK);
    samc_sam3_model_free(m);
    assert_int_equal(samc_weights_open_h5(f.path, &w, &e), SAMC_OK);
    assert_int_equal(samc_sam3_model_init(&m, w, f.cfg, "detector.", "fixture", &e), SAMC_ERR_KEY);
    assert_non_null(strstr(e.msg, "missing key 'detector."));
    close_fixture(&f);
}

static void test_rope_from_config(void **state)
{
    (void)state;
    loaded f;
    open_fixture(&f);
    samc_sam3_model *m = NULL;
    samc_error e = {0};
    samc_weights *w = NULL;
    assert_int_equal(samc_sam3_model_init(&m, edited(f.path, ".attn.freqs_cis", NULL, NULL), f.cfg, "", "fx", &e),
                     SAMC_OK);
    assert_int_equal(samc_weights_open_h5(f.path, &w, &e), SAMC_OK);
    int n = 0;
    double worst = 0;
    for (int i = 0; i < m->vision.n_blocks; i++) {
        char key[160];
        snprintf(key, sizeof key, "backbone.vision_backbone.trunk.blocks.%d.attn.freqs_cis", i);
        const samc_tensor *t = samc_weights_find(w, key);
        assert_non_null(t);
        assert_non_null(m->vision.blocks[i].freqs_cis);
        for (int64_t k = 0; k < samc_numel(t); k++)
            worst = fmax(worst, fabs((double)m->vision.blocks[i].freqs_cis[k] - t->data[k]));
        n++;
    }
    printf("RoPE tables from the config vs attn.freqs_cis: %d blocks, max |diff| %.3g\n", n, worst);
    assert_true(n > 0);
    assert_true(worst <= 1e-6); /* bit-exact with glibc; an ulp of slack for another libm */
    samc_weights_free(w);
    samc_sam3_model_free(m);
    close_fixture(&f);
}

static double rel_err(const samc_tensor *out, const samc_tensor *ref)
{
    double ma = 0, sc = 0;
    for (int64_t i = 0; i < samc_numel(ref); i++) {
        ma = fmax(ma, fabs((double)out->data[i] - ref->data[i]));
        sc = fmax(sc, fabs((double)ref->data[i]));
    }
    return ma / (sc > 1e-12 ? sc : 1e-12);
}

static const samc_sam3_ops *ops_of(samc_exec *x, const char *name, samc_ctx **ctx)
{
    const samc_layer *L = samc_exec_find(x, name);
    assert_non_null(L);
    *ctx = samc_layer_ctx(x, L);
    return L->ops;
}

/* One decoder-layer record: its recorded inputs recomputed from its boxes. */
static void check_decoder_record(samc_exec *x, samc_dump *d, int index, double *worst)
{
    char path[128];
    samc_tensor rp = {0}, sine = {0}, qpos = {0}, cam = {0}, mss = {0};
    samc_error e = {0};
    samc_tensor *slot[] = {&rp, &sine, &qpos, &cam, &mss};
    const char *name[] = {"tgt_reference_points", "tgt_query_sine_embed", "tgt_query_pos", "cross_attn_mask",
                          "memory_spatial_shapes"};
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "/trace/%06d/in/%s", index, name[i]);
        assert_int_equal(samc_dump_read(d, path, slot[i], &e), SAMC_OK);
    }
    samc_tensor ref = rp; /* (nq, B, 1, 4) -> (nq, B, 4) */
    ref.ndim = 3, ref.shape[2] = 4, ref.owns = false;
    samc_tensor s2 = {0}, q2 = {0}, c2 = {0};
    assert_int_equal(samc_tensor_alloc(&s2, sine.ndim, sine.shape, NULL), SAMC_OK);
    assert_int_equal(samc_tensor_alloc(&q2, qpos.ndim, qpos.shape, NULL), SAMC_OK);
    assert_int_equal(samc_tensor_alloc(&c2, cam.ndim, cam.shape, NULL), SAMC_OK);
    const samc_sam3_model *m = x->model;
    samc_ctx *ctx;
    const samc_sam3_ops *o = ops_of(x, "transformer.decoder.ref_point_head", &ctx);
    assert_int_equal(o->sam3_dec_query_pos(ctx, &m->dec, &ref, &s2, &q2), SAMC_OK);
    o = ops_of(x, "transformer.decoder.@get_rpb_matrix", &ctx);
    assert_int_equal(o->sam3_dec_boxrpb(ctx, &m->dec, &ref, (int)mss.data[0], (int)mss.data[1], &c2), SAMC_OK);
    worst[0] = fmax(worst[0], rel_err(&s2, &sine));
    worst[1] = fmax(worst[1], rel_err(&q2, &qpos));
    worst[2] = fmax(worst[2], rel_err(&c2, &cam));
    samc_tensor_release(&s2), samc_tensor_release(&q2), samc_tensor_release(&c2);
    for (int i = 0; i < 5; i++)
        samc_tensor_release(slot[i]);
}

static void test_decoder_substeps(void **state)
{
    (void)state;
    loaded f;
    open_fixture(&f);
    samc_sam3_model *m = NULL;
    samc_error e = {0};
    samc_weights *w = NULL;
    assert_int_equal(samc_weights_open_h5(f.path, &w, &e), SAMC_OK);
    assert_int_equal(samc_sam3_model_init(&m, w, f.cfg, "", "fixture", &e), SAMC_OK);
    samc_exec x;
    assert_int_equal(samc_sam3_exec_init(&x, m, "ref", &e), SAMC_OK);
    samc_dump_record *recs = NULL;
    int n = 0, checked = 0;
    double worst[3] = {0, 0, 0};
    assert_int_equal(samc_dump_records(f.d, &recs, &n, &e), SAMC_OK);
    for (int i = 0; i < n; i++)
        if (!strncmp(recs[i].module, "transformer.decoder.layers.", 27))
            check_decoder_record(&x, f.d, recs[i].index, worst), checked++;
    printf("%d decoder-layer records: sine embed rel %.3g, ref_point_head rel %.3g, boxRPB rel %.3g\n", checked,
           worst[0], worst[1], worst[2]);
    assert_true(checked > 0);
    for (int k = 0; k < 3; k++)
        assert_true(worst[k] <= 1e-5);
    free(recs);
    samc_exec_free(&x);
    samc_sam3_model_free(m);
    close_fixture(&f);
}

/* The built-in released config describes exactly the detector.* keys and
 * shapes of the released sam3.pt (tests/data/sam3/released_detector_keys.tsv,
 * the released checkpoint's key list; complex64 [a,b] is stored
 * as [a,b,2] floats); the walk's order is the C records', not state_dict's. */
static void test_released_preset_keys(void **state)
{
    (void)state;
    samc_sam3_config cfg;
    samc_error e = {0};
    samc_key_list keys;
    assert_int_equal(samc_sam3_config_released(true, &cfg, &e), SAMC_OK);
    assert_int_equal(samc_sam3_expected_keys(&cfg, "detector.", &keys, &e), SAMC_OK);
    char *path = tu_src_path("tests/data/sam3/released_detector_keys.tsv");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    int n = 0, bad = 0;
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f)) {
        char key[256], shape[128], dtype[32];
        assert_int_equal(sscanf(line, "%255[^\t]\t[%127[^]]]\t%31s", key, shape, dtype), 3);
        int64_t dims[5];
        int nd = 0;
        for (char *tok = strtok(shape, ", "); tok && nd < 4; tok = strtok(NULL, ", "))
            dims[nd++] = strtoll(tok, NULL, 10);
        if (!strcmp(dtype, "complex64"))
            dims[nd++] = 2;
        const samc_key_spec *k = NULL;
        for (int i = 0; i < keys.count && !k; i++)
            if (!strcmp(keys.items[i].key, key))
                k = &keys.items[i];
        if (!k || !samc_shape_equal(k->ndim, k->shape, nd, dims)) {
            char a[96];
            if (bad++ < 5)
                printf("released '%s' %s: %s\n", key, samc_shape_str(nd, dims, a, sizeof a),
                       k ? "other shape described" : "not described");
        }
        n++;
    }
    fclose(f);
    free(path);
    printf("released detector keys: %d, described: %d, differing: %d\n", n, keys.count, bad);
    assert_int_equal(bad, 0);
    assert_int_equal(n, keys.count);
    samc_key_list_free(&keys);
}

/* The detector's parts mounted as SAM 3's video model will mount them: at
 * their image-model roots (the parity names) with their keys under
 * "detector.<root>" (samc_mount.keys) and no walk-wide base. The walk lists
 * exactly the keys of the image family read with base "detector.", and an
 * exec names the layers exactly as the image family does. */
static void test_detector_key_roots(void **state)
{
    (void)state;
    samc_sam3_config cfg;
    samc_error e = {0};
    assert_int_equal(samc_sam3_config_released(true, &cfg, &e), SAMC_OK);
    samc_mount mounts[16];
    char keys[16][96];
    const int n = samc_sam3_family.n_mounts;
    assert_true(n <= 16);
    for (int i = 0; i < n; i++) {
        mounts[i] = samc_sam3_family.mounts[i];
        snprintf(keys[i], sizeof keys[i], "detector%s%s", mounts[i].root[0] ? "." : "", mounts[i].root);
        mounts[i].keys = keys[i];
    }
    const samc_layer_family video_like = {"sam3-detector-in-video", mounts, n};
    samc_key_list want;
    assert_int_equal(samc_sam3_expected_keys(&cfg, "detector.", &want, &e), SAMC_OK);
    samc_sam3_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->cfg = cfg;
    m->processor.resolution = cfg.resolution;
    samc_sd sd;
    samc_sd_begin(&sd, NULL, "", NULL);
    assert_int_equal(samc_sd_family(&sd, &video_like, m, &e), SAMC_OK);
    assert_int_equal(sd.keys.count, want.count);
    for (int i = 0; i < want.count; i++)
        assert_string_equal(sd.keys.items[i].key, want.items[i].key);
    printf("detector parts with key roots: %d keys, the same as base \"detector.\"\n", want.count);
    samc_model_base_init(&m->base);
    samc_exec a, b;
    assert_int_equal(samc_exec_init_impl(&a, &video_like, m, &m->base, "ref", &e), SAMC_OK);
    assert_int_equal(samc_exec_init_impl(&b, &samc_sam3_family, m, &m->base, "ref", &e), SAMC_OK);
    assert_int_equal(a.n_layers, b.n_layers);
    for (int i = 0; i < a.n_layers; i++)
        assert_string_equal(a.layers[i].name, b.layers[i].name);
    samc_exec_free(&a), samc_exec_free(&b);
    samc_model_base_free(&m->base);
    samc_sd_free(&sd);
    samc_key_list_free(&want);
    samc_sam3_vision_release(&m->vision);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_strict_check), cmocka_unit_test(test_rope_from_config),
                                       cmocka_unit_test(test_decoder_substeps),
                                       cmocka_unit_test(test_released_preset_keys),
                                       cmocka_unit_test(test_detector_key_roots)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
