/* sam2_keys.c - the state_dict implied by a config (mirrors the module tree
 * the official constructors build: SAM2Base, Hiera, FpnNeck, MemoryAttention,
 * MemoryEncoder, PromptEncoder, MaskDecoder). */
#include "sam2_keys.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

typedef struct kb { /* builder */
    samc_key_list *l;
    samc_status st;
} kb;

static void addk(kb *b, int ndim, const int64_t *shape, const char *fmt, ...) SAMC_PRINTF(4, 5);
static void addk(kb *b, int ndim, const int64_t *shape, const char *fmt, ...)
{
    if (b->st)
        return;
    samc_key_list *l = b->l;
    if (l->count == l->cap) {
        int cap = l->cap ? 2 * l->cap : 256;
        samc_key_spec *n = realloc(l->items, (size_t)cap * sizeof *n);
        if (!n) {
            b->st = SAMC_ERR_NOMEM;
            return;
        }
        l->items = n, l->cap = cap;
    }
    samc_key_spec *s = &l->items[l->count++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->key, sizeof s->key, fmt, ap);
    va_end(ap);
    s->ndim = ndim;
    memcpy(s->shape, shape, (size_t)ndim * sizeof(int64_t));
}

#define S(...) ((const int64_t[]){__VA_ARGS__})
#define NARG(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define K(b, name_fmt, ...) addk(b, NARG(__VA_ARGS__), S(__VA_ARGS__), name_fmt)

/* nn.Linear(in, out) with bias under `prefix`. */
static void linear(kb *b, const char *prefix, int64_t in, int64_t out)
{
    addk(b, 2, S(out, in), "%s.weight", prefix);
    addk(b, 1, S(out), "%s.bias", prefix);
}

static void conv(kb *b, const char *prefix, int64_t cin_g, int64_t cout, int64_t k)
{
    addk(b, 4, S(cout, cin_g, k, k), "%s.weight", prefix);
    addk(b, 1, S(cout), "%s.bias", prefix);
}

static void norm(kb *b, const char *prefix, int64_t dim)
{
    addk(b, 1, S(dim), "%s.weight", prefix);
    addk(b, 1, S(dim), "%s.bias", prefix);
}

/* sam2_utils.MLP(in, hidden, out, num_layers) */
static void mlp(kb *b, const char *prefix, int64_t in, int64_t hidden, int64_t out, int n)
{
    char p[192];
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s.layers.%d", prefix, i);
        linear(b, p, i == 0 ? in : hidden, i == n - 1 ? out : hidden);
    }
}

/* sam.transformer.Attention(embedding_dim, num_heads, downsample_rate, kv_in_dim) */
static void attention(kb *b, const char *prefix, int64_t dim, int64_t internal, int64_t kv_in)
{
    char p[192];
    static const char *const qkv[] = {"q_proj", "k_proj", "v_proj"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s.%s", prefix, qkv[i]);
        linear(b, p, i == 0 ? dim : kv_in, internal);
    }
    snprintf(p, sizeof p, "%s.out_proj", prefix);
    linear(b, p, internal, dim);
}

static void trunk_keys(kb *b, const samc_sam2_config *c)
{
    const samc_hiera_config *h = &c->trunk;
    samc_hiera_block_spec sp[SAMC_MAX_BLOCKS];
    b->st = b->st ? b->st : samc_hiera_block_specs(h, sp, SAMC_MAX_BLOCKS, NULL);
    if (b->st)
        return;
    int64_t C = h->embed_dim;
    K(b, "image_encoder.trunk.pos_embed", 1, C, h->bkg_h, h->bkg_w);
    K(b, "image_encoder.trunk.pos_embed_window", 1, C, h->window_spec[0], h->window_spec[0]);
    addk(b, 4, S(C, 3, h->patch_kernel, h->patch_kernel), "image_encoder.trunk.patch_embed.proj.weight");
    K(b, "image_encoder.trunk.patch_embed.proj.bias", C);
    char p[192];
    for (int i = 0; i < samc_hiera_depth(h); i++) {
        int64_t d = sp[i].dim, o = sp[i].dim_out;
        snprintf(p, sizeof p, "image_encoder.trunk.blocks.%d.norm1", i), norm(b, p, d);
        snprintf(p, sizeof p, "image_encoder.trunk.blocks.%d.attn.qkv", i), linear(b, p, d, 3 * o);
        snprintf(p, sizeof p, "image_encoder.trunk.blocks.%d.attn.proj", i), linear(b, p, o, o);
        snprintf(p, sizeof p, "image_encoder.trunk.blocks.%d.norm2", i), norm(b, p, o);
        snprintf(p, sizeof p, "image_encoder.trunk.blocks.%d.mlp", i), mlp(b, p, o, 4 * o, o, 2);
        if (d != o)
            snprintf(p, sizeof p, "image_encoder.trunk.blocks.%d.proj", i), linear(b, p, d, o);
    }
}

