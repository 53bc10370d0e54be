/* SPDX-License-Identifier: Apache-2.0 */
/* test_sam3_load.c - SAM 3 checkpoints in the released layout
 * (fixtures/sam3/tiny_s2_sam3.{pt,safetensors} + .config.json, written by
 * tools/make_sam3_checkpoint.py for the weights of tiny_s2_text_boxes.h5):
 *  - both formats load through the strict walk (detector.* keys, the
 *    tracker's neck copy included, tracker.* left to the tracker) and every
 *    image-model weight equals the dump's bit for bit, complex64 RoPE tables
 *    as (re, im) pairs;
 *  - float32 tensors of both files are used in place (mapped, not copied);
 *  - bad input gets a message naming the problem: a SAM 2 checkpoint, a
 *    renamed key, a config that disagrees with a shape, truncated files, a
 *    parity dump given as a checkpoint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/sam2_model.h"
#include "core/models/sam3/sam3_model.h"
#include "util/testutil.h"

#define CKPT "fixtures/sam3/tiny_s2_sam3"
#define DUMP "fixtures/sam3/tiny_s2_text_boxes.h5"

static samc_sam3_model *load(const char *ckpt_rel, const char *config_path)
{
    char *ckpt = tu_src_path(ckpt_rel);
    samc_sam3_model *m = NULL;
    samc_error e = {0};
    if (samc_sam3_model_load(ckpt, config_path, &m, &e))
        fail_msg("%s: %s", ckpt, e.msg);
    free(ckpt);
    return m;
}

/* Every key the dump's image model has equals detector.<key> of `m`. */
static void expect_dump_weights(const samc_sam3_model *m)
{
    char *dump = tu_src_path(DUMP);
    samc_weights *d = NULL;
    samc_error e = {0};
    assert_int_equal(samc_weights_open_h5(dump, &d, &e), SAMC_OK);
    int n = 0, cplx = 0;
    for (size_t i = 0; i < samc_weights_count(d); i++) {
        char key[256];
        snprintf(key, sizeof key, "detector.%s", samc_weights_key(d, i));
        const samc_tensor *a = samc_weights_at(d, i), *b = samc_weights_find(m->base.weights, key);
        if (!b)
            fail_msg("%s: not in the checkpoint", key);
        assert_true(samc_tensor_same_shape(a, b));
        assert_memory_equal(a->data, b->data, (size_t)samc_numel(a) * sizeof(float));
        cplx += strstr(key, "freqs_cis") != NULL;
        n++;
    }
    printf("%d image-model tensors equal to the dump's (%d complex64 RoPE tables)\n", n, cplx);
    assert_true(n > 300 && cplx > 0);
    samc_weights_free(d);
    free(dump);
}

static void test_pt_and_safetensors(void **state)
{
    (void)state;
    char *cfg = tu_src_path(CKPT ".config.json");
    samc_sam3_model *pt = load(CKPT ".pt", cfg), *st = load(CKPT ".safetensors", cfg);
    assert_true(pt->vision.has_sam2_neck && st->vision.has_sam2_neck); /* the tracker's neck copy is bound, not unexpected */
    expect_dump_weights(pt);
    expect_dump_weights(st);
    /* float32 tensors of both mapped files are views, not copies (the zip's
     * stored entries, CRC-checked; the safetensors data section) */
    const samc_sam3_model *both[2] = {pt, st};
    for (int k = 0; k < 2; k++) {
        int views = 0, n = (int)samc_weights_count(both[k]->base.weights);
        for (int i = 0; i < n; i++)
            views += !samc_weights_at(both[k]->base.weights, (size_t)i)->owns;
        printf("%s: %d of %d tensors used in place\n", k ? ".safetensors" : ".pt", views, n);
        assert_int_equal(views, n);
    }
    samc_sam3_model_free(pt);
    samc_sam3_model_free(st);
    free(cfg);
}

static void expect_refused(const char *ckpt, const char *config, const char *a, const char *b)
{
    samc_sam3_model *m = NULL;
    samc_error e = {0};
    assert_int_not_equal(samc_sam3_model_load(ckpt, config, &m, &e), SAMC_OK);
    printf("refused: %s\n", e.msg);
    assert_null(m);
    assert_non_null(strstr(e.msg, a));
    if (b)
        assert_non_null(strstr(e.msg, b));
}

/* A copy of `src` with every `from` replaced by `to` (same length). */
static char *edited_copy(const char *dir, const char *src, const char *name, const char *from, const char *to)
{
    uint8_t *data = NULL;
    size_t n = 0;
    assert_int_equal(tu_read_file(src, &data, &n), 0);
    assert_int_equal(strlen(from), strlen(to));
    const size_t len = strlen(from);
    int found = 0;
    for (size_t at = 0; at + len <= n; at++)
        if (!memcmp(data + at, from, len))
            memcpy(data + at, to, len), found++;
    assert_true(found > 0);
    char *path = tu_join(dir, name);
    assert_int_equal(tu_write_file(path, data, n), 0);
    free(data);
    return path;
}

