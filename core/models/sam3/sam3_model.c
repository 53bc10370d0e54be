/* sam3_model.c - loading the SAM 3 image model: its typed config
 * (sam3_config.h, validated) and one walk over the state_dict
 * (core/runtime/statedict.h), each part's keys relative to its root, that
 * checks every key and shape and binds every record. Every shape (hidden
 * widths included) comes from the config, so a checkpoint that disagrees
 * is named key by key before any compute.
 */
#include "core/models/sam3/sam3_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/axial_rope.h"
#include "core/runtime/statedict.h"
#include "core/text/clip_tokenizer.h"

/* ---- the walk ------------------------------------------------------------- */

/* nn.MultiheadAttention at `name`: in_proj_weight (3d, d) as three row views. */
static void mha(samc_sd *sd, samc_attention *a, const char *name, int d, int heads)
{
    memset(a, 0, sizeof *a);
    const float *w = samc_sd_tensor(sd, 2, (const int64_t[]){3 * (int64_t)d, d}, "%s.in_proj_weight", name);
    const float *bb = samc_sd_tensor(sd, 1, (const int64_t[]){3 * (int64_t)d}, "%s.in_proj_bias", name);
    const int64_t dd = (int64_t)d * d;
    a->q = (samc_linear){.w = w, .b = bb, .in = d, .out = d};
    a->k = (samc_linear){.w = w ? w + dd : NULL, .b = bb ? bb + d : NULL, .in = d, .out = d};
    a->v = (samc_linear){.w = w ? w + 2 * dd : NULL, .b = bb ? bb + 2 * d : NULL, .in = d, .out = d};
    char out[192];
    snprintf(out, sizeof out, "%s.out_proj", name);
    samc_sd_linear(sd, &a->out, out, d, d, true);
    a->heads = heads, a->internal_dim = d;
}

static const float *tensor3(samc_sd *sd, int64_t a, int64_t b, int64_t c, const char *name)
{
    return samc_sd_tensor(sd, 3, (const int64_t[]){a, b, c}, "%s", name);
}

static const float *tensor2(samc_sd *sd, int64_t a, int64_t b, const char *name)
{
    return samc_sd_tensor(sd, 2, (const int64_t[]){a, b}, "%s", name);
}

/* Whether the store holds `name` under the walk's current prefix. */
static bool stored(const samc_sd *sd, const char *name)
{
    char key[512];
    snprintf(key, sizeof key, "%s%s%s%s", sd->base, sd->root, sd->prefix, name);
    return samc_weights_find(sd->w, key) != NULL;
}

/* Block i's attn.freqs_cis: a buffer, described (and checked) when the
 * store holds it, else (a converted checkpoint) computed as
 * Attention._setup_rope_freqs does: input_size = grid (global) or window,
 * rope_pt_size = (window, window) unless given, scale = pt / input. */
static samc_status rope_table(samc_sd *sd, samc_sam3_model *m, const samc_sam3_vit_config *c, int i,
                              samc_error *err)
{
    samc_sam3_vit_block *blk = &m->blocks[i];
    const int side = blk->window ? c->window_size : m->grid, hd = c->embed_dim / c->num_heads;
    const int pt = c->rope_pt_size > 0 ? c->rope_pt_size : c->window_size;
    const float scale = c->use_interp_rope ? (float)((double)pt / (double)side) : 1.0f;
    blk->rope_tokens = side * side;
    if (!sd->w || stored(sd, "attn.freqs_cis")) {
        blk->freqs_cis = tensor3(sd, (int64_t)side * side, hd / 2, 2, "attn.freqs_cis");
        return SAMC_OK;
    }
    float *t = malloc((size_t)side * side * hd * sizeof *t);
    if (!t)
        return samc_fail(err, SAMC_ERR_NOMEM, "RoPE table of trunk.blocks.%d", i);
    m->owned[m->n_owned++] = t;
    samc_status st = samc_axial_rope_cis(hd, side, side, (float)c->rope_theta, scale, 0, t);
    blk->freqs_cis = t;
    return st ? samc_fail(err, st, "RoPE table of trunk.blocks.%d: head dim %d", i, hd) : SAMC_OK;
}

static bool is_global(const samc_sam3_vit_config *c, int i)
{
    for (int k = 0; k < c->n_global; k++)
        if (c->global_att_blocks[k] == i)
            return true;
    return false;
}

