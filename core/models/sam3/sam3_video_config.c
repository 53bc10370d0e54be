/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_config.c - the video model's (and the inst-interactive image
 * model's) tree into samc_sam3_video_config (sam3_video_config.h), with
 * the constructors' defaults of facebookresearch/sam3 @ 99d02f28
 * (Sam3VideoBase, Sam3VideoInference, Sam3VideoInferenceWithInstanceInteractivity,
 * Sam3TrackerPredictor, Sam3TrackerBase, the tracker's modules in
 * model_builder.py, SAM3InteractiveImagePredictor). */
#include "core/models/sam3/sam3_video_config.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "core/models/sam3/sam3_config_read.h"

/* ---- the tracker (Sam3TrackerPredictor) ---------------------------------------- */

static void read_sine(sec *s, samc_sine_pe_config *pe)
{
    pe->num_pos_feats = INT_REQ(s, "num_pos_feats");
    pe->temperature = NUM(s, "temperature", 10000);
    pe->normalize = BOOL(s, "normalize", true);
    pe->scale = NUM(s, "scale", 0.0);
}

/* sam/transformer.RoPEAttention (SAM 3's: feat_sizes, kv_in_dim, rope_k_repeat). */
static void read_rope(sec *a, samc_memory_attention_config *ma, int *heads, bool cross)
{
    *heads = INT_REQ(a, "num_heads");
    must(a, "embedding_dim", INT_REQ(a, "embedding_dim") == ma->d_model, "must equal the encoder's d_model");
    must(a, "downsample_rate", INT(a, "downsample_rate", 1) == 1, "only 1 is implemented");
    must(a, "use_rope_real", !BOOL(a, "use_rope_real", false), "the real-valued RoPE is not implemented");
    ma->rope_theta = NUM(a, "rope_theta", 10000.0);
    const cJSON *fs = value(a, "feat_sizes", false);
    ma->feat_h = ma->feat_w = 64; /* RoPEAttention's default (64, 64) */
    if (cJSON_IsArray(fs) && cJSON_GetArraySize(fs) == 2) {
        ma->feat_h = (int)cJSON_GetArrayItem(fs, 0)->valuedouble;
        ma->feat_w = (int)cJSON_GetArrayItem(fs, 1)->valuedouble;
    }
    if (cross) {
        ma->kv_in_dim = INT(a, "kv_in_dim", ma->d_model);
        ma->rope_k_repeat = BOOL(a, "rope_k_repeat", false);
    }
}

/* transformer.encoder: TransformerEncoderCrossAttention of TransformerDecoderLayerv2. */
static void read_memory_attention(sec *tr, samc_tracker_config *t)
{
    sec tw = child(tr, "transformer", true, "TransformerWrapper", NULL);
    must(&tw, "decoder", !present(&tw, "decoder"), "the tracker's transformer is encoder-only");
    sec e = child(&tw, "encoder", true, "TransformerEncoderCrossAttention", NULL);
    samc_memory_attention_config *ma = &t->mem_attn;
    ma->d_model = INT_REQ(&e, "d_model");
    ma->num_layers = INT_REQ(&e, "num_layers");
    ma->pos_enc_at_input = BOOL_REQ(&e, "pos_enc_at_input");
    must(&e, "batch_first", BOOL(&e, "batch_first", false), "sequence-first layers are not implemented");
    const cJSON *rm = value(&e, "remove_cross_attention_layers", false);
    must(&e, "remove_cross_attention_layers", !rm || (cJSON_IsArray(rm) && cJSON_GetArraySize(rm) == 0),
         "layers without cross-attention are not implemented");
    sec l = child(&e, "layer", true, "TransformerDecoderLayerv2", NULL);
    must(&l, "cross_attention_first", !BOOL(&l, "cross_attention_first", false), "not implemented");
    must(&l, "activation", !strcmp(str_at(&l, "activation", true, "relu"), "relu"), "only ReLU is implemented");
    must(&l, "pre_norm", BOOL_REQ(&l, "pre_norm"), "only pre-norm layers are implemented");
    ma->dim_feedforward = INT_REQ(&l, "dim_feedforward");
    ma->pos_enc_at_attn = BOOL_REQ(&l, "pos_enc_at_attn");
    ma->pos_enc_at_cross_attn_keys = BOOL_REQ(&l, "pos_enc_at_cross_attn_keys");
    ma->pos_enc_at_cross_attn_queries = BOOL_REQ(&l, "pos_enc_at_cross_attn_queries");
    sec sa = child(&l, "self_attention", true, "RoPEAttention", NULL);
    read_rope(&sa, ma, &ma->self_heads, false);
    sec ca = child(&l, "cross_attention", true, "RoPEAttention", NULL);
    read_rope(&ca, ma, &ma->cross_heads, true);
    t->d_model = INT_REQ(&tw, "d_model");
}

