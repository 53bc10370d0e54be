/* sam2_memory.c - the memory path's layers: memory encoder (mask
 * downsampler, fuser), memory attention, the object-pointer projections and
 * mask_downsample (sam2/modeling/memory_*.py, SAM2Base). Registry rows,
 * weights, isolated runners and wiring of these layers. */
#include "core/models/sam2/sam2_memory.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/position_encoding.h"

#define IMG SAMC_OPS_SAM2_IMAGE
#define VID SAMC_OPS_SAM2_VIDEO
#define IOP(kind) offsetof(samc_sam2_image_ops, kind)
#define VOP(kind) offsetof(samc_sam2_video_ops, kind)
#define IOPS(L) ((const samc_sam2_image_ops *)(L)->ops)
#define VOPS(L) ((const samc_sam2_video_ops *)(L)->ops)

enum { DOWNSAMPLER, FUSER, MEMORY_ENCODER, MEMATTN_LAYER, MEMORY_ATTENTION, OBJ_PTR_PROJ, OBJ_PTR_TPOS_PROJ,
       MASK_DOWNSAMPLE, N_DEFS };

static int count_fuser(const void *m) { return ((const samc_sam2_model *)m)->memory_encoder.n_fuser; }
static int count_memattn(const void *m) { return ((const samc_sam2_model *)m)->memory_attention.n_layers; }

static samc_isolated_body iso_downsampler, iso_fuser, iso_memory_encoder, iso_memattn_layer, iso_memory_attention,
    iso_obj_ptr_proj, iso_obj_ptr_tpos_proj, iso_mask_downsample;
#define EX(name) static samc_status name(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
EX(ex_downsampler) EX(ex_fuser) EX(ex_memory_encoder) EX(ex_memattn_layer) EX(ex_memory_attention)
EX(ex_obj_ptr_proj) EX(ex_obj_ptr_tpos_proj) EX(ex_mask_downsample)
#undef EX

static const samc_layer_def defs[N_DEFS] = {
    [DOWNSAMPLER] = {"memory_encoder.mask_downsampler", VID, VOP(mask_downsampler), SAMC_NO_OP, SAMC_LAYER_PARITY,
                     NULL, iso_downsampler, ex_downsampler},
    [FUSER] = {"memory_encoder.fuser.layers.#", VID, VOP(cxblock), SAMC_NO_OP, SAMC_LAYER_PARITY, count_fuser,
               iso_fuser, ex_fuser},
    /* its own body: the pix_feat_proj / out_proj convolutions */
    [MEMORY_ENCODER] = {"memory_encoder", IMG, IOP(conv2d), SAMC_NO_OP, SAMC_LAYER_PARITY, NULL, iso_memory_encoder,
                        ex_memory_encoder},
    [MEMATTN_LAYER] = {"memory_attention.layers.#", VID, VOP(memory_attention_layer), SAMC_NO_OP, SAMC_LAYER_PARITY,
                       count_memattn, iso_memattn_layer, ex_memattn_layer},
    /* its own body: the final LayerNorm */
    [MEMORY_ATTENTION] = {"memory_attention", VID, VOP(layer_norm), SAMC_NO_OP, SAMC_LAYER_PARITY, NULL,
                          iso_memory_attention, ex_memory_attention},
    [OBJ_PTR_PROJ] = {"obj_ptr_proj", VID, VOP(mlp), SAMC_NO_OP, SAMC_LAYER_PARITY, NULL, iso_obj_ptr_proj, ex_obj_ptr_proj},
    [OBJ_PTR_TPOS_PROJ] = {"obj_ptr_tpos_proj", VID, VOP(mlp), SAMC_NO_OP, 0, NULL, iso_obj_ptr_tpos_proj,
                           ex_obj_ptr_tpos_proj},
    [MASK_DOWNSAMPLE] = {"mask_downsample", IMG, IOP(conv2d), SAMC_NO_OP, 0, NULL, iso_mask_downsample,
                         ex_mask_downsample},
};
const samc_layer_part samc__sam2_memory_part = {defs, N_DEFS};

static const char *const slot0[] = {"0"};

/* ---- weights ---------------------------------------------------------------- */

