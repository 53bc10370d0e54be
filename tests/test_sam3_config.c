/* SPDX-License-Identifier: Apache-2.0 */
/* test_sam3_config.c - the typed SAM 3 config (core/models/sam3/sam3_config.h):
 * the released preset reads to the official values, an absent key takes
 * its constructor's default, and a bad tree is refused naming the key's
 * full path: a required argument missing, a wrong type, an option samc
 * does not implement, a count beyond the array it sizes, sizes whose
 * product would overflow the tensors the model allocates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_config.h"
#include "util/testutil.h"

static void test_released(void **s)
{
    (void)s;
    samc_sam3_config c;
    samc_error e = {0};
    assert_int_equal(samc_sam3_config_released(true, &c, &e), SAMC_OK);
    assert_int_equal(c.resolution, 1008);
    assert_int_equal(c.vision.trunk.depth, 32);
    assert_int_equal(c.vision.trunk.embed_dim, 1024);
    assert_int_equal(c.vision.trunk.window_size, 24);
    assert_int_equal((int)(c.vision.trunk.embed_dim * c.vision.trunk.mlp_ratio), 4736);
    assert_int_equal(c.vision.trunk.n_global, 4);
    assert_int_equal(c.vision.trunk.global_att_blocks[3], 31);
    assert_true(c.vision.neck.add_sam2_neck);
    assert_int_equal(c.vision.neck.n_scales, 4);
    assert_int_equal(c.vision.scalp, 1);
    assert_int_equal(c.text.width, 1024);
    assert_int_equal(c.text.context_length, 32); /* VETextEncoder's default: the preset does not give it */
    assert_int_equal(c.geo.num_layers, 3);
    assert_int_equal(c.enc.num_layers, 6);
    assert_true(c.enc.layer.self_attention.batch_first);
    assert_int_equal(c.dec.num_queries, 200);
    assert_int_equal(c.dec.boxrpb, SAMC_SAM3_RPB_LOG);
    assert_true(c.dec.presence_token);
    assert_true(c.scoring.has_prompt_mlp && c.scoring.mlp_residual && c.scoring.mlp_out_norm);
    assert_true(c.seg.present && c.seg.has_cross_attend);
    assert_int_equal(c.seg.num_upsampling_stages, 3);
}

/* The released tree edited at `path` ("a.b.c"): the key removed (value
 * NULL) or set to the JSON `value`; then parsed. */
static samc_status edited(const char *path, const char *value, samc_error *e)
{
    cJSON *root = cJSON_Parse(samc_sam3_released_config_json);
    assert_non_null(root);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    cJSON *obj = root;
    char *key = buf;
    for (char *dot; (dot = strchr(key, '.')); key = dot + 1) {
        *dot = '\0';
        obj = cJSON_GetObjectItemCaseSensitive(obj, key);
        assert_non_null(obj);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    if (value) {
        cJSON *v = cJSON_Parse(value);
        assert_non_null(v);
        cJSON_AddItemToObject(obj, key, v);
    }
    samc_sam3_config c;
    samc_error_clear(e);
    samc_status st = samc_sam3_config_from_json(root, "edited", &c, e);
    if (st)
        printf("%s = %s: %s\n", path, value ? value : "(removed)", e->msg);
    cJSON_Delete(root);
    return st;
}

static void expect(const char *path, const char *value, samc_status want, const char *msg)
{
    samc_error e = {0};
    assert_int_equal(edited(path, value, &e), want);
    tu_assert_contains(e.msg, msg);
}

static void test_defaults(void **s)
{
    (void)s;
    samc_error e = {0};
    /* absent keys with a constructor default read as that default */
    assert_int_equal(edited("backbone.text.width", NULL, &e), SAMC_OK); /* VETextEncoder: width=1024 */
    cJSON *root = cJSON_Parse(samc_sam3_released_config_json);
    cJSON *dec = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "transformer"), "decoder");
    cJSON_DeleteItemFromObject(dec, "boxRPB");
    cJSON_DeleteItemFromObject(dec, "presence_token");
    samc_sam3_config c;
    assert_int_equal(samc_sam3_config_from_json(root, "edited", &c, &e), SAMC_OK);
    assert_int_equal(c.dec.boxrpb, SAMC_SAM3_RPB_NONE); /* TransformerDecoder: boxRPB="none" */
    assert_false(c.dec.presence_token);                /* presence_token=False */
    cJSON_Delete(root);
}

