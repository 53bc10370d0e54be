/* SPDX-License-Identifier: Apache-2.0 */
/* test_config.c - presets, JSON configs, block layout and the key list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/sam2_model.h"

/* Key counts of the official state_dicts (SAM2_REFERENCE_NOTES.md §1.5,
 * from instantiated official models). */
static void test_preset_key_counts(void **s)
{
    (void)s;
    static const struct { const char *name; int keys; } want[] = {
        {"sam2_hiera_t", 468},   {"sam2_hiera_s", 516},   {"sam2_hiera_b+", 612},   {"sam2_hiera_l", 900},
        {"sam2.1_hiera_t", 471}, {"sam2.1_hiera_s", 519}, {"sam2.1_hiera_b+", 615}, {"sam2.1_hiera_l", 903}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        samc_sam2_config c;
        samc_error e = {0};
        assert_int_equal(samc_sam2_config_preset(want[i].name, &c, &e), SAMC_OK);
        assert_int_equal(samc_sam2_config_validate(&c, &e), SAMC_OK);
        samc_key_list l;
        assert_int_equal(samc_sam2_expected_keys(&c, &l, &e), SAMC_OK);
        assert_int_equal(l.count, want[i].keys);
        samc_key_list_free(&l);
    }
}

static void test_block_windows(void **s)
{
    (void)s;
    samc_sam2_config c;
    assert_int_equal(samc_sam2_config_preset("sam2.1_hiera_tiny", &c, NULL), SAMC_OK);
    samc_hiera_block_spec sp[SAMC_MAX_BLOCKS];
    assert_int_equal(samc_hiera_block_specs(&c.trunk, sp, SAMC_MAX_BLOCKS, NULL), SAMC_OK);
    static const int win[12] = {8, 8, 4, 4, 14, 0, 14, 0, 14, 0, 14, 7};
    static const int dout[12] = {96, 192, 192, 384, 384, 384, 384, 384, 384, 384, 768, 768};
    for (int i = 0; i < 12; i++) {
        assert_int_equal(sp[i].window, win[i]);
        assert_int_equal(sp[i].dim_out, dout[i]);
        assert_int_equal(sp[i].q_stride, (i == 1 || i == 3 || i == 10) ? 2 : 0);
    }
    assert_int_equal(sp[11].heads, 8);
}

static void test_unknown_preset(void **s)
{
    (void)s;
    samc_sam2_config c;
    samc_error e = {0};
    assert_int_equal(samc_sam2_config_preset("sam3_hiera_q", &c, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "sam3_hiera_q"));
    assert_non_null(strstr(e.msg, "sam2.1_hiera_t"));
}

static void test_json_config(void **s)
{
    (void)s;
    const char *json =
        "{\"_target_\": \"sam2.modeling.sam2_base.SAM2Base\", \"image_size\": 128,"
        " \"image_encoder\": {\"_target_\": \"sam2.modeling.backbones.image_encoder.ImageEncoder\", \"scalp\": 1,"
        "  \"trunk\": {\"_target_\": \"sam2.modeling.backbones.hieradet.Hiera\", \"embed_dim\": 16, \"num_heads\": 2,"
        "   \"stages\": [1, 2, 2, 1], \"global_att_blocks\": [4], \"window_spec\": [4, 2, 3, 2],"
        "   \"window_pos_embed_bkg_spatial_size\": [5, 3]},"
        "  \"neck\": {\"_target_\": \"sam2.modeling.backbones.image_encoder.FpnNeck\", \"d_model\": 32,"
        "   \"backbone_channel_list\": [128, 64, 32, 16], \"fpn_top_down_levels\": [2, 3], \"fpn_interp_model\": \"nearest\","
        "   \"position_encoding\": {\"_target_\": \"sam2.modeling.position_encoding.PositionEmbeddingSine\", \"num_pos_feats\": 32}}},"
        " \"sam_mask_decoder_extra_args\": {\"dynamic_multimask_via_stability\": true}}";
    samc_sam2_config c;
    samc_error e = {0};
    assert_int_equal(samc_sam2_config_from_json(json, "test", &c, &e), SAMC_OK);
    assert_int_equal(c.trunk.embed_dim, 16);
    assert_int_equal(c.trunk.bkg_h, 5);
    assert_int_equal(c.trunk.bkg_w, 3);
    assert_int_equal(c.neck.scalp, 1);
    assert_false(c.neck.interp_bilinear);
    assert_true(c.dynamic_multimask_via_stability);
    /* Absent keys take the constructor defaults, not a preset's values. */
    assert_false(c.use_high_res_features_in_sam);
    assert_int_equal(c.num_maskmem, 7);

    e = (samc_error){0};
    assert_int_equal(samc_sam2_config_from_json("{\"image_encoder\": {\"trunk\": {\"embed_dim\": \"x\"}, \"neck\": {}}}",
                                                "bad.json", &c, &e), SAMC_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "bad.json"));
    assert_non_null(strstr(e.msg, "image_encoder.trunk"));
    e = (samc_error){0};
    assert_int_equal(samc_sam2_config_from_json("{not json", "x.json", &c, &e), SAMC_ERR_FORMAT);
    /* Neck channels must match the trunk's stage dims. */
    e = (samc_error){0};
    char *bad = strdup(json);
    char *p = strstr(bad, "[128, 64, 32, 16]");
    memcpy(p, "[128, 64, 32, 17]", 17);
    assert_int_equal(samc_sam2_config_from_json(bad, "t", &c, &e), SAMC_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "backbone_channel_list"));
    free(bad);
}

static void test_missing_config_file(void **s)
{
    (void)s;
    samc_sam2_config c;
    samc_error e = {0};
    assert_int_equal(samc_sam2_config_resolve("/nonexistent/x.json", &c, &e), SAMC_ERR_IO);
    assert_non_null(strstr(e.msg, "/nonexistent/x.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preset_key_counts), cmocka_unit_test(test_block_windows),
        cmocka_unit_test(test_unknown_preset),    cmocka_unit_test(test_json_config),
        cmocka_unit_test(test_missing_config_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