static void describe_memory_attention(samc_sd *sd, samc_sam2_model *m)
{
    const samc_memory_attention_config *c = &m->cfg.mem_attn;
    samc_memory_attention *a = &m->memory_attention;
    a->n_layers = c->num_layers, a->d_model = c->d_model, a->pos_enc_at_input = c->pos_enc_at_input;
    for (int i = 0; i < c->num_layers; i++) {
        samc_memory_attention_layer *l = &a->layers[i];
        samc_sd_prefix(sd, "memory_attention.layers.%d.", i);
        samc_sd_attention(sd, &l->self_attn.attn, "self_attn", c->d_model, c->d_model, c->d_model, c->self_heads);
        samc_sd_attention(sd, &l->cross_attn.attn, "cross_attn_image", c->d_model, c->d_model, c->kv_in_dim,
                          c->cross_heads);
        for (int k = 0; k < 2; k++) {
            samc_rope_attention *r = k ? &l->cross_attn : &l->self_attn;
            r->theta = (float)c->rope_theta, r->rope_k_repeat = k ? c->rope_k_repeat : false;
            r->feat_w = c->feat_w, r->feat_h = c->feat_h;
        }
        samc_sd_linear(sd, &l->linear1, "linear1", c->d_model, c->dim_feedforward, true);
        samc_sd_linear(sd, &l->linear2, "linear2", c->dim_feedforward, c->d_model, true);
        samc_sd_norm(sd, &l->norm1, "norm1", c->d_model, 1e-5f);
        samc_sd_norm(sd, &l->norm2, "norm2", c->d_model, 1e-5f);
        samc_sd_norm(sd, &l->norm3, "norm3", c->d_model, 1e-5f);
        l->pos_enc_at_attn = c->pos_enc_at_attn;
        l->pos_enc_at_cross_attn_queries = c->pos_enc_at_cross_attn_queries;
        l->pos_enc_at_cross_attn_keys = c->pos_enc_at_cross_attn_keys;
    }
    samc_sd_prefix(sd, "memory_attention.");
    samc_sd_norm(sd, &a->norm, "norm", c->d_model, 1e-5f);
}

static void describe_memory_encoder(samc_sd *sd, samc_sam2_model *m)
{
    const samc_memory_encoder_config *c = &m->cfg.mem_enc;
    samc_memory_encoder *e = &m->memory_encoder;
    samc_mask_downsampler *ds = &e->downsampler;
    int cin = 1, n = 0; /* MaskDownSampler: log(total_stride) / log(stride) layers */
    for (int s = 1; s < c->ds_total_stride && c->ds_stride > 1; s *= c->ds_stride)
        n++;
    ds->n_layers = n;
    samc_sd_prefix(sd, "memory_encoder.mask_downsampler.encoder.");
    char k[64];
    for (int l = 0; l < n; l++) {
        const int cout = cin * c->ds_stride * c->ds_stride;
        snprintf(k, sizeof k, "%d", 3 * l);
        samc_sd_conv(sd, &ds->convs[l], k, cin, cout, c->ds_kernel, c->ds_stride, c->ds_padding, 1, true);
        snprintf(k, sizeof k, "%d", 3 * l + 1);
        samc_sd_norm(sd, &ds->norms[l], k, cout, 1e-6f);
        cin = cout;
    }
    snprintf(k, sizeof k, "%d", 3 * n);
    samc_sd_conv(sd, &ds->proj, k, cin, c->ds_embed_dim, 1, 1, 0, 1, true);
    samc_sd_prefix(sd, "memory_encoder.");
    e->in_dim = c->in_dim, e->out_dim = c->out_dim;
    samc_sd_conv(sd, &e->pix_feat_proj, "pix_feat_proj", c->in_dim, c->in_dim, 1, 1, 0, 1, true);
    e->n_fuser = c->fuser_layers;
    for (int j = 0; j < c->fuser_layers; j++) {
        samc_cxblock *x = &e->fuser[j];
        samc_sd_prefix(sd, "memory_encoder.fuser.layers.%d.", j);
        x->gamma = c->layer_scale_init_value > 0 ? samc_sd_tensor(sd, 1, (const int64_t[]){c->fuser_dim}, "gamma")
                                                 : NULL;
        samc_sd_conv(sd, &x->dwconv, "dwconv", c->fuser_dim, c->fuser_dim, c->fuser_kernel, 1, c->fuser_padding,
                     c->use_dwconv ? c->fuser_dim : 1, true);
        samc_sd_norm(sd, &x->norm, "norm", c->fuser_dim, 1e-6f);
        samc_sd_linear(sd, &x->pw1, "pwconv1", c->fuser_dim, 4 * c->fuser_dim, true);
        samc_sd_linear(sd, &x->pw2, "pwconv2", 4 * c->fuser_dim, c->fuser_dim, true);
    }
    samc_sd_prefix(sd, "memory_encoder.");
    e->has_out_proj = c->out_dim != c->in_dim;
    if (e->has_out_proj)
        samc_sd_conv(sd, &e->out_proj, "out_proj", c->in_dim, c->out_dim, 1, 1, 0, 1, true);
    e->pe = (samc_sine_pe){c->pe.num_pos_feats, (float)c->pe.temperature, c->pe.normalize,
                           c->pe.scale > 0 ? (float)c->pe.scale : (float)(2.0 * 3.14159265358979323846)};
}