/* maskmem_backbone: memory.SimpleMaskEncoder. */
static void read_memory_encoder(sec *tr, samc_memory_encoder_config *me)
{
    sec m = child(tr, "maskmem_backbone", true, "SimpleMaskEncoder", NULL);
    me->out_dim = INT_REQ(&m, "out_dim");
    me->in_dim = INT(&m, "in_dim", 256);
    sec pe = child(&m, "position_encoding", true, "PositionEmbeddingSine", NULL);
    read_sine(&pe, &me->pe);
    sec d = child(&m, "mask_downsampler", true, "SimpleMaskDownSampler", NULL);
    me->ds_embed_dim = INT(&d, "embed_dim", 256);
    me->ds_kernel = INT(&d, "kernel_size", 4);
    me->ds_stride = INT(&d, "stride", 4);
    me->ds_padding = INT(&d, "padding", 0);
    me->ds_total_stride = INT(&d, "total_stride", 16);
    must(&d, "activation", !present(&d, "activation"), "only GELU is implemented");
    const cJSON *is = value(&d, "interpol_size", false);
    if (cJSON_IsArray(is) && cJSON_GetArraySize(is) == 2) {
        me->ds_interpol_h = (int)cJSON_GetArrayItem(is, 0)->valuedouble;
        me->ds_interpol_w = (int)cJSON_GetArrayItem(is, 1)->valuedouble;
    } else {
        must(&d, "interpol_size", !is, "must be [h, w]");
    }
    sec f = child(&m, "fuser", true, "SimpleFuser", NULL);
    me->fuser_layers = INT_REQ(&f, "num_layers");
    must(&f, "input_projection", !BOOL(&f, "input_projection", false), "not implemented");
    sec cx = child(&f, "layer", true, "CXBlock", NULL);
    me->fuser_dim = INT_REQ(&cx, "dim");
    me->fuser_kernel = INT(&cx, "kernel_size", 7);
    me->fuser_padding = INT(&cx, "padding", 3);
    me->layer_scale_init_value = NUM(&cx, "layer_scale_init_value", 1e-6);
    me->use_dwconv = BOOL(&cx, "use_dwconv", true);
}

/* Sam3TrackerBase fixes what SAM2Base makes options (_build_sam_heads and
 * its forward): these are SAM 3's values, not configurable. */
static void sam3_base_constants(samc_tracker_config *t)
{
    t->sigmoid_scale_for_mem_enc = 20.0, t->sigmoid_bias_for_mem_enc = -10.0;
    t->binarize_mask_from_pts_for_mem_enc = t->use_mask_input_as_output_without_sam = true;
    t->directly_add_no_mem_embed = t->use_high_res_features_in_sam = true;
    t->use_multimask_token_for_obj_ptr = t->iou_prediction_use_sigmoid = true;
    t->use_obj_ptrs_in_encoder = t->add_tpos_enc_to_obj_ptrs = t->proj_tpos_enc_in_obj_ptrs = true;
    t->use_signed_tpos_enc_to_obj_ptrs = t->only_obj_ptrs_in_the_past_for_eval = true;
    t->pred_obj_scores = t->pred_obj_scores_mlp = t->fixed_no_obj_ptr = true;
    t->soft_no_obj_ptr = false;
    t->use_mlp_for_obj_ptr_proj = t->no_obj_embed_spatial = true;
    t->mask_in_chans = 16, t->num_multimask_outputs = 3, t->twoway_depth = 2, t->twoway_mlp_dim = 2048;
    t->twoway_heads = 8, t->iou_head_depth = 3, t->iou_head_hidden_dim = 256;
    t->sam3.mask_low_res_by_stride = t->sam3.mlp_block = t->sam3.traced = true;
    t->video.add_all_frames_to_correct_as_cond = true;
}

