/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_config_json.c - the Sam3Image `_target_` tree into samc_sam3_config
 * (sam3_config.h; samc__sam3_config_read: sam3_config.c validates), read once: each section with its official class's
 * constructor defaults (facebookresearch/sam3 @ 99d02f28: vitdet.ViT,
 * necks.Sam3DualViTDetNeck, text_encoder_ve.VETextEncoder,
 * geometry_encoders.SequenceGeometryEncoder, encoder.TransformerEncoderLayer
 * and TransformerEncoderFusion, decoder.TransformerDecoder and its layer,
 * model_misc.DotProductScoring and MLP, maskformer_segmentation's heads).
 * A constructor argument without a default must be present; arguments only
 * training reads (dropout, drop_path_rate, activation checkpointing,
 * compile modes) are not read. Options that change the inference outputs
 * and that samc does not implement are refused here, naming the key. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_config.h"
#include "core/models/sam3/sam3_config_read.h"

/* ---- shared modules ---------------------------------------------------------- */

/* position_encoding.PositionEmbeddingSine (scale None: 2*pi, kept as 0). */
static void read_sine(sec *s, samc_sine_pe_config *pe)
{
    pe->num_pos_feats = INT_REQ(s, "num_pos_feats");
    pe->temperature = NUM(s, "temperature", 10000);
    pe->normalize = BOOL(s, "normalize", true);
    pe->scale = NUM(s, "scale", 0.0);
    if (present(s, "scale"))
        must(s, "scale", pe->normalize, "a scale needs normalize true (PositionEmbeddingSine raises)");
}

/* nn.MultiheadAttention / MultiheadAttentionWrapper: packed in_proj with bias. */
static void read_mha(sec *s, samc_sam3_mha_config *a)
{
    a->embed_dim = INT_REQ(s, "embed_dim");
    a->num_heads = INT_REQ(s, "num_heads");
    a->batch_first = BOOL(s, "batch_first", false);
    must(s, "bias", BOOL(s, "bias", true), "attention without bias is not implemented");
    must(s, "add_bias_kv", !BOOL(s, "add_bias_kv", false), "not implemented");
    must(s, "add_zero_attn", !BOOL(s, "add_zero_attn", false), "not implemented");
    must(s, "kdim", !present(s, "kdim") || INT(s, "kdim", 0) == a->embed_dim, "a key width other than embed_dim");
    must(s, "vdim", !present(s, "vdim") || INT(s, "vdim", 0) == a->embed_dim, "a value width other than embed_dim");
}

/* encoder.TransformerEncoderLayer. */
static void read_enc_layer(sec *s, samc_sam3_enc_layer_config *l)
{
    must(s, "activation", !strcmp(str_at(s, "activation", true, "relu"), "relu"), "only ReLU is implemented");
    must(s, "pre_norm", BOOL_REQ(s, "pre_norm"), "only pre-norm layers are implemented");
    l->d_model = INT_REQ(s, "d_model");
    l->dim_feedforward = INT_REQ(s, "dim_feedforward");
    l->pos_enc_at_attn = BOOL_REQ(s, "pos_enc_at_attn");
    l->pos_enc_at_cross_attn_keys = BOOL_REQ(s, "pos_enc_at_cross_attn_keys");
    l->pos_enc_at_cross_attn_queries = BOOL_REQ(s, "pos_enc_at_cross_attn_queries");
    sec sa = child(s, "self_attention", true, "MultiheadAttentionWrapper", "MultiheadAttention");
    read_mha(&sa, &l->self_attention);
    sec ca = child(s, "cross_attention", true, "MultiheadAttentionWrapper", "MultiheadAttention");
    read_mha(&ca, &l->cross_attention);
}

/* ---- sections -------------------------------------------------------------- */

/* A list of ints at s.key (absent: def[0..n_def)), at most max entries. */
static int int_list(sec *s, const char *key, const int *def, int n_def, int *out, int max)
{
    const cJSON *v = value(s, key, false);
    if (!v) {
        memcpy(out, def, (size_t)n_def * sizeof *out);
        return n_def;
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > max) {
        fail(s->r, SAMC_ERR_FORMAT, "'%s%s%s' is not a list of at most %d integers", s->path, s->path[0] ? "." : "", key, max);
        return 0;
    }
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || fabs(e->valuedouble) > 1e9) {
            fail(s->r, SAMC_ERR_FORMAT, "'%s%s%s' is not a list of integers", s->path, s->path[0] ? "." : "", key);
            return 0;
        }
        out[n++] = (int)e->valuedouble;
    }
    return n;
}