/* SAM2Base's own memory-path parameters. */
static void describe_pointers(samc_sd *sd, samc_sam2_model *m)
{
    const samc_sam2_config *c = &m->cfg;
    const int D = c->neck.d_model, mem = m->mem_dim;
    samc_sd_prefix(sd, "%s", "");
    m->maskmem_tpos_enc = samc_sd_tensor(sd, 4, (const int64_t[]){c->num_maskmem, 1, 1, mem}, "maskmem_tpos_enc");
    m->has_obj_ptr_proj = c->use_obj_ptrs_in_encoder;
    if (c->use_obj_ptrs_in_encoder) {
        samc_sd_conv(sd, &m->mask_downsample, "mask_downsample", 1, 1, 4, 4, 0, 1, true);
        if (c->use_mlp_for_obj_ptr_proj)
            samc_sd_mlp(sd, &m->obj_ptr_proj, "obj_ptr_proj", D, D, D, 3, false);
        else {
            m->obj_ptr_proj = (samc_mlp){.num_layers = 1};
            samc_sd_linear(sd, &m->obj_ptr_proj.layers[0], "obj_ptr_proj", D, D, true);
        }
    }
    m->has_obj_ptr_tpos_proj = c->proj_tpos_enc_in_obj_ptrs;
    if (c->proj_tpos_enc_in_obj_ptrs) {
        m->obj_ptr_tpos_proj = (samc_mlp){.num_layers = 1};
        samc_sd_linear(sd, &m->obj_ptr_tpos_proj.layers[0], "obj_ptr_tpos_proj", D, mem, true);
    }
    m->no_obj_ptr = c->pred_obj_scores && c->use_obj_ptrs_in_encoder
                        ? samc_sd_tensor(sd, 2, (const int64_t[]){1, D}, "no_obj_ptr") : NULL;
    m->no_obj_embed_spatial = c->no_obj_embed_spatial
                                  ? samc_sd_tensor(sd, 2, (const int64_t[]){1, mem}, "no_obj_embed_spatial") : NULL;
}

void samc__sam2_describe_memory(samc_sd *sd, samc_sam2_model *m)
{
    m->mem_dim = m->cfg.mem_enc.out_dim != m->cfg.mem_enc.in_dim ? m->cfg.mem_enc.out_dim : m->cfg.neck.d_model;
    describe_memory_attention(sd, m);
    describe_memory_encoder(sd, m);
    describe_pointers(sd, m);
}

/* ---- wiring ------------------------------------------------------------------- */

static samc_status run_fuser(samc_exec *x, const samc_scope *sc, samc_tensor *t, samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const samc_memory_encoder *e = &m->memory_encoder;
    samc_tensor y = {0};
    for (int j = 0; j < e->n_fuser; j++) {
        const samc_layer *L = samc_layer_get(x, &defs[FUSER], j);
        const samc_tensor *outs[] = {&y};
        samc_status st = samc_tensor_alloc(&y, t->ndim, t->shape, err);
        if (!st)
            st = samc_layer_done(x, L, sc, VOPS(L)->cxblock(samc_layer_ctx(x, L), &e->fuser[j], t, &y), err, 1, slot0,
                                 outs);
        if (st) {
            samc_tensor_release(&y);
            return st;
        }
        samc_tensor_release(t);
        *t = y;
        memset(&y, 0, sizeof y);
    }
    return SAMC_OK;
}