static void read_tracker(sec *tr, samc_tracker_config *t, samc_s3_tracker_options *o)
{
    memset(t, 0, sizeof *t);
    sam3_base_constants(t);
    must(tr, "backbone", !present(tr, "backbone"), "a tracker with its own backbone is not implemented");
    t->image_size = INT(tr, "image_size", 1008);
    t->backbone_stride = INT(tr, "backbone_stride", 14);
    t->num_maskmem = INT(tr, "num_maskmem", 7);
    t->max_cond_frames_in_attn = INT(tr, "max_cond_frames_in_attn", -1);
    t->sam3.keep_first_cond_frame = BOOL(tr, "keep_first_cond_frame", false);
    t->multimask_output_in_sam = BOOL(tr, "multimask_output_in_sam", false);
    t->multimask_min_pt_num = INT(tr, "multimask_min_pt_num", 1);
    t->multimask_max_pt_num = INT(tr, "multimask_max_pt_num", 1);
    t->multimask_output_for_tracking = BOOL(tr, "multimask_output_for_tracking", false);
    t->memory_temporal_stride_for_eval = INT(tr, "memory_temporal_stride_for_eval", 1);
    t->non_overlap_masks_for_mem_enc = BOOL(tr, "non_overlap_masks_for_mem_enc", false);
    must(tr, "non_overlap_masks_for_mem_enc", !t->non_overlap_masks_for_mem_enc, "not implemented");
    t->max_obj_ptrs_in_encoder = INT(tr, "max_obj_ptrs_in_encoder", 16);
    t->sam3.use_memory_selection = BOOL(tr, "use_memory_selection", false);
    t->sam3.mf_threshold = NUM(tr, "mf_threshold", 0.01);
    must(tr, "trim_past_non_cond_mem_for_eval", !BOOL(tr, "trim_past_non_cond_mem_for_eval", false),
         "not implemented (samc's streaming mode bounds the memory instead)");
    sec ex = child(tr, "sam_mask_decoder_extra_args", false, NULL, NULL);
    t->dynamic_multimask_via_stability = BOOL(&ex, "dynamic_multimask_via_stability", false);
    t->dynamic_multimask_stability_delta = NUM(&ex, "dynamic_multimask_stability_delta", 0.05);
    t->dynamic_multimask_stability_thresh = NUM(&ex, "dynamic_multimask_stability_thresh", 0.98);
    read_memory_attention(tr, t);
    read_memory_encoder(tr, &t->mem_enc);
    o->clear_non_cond_mem_around_input = BOOL(tr, "clear_non_cond_mem_around_input", false);
    o->clear_non_cond_mem_for_multi_obj = BOOL(tr, "clear_non_cond_mem_for_multi_obj", false);
    o->fill_hole_area = INT(tr, "fill_hole_area", 0);
    o->always_start_from_first_ann_frame = BOOL(tr, "always_start_from_first_ann_frame", false);
    o->max_point_num_in_prompt_enc = INT(tr, "max_point_num_in_prompt_enc", 16);
    o->non_overlap_masks_for_output = BOOL(tr, "non_overlap_masks_for_output", true);
    t->video.fill_hole_area = o->fill_hole_area;
    t->video.non_overlap_masks = o->non_overlap_masks_for_output;
    t->video.clear_non_cond_mem_around_input = o->clear_non_cond_mem_around_input;
}

/* ---- the loop ------------------------------------------------------------------ */

static void read_triple(sec *s, const char *key, double *v)
{
    const cJSON *a = value(s, key, false);
    if (!a)
        return;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3) {
        fail(s->r, SAMC_ERR_FORMAT, "'%s%s%s' must be 3 numbers", s->path, s->path[0] ? "." : "", key);
        return;
    }
    for (int i = 0; i < 3; i++)
        v[i] = cJSON_GetArrayItem(a, i)->valuedouble;
}

