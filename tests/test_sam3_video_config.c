/* SPDX-License-Identifier: Apache-2.0 */
/* test_sam3_video_config.c - SAM 3's video config (core/models/sam3/sam3_video_config.h):
 * the released tree reads to the builder's values (docs/sam3_video.md
 * section 1), the fixtures' trees to theirs (a video model's and an
 * inst-interactive image model's), options samc does not implement are
 * refused naming the key, and the official inline constants are checked
 * against a dump's record of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/io/h5_meta.h"
#include "core/models/sam3/sam3_video_config.h"
#include "util/testutil.h"

static void test_released(void **s)
{
    (void)s;
    samc_sam3_video_config c;
    samc_error e = {0};
    assert_int_equal(samc_sam3_video_config_released(&c, &e), SAMC_OK);
    assert_true(c.has_loop);
    const samc_sam3_loop_config *l = &c.loop;
    assert_true(l->score_threshold_detection == 0.5 && l->det_nms_thresh == 0.1 && l->assoc_iou_thresh == 0.1);
    assert_true(l->trk_assoc_iou_thresh == 0.5 && l->new_det_thresh == 0.7);
    assert_int_equal(l->hotstart_delay, 15);
    assert_int_equal(l->hotstart_unmatch_thresh, 8);
    assert_int_equal(l->hotstart_dup_thresh, 8);
    assert_int_equal(l->init_trk_keep_alive, 30);
    assert_int_equal(l->min_trk_keep_alive, -1);
    assert_true(l->occlusion_threshold == 0.7);
    assert_int_equal(l->fill_hole_area, 16);
    assert_int_equal(l->max_num_objects, 10000); /* -1: no limit */
    assert_int_equal(l->recondition_every_nth_frame, 16);
    assert_int_equal(l->image_size, 1008);
    const samc_tracker_config *t = &c.tracker;
    assert_int_equal(t->image_size, 1008);
    assert_int_equal(t->d_model, 256);
    assert_int_equal(samc_tracker_mem_dim(t), 64);
    assert_int_equal(t->num_maskmem, 7);
    assert_int_equal(t->max_cond_frames_in_attn, 4);
    assert_true(t->sam3.use_memory_selection && t->sam3.mf_threshold == 0.01);
    assert_int_equal(t->mem_attn.num_layers, 4);
    assert_int_equal(t->mem_attn.kv_in_dim, 64);
    assert_int_equal(t->mem_enc.ds_interpol_h, 1152);
    assert_true(t->multimask_output_in_sam && t->multimask_output_for_tracking);
    assert_int_equal(t->multimask_min_pt_num, 0);
    assert_true(t->dynamic_multimask_via_stability);
    assert_true(c.tracker_opt.clear_non_cond_mem_around_input && !c.tracker_opt.non_overlap_masks_for_output);
    assert_int_equal(c.tracker_opt.fill_hole_area, 0);
    assert_true(c.detector.joint_box_scores && c.detector.vision.neck.add_sam2_neck);
    assert_int_equal(c.detector.resolution, 1008);
}

/* The /model/config_json of a committed dump. */
static samc_status fixture(const char *rel, samc_sam3_video_config *c, char **constants, samc_error *e)
{
    char *path = tu_src_path(rel);
    samc_h5_meta meta;
    samc_status st = samc_h5_meta_read(path, false, &meta, e);
    assert_int_equal(st, SAMC_OK);
    assert_true(samc_sam3_video_config_is_tracker_tree(meta.config_json));
    st = samc_sam3_video_config_parse(meta.config_json, rel, c, e);
    if (constants)
        *constants = meta.code_constants_json ? strdup(meta.code_constants_json) : NULL;
    samc_h5_meta_free(&meta);
    free(path);
    return st;
}

static void test_fixtures(void **s)
{
    (void)s;
    samc_sam3_video_config c;
    samc_error e = {0};
    char *constants = NULL;
    assert_int_equal(fixture("fixtures/sam3_video/tiny_vt_loop.h5", &c, &constants, &e), SAMC_OK);
    assert_true(c.has_loop);
    assert_int_equal(c.loop.max_num_objects, 2);
    assert_int_equal(c.loop.hotstart_delay, 3);
    assert_int_equal(c.tracker.image_size, 56);
    assert_int_equal(c.tracker.mem_enc.ds_interpol_h, 64);
    assert_non_null(constants);
    assert_int_equal(samc_sam3_check_code_constants(constants, "tiny_vt_loop", &e), SAMC_OK);
    free(constants);
    assert_int_equal(fixture("fixtures/sam3_video/tiny_vi_inst.h5", &c, NULL, &e), SAMC_OK);
    assert_false(c.has_loop);
    assert_true(c.inst.max_hole_area == 16);
    assert_int_equal(c.tracker.image_size, 112);
}

/* The released tree edited at `path` ("a.b.c"), parsed. */
static samc_status edited(const char *path, const char *value, samc_error *e)
{
    cJSON *root = cJSON_Parse(samc_sam3_released_video_config_json);
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
    cJSON_AddItemToObject(obj, key, cJSON_Parse(value));
    char *text = cJSON_PrintUnformatted(root);
    samc_sam3_video_config c;
    samc_error_clear(e);
    samc_status st = samc_sam3_video_config_parse(text, "edited", &c, e);
    free(text);
    cJSON_Delete(root);
    return st;
}

static void expect(const char *path, const char *value, const char *msg)
{
    samc_error e = {0};
    assert_int_equal(edited(path, value, &e), SAMC_ERR_UNSUPPORTED);
    tu_assert_contains(e.msg, msg);
}

static void test_refused(void **s)
{
    (void)s;
    expect("masklet_confirmation_enable", "true", "'masklet_confirmation_enable'");
    expect("o2o_matching_masklets_enable", "true", "Hungarian");
    expect("use_prev_mem_frame", "true", "'use_prev_mem_frame'");
    expect("reconstruction_bbox_iou_thresh", "0.5", "box-IoU reconditioning");
    expect("tracker.trim_past_non_cond_mem_for_eval", "true", "'tracker.trim_past_non_cond_mem_for_eval'");
    expect("tracker.transformer.encoder.layer.cross_attention_first", "true", "cross_attention_first");
    samc_error e = {0};
    assert_int_equal(samc_sam3_check_code_constants("{\"shrink_threshold\": 0.4}", "dump", &e), SAMC_ERR_UNSUPPORTED);
    tu_assert_contains(e.msg, "shrink_threshold is 0.4; samc implements 0.3");
    assert_int_equal(samc_sam3_check_code_constants("{\"new_constant\": 1}", "dump", &e), SAMC_ERR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_released), cmocka_unit_test(test_fixtures),
                                       cmocka_unit_test(test_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