static void read_trunk(sec *s, samc_sam3_vit_config *t)
{
    t->img_size = INT(s, "img_size", 1024);
    t->patch_size = INT(s, "patch_size", 16);
    t->in_chans = INT(s, "in_chans", 3);
    t->embed_dim = INT(s, "embed_dim", 768);
    t->depth = INT(s, "depth", 12);
    t->num_heads = INT(s, "num_heads", 12);
    t->mlp_ratio = NUM(s, "mlp_ratio", 4.0);
    t->qkv_bias = BOOL(s, "qkv_bias", true);
    t->use_abs_pos = BOOL(s, "use_abs_pos", true);
    t->tile_abs_pos = BOOL(s, "tile_abs_pos", true);
    t->window_size = INT(s, "window_size", 14);
    t->use_rope = BOOL(s, "use_rope", false);
    t->rope_pt_size = INT(s, "rope_pt_size", 0);
    t->use_interp_rope = BOOL(s, "use_interp_rope", false);
    t->rope_theta = 10000.0;
    t->pretrain_img_size = INT(s, "pretrain_img_size", 224);
    t->pretrain_use_cls_token = BOOL(s, "pretrain_use_cls_token", true);
    t->ln_pre = BOOL(s, "ln_pre", false);
    t->bias_patch_embed = BOOL(s, "bias_patch_embed", true);
    static const int global_def[] = {2, 5, 8, 11};
    t->n_global = int_list(s, "global_att_blocks", global_def, 4, t->global_att_blocks, SAMC_SAM3_MAX_BLOCKS);
    /* rel_pos_blocks: (2, 5, 8, 11) by default, True for all, False or [] for none */
    const cJSON *rp = value(s, "rel_pos_blocks", false);
    const bool rel_pos = !rp || cJSON_IsTrue(rp) || (cJSON_IsArray(rp) && cJSON_GetArraySize(rp) > 0);
    must(s, "rel_pos_blocks", !rel_pos, "relative position embeddings are not implemented (give [] or false)");
    must(s, "retain_cls_token", !BOOL(s, "retain_cls_token", true), "a retained cls token is not implemented");
    must(s, "ln_post", !BOOL(s, "ln_post", false), "ln_post is not implemented");
    must(s, "return_interm_layers", !BOOL(s, "return_interm_layers", false), "intermediate layers are not implemented");
    must(s, "init_values", !present(s, "init_values"), "LayerScale is not implemented");
    const char *norm = str_at(s, "norm_layer", false, "LayerNorm");
    must(s, "norm_layer", !strcmp(norm, "LayerNorm"), "only \"LayerNorm\" is implemented");
}

