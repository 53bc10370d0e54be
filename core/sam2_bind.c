/* sam2_bind.c - point the layer records at the checked weights, once. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hiera_pos_embed.h"
#include "sam2_keys.h"
#include "sam2_model.h"

#include "sam2_bind_internal.h"

/* Weights were checked key by key (samc_sam2_check_weights), so a missing key
 * here is a bug in this file, not bad input. */
const float *W(const binder *b, const char *fmt, ...)
{
    char key[256], rest[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rest, sizeof rest, fmt, ap);
    va_end(ap);
    snprintf(key, sizeof key, "%s%s", b->prefix, rest);
    const samc_tensor *t = samc_weights_find(b->w, key);
    if (!t) {
        fprintf(stderr, "samc: internal error: key '%s' passed the check but is absent\n", key);
        abort();
    }
    return t->data;
}

void set_prefix(binder *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->prefix, sizeof b->prefix, fmt, ap);
    va_end(ap);
}

samc_linear lin(const binder *b, const char *name, int in, int out)
{
    return (samc_linear){W(b, "%s.weight", name), W(b, "%s.bias", name), in, out};
}

samc_norm nrm(const binder *b, const char *name, int dim, float eps)
{
    return (samc_norm){W(b, "%s.weight", name), W(b, "%s.bias", name), dim, eps};
}

samc_conv2d cnv(const binder *b, const char *name, int cin, int cout, int k, int stride, int pad)
{
    return (samc_conv2d){W(b, "%s.weight", name), W(b, "%s.bias", name), cin, cout, k, k, stride, pad, 1};
}

samc_mlp mlp(const binder *b, const char *name, int in, int hidden, int out, int n, bool sig)
{
    samc_mlp m = {.num_layers = n, .sigmoid_output = sig};
    char k[160];
    for (int i = 0; i < n; i++) {
        snprintf(k, sizeof k, "%s.layers.%d", name, i);
        m.layers[i] = lin(b, k, i == 0 ? in : hidden, i == n - 1 ? out : hidden);
    }
    return m;
}

samc_attention attn(const binder *b, const char *name, int dim, int internal, int heads)
{
    char k[160];
    samc_attention a = {.heads = heads, .internal_dim = internal};
    snprintf(k, sizeof k, "%s.q_proj", name), a.q = lin(b, k, dim, internal);
    snprintf(k, sizeof k, "%s.k_proj", name), a.k = lin(b, k, dim, internal);
    snprintf(k, sizeof k, "%s.v_proj", name), a.v = lin(b, k, dim, internal);
    snprintf(k, sizeof k, "%s.out_proj", name), a.out = lin(b, k, internal, dim);
    return a;
}

static samc_status bind_trunk(samc_sam2_model *m, binder *b, samc_error *err)
{
    const samc_hiera_config *h = &m->cfg.trunk;
    samc_hiera_block_spec sp[SAMC_MAX_BLOCKS];
    samc_status st = samc_hiera_block_specs(h, sp, SAMC_MAX_BLOCKS, err);
    if (st)
        return st;
    set_prefix(b, "image_encoder.trunk.");
    m->patch_embed = cnv(b, "patch_embed.proj", 3, h->embed_dim, h->patch_kernel, h->patch_stride,
                         h->patch_padding);
    m->depth = samc_hiera_depth(h);
    m->n_stages = samc_hiera_stage_ends(h, m->stage_ends);
    char k[96];
    for (int i = 0; i < m->depth; i++) {
        samc_hiera_block *blk = &m->blocks[i];
        const int d = sp[i].dim, o = sp[i].dim_out;
        *blk = (samc_hiera_block){.dim = d, .dim_out = o, .heads = sp[i].heads,
                                  .window = sp[i].window, .q_stride = sp[i].q_stride};
        set_prefix(b, "image_encoder.trunk.blocks.%d.", i);
        blk->norm1 = nrm(b, "norm1", d, 1e-6f); /* Hiera's "LayerNorm" string -> eps 1e-6 */
        blk->norm2 = nrm(b, "norm2", o, 1e-6f);
        blk->qkv = lin(b, "attn.qkv", d, 3 * o);
        blk->attn_proj = lin(b, "attn.proj", o, o);
        blk->mlp_fc1 = lin(b, "mlp.layers.0", o, 4 * o);
        blk->mlp_fc2 = lin(b, "mlp.layers.1", 4 * o, o);
        blk->has_proj = d != o;
        if (blk->has_proj)
            blk->proj = lin(b, "proj", d, o);
        (void)k;
    }
    /* The absolute position embedding depends only on weights and the grid
     * size: compute it once (Hiera._get_pos_embed). */
    m->grid = m->cfg.image_size / h->patch_stride;
    m->pos_embed = malloc((size_t)m->grid * m->grid * h->embed_dim * sizeof(float));
    if (!m->pos_embed)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory for the position embedding");
    set_prefix(b, "image_encoder.trunk.");
    st = samc_hiera_pos_embed(W(b, "pos_embed"), h->embed_dim, h->bkg_h, h->bkg_w, W(b, "pos_embed_window"),
                              h->window_spec[0], h->window_spec[0], m->grid, m->grid, m->pos_embed);
    return st ? samc_fail(err, st, "cannot compute the Hiera position embedding") : SAMC_OK;
}

