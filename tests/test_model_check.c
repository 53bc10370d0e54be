/* SPDX-License-Identifier: Apache-2.0 */
/* test_model_check.c - a checkpoint against its config, before any compute:
 * missing key, wrong shape, unexpected keys, and preset detection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/sam2_model.h"
#include "core/models/sam2/sam2_model.h"
#include "util/testutil.h"

/* Copy `src` into a new store, skipping `drop`, reshaping `reshape` to a
 * (1, n) tensor and adding `extra` when non-NULL. */
static samc_weights *edited(const samc_weights *src, const char *drop, const char *reshape, const char *extra)
{
    samc_weights *w = samc_weights_new("edited.pt");
    for (size_t i = 0; i < samc_weights_count(src); i++) {
        const char *k = samc_weights_key(src, i);
        const samc_tensor *t = samc_weights_at(src, i);
        if (drop && !strcmp(k, drop))
            continue;
        const size_t n = (size_t)samc_numel(t);
        float *d = malloc(n * sizeof *d);
        memcpy(d, t->data, n * sizeof *d);
        int64_t flat[2] = {1, (int64_t)n};
        bool re = reshape && !strcmp(k, reshape);
        assert_int_equal(samc_weights_add(w, k, re ? 2 : t->ndim, re ? flat : t->shape, d, NULL), SAMC_OK);
    }
    if (extra) {
        float *d = calloc(1, sizeof *d);
        int64_t one[1] = {1};
        assert_int_equal(samc_weights_add(w, extra, 1, one, d, NULL), SAMC_OK);
    }
    return w;
}

static void load(samc_weights **w, samc_sam2_config *cfg)
{
    char *ck = tu_src_path("fixtures/ckpt/tiny_c_f32.pt"), *cj = tu_src_path("fixtures/ckpt/tiny_c_f32.config.json");
    assert_int_equal(samc_weights_open(ck, w, NULL), SAMC_OK);
    assert_int_equal(samc_sam2_config_from_json_file(cj, cfg, NULL), SAMC_OK);
    free(ck), free(cj);
}

static void test_missing_key(void **s)
{
    (void)s;
    samc_weights *w;
    samc_sam2_config cfg;
    load(&w, &cfg);
    assert_int_equal(samc_sam2_check_weights(&cfg, w, NULL), SAMC_OK);
    samc_weights *e = edited(w, "sam_mask_decoder.iou_token.weight", NULL, NULL);
    samc_error err = {0};
    samc_sam2_model *m = NULL;
    assert_int_equal(samc_sam2_model_init(&m, e, &cfg, &err), SAMC_ERR_KEY); /* takes ownership of e */
    assert_null(m);
    assert_non_null(strstr(err.msg, "missing key 'sam_mask_decoder.iou_token.weight'"));
    assert_non_null(strstr(err.msg, "edited.pt"));
    samc_weights_free(w);
}

static void test_wrong_shape(void **s)
{
    (void)s;
    samc_weights *w;
    samc_sam2_config cfg;
    load(&w, &cfg);
    samc_weights *e = edited(w, NULL, "image_encoder.trunk.pos_embed", NULL);
    samc_error err = {0};
    assert_int_equal(samc_sam2_check_weights(&cfg, e, &err), SAMC_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "'image_encoder.trunk.pos_embed'"));
    assert_non_null(strstr(err.msg, "expected shape (1,"));
    assert_non_null(strstr(err.msg, "got (1,"));
    samc_weights_free(e);
    samc_weights_free(w);
}

static void test_unexpected_keys(void **s)
{
    (void)s;
    samc_weights *w;
    samc_sam2_config cfg;
    load(&w, &cfg);
    samc_weights *e = edited(w, NULL, NULL, "module.extra_head.weight");
    samc_error err = {0};
    assert_int_equal(samc_sam2_check_weights(&cfg, e, &err), SAMC_ERR_KEY);
    assert_non_null(strstr(err.msg, "1 unexpected key(s)"));
    assert_non_null(strstr(err.msg, "'module.extra_head.weight'"));
    samc_weights_free(e);
    samc_weights_free(w);
}

/* Detection needs only the trunk's patch embed and block count. */
static void test_detect(void **s)
{
    (void)s;
    static const struct { int embed, depth; bool v21; const char *want; } cases[] = {
        {96, 12, false, "sam2_hiera_t"}, {96, 16, true, "sam2.1_hiera_s"},
        {112, 24, true, "sam2.1_hiera_b+"}, {144, 48, false, "sam2_hiera_l"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        samc_weights *w = samc_weights_new("probe.pt");
        int64_t pe[4] = {cases[c].embed, 3, 7, 7}, one[1] = {1};
        assert_int_equal(samc_weights_add(w, "image_encoder.trunk.patch_embed.proj.weight", 4, pe,
                                          calloc((size_t)cases[c].embed * 147, sizeof(float)), NULL), SAMC_OK);
        char k[96];
        for (int b = 0; b < cases[c].depth; b++) {
            snprintf(k, sizeof k, "image_encoder.trunk.blocks.%d.norm1.weight", b);
            assert_int_equal(samc_weights_add(w, k, 1, one, calloc(1, sizeof(float)), NULL), SAMC_OK);
        }
        if (cases[c].v21)
            assert_int_equal(samc_weights_add(w, "no_obj_embed_spatial", 1, one, calloc(1, sizeof(float)), NULL), SAMC_OK);
        samc_sam2_config cfg;
        assert_int_equal(samc_sam2_detect_config(w, &cfg, NULL), SAMC_OK);
        assert_string_equal(cfg.name, cases[c].want);
        samc_weights_free(w);
    }
    samc_weights *w;
    samc_sam2_config cfg;
    load(&w, &cfg);
    samc_error err = {0};
    assert_int_equal(samc_sam2_detect_config(w, &cfg, &err), SAMC_ERR_ARG); /* a tiny test config */
    assert_non_null(strstr(err.msg, "--config"));
    samc_weights_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_key), cmocka_unit_test(test_wrong_shape),
        cmocka_unit_test(test_unexpected_keys), cmocka_unit_test(test_detect)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