static void test_bad_inputs(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("sam3_load");
    char *cfg = tu_src_path(CKPT ".config.json"), *pt = tu_src_path(CKPT ".pt");
    char *sf = tu_src_path(CKPT ".safetensors"), *sam2 = tu_src_path("fixtures/demo/tiny_d_demo.pt");
    char *dump = tu_src_path(DUMP);
    expect_refused(sam2, NULL, "SAM 2 checkpoint", "not SAM 3");
    expect_refused(dump, cfg, "a parity dump carries its own config", NULL);
    char *sam2_dump = tu_src_path("fixtures/tiny_a_sam21_s128.h5");
    expect_refused(sam2_dump, NULL, "a dump of task 'image', not SAM 3", "SAM 2");
    free(sam2_dump);
    /* the reverse: the SAM 2 loader names a SAM 3 checkpoint or dump */
    samc_sam2_model *m2 = NULL;
    samc_error e2 = {0};
    assert_int_equal(samc_sam2_model_load(pt, NULL, false, &m2, &e2), SAMC_ERR_FORMAT);
    printf("refused: %s\n", e2.msg);
    assert_non_null(strstr(e2.msg, "this is a SAM 3 checkpoint"));
    samc_error_clear(&e2);
    assert_int_equal(samc_sam2_model_load(dump, NULL, false, &m2, &e2), SAMC_ERR_FORMAT);
    printf("refused: %s\n", e2.msg);
    assert_non_null(strstr(e2.msg, "a SAM 3 dump (task sam3_image), not SAM 2"));
    assert_null(m2);
    /* a key renamed in the .safetensors header: the walk names the missing one */
    const char *k = "detector.transformer.decoder.norm.weight";
    char *renamed = edited_copy(dir, sf, "renamed.safetensors", k, "detector.transformer.decoder.norX.weight");
    expect_refused(renamed, cfg, "missing key 'detector.transformer.decoder.norm.weight'",
                   "detector.transformer.decoder.norX.weight");
    /* the config disagrees with the checkpoint: shapes named, expected and actual */
    char *narrow = edited_copy(dir, cfg, "narrow.json", "\"dim_feedforward\": 64", "\"dim_feedforward\": 32");
    expect_refused(pt, narrow, "expected shape", "got (64,16)");
    /* truncated files */
    char *half_pt = tu_join(dir, "half.pt"), *half_st = tu_join(dir, "half.safetensors");
    assert_int_equal(tu_copy_prefix(pt, half_pt, (size_t)tu_file_size(pt) / 2), 0);
    assert_int_equal(tu_copy_prefix(sf, half_st, (size_t)tu_file_size(sf) / 2), 0);
    expect_refused(half_pt, cfg, "half.pt", NULL);
    expect_refused(half_st, cfg, "half.safetensors", NULL);
    /* a config that is not a SAM 3 image tree */
    char *sam2cfg = tu_src_path("fixtures/demo/tiny_d_demo.config.json");
    expect_refused(pt, sam2cfg, "not a SAM 3 image config", NULL);
    tu_rmtree(dir);
    free(dir), free(cfg), free(pt), free(sf), free(sam2), free(dump), free(renamed), free(narrow);
    free(half_pt), free(half_st), free(sam2cfg);
}

/* Each of the last 512 bytes of the .pt (the central directory the mapped
 * path indexes) flipped in turn: the open fails with a message or gives
 * exactly the original tensors, never anything else (run under ASan in CI). */
static void test_pt_directory_flips(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("sam3_flip"), *pt = tu_src_path(CKPT ".pt"), *path = tu_join(dir, "flip.pt");
    uint8_t *data = NULL;
    size_t n = 0;
    samc_error e = {0};
    samc_weights *ref = NULL;
    assert_int_equal(tu_read_file(pt, &data, &n), 0);
    assert_int_equal(samc_weights_open(pt, &ref, &e), SAMC_OK);
    int refused = 0, same = 0;
    for (size_t k = n > 512 ? n - 512 : 0; k < n; k++) {
        data[k] ^= 0xFF;
        assert_int_equal(tu_write_file(path, data, n), 0);
        data[k] ^= 0xFF;
        samc_weights *w = NULL;
        samc_error fe = {0};
        if (samc_weights_open(path, &w, &fe)) {
            assert_true(fe.msg[0] != '\0');
            refused++;
            continue;
        }
        assert_int_equal(samc_weights_count(w), samc_weights_count(ref));
        for (size_t i = 0; i < samc_weights_count(ref); i++) {
            const samc_tensor *a = samc_weights_at(ref, i), *b = samc_weights_find(w, samc_weights_key(ref, i));
            assert_non_null(b);
            assert_true(samc_tensor_same_shape(a, b));
            assert_memory_equal(a->data, b->data, (size_t)samc_numel(a) * sizeof(float));
        }
        samc_weights_free(w);
        same++;
    }
    printf("central directory flips: %d refused with a message, %d loaded identical tensors\n", refused, same);
    samc_weights_free(ref);
    free(data);
    tu_rmtree(dir);
    free(dir), free(pt), free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_pt_and_safetensors), cmocka_unit_test(test_bad_inputs),
                                       cmocka_unit_test(test_pt_directory_flips)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