static void neck_keys(kb *b, const samc_sam2_config *c)
{
    const samc_neck_config *n = &c->neck;
    char p[192];
    for (int k = 0; k < n->n_levels; k++) {
        snprintf(p, sizeof p, "image_encoder.neck.convs.%d.conv", k);
        conv(b, p, n->backbone_channel_list[k], n->d_model, n->conv_kernel);
    }
}

static void memory_keys(kb *b, const samc_sam2_config *c)
{
    const samc_memory_attention_config *ma = &c->mem_attn;
    char p[192];
    for (int i = 0; i < ma->num_layers; i++) {
        snprintf(p, sizeof p, "memory_attention.layers.%d.self_attn", i);
        attention(b, p, ma->d_model, ma->d_model, ma->d_model);
        snprintf(p, sizeof p, "memory_attention.layers.%d.cross_attn_image", i);
        attention(b, p, ma->d_model, ma->d_model, ma->kv_in_dim);
        snprintf(p, sizeof p, "memory_attention.layers.%d.linear1", i);
        linear(b, p, ma->d_model, ma->dim_feedforward);
        snprintf(p, sizeof p, "memory_attention.layers.%d.linear2", i);
        linear(b, p, ma->dim_feedforward, ma->d_model);
        for (int k = 1; k <= 3; k++)
            snprintf(p, sizeof p, "memory_attention.layers.%d.norm%d", i, k), norm(b, p, ma->d_model);
    }
    norm(b, "memory_attention.norm", ma->d_model);

    const samc_memory_encoder_config *me = &c->mem_enc;
    int nl = 0; /* MaskDownSampler: log2(total_stride) / log2(stride) layers */
    for (int s = 1; s < me->ds_total_stride && me->ds_stride > 1; s *= me->ds_stride)
        nl++;
    int64_t cin = 1;
    for (int l = 0; l < nl; l++) {
        int64_t cout = cin * me->ds_stride * me->ds_stride;
        snprintf(p, sizeof p, "memory_encoder.mask_downsampler.encoder.%d", 3 * l), conv(b, p, cin, cout, me->ds_kernel);
        snprintf(p, sizeof p, "memory_encoder.mask_downsampler.encoder.%d", 3 * l + 1), norm(b, p, cout);
        cin = cout;
    }
    snprintf(p, sizeof p, "memory_encoder.mask_downsampler.encoder.%d", 3 * nl);
    conv(b, p, cin, me->ds_embed_dim, 1);
    conv(b, "memory_encoder.pix_feat_proj", me->in_dim, me->in_dim, 1);
    for (int j = 0; j < me->fuser_layers; j++) {
        int64_t d = me->fuser_dim;
        if (me->layer_scale_init_value > 0)
            addk(b, 1, S(d), "memory_encoder.fuser.layers.%d.gamma", j);
        snprintf(p, sizeof p, "memory_encoder.fuser.layers.%d.dwconv", j), conv(b, p, me->use_dwconv ? 1 : d, d, me->fuser_kernel);
        snprintf(p, sizeof p, "memory_encoder.fuser.layers.%d.norm", j), norm(b, p, d);
        snprintf(p, sizeof p, "memory_encoder.fuser.layers.%d.pwconv1", j), linear(b, p, d, 4 * d);
        snprintf(p, sizeof p, "memory_encoder.fuser.layers.%d.pwconv2", j), linear(b, p, 4 * d, d);
    }
    if (me->out_dim != me->in_dim)
        conv(b, "memory_encoder.out_proj", me->in_dim, me->out_dim, 1);
}