/* backbone.vision_backbone.trunk (vitdet.ViT). */
static samc_status describe_trunk(samc_sd *sd, samc_sam3_model *m, const samc_sam3_vit_config *c, samc_error *err)
{
    const int C = c->embed_dim, hidden = (int)(C * c->mlp_ratio); /* int(dim * mlp_ratio) */
    m->resolution = c->img_size, m->grid = c->img_size / c->patch_size;
    samc_sam3_vit_embed *e = &m->vit_embed;
    samc_sd_prefix(sd, "trunk.");
    samc_sd_conv(sd, &e->patch, "patch_embed.proj", c->in_chans, C, c->patch_size, c->patch_size, 0, 1,
                 c->bias_patch_embed);
    e->pos_has_cls = c->pretrain_use_cls_token;
    e->pos_tile = c->tile_abs_pos;
    if (c->use_abs_pos) {
        const int g = c->pretrain_img_size / c->patch_size;
        e->pos_embed = tensor3(sd, 1, (int64_t)g * g + (e->pos_has_cls ? 1 : 0), C, "pos_embed");
        e->pos_grid = g;
    }
    e->has_ln_pre = c->ln_pre;
    if (e->has_ln_pre)
        samc_sd_norm(sd, &e->ln_pre, "ln_pre", C, 1e-5f);
    m->n_blocks = c->depth;
    for (int i = 0; i < c->depth; i++) {
        samc_sam3_vit_block *blk = &m->blocks[i];
        samc_sd_prefix(sd, "trunk.blocks.%d.", i);
        blk->dim = C, blk->heads = c->num_heads, blk->window = is_global(c, i) ? 0 : c->window_size;
        samc_sd_norm(sd, &blk->norm1, "norm1", C, 1e-5f);
        samc_sd_norm(sd, &blk->norm2, "norm2", C, 1e-5f);
        samc_sd_linear(sd, &blk->qkv, "attn.qkv", C, 3 * C, c->qkv_bias);
        samc_sd_linear(sd, &blk->proj, "attn.proj", C, C, true);
        samc_sd_linear(sd, &blk->fc1, "mlp.fc1", C, hidden, true);
        samc_sd_linear(sd, &blk->fc2, "mlp.fc2", hidden, C, true);
        samc_status st = c->use_rope ? rope_table(sd, m, c, i, err) : SAMC_OK;
        if (st)
            return st;
    }
    /* ViT.forward returns the output of block full_attn_ids[-1]: the last
     * entry of global_att_blocks as listed (blocks after it run unused) */
    m->last_block = c->global_att_blocks[c->n_global - 1];
    return SAMC_OK;
}

/* The branches of Sam3DualViTDetNeck under `name` (convs or sam2_convs). */
static void describe_neck(samc_sd *sd, samc_sam3_neck *nk, const samc_sam3_neck_config *c, int scalp, int C,
                          const char *name)
{
    nk->n_levels = c->n_scales, nk->d_model = c->d_model, nk->scalp = scalp;
    for (int i = 0; i < c->n_scales; i++) {
        samc_sam3_neck_level *l = &nk->levels[i];
        samc_sd_prefix(sd, "%s.%d.", name, i);
        l->scale = (float)c->scale_factors[i];
        int cin = C;
        if (l->scale == 4.0f) {
            samc_sd_conv_t(sd, &l->dconv0, "dconv_2x2_0", C, C / 2, 2);
            samc_sd_conv_t(sd, &l->dconv1, "dconv_2x2_1", C / 2, C / 4, 2);
            cin = C / 4;
        } else if (l->scale == 2.0f) {
            samc_sd_conv_t(sd, &l->dconv0, "dconv_2x2", C, C / 2, 2);
            cin = C / 2;
        }
        samc_sd_conv(sd, &l->conv_1x1, "conv_1x1", cin, c->d_model, 1, 1, 0, 1, true);
        samc_sd_conv(sd, &l->conv_3x3, "conv_3x3", c->d_model, c->d_model, 3, 1, 1, 1, true);
    }
    nk->pe = (samc_sine_pe){.num_pos_feats = c->pe.num_pos_feats, .temperature = (float)c->pe.temperature,
                            .normalize = c->pe.normalize,
                            .scale = (float)(c->pe.scale > 0 ? c->pe.scale : 2.0 * M_PI)};
}