static void test_refused(void **s)
{
    (void)s;
    expect("backbone.visual.d_model", NULL, SAMC_ERR_FORMAT, "'backbone.visual.d_model' is required");
    expect("transformer.decoder.num_queries", NULL, SAMC_ERR_FORMAT,
           "'transformer.decoder.num_queries' is required");
    expect("backbone.visual.trunk.depth", "\"32\"", SAMC_ERR_FORMAT, "'backbone.visual.trunk.depth' is not a number");
    expect("backbone.visual.trunk.depth", "3.5", SAMC_ERR_FORMAT, "'backbone.visual.trunk.depth' is not an integer");
    expect("backbone.visual.trunk.rel_pos_blocks", NULL, SAMC_ERR_UNSUPPORTED,
           "'backbone.visual.trunk.rel_pos_blocks': relative position embeddings");
    expect("transformer.decoder.box_refine", "false", SAMC_ERR_UNSUPPORTED, "'transformer.decoder.box_refine'");
    expect("backbone.visual.trunk._target_", "\"sam3.model.vitdet.Hiera\"", SAMC_ERR_UNSUPPORTED,
           "backbone.visual.trunk._target_ is 'sam3.model.vitdet.Hiera'");
    /* counts bounded by the arrays they size */
    expect("backbone.visual.trunk.depth", "65", SAMC_ERR_UNSUPPORTED, "'backbone.visual.trunk.depth' is 65, not in [1, 64]");
    expect("backbone.text.layers", "49", SAMC_ERR_UNSUPPORTED, "'backbone.text.layers' is 49");
    expect("transformer.encoder.num_layers", "13", SAMC_ERR_UNSUPPORTED, "'transformer.encoder.num_layers' is 13");
    expect("input_geometry_encoder.num_layers", "-1", SAMC_ERR_UNSUPPORTED, "'input_geometry_encoder.num_layers'");
    expect("backbone.visual.scale_factors", "[4.0, 2.0, 1.0, 0.5, 0.5]", SAMC_ERR_UNSUPPORTED,
           "'backbone.visual.scale_factors' is not a list of 1 to 4");
    expect("segmentation_head.pixel_decoder.num_upsampling_stages", "5", SAMC_ERR_UNSUPPORTED,
           "num_upsampling_stages' is 5");
    expect("backbone.visual.trunk.global_att_blocks", "[7, 15, 23, 40]", SAMC_ERR_UNSUPPORTED,
           "'backbone.visual.trunk.global_att_blocks' is 40");
    /* sizes whose products the model allocates */
    expect("backbone.visual.trunk.img_size", "1000000", SAMC_ERR_UNSUPPORTED, "'backbone.visual.trunk.img_size' is 1000000");
    expect("backbone.visual.trunk.window_size", "8000", SAMC_ERR_UNSUPPORTED, "makes RoPE tables of");
    expect("backbone.visual.trunk.num_heads", "3", SAMC_ERR_UNSUPPORTED, "(3 heads) does not divide 1024 channels");
    expect("backbone.text.context_length", "100000", SAMC_ERR_UNSUPPORTED, "'backbone.text.context_length'");
    /* widths that must agree */
    expect("backbone.visual.d_model", "128", SAMC_ERR_UNSUPPORTED, "'backbone.visual.d_model' is 128");
    expect("transformer.encoder.layer.self_attention.batch_first", "false", SAMC_ERR_UNSUPPORTED,
           "'transformer.encoder.layer.self_attention.batch_first' must be true");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_released), cmocka_unit_test(test_defaults),
                                       cmocka_unit_test(test_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