static samc_status conv(samc_exec *x, const samc_layer *L, const samc_conv2d *c, const samc_tensor *in,
                        samc_tensor *out, samc_error *err)
{
    samc_status st = samc_tensor_allocv(out, err, 4, in->shape[0], (int64_t)c->cout, in->shape[2], in->shape[3]);
    return st ? st : samc_layer_done(x, L, NULL, IOPS(L)->conv2d(samc_layer_ctx(x, L), c, in, out), err, 0, NULL, NULL);
}

samc_status samc_sam2_memory_encoder(samc_exec *x, const samc_scope *sc, const samc_tensor *pix_feat,
                                     const samc_tensor *masks, bool skip_mask_sigmoid, samc_tensor *features,
                                     samc_tensor *pos, samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const samc_memory_encoder *e = &m->memory_encoder;
    const samc_layer *enc = samc_layer_get(x, &defs[MEMORY_ENCODER], 0), *dsl = samc_layer_get(x, &defs[DOWNSAMPLER], 0);
    const int64_t B = pix_feat->shape[0], h = pix_feat->shape[2], w = pix_feat->shape[3];
    samc_tensor mk = {0}, ds = {0}, t = {0};
    memset(features, 0, sizeof *features), memset(pos, 0, sizeof *pos);
    samc_status st = samc_tensor_copy(&mk, masks, err);
    if (!st && !skip_mask_sigmoid)
        for (int64_t i = 0; i < samc_numel(&mk); i++)
            mk.data[i] = 1.0f / (1.0f + expf(-mk.data[i]));
    const samc_tensor *outs[] = {&ds};
    if (!st && !(st = samc_tensor_allocv(&ds, err, 4, B, (int64_t)e->downsampler.proj.cout, h, w)))
        st = samc_layer_done(x, dsl, sc, VOPS(dsl)->mask_downsampler(samc_layer_ctx(x, dsl), &e->downsampler, &mk, &ds),
                             err, 1, slot0, outs);
    if (!st) /* x = pix_feat_proj(pix_feat) + masks */
        st = conv(x, enc, &e->pix_feat_proj, pix_feat, &t, err);
    for (int64_t i = 0; !st && i < samc_numel(&t); i++)
        t.data[i] += ds.data[i];
    if (!st)
        st = run_fuser(x, sc, &t, err);
    if (!st && e->has_out_proj) {
        st = conv(x, enc, &e->out_proj, &t, features, err);
    } else if (!st) {
        *features = t;
        memset(&t, 0, sizeof t);
    }
    if (!st && !(st = samc_tensor_alloc(pos, 4, features->shape, err)))
        for (int64_t b = 0; b < B; b++)
            samc_sine_pe_fill(&e->pe, (int)h, (int)w, pos->data + b * samc_numel(pos) / B);
    if (!st) {
        static const char *const slots[] = {"vision_features", "vision_pos_enc.0"};
        const samc_tensor *o2[] = {features, pos};
        samc_layer_emit(x, enc, sc, 2, slots, o2);
    } else {
        samc_tensor_release(features), samc_tensor_release(pos);
    }
    samc_tensor_release(&mk), samc_tensor_release(&ds), samc_tensor_release(&t);
    return st;
}

/* (L,B,C) <-> (B,L,C) */
static samc_status transpose01(const samc_tensor *t, samc_tensor *y, samc_error *err)
{
    const int64_t L = t->shape[0], B = t->shape[1], C = t->shape[2];
    samc_status st = samc_tensor_allocv(y, err, 3, B, L, C);
    for (int64_t l = 0; !st && l < L; l++)
        for (int64_t b = 0; b < B; b++)
            memcpy(y->data + (b * L + l) * C, t->data + (l * B + b) * C, (size_t)C * sizeof(float));
    return st;
}

