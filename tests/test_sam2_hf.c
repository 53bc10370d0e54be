/* SPDX-License-Identifier: Apache-2.0 */
/* test_sam2_hf.c - SAM 2 checkpoints in the transformers format
 * (core/models/sam2/sam2_hf.c): samc's port of the converter's key map
 * against the map the converter's own code applied
 * (tests/data/hf/sam2_key_map.tsv, tools/make_hf_checkpoint.py), the same
 * model from the converted file and from the official one (bit for bit),
 * and the strict check naming keys as the file names them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/sam2_model.h"
#include "samc.h"
#include "util/testutil.h"

#define CFG "fixtures/ckpt/tiny_c_bf16.config.json"
#define HF "fixtures/ckpt/tiny_c_bf16_hf.safetensors"
#define PT "fixtures/ckpt/tiny_c_bf16.pt"

/* Every line of the converter's map (official<TAB>transformers) equals samc's. */
static void test_key_map_is_the_converters(void **s)
{
    (void)s;
    char *path = tu_src_path("tests/data/hf/sam2_key_map.tsv");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512], got[256];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        assert_non_null(tab);
        *tab = '\0';
        tab[strcspn(tab + 1, "\n") + 1] = '\0';
        samc_sam2_hf_key(line, got, sizeof got);
        if (strcmp(got, tab + 1))
            fail_msg("%s: samc maps it to '%s', the converter to '%s'", line, got, tab + 1);
        n++;
    }
    fclose(f);
    free(path);
    assert_int_equal(n, 317); /* tiny_c's 321 keys less the 4 stacked point embeddings */
}

/* On every built-in preset the map is one to one (no two official keys
 * become one file key), so a file cannot satisfy two keys with one tensor. */
static void test_key_map_injective_on_presets(void **s)
{
    (void)s;
    const char *presets[] = {"sam2_hiera_t", "sam2_hiera_s", "sam2_hiera_b+", "sam2_hiera_l",
                             "sam2.1_hiera_t", "sam2.1_hiera_s", "sam2.1_hiera_b+", "sam2.1_hiera_l"};
    for (size_t p = 0; p < sizeof presets / sizeof *presets; p++) {
        samc_sam2_config cfg;
        samc_key_list keys = {0};
        samc_error e;
        assert_int_equal(samc_sam2_config_preset(presets[p], &cfg, &e), SAMC_OK);
        assert_int_equal(samc_sam2_expected_keys(&cfg, &keys, &e), SAMC_OK);
        char(*names)[256] = calloc((size_t)keys.count, sizeof *names);
        for (int i = 0; i < keys.count; i++)
            samc_sam2_hf_key(keys.items[i].key, names[i], sizeof names[i]);
        qsort(names, (size_t)keys.count, sizeof *names, (int (*)(const void *, const void *))strcmp);
        for (int i = 1; i < keys.count; i++)
            if (!strcmp(names[i - 1], names[i]))
                fail_msg("%s: two keys map to '%s'", presets[i], names[i]);
        free(names);
        samc_key_list_free(&keys);
    }
}

static samc_model *load(const char *rel)
{
    char *path = tu_src_path(rel), *cfg = tu_src_path(CFG);
    samc_model_params mp = samc_model_default_params();
    mp.config = cfg;
    samc_model *m = NULL;
    samc_error e;
    if (samc_model_load(path, &mp, &m, &e))
        fail_msg("%s", e.msg);
    free(path), free(cfg);
    return m;
}

/* The converted file is the same model: every mask logit of an image prompt
 * and of a tracked frame equal to the official checkpoint's. */
static void test_same_model_bit_for_bit(void **s)
{
    (void)s;
    samc_model *a = load(PT), *b = load(HF);
    char *img_path = tu_src_path("fixtures/demo/demo.png");
    uint8_t *rgb = NULL;
    int h, w;
    samc_error e;
    assert_int_equal(samc_read_image(img_path, &rgb, &h, &w, &e), SAMC_OK);
    samc_masks out[2] = {{0}};
    samc_model *models[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        samc_predictor *p = NULL;
        assert_int_equal(samc_predictor_new(models[i], NULL, &p, &e), SAMC_OK);
        assert_int_equal(samc_predictor_set_image(p, rgb, h, w, &e), SAMC_OK);
        const float pt[2] = {100, 90}, box[4] = {40, 30, 280, 200};
        const int32_t lab[1] = {1};
        samc_predict_request rq = {.point_coords = pt, .point_labels = lab, .n_points = 1, .box = box,
                                   .multimask_output = 1, .return_logits = 1};
        assert_int_equal(samc_predictor_predict(p, &rq, &out[i], &e), SAMC_OK);
        samc_predictor_free(p);
    }
    assert_int_equal(out[0].num_masks, out[1].num_masks);
    assert_memory_equal(out[0].masks, out[1].masks, (size_t)out[0].num_masks * h * w * sizeof(float));
    assert_memory_equal(out[0].iou, out[1].iou, (size_t)out[0].num_masks * sizeof(float));
    samc_masks_free(&out[0]), samc_masks_free(&out[1]);
    /* a tracked clip: the memory parts of the file too */
    float *frame_logits[2] = {NULL, NULL};
    int64_t n = 0;
    for (int i = 0; i < 2; i++) {
        samc_tracker *t = NULL;
        assert_int_equal(samc_tracker_new(models[i], NULL, &t, &e), SAMC_OK);
        uint8_t *clip = malloc((size_t)3 * h * w * 3);
        for (int k = 0; k < 3; k++)
            memcpy(clip + (size_t)k * h * w * 3, rgb, (size_t)h * w * 3);
        assert_int_equal(samc_tracker_open_frames(t, clip, 3, h, w, &e), SAMC_OK);
        free(clip);
        const float pt[2] = {160, 120};
        const int32_t lab[1] = {1};
        assert_int_equal(samc_tracker_add_points(t, 0, 1, pt, lab, 1, NULL, 1, NULL, &e), SAMC_OK);
        assert_int_equal(samc_tracker_propagate(t, 0, 2, 0, NULL, NULL, &e), SAMC_OK);
        samc_frame_masks fm;
        assert_int_equal(samc_tracker_add_points(t, 2, 1, pt, lab, 1, NULL, 0, &fm, &e), SAMC_OK);
        n = (int64_t)fm.n_obj * fm.height * fm.width;
        frame_logits[i] = malloc((size_t)n * sizeof(float));
        memcpy(frame_logits[i], fm.logits, (size_t)n * sizeof(float));
        samc_tracker_free(t);
    }
    assert_memory_equal(frame_logits[0], frame_logits[1], (size_t)n * sizeof(float));
    free(frame_logits[0]), free(frame_logits[1]);
    samc_free(rgb);
    free(img_path);
    samc_model_free(a), samc_model_free(b);
}