/* backbone.language_backbone (VETextEncoder). */
static void describe_text(samc_sd *sd, samc_sam3_text_encoder *t, const samc_sam3_text_config *c)
{
    t->width = c->width, t->heads = c->heads, t->n_layers = c->layers, t->context_length = c->context_length;
    t->vocab = c->vocab_size, t->has_ln_final = c->use_ln_post;
    t->causal = true;  /* VETextEncoder builds TextTransformer with the default no_causal_mask False */
    t->proj_dim = 512; /* VETextEncoder leaves TextTransformer's output_dim at its default */
    const int W = t->width, mlp_w = (int)(W * 4.0); /* ResidualAttentionBlock: int(d_model * mlp_ratio) */
    samc_sd_prefix(sd, "encoder.");
    t->token_embedding = tensor2(sd, t->vocab, W, "token_embedding.weight");
    t->positional_embedding = tensor2(sd, t->context_length, W, "positional_embedding");
    t->text_projection = tensor2(sd, W, t->proj_dim, "text_projection");
    for (int i = 0; i < t->n_layers; i++) {
        samc_sam3_text_block *blk = &t->layers[i];
        samc_sd_prefix(sd, "encoder.transformer.resblocks.%d.", i);
        blk->width = W, blk->heads = t->heads;
        samc_sd_norm(sd, &blk->ln_1, "ln_1", W, 1e-5f);
        samc_sd_norm(sd, &blk->ln_2, "ln_2", W, 1e-5f);
        mha(sd, &blk->attn, "attn", W, t->heads);
        samc_sd_linear(sd, &blk->c_fc, "mlp.c_fc", W, mlp_w, true);
        samc_sd_linear(sd, &blk->c_proj, "mlp.c_proj", mlp_w, W, true);
    }
    samc_sd_prefix(sd, "%s", "");
    if (t->has_ln_final)
        samc_sd_norm(sd, &t->ln_final, "encoder.ln_final", W, 1e-5f);
    samc_sd_linear(sd, &t->resizer, "resizer", W, c->d_model, true);
}

/* A TransformerEncoderLayer under the current prefix. */
static void describe_enc_layer(samc_sd *sd, samc_sam3_enc_layer *l, const samc_sam3_enc_layer_config *c)
{
    const int d = c->d_model;
    l->d_model = d, l->heads = c->self_attention.num_heads, l->batch_first = c->self_attention.batch_first;
    l->pos_at_attn = c->pos_enc_at_attn;
    l->pos_at_cross_queries = c->pos_enc_at_cross_attn_queries;
    l->pos_at_cross_keys = c->pos_enc_at_cross_attn_keys;
    mha(sd, &l->self_attn, "self_attn", d, c->self_attention.num_heads);
    mha(sd, &l->cross_attn, "cross_attn_image", d, c->cross_attention.num_heads);
    samc_sd_linear(sd, &l->linear1, "linear1", d, c->dim_feedforward, true);
    samc_sd_linear(sd, &l->linear2, "linear2", c->dim_feedforward, d, true);
    samc_sd_norm(sd, &l->norm1, "norm1", d, 1e-5f);
    samc_sd_norm(sd, &l->norm2, "norm2", d, 1e-5f);
    samc_sd_norm(sd, &l->norm3, "norm3", d, 1e-5f);
}