static samc_status attention_layers(samc_exec *x, const samc_scope *sc, samc_tensor *t, const samc_tensor *mem,
                                    const samc_tensor *mp, const samc_tensor *qp, int num_obj_ptr_tokens,
                                    samc_error *err)
{
    const samc_memory_attention *ma = &((const samc_sam2_model *)x->model)->memory_attention;
    samc_tensor y = {0};
    for (int i = 0; i < ma->n_layers; i++) {
        const samc_layer *L = samc_layer_get(x, &defs[MEMATTN_LAYER], i);
        const samc_tensor *outs[] = {&y};
        samc_status st = samc_tensor_alloc(&y, t->ndim, t->shape, err);
        if (!st)
            st = samc_layer_done(x, L, sc,
                                 VOPS(L)->memory_attention_layer(samc_layer_ctx(x, L), &ma->layers[i], t, mem, mp, qp,
                                                                 num_obj_ptr_tokens, &y),
                                 err, 1, slot0, outs);
        if (st) {
            samc_tensor_release(&y);
            return st;
        }
        samc_tensor_release(t);
        *t = y;
        memset(&y, 0, sizeof y);
    }
    return SAMC_OK;
}

samc_status samc_sam2_memory_attention(samc_exec *x, const samc_scope *sc, const samc_tensor *curr,
                                       const samc_tensor *memory, const samc_tensor *curr_pos,
                                       const samc_tensor *memory_pos, int num_obj_ptr_tokens, samc_tensor *out,
                                       samc_error *err)
{
    const samc_memory_attention *ma = &((const samc_sam2_model *)x->model)->memory_attention;
    const samc_layer *L = samc_layer_get(x, &defs[MEMORY_ATTENTION], 0);
    samc_tensor t = {0}, qp = {0}, mem = {0}, mp = {0}, n = {0};
    memset(out, 0, sizeof *out);
    samc_status st = transpose01(curr, &t, err);
    if (!st && curr_pos)
        st = transpose01(curr_pos, &qp, err);
    if (!st && ma->pos_enc_at_input && curr_pos) /* output = curr + 0.1 * curr_pos */
        for (int64_t i = 0; i < samc_numel(&t); i++)
            t.data[i] = t.data[i] + 0.1f * qp.data[i];
    if (!st)
        st = transpose01(memory, &mem, err);
    if (!st && memory_pos)
        st = transpose01(memory_pos, &mp, err);
    if (!st)
        st = attention_layers(x, sc, &t, &mem, memory_pos ? &mp : NULL, curr_pos ? &qp : NULL, num_obj_ptr_tokens, err);
    if (!st && !(st = samc_tensor_alloc(&n, t.ndim, t.shape, err))) /* final norm, back to sequence-first */
        st = samc_layer_done(x, L, NULL, VOPS(L)->layer_norm(samc_layer_ctx(x, L), &ma->norm, &t, &n), err, 0, NULL,
                             NULL);
    if (!st)
        st = transpose01(&n, out, err);
    if (!st) {
        const samc_tensor *outs[] = {out};
        samc_layer_emit(x, L, sc, 1, slot0, outs);
    } else {
        samc_tensor_release(out);
    }
    samc_tensor_release(&t), samc_tensor_release(&qp), samc_tensor_release(&mem), samc_tensor_release(&mp);
    samc_tensor_release(&n);
    return st;
}