static void sam_heads_keys(kb *b, const samc_sam2_config *c)
{
    const int64_t D = c->neck.d_model, m = c->mask_in_chans, M = c->num_multimask_outputs + 1;
    K(b, "sam_prompt_encoder.pe_layer.positional_encoding_gaussian_matrix", 2, D / 2);
    char p[192];
    for (int i = 0; i < 4; i++)
        addk(b, 2, S(1, D), "sam_prompt_encoder.point_embeddings.%d.weight", i);
    K(b, "sam_prompt_encoder.not_a_point_embed.weight", 1, D);
    K(b, "sam_prompt_encoder.no_mask_embed.weight", 1, D);
    conv(b, "sam_prompt_encoder.mask_downscaling.0", 1, m / 4, 2);
    norm(b, "sam_prompt_encoder.mask_downscaling.1", m / 4);
    conv(b, "sam_prompt_encoder.mask_downscaling.3", m / 4, m, 2);
    norm(b, "sam_prompt_encoder.mask_downscaling.4", m);
    conv(b, "sam_prompt_encoder.mask_downscaling.6", m, D, 1);

    K(b, "sam_mask_decoder.iou_token.weight", 1, D);
    K(b, "sam_mask_decoder.mask_tokens.weight", M, D);
    if (c->pred_obj_scores)
        K(b, "sam_mask_decoder.obj_score_token.weight", 1, D);
    for (int l = 0; l < c->twoway_depth; l++) {
        snprintf(p, sizeof p, "sam_mask_decoder.transformer.layers.%d.self_attn", l), attention(b, p, D, D, D);
        snprintf(p, sizeof p, "sam_mask_decoder.transformer.layers.%d.cross_attn_token_to_image", l), attention(b, p, D, D / 2, D);
        snprintf(p, sizeof p, "sam_mask_decoder.transformer.layers.%d.cross_attn_image_to_token", l), attention(b, p, D, D / 2, D);
        snprintf(p, sizeof p, "sam_mask_decoder.transformer.layers.%d.mlp", l), mlp(b, p, D, c->twoway_mlp_dim, D, 2);
        for (int k = 1; k <= 4; k++)
            snprintf(p, sizeof p, "sam_mask_decoder.transformer.layers.%d.norm%d", l, k), norm(b, p, D);
    }
    attention(b, "sam_mask_decoder.transformer.final_attn_token_to_image", D, D / 2, D);
    norm(b, "sam_mask_decoder.transformer.norm_final_attn", D);
    K(b, "sam_mask_decoder.output_upscaling.0.weight", D, D / 4, 2, 2);
    K(b, "sam_mask_decoder.output_upscaling.0.bias", D / 4);
    norm(b, "sam_mask_decoder.output_upscaling.1", D / 4);
    K(b, "sam_mask_decoder.output_upscaling.3.weight", D / 4, D / 8, 2, 2);
    K(b, "sam_mask_decoder.output_upscaling.3.bias", D / 8);
    if (c->use_high_res_features_in_sam) {
        conv(b, "sam_mask_decoder.conv_s0", D, D / 8, 1);
        conv(b, "sam_mask_decoder.conv_s1", D, D / 4, 1);
    }
    for (int t = 0; t < M; t++)
        snprintf(p, sizeof p, "sam_mask_decoder.output_hypernetworks_mlps.%d", t), mlp(b, p, D, D, D / 8, 3);
    mlp(b, "sam_mask_decoder.iou_prediction_head", D, c->iou_head_hidden_dim, M, c->iou_head_depth);
    if (c->pred_obj_scores) {
        if (c->pred_obj_scores_mlp)
            mlp(b, "sam_mask_decoder.pred_obj_score_head", D, D, 1, 3);
        else
            linear(b, "sam_mask_decoder.pred_obj_score_head", D, 1);
    }
}

static void top_level_keys(kb *b, const samc_sam2_config *c)
{
    const int64_t D = c->neck.d_model;
    const int64_t mem_dim = c->mem_enc.out_dim != c->mem_enc.in_dim ? c->mem_enc.out_dim : D;
    K(b, "maskmem_tpos_enc", c->num_maskmem, 1, 1, mem_dim);
    K(b, "no_mem_embed", 1, 1, D);
    K(b, "no_mem_pos_enc", 1, 1, D);
    if (c->use_obj_ptrs_in_encoder) {
        conv(b, "mask_downsample", 1, 1, 4);
        if (c->use_mlp_for_obj_ptr_proj)
            mlp(b, "obj_ptr_proj", D, D, D, 3);
        else
            linear(b, "obj_ptr_proj", D, D);
    }
    if (c->proj_tpos_enc_in_obj_ptrs)
        linear(b, "obj_ptr_tpos_proj", D, mem_dim);
    if (c->pred_obj_scores && c->use_obj_ptrs_in_encoder)
        K(b, "no_obj_ptr", 1, D);
    if (c->no_obj_embed_spatial)
        K(b, "no_obj_embed_spatial", 1, mem_dim);
}

samc_status samc_sam2_expected_keys(const samc_sam2_config *cfg, samc_key_list *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    kb b = {out, SAMC_OK};
    trunk_keys(&b, cfg);
    neck_keys(&b, cfg);
    memory_keys(&b, cfg);
    sam_heads_keys(&b, cfg);
    top_level_keys(&b, cfg);
    if (b.st) {
        samc_key_list_free(out);
        return samc_fail(err, b.st, "cannot build the expected key list for config '%s'", cfg->name);
    }
    return SAMC_OK;
}

void samc_key_list_free(samc_key_list *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}
