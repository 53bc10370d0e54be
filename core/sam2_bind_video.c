/* sam2_bind_video.c - weight records of the memory path. */
#include <stdio.h>
#include <string.h>

#include "sam2_bind_internal.h"

/* sam.transformer.Attention with kv_in_dim (RoPEAttention's base). */
static samc_rope_attention rope_attn(const binder *b, const char *name, int dim, int kv_in, int heads,
                                     const samc_memory_attention_config *ma, bool k_repeat)
{
    char k[160];
    samc_rope_attention r = {.theta = (float)ma->rope_theta, .rope_k_repeat = k_repeat,
                             .feat_w = ma->feat_w, .feat_h = ma->feat_h};
    r.attn.heads = heads, r.attn.internal_dim = dim;
    snprintf(k, sizeof k, "%s.q_proj", name), r.attn.q = lin(b, k, dim, dim);
    snprintf(k, sizeof k, "%s.k_proj", name), r.attn.k = lin(b, k, kv_in, dim);
    snprintf(k, sizeof k, "%s.v_proj", name), r.attn.v = lin(b, k, kv_in, dim);
    snprintf(k, sizeof k, "%s.out_proj", name), r.attn.out = lin(b, k, dim, dim);
    return r;
}

static void bind_memory_attention(samc_sam2_model *m, binder *b)
{
    const samc_memory_attention_config *c = &m->cfg.mem_attn;
    samc_memory_attention *a = &m->memory_attention;
    a->n_layers = c->num_layers, a->d_model = c->d_model, a->pos_enc_at_input = c->pos_enc_at_input;
    for (int i = 0; i < c->num_layers; i++) {
        samc_memory_attention_layer *l = &a->layers[i];
        set_prefix(b, "memory_attention.layers.%d.", i);
        l->self_attn = rope_attn(b, "self_attn", c->d_model, c->d_model, c->self_heads, c, false);
        l->cross_attn = rope_attn(b, "cross_attn_image", c->d_model, c->kv_in_dim, c->cross_heads, c,
                                  c->rope_k_repeat);
        l->linear1 = lin(b, "linear1", c->d_model, c->dim_feedforward);
        l->linear2 = lin(b, "linear2", c->dim_feedforward, c->d_model);
        l->norm1 = nrm(b, "norm1", c->d_model, 1e-5f);
        l->norm2 = nrm(b, "norm2", c->d_model, 1e-5f);
        l->norm3 = nrm(b, "norm3", c->d_model, 1e-5f);
        l->pos_enc_at_attn = c->pos_enc_at_attn;
        l->pos_enc_at_cross_attn_queries = c->pos_enc_at_cross_attn_queries;
        l->pos_enc_at_cross_attn_keys = c->pos_enc_at_cross_attn_keys;
    }
    set_prefix(b, "memory_attention.");
    a->norm = nrm(b, "norm", c->d_model, 1e-5f);
}

static void bind_memory_encoder(samc_sam2_model *m, binder *b)
{
    const samc_memory_encoder_config *c = &m->cfg.mem_enc;
    samc_memory_encoder *e = &m->memory_encoder;
    samc_mask_downsampler *ds = &e->downsampler;
    set_prefix(b, "memory_encoder.mask_downsampler.encoder.");
    int cin = 1, n = 0;
    for (int s = 1; s < c->ds_total_stride && c->ds_stride > 1; s *= c->ds_stride)
        n++;
    ds->n_layers = n;
    char k[64];
    for (int l = 0; l < n; l++) {
        const int cout = cin * c->ds_stride * c->ds_stride;
        snprintf(k, sizeof k, "%d", 3 * l), ds->convs[l] = cnv(b, k, cin, cout, c->ds_kernel, c->ds_stride, c->ds_padding);
        snprintf(k, sizeof k, "%d", 3 * l + 1), ds->norms[l] = nrm(b, k, cout, 1e-6f);
        cin = cout;
    }
    snprintf(k, sizeof k, "%d", 3 * n), ds->proj = cnv(b, k, cin, c->ds_embed_dim, 1, 1, 0);
    set_prefix(b, "memory_encoder.");
    e->in_dim = c->in_dim, e->out_dim = c->out_dim;
    e->pix_feat_proj = cnv(b, "pix_feat_proj", c->in_dim, c->in_dim, 1, 1, 0);
    e->n_fuser = c->fuser_layers;
    for (int j = 0; j < c->fuser_layers; j++) {
        samc_cxblock *x = &e->fuser[j];
        set_prefix(b, "memory_encoder.fuser.layers.%d.", j);
        x->dwconv = cnv(b, "dwconv", c->fuser_dim, c->fuser_dim, c->fuser_kernel, 1, c->fuser_padding);
        x->dwconv.groups = c->use_dwconv ? c->fuser_dim : 1;
        x->norm = nrm(b, "norm", c->fuser_dim, 1e-6f);
        x->pw1 = lin(b, "pwconv1", c->fuser_dim, 4 * c->fuser_dim);
        x->pw2 = lin(b, "pwconv2", 4 * c->fuser_dim, c->fuser_dim);
        x->gamma = c->layer_scale_init_value > 0 ? W(b, "gamma") : NULL;
    }
    set_prefix(b, "memory_encoder.");
    e->has_out_proj = c->out_dim != c->in_dim;
    if (e->has_out_proj)
        e->out_proj = cnv(b, "out_proj", c->in_dim, c->out_dim, 1, 1, 0);
    e->pe = (samc_sine_pe){c->pe.num_pos_feats, (float)c->pe.temperature, c->pe.normalize,
                           c->pe.scale > 0 ? (float)c->pe.scale : (float)(2.0 * 3.14159265358979323846)};
}

void samc_sam2_bind_video(samc_sam2_model *m, binder *b)
{
    const samc_sam2_config *c = &m->cfg;
    const int D = c->neck.d_model;
    m->mem_dim = c->mem_enc.out_dim != c->mem_enc.in_dim ? c->mem_enc.out_dim : D;
    bind_memory_attention(m, b);
    bind_memory_encoder(m, b);
    set_prefix(b, "%s", "");
    m->maskmem_tpos_enc = W(b, "maskmem_tpos_enc");
    m->has_obj_ptr_proj = c->use_obj_ptrs_in_encoder;
    if (c->use_obj_ptrs_in_encoder) {
        m->mask_downsample = cnv(b, "mask_downsample", 1, 1, 4, 4, 0);
        m->obj_ptr_proj = c->use_mlp_for_obj_ptr_proj ? mlp(b, "obj_ptr_proj", D, D, D, 3, false)
                                                      : (samc_mlp){.num_layers = 1, .layers = {lin(b, "obj_ptr_proj", D, D)}};
    }
    m->has_obj_ptr_tpos_proj = c->proj_tpos_enc_in_obj_ptrs;
    if (c->proj_tpos_enc_in_obj_ptrs)
        m->obj_ptr_tpos_proj = lin(b, "obj_ptr_tpos_proj", D, m->mem_dim);
    m->no_obj_ptr = c->pred_obj_scores && c->use_obj_ptrs_in_encoder ? W(b, "no_obj_ptr") : NULL;
    m->no_obj_embed_spatial = c->no_obj_embed_spatial ? W(b, "no_obj_embed_spatial") : NULL;
}