static void read_neck(sec *s, samc_sam3_neck_config *n)
{
    n->d_model = INT_REQ(s, "d_model");
    n->add_sam2_neck = BOOL(s, "add_sam2_neck", false);
    const cJSON *sf = value(s, "scale_factors", false);
    static const double defs[] = {4.0, 2.0, 1.0, 0.5};
    if (!sf) {
        n->n_scales = 4;
        memcpy(n->scale_factors, defs, sizeof defs);
    } else if (!cJSON_IsArray(sf) || cJSON_GetArraySize(sf) < 1 || cJSON_GetArraySize(sf) > SAMC_SAM3_NECK_MAX) {
        fail(s->r, SAMC_ERR_UNSUPPORTED, "'%s.scale_factors' is not a list of 1 to %d numbers", s->path,
             SAMC_SAM3_NECK_MAX);
    } else {
        const cJSON *e;
        n->n_scales = 0;
        cJSON_ArrayForEach(e, sf)
        {
            if (!cJSON_IsNumber(e))
                fail(s->r, SAMC_ERR_FORMAT, "'%s.scale_factors.%d' is not a number", s->path, n->n_scales);
            n->scale_factors[n->n_scales++] = cJSON_IsNumber(e) ? e->valuedouble : 0.0;
        }
    }
    sec pe = child(s, "position_encoding", true, "PositionEmbeddingSine", NULL);
    read_sine(&pe, &n->pe);
}

static void read_text(sec *s, samc_sam3_text_config *t)
{
    t->d_model = INT_REQ(s, "d_model");
    t->width = INT(s, "width", 1024);
    t->heads = INT(s, "heads", 16);
    t->layers = INT(s, "layers", 24);
    t->context_length = INT(s, "context_length", 32);
    t->vocab_size = INT(s, "vocab_size", 49408);
    t->use_ln_post = BOOL(s, "use_ln_post", true);
}

static void read_geometry(sec *s, samc_sam3_geometry_config *g)
{
    must(s, "encode_boxes_as_points", !BOOL_REQ(s, "encode_boxes_as_points"), "boxes encoded as points are not "
         "implemented");
    g->points_direct_project = BOOL_REQ(s, "points_direct_project");
    g->points_pool = BOOL_REQ(s, "points_pool");
    g->points_pos_enc = BOOL_REQ(s, "points_pos_enc");
    g->boxes_direct_project = BOOL_REQ(s, "boxes_direct_project");
    g->boxes_pool = BOOL_REQ(s, "boxes_pool");
    g->boxes_pos_enc = BOOL_REQ(s, "boxes_pos_enc");
    g->d_model = INT_REQ(s, "d_model");
    g->num_layers = INT_REQ(s, "num_layers");
    g->roi_size = INT(s, "roi_size", 7);
    g->add_cls = BOOL(s, "add_cls", true);
    g->add_post_encode_proj = BOOL(s, "add_post_encode_proj", true);
    must(s, "mask_encoder", !present(s, "mask_encoder"), "mask prompts (a mask encoder) are not implemented");
    sec pe = child(s, "pos_enc", true, "PositionEmbeddingSine", NULL);
    read_sine(&pe, &g->pos_enc);
    if (g->num_layers > 0) { /* `layer` is cloned num_layers times */
        sec l = child(s, "layer", true, "TransformerEncoderLayer", NULL);
        read_enc_layer(&l, &g->layer);
    }
}