/* geometry_encoder (SequenceGeometryEncoder). */
static void describe_geo(samc_sd *sd, samc_sam3_geometry_encoder *g, const samc_sam3_geometry_config *c)
{
    const int d = g->d_model = c->d_model;
    g->roi_size = c->roi_size;
    samc_sd_prefix(sd, "%s", "");
    g->label_embed = tensor2(sd, 2, d, "label_embed.weight");
    if (c->add_cls)
        g->cls_embed = tensor2(sd, 1, d, "cls_embed.weight");
    if (c->points_direct_project)
        samc_sd_linear(sd, &g->points_direct, "points_direct_project", 2, d, true);
    if (c->points_pool)
        samc_sd_linear(sd, &g->points_pool, "points_pool_project", d, d, true);
    if (c->points_pos_enc)
        samc_sd_linear(sd, &g->points_pos, "points_pos_enc_project", d, d, true);
    if (c->boxes_direct_project)
        samc_sd_linear(sd, &g->boxes_direct, "boxes_direct_project", 4, d, true);
    if (c->boxes_pool)
        samc_sd_conv(sd, &g->boxes_pool, "boxes_pool_project", d, d, g->roi_size, 1, 0, 1, true);
    if (c->boxes_pos_enc)
        samc_sd_linear(sd, &g->boxes_pos, "boxes_pos_enc_project", d + 2, d, true);
    g->has_final_proj = c->add_post_encode_proj;
    if (g->has_final_proj) {
        samc_sd_linear(sd, &g->final_proj, "final_proj", d, d, true);
        samc_sd_norm(sd, &g->norm, "norm", d, 1e-5f);
    }
    /* a LayerNorm when either pooling projection is built (from the config:
     * a describe-only walk binds no data) */
    g->has_img_pre_norm = c->points_pool || c->boxes_pool;
    if (g->has_img_pre_norm)
        samc_sd_norm(sd, &g->img_pre_norm, "img_pre_norm", d, 1e-5f);
    g->pe = (samc_sine_pe){.num_pos_feats = c->pos_enc.num_pos_feats, .temperature = (float)c->pos_enc.temperature,
                           .normalize = c->pos_enc.normalize,
                           .scale = (float)(c->pos_enc.scale > 0 ? c->pos_enc.scale : 2.0 * M_PI)};
    g->n_layers = c->num_layers;
    for (int i = 0; i < g->n_layers; i++) {
        samc_sd_prefix(sd, "encode.%d.", i);
        describe_enc_layer(sd, &g->layers[i], &c->layer);
    }
    samc_sd_prefix(sd, "%s", "");
    if (g->n_layers > 0)
        samc_sd_norm(sd, &g->encode_norm, "encode_norm", d, 1e-5f);
}

/* transformer.encoder (TransformerEncoderFusion). */
static void describe_fusion(samc_sd *sd, samc_sam3_fusion_encoder *enc, const samc_sam3_fusion_config *c)
{
    enc->d_model = c->d_model, enc->n_layers = c->num_layers;
    for (int i = 0; i < enc->n_layers; i++) {
        samc_sd_prefix(sd, "layers.%d.", i);
        describe_enc_layer(sd, &enc->layers[i], &c->layer);
    }
}

/* model_misc.MLP at `name` (ReLU between layers). */
static void mlp(samc_sd *sd, samc_mlp *m, const char *name, int n, int in, int hidden, int out)
{
    samc_sd_mlp(sd, m, name, in, hidden, out, n, false);
}

/* transformer.decoder (TransformerDecoder). */
static void describe_decoder(samc_sd *sd, samc_sam3_decoder *dec, const samc_sam3_decoder_config *c)
{
    const int d = c->d_model, ch = c->cross_attention.num_heads;
    dec->d_model = d, dec->n_layers = c->num_layers, dec->num_queries = c->num_queries;
    dec->heads = ch; /* boxRPB: nheads = layers[0].cross_attn.num_heads */
    dec->boxrpb = c->boxrpb;
    dec->normed_output_consistently = c->use_normed_output_consistently;
    dec->has_presence = c->presence_token;
    for (int i = 0; i < dec->n_layers; i++) {
        samc_sam3_dec_layer *l = &dec->layers[i];
        samc_sd_prefix(sd, "layers.%d.", i);
        l->d_model = d, l->heads = ch, l->use_text_cross_attention = c->use_text_cross_attention;
        mha(sd, &l->self_attn, "self_attn", d, c->n_heads);
        if (l->use_text_cross_attention) {
            mha(sd, &l->ca_text, "ca_text", d, c->n_heads);
            samc_sd_norm(sd, &l->catext_norm, "catext_norm", d, 1e-5f);
        }
        mha(sd, &l->cross_attn, "cross_attn", d, ch);
        samc_sd_norm(sd, &l->norm1, "norm1", d, 1e-5f);
        samc_sd_norm(sd, &l->norm2, "norm2", d, 1e-5f);
        samc_sd_norm(sd, &l->norm3, "norm3", d, 1e-5f);
        samc_sd_linear(sd, &l->linear1, "linear1", d, c->dim_feedforward, true);
        samc_sd_linear(sd, &l->linear2, "linear2", c->dim_feedforward, d, true);
    }
    samc_sd_prefix(sd, "%s", "");
    samc_sd_norm(sd, &dec->norm, "norm", d, 1e-5f);
    mlp(sd, &dec->bbox_embed, "bbox_embed", 3, d, d, 4);
    dec->query_embed = tensor2(sd, dec->num_queries, d, "query_embed.weight");
    dec->reference_points = tensor2(sd, dec->num_queries, 4, "reference_points.weight");
    if (dec->boxrpb != SAMC_SAM3_RPB_NONE) {
        const int n_in = dec->boxrpb == SAMC_SAM3_RPB_BOTH ? 4 : 2;
        mlp(sd, &dec->boxrpb_x, "boxRPB_embed_x", 2, n_in, d, ch);
        mlp(sd, &dec->boxrpb_y, "boxRPB_embed_y", 2, n_in, d, ch);
    }
    if (dec->has_presence) {
        dec->presence_token = tensor2(sd, 1, d, "presence_token.weight");
        mlp(sd, &dec->presence_head, "presence_token_head", 3, d, d, 1);
        samc_sd_norm(sd, &dec->presence_out_norm, "presence_token_out_norm", d, 1e-5f);
    }
    mlp(sd, &dec->ref_point_head, "ref_point_head", 2, 2 * d, d, d);
}