static samc_status mlp_layer(samc_exec *x, int def, const samc_scope *sc, const samc_mlp *mlp, const samc_tensor *in,
                             samc_tensor *out, samc_error *err)
{
    const samc_layer *L = samc_layer_get(x, &defs[def], 0);
    int64_t shape[SAMC_MAX_DIMS]; /* the input's leading dimensions, the last one the MLP's output */
    memcpy(shape, in->shape, sizeof shape);
    shape[in->ndim - 1] = mlp->layers[mlp->num_layers - 1].out;
    samc_status st = samc_tensor_alloc(out, in->ndim, shape, err);
    const samc_tensor *outs[] = {out};
    if (!st)
        st = samc_layer_done(x, L, sc, VOPS(L)->mlp(samc_layer_ctx(x, L), mlp, in, out), err, 1, slot0, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

samc_status samc_sam2_obj_ptr_proj(samc_exec *x, const samc_scope *sc, const samc_tensor *tokens, samc_tensor *out,
                                   samc_error *err)
{
    const samc_sam2_model *m = x->model;
    if (!m->has_obj_ptr_proj)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "this config has no obj_ptr_proj (use_obj_ptrs_in_encoder false)");
    return mlp_layer(x, OBJ_PTR_PROJ, sc, &m->obj_ptr_proj, tokens, out, err);
}

samc_status samc_sam2_obj_ptr_tpos_proj(samc_exec *x, const samc_tensor *pe, samc_tensor *out, samc_error *err)
{
    return mlp_layer(x, OBJ_PTR_TPOS_PROJ, NULL, &((const samc_sam2_model *)x->model)->obj_ptr_tpos_proj, pe, out,
                     err);
}

samc_status samc_sam2_mask_downsample(samc_exec *x, const samc_tensor *mask, samc_tensor *out, samc_error *err)
{
    const samc_layer *L = samc_layer_get(x, &defs[MASK_DOWNSAMPLE], 0);
    const samc_conv2d *c = &((const samc_sam2_model *)x->model)->mask_downsample;
    samc_status st = samc_tensor_allocv(out, err, 4, mask->shape[0], (int64_t)1, mask->shape[2] / c->stride,
                                        mask->shape[3] / c->stride);
    return st ? st : samc_layer_done(x, L, NULL, IOPS(L)->conv2d(samc_layer_ctx(x, L), c, mask, out), err, 0, NULL, NULL);
}

samc_status samc_sam2_maskmem_pos(const samc_sam2_model *m, samc_tensor *pos, samc_error *err)
{
    const int64_t e = m->emb;
    samc_status st = samc_tensor_allocv(pos, err, 4, (int64_t)1, (int64_t)m->mem_dim, e, e);
    if (!st && (st = samc_sine_pe_fill(&m->memory_encoder.pe, (int)e, (int)e, pos->data)))
        samc_tensor_release(pos);
    return st;
}

/* ---- isolated runners ------------------------------------------------------- */

static samc_status iso_downsampler(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    const samc_layer *L = samc_layer_get(x, &defs[DOWNSAMPLER], index);
    const samc_mask_downsampler *ds = &((const samc_sam2_model *)x->model)->memory_encoder.downsampler;
    samc_tensor t = {0};
    samc_status st = samc_io_tensor(in, "x", "0", &t, err);
    int64_t s = 1;
    for (int l = 0; l < ds->n_layers; l++)
        s *= ds->convs[l].stride;
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && t.ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "mask_downsampler input is not 4-D");
    if (!st && !(st = samc_tensor_allocv(y, err, 4, t.shape[0], (int64_t)ds->proj.cout, t.shape[2] / s, t.shape[3] / s)))
        st = samc_layer_done(x, L, NULL, VOPS(L)->mask_downsampler(samc_layer_ctx(x, L), ds, &t, y), err, 0, NULL, NULL);
    samc_tensor_release(&t);
    return st;
}

static samc_status iso_fuser(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out, samc_error *err)
{
    const samc_layer *L = samc_layer_get(x, &defs[FUSER], index);
    const samc_cxblock *blk = &((const samc_sam2_model *)x->model)->memory_encoder.fuser[index];
    samc_tensor t = {0};
    samc_status st = samc_io_tensor(in, "x", "0", &t, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && !(st = samc_tensor_alloc(y, t.ndim, t.shape, err)))
        st = samc_layer_done(x, L, NULL, VOPS(L)->cxblock(samc_layer_ctx(x, L), blk, &t, y), err, 0, NULL, NULL);
    samc_tensor_release(&t);
    return st;
}