/* The converted file with one edit, checked against tiny_c's config. */
static samc_status check_edited(void (*edit)(samc_weights *), samc_error *e)
{
    char *path = tu_src_path(HF), *cfg_path = tu_src_path(CFG);
    samc_weights *w = NULL;
    *e = (samc_error){0}; /* internal calls keep the first error: start clear */
    assert_int_equal(samc_weights_open(path, &w, e), SAMC_OK);
    edit(w);
    samc_status st = samc_sam2_hf_adapt(w, e);
    samc_sam2_config cfg;
    if (!st) {
        assert_int_equal(samc_sam2_config_resolve(cfg_path, &cfg, e), SAMC_OK);
        st = samc_sam2_check_weights(&cfg, w, e);
    }
    samc_weights_free(w);
    free(path), free(cfg_path);
    return st;
}

#define QKV "vision_encoder.backbone.blocks.0.attn.qkv.weight"
static void drop_qkv(samc_weights *w) { assert_int_equal(samc_weights_remove(w, QKV, NULL), SAMC_OK); }
static void reshape_qkv(samc_weights *w)
{
    drop_qkv(w);
    const int64_t shape[2] = {3, 3};
    assert_int_equal(samc_weights_add(w, QKV, 2, shape, calloc(9, sizeof(float)), NULL), SAMC_OK);
}
static void add_stray(samc_weights *w)
{
    const int64_t shape[1] = {1};
    assert_int_equal(samc_weights_add(w, "vision_encoder.backbone.extra.weight", 1, shape, calloc(1, sizeof(float)),
                                      NULL), SAMC_OK);
}
static void drop_point_embed(samc_weights *w)
{
    assert_int_equal(samc_weights_remove(w, "prompt_encoder.point_embed.weight", NULL), SAMC_OK);
}
static void change_pe_copy(samc_weights *w)
{
    const samc_tensor *t = samc_weights_find_file(w, "shared_image_embedding.positional_embedding");
    assert_non_null(t);
    const int64_t n = samc_numel(t);
    int64_t shape[SAMC_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    const int nd = t->ndim;
    assert_int_equal(samc_weights_remove(w, "shared_image_embedding.positional_embedding", NULL), SAMC_OK);
    assert_int_equal(samc_weights_add(w, "shared_image_embedding.positional_embedding", nd, shape,
                                      calloc((size_t)n, sizeof(float)), NULL), SAMC_OK);
}

#define assert_msg(e, sub)                                                                                         \
    do {                                                                                                           \
        if (!strstr((e).msg, (sub)))                                                                               \
            fail_msg("'%s' is not in: %s", (sub), (e).msg);                                                        \
    } while (0)

static void test_errors_name_the_files_keys(void **s)
{
    (void)s;
    samc_error e;
    assert_int_equal(check_edited(drop_qkv, &e), SAMC_ERR_KEY);
    assert_msg(e, "missing key '" QKV "'");
    assert_msg(e, "(transformers names)");
    assert_int_equal(check_edited(reshape_qkv, &e), SAMC_ERR_SHAPE);
    assert_msg(e, "key '" QKV "': expected shape");
    assert_int_equal(check_edited(add_stray, &e), SAMC_ERR_KEY);
    assert_msg(e, "unexpected key(s)");
    assert_msg(e, "'vision_encoder.backbone.extra.weight'");
    assert_int_equal(check_edited(drop_point_embed, &e), SAMC_ERR_KEY);
    assert_msg(e, "prompt_encoder.point_embed.weight");
    assert_int_equal(check_edited(change_pe_copy, &e), SAMC_ERR_FORMAT);
    assert_msg(e, "shared_image_embedding.positional_embedding");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_map_is_the_converters), cmocka_unit_test(test_key_map_injective_on_presets),
        cmocka_unit_test(test_same_model_bit_for_bit), cmocka_unit_test(test_errors_name_the_files_keys)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