static void bind_neck(samc_sam2_model *m, binder *b)
{
    const samc_neck_config *n = &m->cfg.neck;
    samc_fpn_neck *k = &m->neck;
    memset(k, 0, sizeof *k);
    k->d_model = n->d_model;
    k->n_levels = n->n_levels;
    set_prefix(b, "image_encoder.neck.");
    char name[64];
    for (int i = 0; i < n->n_levels; i++) {
        snprintf(name, sizeof name, "convs.%d.conv", i);
        k->convs[i] = cnv(b, name, n->backbone_channel_list[i], n->d_model, n->conv_kernel, n->conv_stride,
                          n->conv_padding);
    }
    for (int i = 0; i < n->n_top_down; i++)
        k->top_down[n->fpn_top_down_levels[i]] = true;
    k->fuse_avg = n->fuse_avg;
    k->interp_bilinear = n->interp_bilinear;
    k->pe = (samc_sine_pe){n->pe.num_pos_feats, (float)n->pe.temperature, n->pe.normalize,
                           n->pe.scale > 0 ? (float)n->pe.scale : (float)(2.0 * 3.14159265358979323846)};
}

static void bind_prompt_encoder(samc_sam2_model *m, binder *b)
{
    const int D = m->cfg.neck.d_model, c = m->cfg.mask_in_chans;
    samc_prompt_encoder *p = &m->prompt_encoder;
    set_prefix(b, "sam_prompt_encoder.");
    p->embed_dim = D;
    p->emb_h = p->emb_w = m->emb;
    p->input_h = p->input_w = m->cfg.image_size;
    p->gauss = W(b, "pe_layer.positional_encoding_gaussian_matrix");
    for (int i = 0; i < 4; i++)
        p->point_embed[i] = W(b, "point_embeddings.%d.weight", i);
    p->not_a_point = W(b, "not_a_point_embed.weight");
    p->no_mask = W(b, "no_mask_embed.weight");
    p->md_conv0 = cnv(b, "mask_downscaling.0", 1, c / 4, 2, 2, 0);
    p->md_norm1 = nrm(b, "mask_downscaling.1", c / 4, 1e-6f);
    p->md_conv3 = cnv(b, "mask_downscaling.3", c / 4, c, 2, 2, 0);
    p->md_norm4 = nrm(b, "mask_downscaling.4", c, 1e-6f);
    p->md_conv6 = cnv(b, "mask_downscaling.6", c, D, 1, 1, 0);
}

static void bind_transformer(samc_sam2_model *m, binder *b)
{
    const samc_sam2_config *c = &m->cfg;
    const int D = c->neck.d_model, H = c->twoway_heads;
    samc_twoway_transformer *t = &m->mask_decoder.transformer;
    t->depth = c->twoway_depth;
    for (int l = 0; l < t->depth; l++) {
        samc_twoway_block *blk = &t->layers[l];
        set_prefix(b, "sam_mask_decoder.transformer.layers.%d.", l);
        blk->self_attn = attn(b, "self_attn", D, D, H);
        blk->cross_t2i = attn(b, "cross_attn_token_to_image", D, D / 2, H);
        blk->cross_i2t = attn(b, "cross_attn_image_to_token", D, D / 2, H);
        blk->mlp_fc1 = lin(b, "mlp.layers.0", D, c->twoway_mlp_dim);
        blk->mlp_fc2 = lin(b, "mlp.layers.1", c->twoway_mlp_dim, D);
        blk->norm1 = nrm(b, "norm1", D, 1e-5f); /* nn.LayerNorm default eps */
        blk->norm2 = nrm(b, "norm2", D, 1e-5f);
        blk->norm3 = nrm(b, "norm3", D, 1e-5f);
        blk->norm4 = nrm(b, "norm4", D, 1e-5f);
        blk->skip_first_layer_pe = l == 0;
    }
    set_prefix(b, "sam_mask_decoder.transformer.");
    t->final_attn = attn(b, "final_attn_token_to_image", D, D / 2, H);
    t->norm_final = nrm(b, "norm_final_attn", D, 1e-5f);
}

