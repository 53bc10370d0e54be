/* SPDX-License-Identifier: Apache-2.0 */
/* config_defaults.c - official constructor defaults and the built-in presets.
 *
 * Defaults are those of the official classes (hieradet.Hiera.__init__,
 * SAM2Base.__init__, MaskDecoder.__init__, ...), used for any key a config
 * JSON leaves out. Presets are the eight official YAML configs
 * (the yaml files under configs/sam2 and configs/sam2.1) as build_sam2() builds them,
 * i.e. with the dynamic-multimask overrides of apply_postprocessing=True.
 */
#include <stdio.h>
#include <string.h>

#include "core/models/sam2/config.h"
#include "core/models/sam2/config_internal.h"
#include "core/base/error.h"

static void sine_defaults(samc_sine_pe_config *pe, int feats)
{
    pe->num_pos_feats = feats;
    pe->temperature = 10000.0;
    pe->normalize = true;
    pe->scale = 0.0; /* None -> 2*pi */
}

void samc_sam2_config_defaults(samc_sam2_config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "custom");
    samc_hiera_config *h = &c->trunk; /* hieradet.Hiera.__init__ */
    h->embed_dim = 96;
    h->num_heads = 1;
    h->num_stages = 4;
    memcpy(h->stages, (int[]){2, 3, 16, 3}, sizeof h->stages);
    h->q_pool = 3;
    h->q_stride = 2;
    h->dim_mul = h->head_mul = 2.0;
    h->bkg_h = h->bkg_w = 14;
    memcpy(h->window_spec, (int[]){8, 4, 14, 7}, sizeof h->window_spec);
    h->n_global = 3;
    memcpy(h->global_att_blocks, (int[]){12, 16, 20}, 3 * sizeof(int));
    h->patch_kernel = 7, h->patch_stride = 4, h->patch_padding = 3;

    samc_neck_config *n = &c->neck; /* FpnNeck.__init__ */
    n->d_model = 256;
    n->n_levels = 4;
    memcpy(n->backbone_channel_list, (int[]){768, 384, 192, 96}, sizeof n->backbone_channel_list);
    n->n_top_down = 0; /* None -> [] */
    n->conv_kernel = 1, n->conv_stride = 1, n->conv_padding = 0;
    n->interp_bilinear = true; /* fpn_interp_model default "bilinear" */
    sine_defaults(&n->pe, 256);
    n->scalp = 0;      /* ImageEncoder.__init__ default */

    samc_memory_attention_config *ma = &c->mem_attn;
    ma->d_model = 256, ma->num_layers = 4, ma->dim_feedforward = 2048;
    ma->self_heads = ma->cross_heads = 1;
    ma->kv_in_dim = 64;
    ma->rope_theta = 10000.0;
    ma->feat_h = ma->feat_w = 64; /* RoPEAttention default feat_sizes (64, 64) */
    ma->pos_enc_at_input = true;
    ma->pos_enc_at_cross_attn_keys = true;
    ma->rope_k_repeat = false;

    samc_memory_encoder_config *me = &c->mem_enc;
    me->out_dim = 64, me->in_dim = 256;
    me->ds_kernel = 4, me->ds_stride = 4, me->ds_padding = 0; /* MaskDownSampler defaults */
    me->ds_total_stride = 16, me->ds_embed_dim = 256;
    me->fuser_layers = 2, me->fuser_dim = 256, me->fuser_kernel = 7, me->fuser_padding = 3;
    me->layer_scale_init_value = 1e-6;
    me->use_dwconv = true;
    sine_defaults(&me->pe, 64);

    /* SAM2Base.__init__ */
    c->num_maskmem = 7;
    c->image_size = 512;
    c->backbone_stride = 16;
    c->sigmoid_scale_for_mem_enc = 1.0;
    c->sigmoid_bias_for_mem_enc = 0.0;
    c->max_cond_frames_in_attn = -1;
    c->multimask_min_pt_num = 1, c->multimask_max_pt_num = 1;
    c->memory_temporal_stride_for_eval = 1;
    c->max_obj_ptrs_in_encoder = 16;
    c->add_tpos_enc_to_obj_ptrs = true;

    /* MaskDecoder.__init__ defaults for the extra args */
    c->dynamic_multimask_stability_delta = 0.05;
    c->dynamic_multimask_stability_thresh = 0.98;

    /* SAM2Base._build_sam_heads constants */
    c->mask_in_chans = 16, c->num_multimask_outputs = 3;
    c->twoway_depth = 2, c->twoway_mlp_dim = 2048, c->twoway_heads = 8;
    c->iou_head_depth = 3, c->iou_head_hidden_dim = 256;
}