static void read_loop(sec *s, samc_sam3_loop_config *l)
{
    l->score_threshold_detection = NUM(s, "score_threshold_detection", 0.5);
    l->det_nms_thresh = NUM(s, "det_nms_thresh", 0.0);
    l->assoc_iou_thresh = NUM(s, "assoc_iou_thresh", 0.5);
    l->trk_assoc_iou_thresh = NUM(s, "trk_assoc_iou_thresh", 0.5);
    l->new_det_thresh = NUM(s, "new_det_thresh", 0.0);
    l->hotstart_delay = INT(s, "hotstart_delay", 0);
    l->hotstart_unmatch_thresh = INT(s, "hotstart_unmatch_thresh", 3);
    l->hotstart_dup_thresh = INT(s, "hotstart_dup_thresh", 3);
    if (l->hotstart_delay > 0) /* the constructor asserts it */
        must(s, "hotstart_delay", l->hotstart_unmatch_thresh <= l->hotstart_delay &&
                                      l->hotstart_dup_thresh <= l->hotstart_delay,
             "must be at least hotstart_unmatch_thresh and hotstart_dup_thresh");
    l->suppress_unmatched_only_within_hotstart = BOOL(s, "suppress_unmatched_only_within_hotstart", true);
    l->init_trk_keep_alive = INT(s, "init_trk_keep_alive", 0);
    l->max_trk_keep_alive = INT(s, "max_trk_keep_alive", 8);
    l->min_trk_keep_alive = INT(s, "min_trk_keep_alive", -4);
    l->occlusion_threshold = NUM(s, "suppress_overlapping_based_on_recent_occlusion_threshold", 0.0);
    l->decrease_trk_keep_alive_for_empty_masklets = BOOL(s, "decrease_trk_keep_alive_for_empty_masklets", false);
    must(s, "o2o_matching_masklets_enable", !BOOL(s, "o2o_matching_masklets_enable", false),
         "Hungarian track matching is not implemented");
    l->suppress_det_close_to_boundary = BOOL(s, "suppress_det_close_to_boundary", false);
    l->fill_hole_area = INT(s, "fill_hole_area", 16);
    l->max_num_objects = INT(s, "max_num_objects", -1);
    if (l->max_num_objects <= 0)
        l->max_num_objects = 10000; /* the constructor's "no limit" */
    l->recondition_every_nth_frame = INT(s, "recondition_every_nth_frame", -1);
    must(s, "masklet_confirmation_enable", !BOOL(s, "masklet_confirmation_enable", false), "not implemented");
    l->masklet_confirmation_consecutive_det_thresh = INT(s, "masklet_confirmation_consecutive_det_thresh", 3);
    must(s, "reconstruction_bbox_iou_thresh", NUM(s, "reconstruction_bbox_iou_thresh", 0.0) <= 0.0,
         "box-IoU reconditioning is not implemented");
    l->image_size = INT(s, "image_size", 1008);
    l->image_mean[0] = l->image_mean[1] = l->image_mean[2] = 0.5;
    l->image_std[0] = l->image_std[1] = l->image_std[2] = 0.5;
    read_triple(s, "image_mean", l->image_mean);
    read_triple(s, "image_std", l->image_std);
    must(s, "use_prev_mem_frame", !BOOL(s, "use_prev_mem_frame", false),
         "clicks that attend to memory are not implemented");
    l->use_stateless_refinement = BOOL(s, "use_stateless_refinement", false);
    l->refinement_detector_cond_frame_removal_window = INT(s, "refinement_detector_cond_frame_removal_window", 16);
}

/* ---- the tree ------------------------------------------------------------------ */

bool samc_sam3_video_config_is_tracker_tree(const char *json)
{
    cJSON *root = cJSON_Parse(json);
    const cJSON *t = root ? cJSON_GetObjectItemCaseSensitive(root, "_target_") : NULL;
    const bool video = cJSON_IsString(t) && strstr(t->valuestring, "Sam3VideoInference") != NULL;
    const bool inst = root && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "inst_interactive_predictor"));
    cJSON_Delete(root);
    return video || inst;
}