static void read_transformer(sec *s, samc_sam3_config *c)
{
    const int d = INT_REQ(s, "d_model");
    must(s, "two_stage_type", !strcmp(str_at(s, "two_stage_type", false, "none"), "none"), "only \"none\"");
    sec e = child(s, "encoder", true, "TransformerEncoderFusion", NULL);
    c->enc.d_model = INT_REQ(&e, "d_model");
    c->enc.num_layers = INT_REQ(&e, "num_layers");
    must(&e, "num_feature_levels", INT_REQ(&e, "num_feature_levels") == 1, "several feature levels are not "
         "implemented");
    must(&e, "add_pooled_text_to_img_feat", !BOOL(&e, "add_pooled_text_to_img_feat", true),
         "adding the pooled text to the image features is not implemented");
    sec el = child(&e, "layer", true, "TransformerEncoderLayer", NULL);
    read_enc_layer(&el, &c->enc.layer);
    /* the transformer's width is every DETR part's (TransformerWrapper.d_model) */
    must(s, "d_model", d == c->enc.d_model, "differs from transformer.encoder.d_model");

    sec dd = child(s, "decoder", true, "TransformerDecoder", NULL);
    samc_sam3_decoder_config *dc = &c->dec;
    dc->d_model = INT_REQ(&dd, "d_model");
    dc->num_layers = INT_REQ(&dd, "num_layers");
    dc->num_queries = INT_REQ(&dd, "num_queries");
    must(&dd, "return_intermediate", BOOL_REQ(&dd, "return_intermediate"), "only return_intermediate is implemented");
    must(&dd, "interaction_layer", !present(&dd, "interaction_layer"), "an interaction layer is not implemented");
    must(&dd, "box_refine", BOOL(&dd, "box_refine", false), "only box_refine is implemented");
    must(&dd, "num_o2m_queries", INT(&dd, "num_o2m_queries", 0) == 0, "o2m queries are not implemented");
    must(&dd, "instance_query", !BOOL(&dd, "instance_query", false), "an instance query is not implemented");
    dc->presence_token = BOOL(&dd, "presence_token", false);
    dc->use_normed_output_consistently = BOOL(&dd, "use_normed_output_consistently", true);
    const char *rpb = str_at(&dd, "boxRPB", false, "none");
    dc->boxrpb = !strcmp(rpb, "log") ? SAMC_SAM3_RPB_LOG
                 : !strcmp(rpb, "linear") ? SAMC_SAM3_RPB_LINEAR
                 : !strcmp(rpb, "both") ? SAMC_SAM3_RPB_BOTH : SAMC_SAM3_RPB_NONE;
    must(&dd, "boxRPB", dc->boxrpb != SAMC_SAM3_RPB_NONE || !strcmp(rpb, "none"),
         "not one of none, log, linear, both");
    sec dl = child(&dd, "layer", true, "TransformerDecoderLayer", NULL);
    must(&dl, "activation", !strcmp(str_at(&dl, "activation", true, "relu"), "relu"), "only ReLU is implemented");
    must(&dl, "d_model", INT_REQ(&dl, "d_model") == dc->d_model, "differs from the decoder's d_model");
    dc->dim_feedforward = INT_REQ(&dl, "dim_feedforward");
    dc->n_heads = INT_REQ(&dl, "n_heads");
    dc->use_text_cross_attention = BOOL(&dl, "use_text_cross_attention", false);
    sec ca = child(&dl, "cross_attention", true, "MultiheadAttentionWrapper", "MultiheadAttention");
    read_mha(&ca, &dc->cross_attention);
}

static void read_scoring(sec *s, samc_sam3_scoring_config *c)
{
    c->d_model = INT_REQ(s, "d_model");
    c->d_proj = INT_REQ(s, "d_proj");
    c->clamp_logits = BOOL(s, "clamp_logits", true);
    c->clamp_max_val = NUM(s, "clamp_max_val", 12.0);
    c->has_prompt_mlp = present(s, "prompt_mlp");
    if (!c->has_prompt_mlp)
        return;
    sec m = child(s, "prompt_mlp", false, "MLP", NULL);
    must(&m, "input_dim", INT_REQ(&m, "input_dim") == c->d_model, "differs from d_model");
    must(&m, "output_dim", INT_REQ(&m, "output_dim") == c->d_model, "differs from d_model");
    c->mlp_hidden = INT_REQ(&m, "hidden_dim");
    c->mlp_layers = INT_REQ(&m, "num_layers");
    c->mlp_residual = BOOL(&m, "residual", false);
    c->mlp_out_norm = present(&m, "out_norm");
    if (c->mlp_out_norm) {
        sec n = child(&m, "out_norm", false, "LayerNorm", NULL);
        must(&n, "normalized_shape", INT_REQ(&n, "normalized_shape") == c->d_model, "differs from d_model");
        must(&n, "elementwise_affine", BOOL(&n, "elementwise_affine", true), "a LayerNorm without weights");
        c->mlp_out_norm_eps = NUM(&n, "eps", 1e-5);
    }
}