static samc_status iso_memattn_layer(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                     samc_error *err)
{
    const samc_layer *L = samc_layer_get(x, &defs[MEMATTN_LAYER], index);
    const samc_memory_attention_layer *ly = &((const samc_sam2_model *)x->model)->memory_attention.layers[index];
    samc_tensor tgt = {0}, mem = {0}, pos = {0}, qp = {0};
    samc_status st = samc_io_tensor(in, "tgt", "0", &tgt, err);
    if (!st)
        st = samc_io_tensor(in, "memory", "1", &mem, err);
    if (!st && samc_io_has(in, "pos", "2"))
        st = samc_io_tensor(in, "pos", "2", &pos, err);
    if (!st && samc_io_has(in, "query_pos", "3"))
        st = samc_io_tensor(in, "query_pos", "3", &qp, err);
    const int nx = (int)samc_io_scalar_or(in, "num_k_exclude_rope", "4", 0);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && !(st = samc_tensor_alloc(y, tgt.ndim, tgt.shape, err)))
        st = samc_layer_done(x, L, NULL,
                             VOPS(L)->memory_attention_layer(samc_layer_ctx(x, L), ly, &tgt, &mem,
                                                             pos.data ? &pos : NULL, qp.data ? &qp : NULL, nx, y),
                             err, 0, NULL, NULL);
    samc_tensor_release(&tgt), samc_tensor_release(&mem), samc_tensor_release(&pos), samc_tensor_release(&qp);
    return st;
}

static samc_status iso_memory_encoder(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                      samc_error *err)
{
    (void)index;
    samc_tensor a = {0}, b = {0}, f = {0}, p = {0};
    samc_capture cap;
    samc_status st = samc_io_tensor(in, "pix_feat", "0", &a, err);
    if (!st)
        st = samc_io_tensor(in, "masks", "1", &b, err);
    const bool skip = samc_io_scalar_or(in, "skip_mask_sigmoid", "2", 0) != 0;
    samc_capture_begin(x, &cap, defs[MEMORY_ENCODER].pattern, out);
    if (!st)
        st = samc_sam2_memory_encoder(x, &samc_no_scope, &a, &b, skip, &f, &p, err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&a), samc_tensor_release(&b), samc_tensor_release(&f), samc_tensor_release(&p);
    return st;
}

/* curr / curr_pos may be one-element lists (the official call passes them so). */
static samc_status iso_memory_attention(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                        samc_error *err)
{
    (void)index;
    samc_tensor a = {0}, b = {0}, c = {0}, d = {0}, y = {0};
    samc_capture cap;
    const char *curr = samc_io_has(in, "curr.0", NULL) ? "curr.0" : "curr";
    const char *cpos = samc_io_has(in, "curr_pos.0", NULL) ? "curr_pos.0" : "curr_pos";
    samc_status st = samc_io_tensor(in, curr, "0", &a, err);
    if (!st)
        st = samc_io_tensor(in, "memory", "1", &b, err);
    if (!st && samc_io_has(in, cpos, "2"))
        st = samc_io_tensor(in, cpos, "2", &c, err);
    if (!st && samc_io_has(in, "memory_pos", "3"))
        st = samc_io_tensor(in, "memory_pos", "3", &d, err);
    const int n_ptr = (int)samc_io_scalar_or(in, "num_obj_ptr_tokens", "4", 0);
    samc_capture_begin(x, &cap, defs[MEMORY_ATTENTION].pattern, out);
    if (!st)
        st = samc_sam2_memory_attention(x, &samc_no_scope, &a, &b, c.data ? &c : NULL, d.data ? &d : NULL, n_ptr, &y,
                                        err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&a), samc_tensor_release(&b), samc_tensor_release(&c), samc_tensor_release(&d);
    samc_tensor_release(&y);
    return st;
}

static samc_status iso_obj_ptr_proj(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                    samc_error *err)
{
    (void)index;
    samc_tensor a = {0};
    samc_status st = samc_io_tensor(in, "input", "0", &a, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st)
        st = samc_sam2_obj_ptr_proj(x, &samc_no_scope, &a, y, err);
    samc_tensor_release(&a);
    return st;
}

static samc_status iso_obj_ptr_tpos_proj(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                         samc_error *err)
{
    (void)index;
    samc_tensor a = {0};
    samc_status st = samc_io_tensor(in, "0", NULL, &a, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st)
        st = samc_sam2_obj_ptr_tpos_proj(x, &a, y, err);
    samc_tensor_release(&a);
    return st;
}

static samc_status iso_mask_downsample(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                       samc_error *err)
{
    (void)index;
    samc_tensor a = {0};
    samc_status st = samc_io_tensor(in, "0", NULL, &a, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st)
        st = samc_sam2_mask_downsample(x, &a, y, err);
    samc_tensor_release(&a);
    return st;
}