static samc_status validate(const samc_sam3_video_config *c, const char *what, samc_error *err)
{
    samc_status st = samc_sam3_config_validate(&c->detector, what, err);
    if (!st)
        st = samc_tracker_config_validate(&c->tracker, err);
    const int R = c->tracker.image_size;
    if (!st && (c->tracker.backbone_stride <= 0 || R % c->tracker.backbone_stride || R != c->detector.resolution))
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: config: the tracker's image_size %d must equal the detector's %d and "
                       "be a multiple of backbone_stride %d", what, R, c->detector.resolution,
                       c->tracker.backbone_stride);
    if (!st && !c->detector.vision.neck.add_sam2_neck)
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: config: the detector has no tracker neck (add_sam2_neck)", what);
    return st;
}

samc_status samc_sam3_video_config_from_json(const cJSON *root, const char *what, samc_sam3_video_config *out,
                                             samc_error *err)
{
    memset(out, 0, sizeof *out);
    rd r = {what, err, SAMC_OK};
    sec top = {.r = &r, .o = root};
    samc_status st = SAMC_OK;
    if (present(&top, "detector")) { /* the video model */
        out->has_loop = true;
        sec det = child(&top, "detector", true, "Sam3ImageOnVideoMultiGPU", NULL);
        sec tr = child(&top, "tracker", true, "Sam3TrackerPredictor", NULL);
        read_loop(&top, &out->loop);
        read_tracker(&tr, &out->tracker, &out->tracker_opt);
        if (!r.st)
            st = samc__sam3_config_read(det.o, what, &out->detector, err);
    } else { /* an image model with its interactive predictor */
        sec ip = child(&top, "inst_interactive_predictor", true, "SAM3InteractiveImagePredictor", NULL);
        sec tr = child(&ip, "sam_model", true, "Sam3TrackerPredictor", NULL);
        out->inst.mask_threshold = NUM(&ip, "mask_threshold", 0.0);
        out->inst.max_hole_area = NUM(&ip, "max_hole_area", 0.0);
        out->inst.max_sprinkle_area = NUM(&ip, "max_sprinkle_area", 0.0);
        read_tracker(&tr, &out->tracker, &out->tracker_opt);
        if (!r.st)
            st = samc__sam3_config_read(root, what, &out->detector, err);
    }
    return r.st ? r.st : st ? st : validate(out, what, err);
}

samc_status samc_sam3_video_config_parse(const char *json, const char *what, samc_sam3_video_config *out,
                                         samc_error *err)
{
    cJSON *root = cJSON_Parse(json);
    if (!root)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: config: not valid JSON", what);
    samc_status st = samc_sam3_video_config_from_json(root, what, out, err);
    cJSON_Delete(root);
    return st;
}

samc_status samc_sam3_video_config_released(samc_sam3_video_config *out, samc_error *err)
{
    return samc_sam3_video_config_parse(samc_sam3_released_video_config_json, "sam3 video (built-in release)", out,
                                        err);
}

/* ---- the official code's inline constants ---------------------------------------- */

const samc_sam3_code_constant samc_sam3_code_constants[] = {
#define SAMC_S3_ROW(id, name, v) {#name, (v)},
    SAMC_SAM3_CONSTANTS(SAMC_S3_ROW)
#undef SAMC_S3_ROW
};
const int samc_sam3_n_code_constants = (int)(sizeof samc_sam3_code_constants / sizeof samc_sam3_code_constants[0]);

samc_status samc_sam3_check_code_constants(const char *json, const char *what, samc_error *err)
{
    cJSON *root = cJSON_Parse(json);
    samc_status st = cJSON_IsObject(root) ? SAMC_OK
                                          : samc_fail(err, SAMC_ERR_FORMAT, "%s: code_constants_json is not an object", what);
    for (const cJSON *c = root ? root->child : NULL; !st && c; c = c->next) {
        int k = 0;
        while (k < samc_sam3_n_code_constants && strcmp(samc_sam3_code_constants[k].name, c->string))
            k++;
        if (k == samc_sam3_n_code_constants)
            st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: the official code has a constant samc does not know: %s",
                           what, c->string);
        else if (!cJSON_IsNumber(c) || c->valuedouble != samc_sam3_code_constants[k].value)
            st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: the official constant %s is %g; samc implements %g", what,
                           c->string, cJSON_IsNumber(c) ? c->valuedouble : 0.0, samc_sam3_code_constants[k].value);
    }
    cJSON_Delete(root);
    return st;
}