static void read_segmentation(sec *s, samc_sam3_seg_config *c)
{
    c->present = s->o != NULL;
    if (!c->present)
        return;
    c->hidden_dim = INT_REQ(s, "hidden_dim");
    (void)INT_REQ(s, "upsampling_stages"); /* stored, unused at inference */
    must(s, "no_dec", !BOOL(s, "no_dec", false), "not implemented");
    must(s, "aux_masks", !BOOL(s, "aux_masks", false), "not implemented");
    must(s, "presence_head", !BOOL(s, "presence_head", false), "not implemented");
    c->has_cross_attend = present(s, "cross_attend_prompt");
    if (c->has_cross_attend) {
        sec a = child(s, "cross_attend_prompt", false, "MultiheadAttentionWrapper", "MultiheadAttention");
        read_mha(&a, &c->cross_attend_prompt);
    }
    sec p = child(s, "pixel_decoder", true, "PixelDecoder", NULL);
    must(&p, "hidden_dim", INT_REQ(&p, "hidden_dim") == c->hidden_dim, "differs from the head's hidden_dim");
    c->num_upsampling_stages = INT_REQ(&p, "num_upsampling_stages");
    c->shared_conv = BOOL(&p, "shared_conv", false);
    must(&p, "interpolation_mode", !strcmp(str_at(&p, "interpolation_mode", false, "nearest"), "nearest"),
         "only \"nearest\" is implemented");
}

/* ---- the tree ---------------------------------------------------------------- */

samc_status samc__sam3_config_read(const cJSON *root, const char *what, samc_sam3_config *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    rd r = {what ? what : "sam3", err, SAMC_OK};
    if (!cJSON_IsObject(root))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: config: not a JSON object", r.what);
    sec top = {.r = &r, .o = root};
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "_target_");
    if (t && (!cJSON_IsString(t) || (strcmp(t->valuestring, "sam3.model.sam3_image.Sam3Image") &&
                                     strcmp(t->valuestring, "sam3.model.sam3_image.Sam3ImageOnVideoMultiGPU"))))
        fail(&r, SAMC_ERR_FORMAT, "not a SAM 3 image config (its _target_ must be sam3.model.sam3_image.Sam3Image, "
             "or Sam3ImageOnVideoMultiGPU: the video model's detector)");
    must(&top, "num_feature_levels", INT(&top, "num_feature_levels", 1) == 1, "several feature levels are not "
         "implemented");
    /* the video model's detector scores jointly with the presence token */
    out->joint_box_scores = BOOL(&top, "supervise_joint_box_scores", false);
    must(&top, "use_dot_prod_scoring", BOOL(&top, "use_dot_prod_scoring", true), "a class_embed scorer is not "
         "implemented");
    /* use_instance_query, multimask_output, o2m_mask_predict: stored by Sam3Image, unread by the grounding */
    sec bb = child(&top, "backbone", true, "SAM3VLBackbone", NULL);
    out->vision.scalp = INT(&bb, "scalp", 0);
    sec vis = child(&bb, "visual", true, "Sam3DualViTDetNeck", NULL);
    sec trunk = child(&vis, "trunk", true, "ViT", NULL);
    read_trunk(&trunk, &out->vision.trunk);
    read_neck(&vis, &out->vision.neck);
    sec text = child(&bb, "text", true, "VETextEncoder", NULL);
    read_text(&text, &out->text);
    sec geo = child(&top, "input_geometry_encoder", true, "SequenceGeometryEncoder", NULL);
    read_geometry(&geo, &out->geo);
    sec tr = child(&top, "transformer", true, "TransformerWrapper", NULL);
    read_transformer(&tr, out);
    sec sc = child(&top, "dot_prod_scoring", true, "DotProductScoring", NULL);
    read_scoring(&sc, &out->scoring);
    sec seg = child(&top, "segmentation_head", false, "UniversalSegmentationHead", NULL);
    read_segmentation(&seg, &out->seg);
    out->resolution = out->vision.trunk.img_size;
    return r.st;
}