/* dot_prod_scoring (DotProductScoring). */
static void describe_scoring(samc_sd *sd, samc_sam3_scoring *s, const samc_sam3_scoring_config *c)
{
    const int d = s->d_model = c->d_model;
    s->d_proj = c->d_proj, s->clamp = c->clamp_logits, s->clamp_max = (float)c->clamp_max_val;
    s->has_prompt_mlp = c->has_prompt_mlp;
    samc_sd_prefix(sd, "%s", "");
    if (s->has_prompt_mlp) {
        mlp(sd, &s->prompt_mlp, "prompt_mlp", c->mlp_layers, d, c->mlp_hidden, d);
        s->prompt_mlp_residual = c->mlp_residual;
        s->has_prompt_mlp_norm = c->mlp_out_norm;
        if (s->has_prompt_mlp_norm)
            samc_sd_norm(sd, &s->prompt_mlp_norm, "prompt_mlp.out_norm", d, (float)c->mlp_out_norm_eps);
    }
    samc_sd_linear(sd, &s->prompt_proj, "prompt_proj", d, s->d_proj, true);
    samc_sd_linear(sd, &s->hs_proj, "hs_proj", d, s->d_proj, true);
}

/* segmentation_head (UniversalSegmentationHead + PixelDecoder). */
static void describe_seg(samc_sd *sd, samc_sam3_seg_head *g, const samc_sam3_seg_config *c)
{
    const int hd = g->d_model = c->hidden_dim;
    samc_sd_prefix(sd, "%s", "");
    g->has_cross_attend = c->has_cross_attend;
    if (g->has_cross_attend) {
        mha(sd, &g->cross_attend_prompt, "cross_attend_prompt", hd, c->cross_attend_prompt.num_heads);
        samc_sd_norm(sd, &g->cross_attn_norm, "cross_attn_norm", hd, 1e-5f);
    }
    g->shared_conv = c->shared_conv;
    g->interp_nearest = true; /* the only interpolation_mode the config reader accepts */
    g->n_convs = g->shared_conv ? 1 : c->num_upsampling_stages;
    for (int i = 0; i < g->n_convs; i++) {
        samc_sd_prefix(sd, "pixel_decoder.");
        char name[64];
        snprintf(name, sizeof name, "conv_layers.%d", i);
        samc_sd_conv(sd, &g->convs[i], name, hd, hd, 3, 1, 1, 1, true);
        const float *w = samc_sd_tensor(sd, 1, (const int64_t[]){hd}, "norms.%d.weight", i);
        const float *bb = samc_sd_tensor(sd, 1, (const int64_t[]){hd}, "norms.%d.bias", i);
        g->norms[i] = (samc_group_norm){w, bb, hd, 8, 1e-5f};
    }
    samc_sd_prefix(sd, "%s", "");
    samc_sd_conv(sd, &g->instance_seg_head, "instance_seg_head", hd, hd, 1, 1, 0, 1, true);
    samc_sd_conv(sd, &g->semantic_seg_head, "semantic_seg_head", hd, 1, 1, 1, 0, 1, true);
    mlp(sd, &g->mask_embed, "mask_predictor.mask_embed", 3, hd, hd, hd);
}

/* The whole image model, part by part at its root, in the order of the
 * official module tree. */
