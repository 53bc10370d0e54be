/* SPDX-License-Identifier: Apache-2.0 */
/* test_sam3_hf.c - SAM 3 checkpoints in the transformers format
 * (core/models/sam3/sam3_hf.c): samc's port of the converter's key map
 * against the map the converter's own code applied to tiny_s2's detector
 * (tests/data/hf/sam3_key_map.tsv, tools/make_hf_checkpoint.py); a
 * transformers-format file written here from the official one with the
 * converter's map and its other steps (pos_embed's cls row dropped,
 * text_projection transposed, split_qkv's torch.chunk, no RoPE tables) gives
 * the official file's outputs bit for bit (and `samc info` reads it as
 * transformers' naming); the strict check names keys as the file names
 * them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam3/sam3_hf.h"
#include "samc.h"
#include "samc_sam3.h"
#include "util/cli_run.h"
#include "util/testutil.h"

#define CFG "fixtures/sam3/tiny_s2_sam3.config.json"
#define OFFICIAL "fixtures/sam3/tiny_s2_sam3.safetensors"
#define VOCAB "tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz"

static char *g_tmp;

typedef struct key_map {
    int n;
    char (*official)[256], (*hf)[256];
} key_map;

static key_map read_map(void)
{
    char *path = tu_src_path("tests/data/hf/sam3_key_map.tsv");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    key_map m = {0, calloc(1024, sizeof *m.official), calloc(1024, sizeof *m.hf)};
    char line[600];
    while (fgets(line, sizeof line, f) && m.n < 1024) {
        char *tab = strchr(line, '\t');
        assert_non_null(tab);
        *tab = '\0';
        tab[strcspn(tab + 1, "\n") + 1] = '\0';
        snprintf(m.official[m.n], 256, "%s", line);
        snprintf(m.hf[m.n], 256, "%s", tab + 1);
        m.n++;
    }
    fclose(f);
    free(path);
    return m;
}

static void free_map(key_map *m) { free(m->official), free(m->hf); }

/* Every line of the converter's map (official<TAB>transformers) equals samc's. */
static void test_key_map_is_the_converters(void **s)
{
    (void)s;
    key_map m = read_map();
    char got[256];
    for (int i = 0; i < m.n; i++) {
        samc_sam3_hf_key(m.official[i], got, sizeof got);
        if (strcmp(got, m.hf[i]))
            fail_msg("%s: samc maps it to '%s', the converter to '%s'", m.official[i], got, m.hf[i]);
    }
    assert_int_equal(m.n, 341); /* tiny_s2's detector keys */
    free_map(&m);
}

/* ---- a transformers-format file, written as the converter writes it ---- */

typedef struct st_entry {
    char key[256];
    int ndim;
    int64_t shape[4];
    float *data; /* owned */
} st_entry;

typedef struct st_file {
    st_entry e[1024];
    int n;
} st_file;

static void put(st_file *f, const char *key, int ndim, const int64_t *shape, const float *data)
{
    assert_true(f->n < 1024);
    st_entry *e = &f->e[f->n++];
    snprintf(e->key, sizeof e->key, "%s", key);
    e->ndim = ndim;
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        e->shape[d] = shape[d], n *= shape[d];
    e->data = malloc((size_t)n * sizeof(float));
    memcpy(e->data, data, (size_t)n * sizeof(float));
}

static int64_t numel(const st_entry *e)
{
    int64_t n = 1;
    for (int d = 0; d < e->ndim; d++)
        n *= e->shape[d];
    return n;
}