/* ---- op-test inputs ------------------------------------------------------------ */

#define RND(name, lo, hi, ...)                                                                            \
    do {                                                                                                  \
        if (!samc_inputs_random(in, name, seed++, lo, hi, err, __VA_ARGS__))                               \
            return SAMC_ERR_NOMEM;                                                                        \
    } while (0)

static samc_status ex_downsampler(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                  samc_error *err)
{
    (void)index;
    const int64_t S = full ? ((const samc_sam2_model *)model)->cfg.image_size : 256;
    RND("x", 0, 1, 4, (int64_t)1, (int64_t)1, S, S);
    return SAMC_OK;
}

static samc_status ex_fuser(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index;
    const samc_sam2_model *m = model;
    const int64_t e = full ? m->emb : 32;
    RND("x", -2, 2, 4, (int64_t)1, (int64_t)m->memory_encoder.fuser[0].dwconv.cout, e, e);
    return SAMC_OK;
}

static samc_status ex_memory_encoder(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                     samc_error *err)
{
    (void)index;
    const samc_sam2_model *m = model;
    const int64_t e = full ? m->emb : 16, S = e * m->cfg.backbone_stride;
    RND("pix_feat", -2, 2, 4, (int64_t)1, (int64_t)m->memory_encoder.in_dim, e, e);
    RND("masks", -10, 10, 4, (int64_t)1, (int64_t)1, S, S);
    return samc_inputs_scalar(in, "skip_mask_sigmoid", 0, err);
}

/* One layer with the memory of `frames` frames and 16 pointer tokens. */
static samc_status ex_memattn_layer(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                    samc_error *err)
{
    const samc_sam2_model *m = model;
    const samc_memory_attention_layer *l = &m->memory_attention.layers[index];
    const int64_t e = full ? m->emb : 16, L = e * e, D = l->self_attn.attn.q.in, Dk = l->cross_attn.attn.k.in;
    const int64_t frames = full ? m->cfg.num_maskmem : 2, Nk = frames * L + 16;
    RND("tgt", -2, 2, 3, (int64_t)1, L, D);
    RND("memory", -2, 2, 3, (int64_t)1, Nk, Dk);
    RND("pos", -1, 1, 3, (int64_t)1, Nk, Dk);
    RND("query_pos", -1, 1, 3, (int64_t)1, L, D);
    return samc_inputs_scalar(in, "num_k_exclude_rope", 16, err);
}

static samc_status ex_memory_attention(const void *model, int index, uint64_t seed, bool full,
                                       samc_layer_inputs *in, samc_error *err)
{
    (void)index;
    const samc_sam2_model *m = model;
    const int64_t e = full ? m->emb : 16, L = e * e, D = m->memory_attention.d_model, Dk = m->mem_dim, Nk = L + 16;
    RND("curr", -2, 2, 3, L, (int64_t)1, D);
    RND("memory", -2, 2, 3, Nk, (int64_t)1, Dk);
    RND("curr_pos", -1, 1, 3, L, (int64_t)1, D);
    RND("memory_pos", -1, 1, 3, Nk, (int64_t)1, Dk);
    return samc_inputs_scalar(in, "num_obj_ptr_tokens", 16, err);
}

static samc_status ex_obj_ptr_proj(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                   samc_error *err)
{
    (void)index, (void)full;
    RND("input", -2, 2, 2, (int64_t)1, (int64_t)((const samc_sam2_model *)model)->cfg.neck.d_model);
    return SAMC_OK;
}

static samc_status ex_obj_ptr_tpos_proj(const void *model, int index, uint64_t seed, bool full,
                                        samc_layer_inputs *in, samc_error *err)
{
    (void)index, (void)full;
    RND("0", -1, 1, 2, (int64_t)15, (int64_t)((const samc_sam2_model *)model)->cfg.neck.d_model);
    return SAMC_OK;
}

static samc_status ex_mask_downsample(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                      samc_error *err)
{
    (void)index;
    const int64_t S = full ? ((const samc_sam2_model *)model)->cfg.image_size : 256;
    RND("0", 0, 1, 4, (int64_t)1, (int64_t)1, S, S);
    return SAMC_OK;
}