static void bind_mask_decoder(samc_sam2_model *m, binder *b)
{
    const samc_sam2_config *c = &m->cfg;
    const int D = c->neck.d_model, M = c->num_multimask_outputs + 1;
    samc_mask_decoder *d = &m->mask_decoder;
    d->dim = D;
    d->num_mask_tokens = M;
    d->pred_obj_scores = c->pred_obj_scores;
    d->pred_obj_scores_mlp = c->pred_obj_scores_mlp;
    d->use_high_res_features = c->use_high_res_features_in_sam;
    d->iou_sigmoid = c->iou_prediction_use_sigmoid;
    d->dynamic_multimask_via_stability = c->dynamic_multimask_via_stability;
    d->dynamic_multimask_stability_delta = (float)c->dynamic_multimask_stability_delta;
    d->dynamic_multimask_stability_thresh = (float)c->dynamic_multimask_stability_thresh;
    d->use_multimask_token_for_obj_ptr = c->use_multimask_token_for_obj_ptr;
    bind_transformer(m, b);
    set_prefix(b, "sam_mask_decoder.");
    d->iou_token = W(b, "iou_token.weight");
    d->mask_tokens = W(b, "mask_tokens.weight");
    d->obj_score_token = c->pred_obj_scores ? W(b, "obj_score_token.weight") : NULL;
    d->up0 = (samc_conv_t2d){W(b, "output_upscaling.0.weight"), W(b, "output_upscaling.0.bias"), D, D / 4, 2};
    d->up_norm = nrm(b, "output_upscaling.1", D / 4, 1e-6f);
    d->up1 = (samc_conv_t2d){W(b, "output_upscaling.3.weight"), W(b, "output_upscaling.3.bias"), D / 4, D / 8, 2};
    if (c->use_high_res_features_in_sam) {
        d->conv_s0 = cnv(b, "conv_s0", D, D / 8, 1, 1, 0);
        d->conv_s1 = cnv(b, "conv_s1", D, D / 4, 1, 1, 0);
    }
    char k[96];
    for (int t = 0; t < M; t++) {
        snprintf(k, sizeof k, "output_hypernetworks_mlps.%d", t);
        d->hyper[t] = mlp(b, k, D, D, D / 8, 3, false);
    }
    d->iou_head = mlp(b, "iou_prediction_head", D, c->iou_head_hidden_dim, M, c->iou_head_depth, false);
    if (c->pred_obj_scores && c->pred_obj_scores_mlp)
        d->obj_head = mlp(b, "pred_obj_score_head", D, D, 1, 3, false);
    else if (c->pred_obj_scores)
        d->obj_head = (samc_mlp){.num_layers = 1, .layers = {lin(b, "pred_obj_score_head", D, 1)}};
}

samc_status samc_sam2_model_init(samc_sam2_model **out, samc_weights *w, const samc_sam2_config *cfg,
                                 samc_error *err)
{
    *out = NULL;
    samc_sam2_model *m = calloc(1, sizeof *m);
    if (!m) {
        samc_weights_free(w);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    m->weights = w;
    m->owns_weights = true;
    m->ops = &samc_ref_ops;
    m->ctx.num_threads = 0; /* OpenMP's default (OMP_NUM_THREADS) until set */
    m->trace_frame_idx = m->trace_obj_id = -1;
    samc_status st = cfg ? (m->cfg = *cfg, samc_sam2_config_validate(cfg, err))
                         : samc_sam2_detect_config(w, &m->cfg, err);
    if (!st)
        st = samc_sam2_check_weights(&m->cfg, w, err);
    if (st) {
        samc_sam2_model_free(m);
        return st;
    }
    m->emb = m->cfg.image_size / m->cfg.backbone_stride;
    binder b = {w, ""};
    st = bind_trunk(m, &b, err);
    if (!st) {
        bind_neck(m, &b);
        bind_prompt_encoder(m, &b);
        bind_mask_decoder(m, &b);
        set_prefix(&b, "%s", "");
        m->no_mem_embed = W(&b, "no_mem_embed");
        samc_sam2_bind_video(m, &b);
    }
    if (st) {
        samc_sam2_model_free(m);
        return st;
    }
    *out = m;
    return SAMC_OK;
}

samc_status samc_sam2_model_load(const char *checkpoint, const char *config, samc_sam2_model **out, samc_error *err)
{
    return samc_sam2_model_load_opts(checkpoint, config, false, out, err);
}

samc_status samc_sam2_model_load_opts(const char *checkpoint, const char *config, bool allow_nonfinite,
                                      samc_sam2_model **out, samc_error *err)
{
    *out = NULL;
    if (!checkpoint)
        return samc_fail(err, SAMC_ERR_ARG, "no checkpoint path given");
    samc_sam2_config cfg;
    samc_status st = config ? samc_sam2_config_resolve(config, &cfg, err) : SAMC_OK;
    samc_weights *w = NULL;
    if (!st)
        st = samc_weights_open(checkpoint, &w, err);
    if (!st && !allow_nonfinite) { /* NaN/Inf weights: refused unless asked for (--allow-nonfinite) */
        samc_error fe = {0};
        if ((st = samc_weights_check_finite(w, &fe))) {
            samc_weights_free(w);
            return samc_fail(err, st, "%s (refused; --allow-nonfinite or samc_load_options.allow_nonfinite loads it anyway)",
                             fe.msg);
        }
    }
    if (!st)
        st = samc_sam2_model_init(out, w, config ? &cfg : NULL, err);
    return st;
}

void samc_sam2_model_free(samc_sam2_model *m)
{
    if (!m)
        return;
    if (m->owns_weights)
        samc_weights_free(m->weights);
    if (m->ctx.scratch_free)
        m->ctx.scratch_free(m->ctx.scratch);
    free(m->pos_embed);
    free(m);
}