static samc_status describe(samc_sd *sd, samc_sam3_model *m, samc_error *err)
{
    const samc_sam3_config *c = &m->cfg;
    const int C = c->vision.trunk.embed_dim;
    samc_sd_mount(sd, "backbone.vision_backbone");
    samc_status st = describe_trunk(sd, m, &c->vision.trunk, err);
    if (st)
        return st;
    describe_neck(sd, &m->neck, &c->vision.neck, c->scalp, C, "convs");
    m->has_sam2_neck = c->vision.neck.add_sam2_neck; /* a deep copy with its own weights (the tracker's neck) */
    if (m->has_sam2_neck)
        describe_neck(sd, &m->sam2_neck, &c->vision.neck, c->scalp, C, "sam2_convs");
    samc_sd_mount(sd, "backbone.language_backbone");
    describe_text(sd, &m->text, &c->text);
    samc_sd_mount(sd, "geometry_encoder");
    describe_geo(sd, &m->geo, &c->geo);
    samc_sd_mount(sd, "transformer.encoder");
    describe_fusion(sd, &m->enc, &c->enc);
    samc_sd_mount(sd, "transformer.decoder");
    describe_decoder(sd, &m->dec, &c->dec);
    samc_sd_mount(sd, "dot_prod_scoring");
    describe_scoring(sd, &m->scoring, &c->scoring);
    m->has_seg = c->seg.present;
    if (m->has_seg) {
        samc_sd_mount(sd, "segmentation_head");
        describe_seg(sd, &m->seg, &c->seg);
    }
    return SAMC_OK;
}

/* One walk over `w` (NULL: describe only) with m->cfg; the walk's verdict
 * (strict key/shape check). */
static samc_status walk(samc_sam3_model *m, const samc_weights *w, const char *base, const char *what,
                        samc_param_list *params, samc_key_list *keys, samc_error *err)
{
    samc_sd sd;
    samc_sd_begin(&sd, w, base, params);
    samc_status st = describe(&sd, m, err);
    if (!st)
        st = samc_sd_finish(&sd, what, err);
    if (!st && keys)
        *keys = sd.keys, memset(&sd.keys, 0, sizeof sd.keys);
    samc_sd_free(&sd);
    return st;
}

static void free_owned(samc_sam3_model *m)
{
    for (int i = 0; i < m->n_owned; i++)
        free(m->owned[i]);
    m->n_owned = 0;
}

samc_status samc_sam3_expected_keys(const samc_sam3_config *cfg, const char *base, samc_key_list *out,
                                    samc_error *err)
{
    memset(out, 0, sizeof *out);
    samc_status st = samc_sam3_config_validate(cfg, "sam3", err);
    samc_sam3_model *m = st ? NULL : calloc(1, sizeof *m);
    if (!st && !m)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st) {
        m->cfg = *cfg;
        st = walk(m, NULL, base, "sam3", NULL, out, err);
        free_owned(m);
    }
    free(m);
    return st;
}

samc_status samc_sam3_model_init(samc_sam3_model **out, samc_weights *w, const samc_sam3_config *cfg,
                                 const char *base, const char *what, samc_error *err)
{
    *out = NULL;
    samc_sam3_model *m = calloc(1, sizeof *m);
    if (!m) {
        samc_weights_free(w);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    samc_model_base_init(&m->base);
    m->base.weights = w;
    m->cfg = *cfg;
    samc_status st = samc_sam3_config_validate(cfg, what, err);
    if (!st)
        st = walk(m, w, base, what, &m->base.params, NULL, err);
    if (st) {
        samc_sam3_model_free(m);
        return st;
    }
    *out = m;
    return SAMC_OK;
}

samc_status samc_sam3_model_set_vocab(samc_sam3_model *m, const void *gz, size_t n, const char *path,
                                      samc_error *err)
{
    samc_clip_tokenizer *tok = NULL;
    samc_status st = gz ? samc_clip_tokenizer_load_gz_mem(gz, n, &tok, err) : samc_clip_tokenizer_load(path, &tok, err);
    if (st)
        return st;
    samc_clip_tokenizer_free(m->tok);
    m->tok = tok;
    return SAMC_OK;
}

void samc_sam3_model_free(samc_sam3_model *m)
{
    if (!m)
        return;
    samc_clip_tokenizer_free(m->tok);
    free_owned(m);
    samc_model_base_free(&m->base);
    free(m);
}