/* Fields shared by all eight official YAMLs (model section). */
static void official_common(samc_sam2_config *c)
{
    c->neck.d_model = 256;
    c->neck.n_top_down = 2;
    c->neck.fpn_top_down_levels[0] = 2, c->neck.fpn_top_down_levels[1] = 3;
    c->neck.scalp = 1;
    c->neck.interp_bilinear = false; /* fpn_interp_model: nearest */
    samc_memory_attention_config *ma = &c->mem_attn;
    ma->feat_h = ma->feat_w = 64;
    ma->pos_enc_at_input = true, ma->pos_enc_at_attn = false;
    ma->pos_enc_at_cross_attn_keys = true, ma->pos_enc_at_cross_attn_queries = false;
    ma->rope_k_repeat = true;
    c->mem_enc.ds_kernel = 3, c->mem_enc.ds_stride = 2, c->mem_enc.ds_padding = 1;
    c->image_size = 1024;
    c->sigmoid_scale_for_mem_enc = 20.0, c->sigmoid_bias_for_mem_enc = -10.0;
    c->use_mask_input_as_output_without_sam = true;
    c->directly_add_no_mem_embed = true;
    c->use_high_res_features_in_sam = true;
    c->multimask_output_in_sam = true;
    c->iou_prediction_use_sigmoid = true;
    c->use_obj_ptrs_in_encoder = true;
    c->only_obj_ptrs_in_the_past_for_eval = true;
    c->pred_obj_scores = c->pred_obj_scores_mlp = c->fixed_no_obj_ptr = true;
    c->multimask_output_for_tracking = c->use_multimask_token_for_obj_ptr = true;
    c->multimask_min_pt_num = 0, c->multimask_max_pt_num = 1;
    c->use_mlp_for_obj_ptr_proj = true;
    c->dynamic_multimask_via_stability = true; /* build_sam2(apply_postprocessing=True) */
    /* build_sam2_video_predictor(apply_postprocessing=True) adds these two;
     * neither changes the image predictor. */
    c->binarize_mask_from_pts_for_mem_enc = true;
    c->video.fill_hole_area = 8;
}

typedef struct preset_trunk {
    const char *size;
    int embed_dim, num_heads, stages[4], global[3], bkg, window_spec[4];
} preset_trunk;

static const preset_trunk trunks[] = {
    {"t", 96, 1, {1, 2, 7, 2}, {5, 7, 9}, 7, {8, 4, 14, 7}},
    {"s", 96, 1, {1, 2, 11, 2}, {7, 10, 13}, 7, {8, 4, 14, 7}},
    {"b+", 112, 2, {2, 3, 16, 3}, {12, 16, 20}, 14, {8, 4, 14, 7}},
    {"l", 144, 2, {2, 6, 36, 4}, {23, 33, 43}, 7, {8, 4, 16, 8}},
};

const char *const samc_sam2_preset_names[] = {
    "sam2_hiera_t",   "sam2_hiera_s",   "sam2_hiera_b+",   "sam2_hiera_l",
    "sam2.1_hiera_t", "sam2.1_hiera_s", "sam2.1_hiera_b+", "sam2.1_hiera_l", NULL};

static void apply_trunk(samc_sam2_config *c, const preset_trunk *t)
{
    samc_hiera_config *h = &c->trunk;
    h->embed_dim = t->embed_dim;
    h->num_heads = t->num_heads;
    memcpy(h->stages, t->stages, sizeof h->stages);
    h->n_global = 3;
    memcpy(h->global_att_blocks, t->global, sizeof t->global);
    h->bkg_h = h->bkg_w = t->bkg;
    memcpy(h->window_spec, t->window_spec, sizeof h->window_spec);
    int d = t->embed_dim;
    for (int i = 0; i < 4; i++)
        c->neck.backbone_channel_list[3 - i] = d << i;
}

samc_status samc_sam2_config_preset(const char *name, samc_sam2_config *c, samc_error *err)
{
    bool v21 = strncmp(name, "sam2.1_hiera_", 13) == 0;
    bool v20 = strncmp(name, "sam2_hiera_", 11) == 0;
    const char *size = v21 ? name + 13 : v20 ? name + 11 : "";
    /* Accept the checkpoint-style long names too ("sam2.1_hiera_tiny"). */
    static const char *const longn[][2] = {{"tiny", "t"}, {"small", "s"}, {"base_plus", "b+"}, {"large", "l"}};
    for (int i = 0; i < 4; i++)
        if (!strcmp(size, longn[i][0]))
            size = longn[i][1];
    for (size_t i = 0; (v20 || v21) && i < sizeof trunks / sizeof trunks[0]; i++) {
        if (strcmp(size, trunks[i].size))
            continue;
        samc_sam2_config_defaults(c);
        official_common(c);
        apply_trunk(c, &trunks[i]);
        c->no_obj_embed_spatial = v21;
        c->add_tpos_enc_to_obj_ptrs = v21;
        c->proj_tpos_enc_in_obj_ptrs = v21;
        c->use_signed_tpos_enc_to_obj_ptrs = v21;
        snprintf(c->name, sizeof c->name, "%s_hiera_%s", v21 ? "sam2.1" : "sam2", trunks[i].size);
        return SAMC_OK;
    }
    char list[512] = "";
    for (int i = 0; samc_sam2_preset_names[i]; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, samc_sam2_preset_names[i], sizeof list - strlen(list) - 1);
    }
    return samc_fail(err, SAMC_ERR_ARG, "unknown config '%s' (known: %s, or a path to a .json config)",
                     name, list);
}