/* safetensors: 8-byte little-endian header length, the JSON header, the data. */
static void write_st(const st_file *f, const char *path)
{
    tu_buf h = {0}, body = {0};
    char tmp[512];
    int64_t off = 0;
    tu_buf_byte(&h, '{');
    for (int i = 0; i < f->n; i++) {
        const st_entry *e = &f->e[i];
        const int64_t bytes = numel(e) * 4;
        int k = snprintf(tmp, sizeof tmp, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[", i ? "," : "", e->key);
        for (int d = 0; d < e->ndim; d++)
            k += snprintf(tmp + k, sizeof tmp - (size_t)k, "%s%lld", d ? "," : "", (long long)e->shape[d]);
        k += snprintf(tmp + k, sizeof tmp - (size_t)k, "],\"data_offsets\":[%lld,%lld]}", (long long)off,
                      (long long)(off + bytes));
        tu_buf_put(&h, tmp, (size_t)k);
        tu_buf_put(&body, e->data, (size_t)bytes);
        off += bytes;
    }
    tu_buf_byte(&h, '}');
    while (h.len % 8)
        tu_buf_byte(&h, ' ');
    tu_buf out = {0};
    tu_buf_u64le(&out, h.len);
    tu_buf_put(&out, h.data, h.len);
    tu_buf_put(&out, body.data, body.len);
    assert_int_equal(tu_write_file(path, out.data, out.len), 0);
    free(h.data), free(body.data), free(out.data);
}

/* The converter on the official file: each detector key renamed by the
 * converter's map, then convert_sam3_checkpoint's inline steps and split_qkv. */
static void convert(st_file *f)
{
    key_map m = read_map();
    char *path = tu_src_path(OFFICIAL);
    samc_weights *w = NULL;
    samc_error e = {0};
    assert_int_equal(samc_weights_open(path, &w, &e), SAMC_OK);
    for (int i = 0; i < m.n; i++) {
        char det[300];
        snprintf(det, sizeof det, "detector.%s", m.official[i]);
        const samc_tensor *t = samc_weights_find(w, det);
        assert_non_null(t);
        const char *k = m.hf[i];
        const size_t len = strlen(k);
        if (strstr(k, ".rotary_emb.rope_embeddings")) /* not a Sam3Model key */
            continue;
        if (!strcmp(k, "vision_encoder.backbone.embeddings.position_embeddings")) { /* [:, 1:, :] */
            const int64_t shape[3] = {1, t->shape[1] - 1, t->shape[2]};
            put(f, k, 3, shape, t->data + t->shape[2]);
        } else if (!strcmp(k, "text_encoder.text_projection.weight")) { /* .T */
            const int64_t r = t->shape[0], c = t->shape[1], shape[2] = {c, r};
            float *tr = malloc((size_t)(r * c) * sizeof *tr);
            for (int64_t a = 0; a < r; a++)
                for (int64_t b = 0; b < c; b++)
                    tr[b * r + a] = t->data[a * c + b];
            put(f, k, 2, shape, tr);
            free(tr);
        } else if (strstr(k, ".attention.qkv.") || (len > 14 && strstr(k, "in_proj_"))) { /* split_qkv */
            int64_t shape[4];
            memcpy(shape, t->shape, sizeof shape);
            shape[0] /= 3;
            const int64_t third = samc_numel(t) / 3;
            for (int p = 0; p < 3; p++) {
                char name[300];
                const char *at = strstr(k, ".attention.qkv.");
                if (at)
                    snprintf(name, sizeof name, "%.*s.attention.%c_proj.%s", (int)(at - k), k, "qkv"[p], at + 15);
                else
                    snprintf(name, sizeof name, "%.*s%c_proj.%s", (int)(strstr(k, "in_proj_") - k), k, "qkv"[p],
                             strstr(k, "in_proj_") + 8);
                put(f, name, t->ndim, shape, t->data + p * third);
            }
        } else {
            put(f, k, t->ndim, t->shape, t->data);
        }
    }
    samc_weights_free(w);
    free(path);
    free_map(&m);
}

static void free_st(st_file *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->e[i].data);
}

static samc_status load(const char *path, samc_model **m, samc_error *e)
{
    char *cfg = tu_src_path(CFG), *voc = tu_src_path(VOCAB);
    samc_model_params mp = samc_model_default_params();
    mp.config = cfg, mp.vocab = voc;
    *e = (samc_error){0};
    samc_status st = samc_model_load(path, &mp, m, e);
    free(cfg), free(voc);
    return st;
}

/* What the processor found: copies (its results live as long as it). */
typedef struct found {
    int n, h, w;
    float *scores, *boxes, *masks;
} found;

static float *copy(const float *x, int64_t n)
{
    float *y = malloc((size_t)(n ? n : 1) * sizeof *y);
    memcpy(y, x, (size_t)n * sizeof *y);
    return y;
}

/* Text and an exemplar box on the demo image: every mask probability,
 * box and score. */
static found run(samc_model *m)
{
    char *img_path = tu_src_path("fixtures/demo/demo.png");
    uint8_t *rgb = NULL;
    int h, w;
    samc_error e;
    assert_int_equal(samc_read_image(img_path, &rgb, &h, &w, &e), SAMC_OK);
    samc_sam3_processor_params pp = samc_sam3_processor_default_params();
    pp.threshold = 0.0f;
    samc_sam3_processor *p = NULL;
    assert_int_equal(samc_sam3_processor_new(m, &pp, &p, &e), SAMC_OK);
    assert_int_equal(samc_sam3_processor_set_image(p, rgb, h, w, &e), SAMC_OK);
    assert_int_equal(samc_sam3_processor_set_text(p, "a dog", &e), SAMC_OK);
    assert_int_equal(samc_sam3_processor_add_box(p, (const float[]){0.4f, 0.4f, 0.3f, 0.3f}, true, &e), SAMC_OK);
    samc_sam3_results r;
    assert_int_equal(samc_sam3_processor_results(p, &r, &e), SAMC_OK);
    found f = {r.n, r.h, r.w, copy(r.scores, r.n), copy(r.boxes, 4 * (int64_t)r.n),
               copy(r.masks, (int64_t)r.n * r.h * r.w)};
    samc_sam3_processor_free(p);
    samc_free(rgb);
    free(img_path);
    return f;
}

static void test_same_model_bit_for_bit(void **s)
{
    (void)s;
    static st_file f;
    f.n = 0;
    convert(&f);
    char *hf = tu_join(g_tmp, "sam3_hf.safetensors"), *off = tu_src_path(OFFICIAL);
    write_st(&f, hf);
    free_st(&f);
    char *cfg = tu_src_path(CFG), *args = tu_strdupf("info '%s' --config '%s'", hf, cfg);
    tu_run_result info = tu_run_samc(g_tmp, args); /* samc info says which naming it read */
    if (info.rc)
        fail_msg("samc %s: %s", args, info.err);
    if (!strstr(info.out, "key names: transformers") || !strstr(info.out, "every key and shape matches"))
        fail_msg("samc %s: %s", args, info.out);
    tu_run_free(&info), free(args), free(cfg);
    samc_model *a = NULL, *b = NULL;
    samc_error e;
    if (load(off, &a, &e) || load(hf, &b, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(samc_model_family(b), SAMC_FAMILY_SAM3);
    found ra = run(a), rb = run(b);
    assert_true(ra.n > 0);
    assert_int_equal(ra.n, rb.n);
    assert_int_equal(ra.h, rb.h), assert_int_equal(ra.w, rb.w);
    assert_memory_equal(ra.scores, rb.scores, (size_t)ra.n * sizeof(float));
    assert_memory_equal(ra.boxes, rb.boxes, (size_t)ra.n * 4 * sizeof(float));
    assert_memory_equal(ra.masks, rb.masks, (size_t)ra.n * ra.h * ra.w * sizeof(float));
    free(ra.scores), free(ra.boxes), free(ra.masks), free(rb.scores), free(rb.boxes), free(rb.masks);
    samc_model_free(a), samc_model_free(b);
    free(hf), free(off);
}

#define assert_msg(e, sub)                                                                                         \
    do {                                                                                                           \
        if (!strstr((e).msg, (sub)))                                                                               \
            fail_msg("'%s' is not in: %s", (sub), (e).msg);                                                        \
    } while (0)

/* The converted file with entry `key` dropped (replace NULL) or given
 * shape {rows} (1-D), then loaded. */
static samc_status edited(const char *key, int64_t rows, samc_error *e)
{
    static st_file f;
    f.n = 0;
    convert(&f);
    for (int i = 0; i < f.n; i++)
        if (!strcmp(f.e[i].key, key)) {
            if (rows > 0) {
                free(f.e[i].data);
                f.e[i].data = calloc((size_t)rows, sizeof(float));
                f.e[i].ndim = 1, f.e[i].shape[0] = rows;
            }
            else
                snprintf(f.e[i].key, sizeof f.e[i].key, "vision_encoder.backbone.extra.weight");
        }
    char *hf = tu_join(g_tmp, "edited.safetensors");
    write_st(&f, hf);
    free_st(&f);
    samc_model *m = NULL;
    samc_status st = load(hf, &m, e);
    samc_model_free(m);
    free(hf);
    return st;
}

static void test_errors_name_the_files_keys(void **s)
{
    (void)s;
    samc_error e;
    /* a third of a split projection missing: named as the file names it */
    assert_int_equal(edited("vision_encoder.backbone.layers.0.attention.k_proj.weight", 0, &e), SAMC_ERR_KEY);
    assert_msg(e, "'vision_encoder.backbone.layers.0.attention.k_proj.weight' missing");
    assert_msg(e, "(transformers names)");
    /* thirds of different shapes */
    assert_int_equal(edited("text_encoder.text_model.encoder.layers.0.self_attn.v_proj.bias", 5, &e), SAMC_ERR_SHAPE);
    assert_msg(e, "v_proj.bias");
    /* a tensor of the wrong shape: the strict walk, in the file's names */
    assert_int_equal(edited("detr_decoder.layers.0.mlp.fc1.bias", 5, &e), SAMC_ERR_SHAPE);
    assert_msg(e, "detr_decoder.layers.0.mlp.fc1.bias");
    /* a missing one, and the stray name it was moved to */
    assert_int_equal(edited("geometry_encoder.layers.0.layer_norm1.weight", 0, &e), SAMC_ERR_KEY);
    assert_msg(e, "geometry_encoder.layers.0.layer_norm1.weight");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_map_is_the_converters),
        cmocka_unit_test(test_same_model_bit_for_bit),
        cmocka_unit_test(test_errors_name_the_files_keys),
    };
    g_tmp = tu_mkdtemp("sam3_hf");
    if (!g_tmp)
        return 1;
    const int failed = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rmtree(g_tmp);
    free(g_tmp);
    return failed;
}
