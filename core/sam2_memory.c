/* sam2_memory.c - memory encoder, memory attention and object-pointer
 * projection wired from the video ops, traced under the official names. */
#include "sam2_memory.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "position_encoding.h"

static void emit(samc_sam2_model *m, const char *module, int n, const char *const *slots, const samc_tensor *const *t)
{
    if (m->trace)
        m->trace(m->trace_user, module, n, slots, t);
}

static const char *const slot0[] = {"0"};

static const samc_video_ops *vops(samc_sam2_model *m, const char *layer, samc_error *err)
{
    const samc_video_ops *o = samc_sam2_video_ops_for(m, layer);
    if (!o)
        samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s has no fast body yet; use --impl-override %s=ref", layer, layer);
    return o;
}

static samc_status run_fuser(samc_sam2_model *m, samc_tensor *x, samc_error *err)
{
    const samc_memory_encoder *e = &m->memory_encoder;
    char name[SAMC_LAYER_NAME_MAX];
    samc_tensor y = {0};
    for (int j = 0; j < e->n_fuser; j++) {
        snprintf(name, sizeof name, "memory_encoder.fuser.layers.%d", j);
        const samc_video_ops *o = vops(m, name, err);
        samc_status st = o ? samc_tensor_alloc(&y, x->ndim, x->shape, err) : SAMC_ERR_UNSUPPORTED;
        if (!st && (st = o->cxblock(&m->ctx, &e->fuser[j], x, &y)))
            st = samc_fail(err, st, "%s failed (%s)", name, samc_status_name(st));
        if (st) {
            samc_tensor_release(&y);
            return st;
        }
        const samc_tensor *t = &y;
        emit(m, name, 1, slot0, &t);
        samc_tensor_release(x);
        *x = y;
        memset(&y, 0, sizeof y);
    }
    return SAMC_OK;
}

samc_status samc_sam2_memory_encoder(samc_sam2_model *m, const samc_tensor *pix_feat, const samc_tensor *masks,
                                     bool skip_mask_sigmoid, samc_tensor *features, samc_tensor *pos,
                                     samc_error *err)
{
    const samc_memory_encoder *e = &m->memory_encoder;
    const int64_t B = pix_feat->shape[0], h = pix_feat->shape[2], w = pix_feat->shape[3];
    samc_tensor mk = {0}, ds = {0}, x = {0};
    memset(features, 0, sizeof *features), memset(pos, 0, sizeof *pos);
    samc_status st = samc_tensor_copy(&mk, masks, err);
    if (!st && !skip_mask_sigmoid)
        for (int64_t i = 0; i < samc_numel(&mk); i++)
            mk.data[i] = 1.0f / (1.0f + expf(-mk.data[i]));
    const char *dn = "memory_encoder.mask_downsampler";
    const samc_video_ops *o = st ? NULL : vops(m, dn, err);
    if (!st && !o)
        st = SAMC_ERR_UNSUPPORTED;
    if (!st && !(st = samc_tensor_allocv(&ds, err, 4, B, (int64_t)e->downsampler.proj.cout, h, w)) &&
        (st = o->mask_downsampler(&m->ctx, &e->downsampler, &mk, &ds)))
        st = samc_fail(err, st, "%s failed (%s)", dn, samc_status_name(st));
    if (!st) {
        const samc_tensor *t = &ds;
        emit(m, dn, 1, slot0, &t);
    }
    /* x = pix_feat_proj(pix_feat) + masks */
    if (!st && !(st = samc_tensor_allocv(&x, err, 4, B, (int64_t)e->in_dim, h, w)) &&
        (st = samc_sam2_ops_for(m, "memory_encoder")->conv2d(&m->ctx, &e->pix_feat_proj, pix_feat, &x)))
        st = samc_fail(err, st, "memory_encoder.pix_feat_proj failed");
    for (int64_t i = 0; !st && i < samc_numel(&x); i++)
        x.data[i] += ds.data[i];
    if (!st)
        st = run_fuser(m, &x, err);
    if (!st && e->has_out_proj) {
        if (!(st = samc_tensor_allocv(features, err, 4, B, (int64_t)e->out_dim, h, w)) &&
            (st = samc_sam2_ops_for(m, "memory_encoder")->conv2d(&m->ctx, &e->out_proj, &x, features)))
            st = samc_fail(err, st, "memory_encoder.out_proj failed");
    } else if (!st) {
        *features = x;
        memset(&x, 0, sizeof x);
    }
    if (!st && !(st = samc_tensor_alloc(pos, 4, features->shape, err)))
        for (int64_t b = 0; b < B; b++)
            samc_sine_pe_fill(&e->pe, (int)h, (int)w, pos->data + b * samc_numel(pos) / B);
    if (!st) {
        static const char *const slots[] = {"vision_features", "vision_pos_enc.0"};
        const samc_tensor *t[] = {features, pos};
        emit(m, "memory_encoder", 2, slots, t);
    } else {
        samc_tensor_release(features), samc_tensor_release(pos);
    }
    samc_tensor_release(&mk), samc_tensor_release(&ds), samc_tensor_release(&x);
    return st;
}

/* (L,B,C) <-> (B,L,C) */
static samc_status transpose01(const samc_tensor *x, samc_tensor *y, samc_error *err)
{
    const int64_t L = x->shape[0], B = x->shape[1], C = x->shape[2];
    samc_status st = samc_tensor_allocv(y, err, 3, B, L, C);
    for (int64_t l = 0; !st && l < L; l++)
        for (int64_t b = 0; b < B; b++)
            memcpy(y->data + (b * L + l) * C, x->data + (l * B + b) * C, (size_t)C * sizeof(float));
    return st;
}

samc_status samc_sam2_memory_attention(samc_sam2_model *m, const samc_tensor *curr, const samc_tensor *memory,
                                       const samc_tensor *curr_pos, const samc_tensor *memory_pos,
                                       int num_obj_ptr_tokens, samc_tensor *out, samc_error *err)
{
    const samc_memory_attention *ma = &m->memory_attention;
    samc_tensor x = {0}, qp = {0}, mem = {0}, mp = {0}, y = {0};
    memset(out, 0, sizeof *out);
    samc_status st = transpose01(curr, &x, err);
    if (!st && curr_pos)
        st = transpose01(curr_pos, &qp, err);
    if (!st && ma->pos_enc_at_input && curr_pos) /* output = curr + 0.1 * curr_pos */
        for (int64_t i = 0; i < samc_numel(&x); i++)
            x.data[i] = x.data[i] + 0.1f * qp.data[i];
    if (!st)
        st = transpose01(memory, &mem, err);
    if (!st && memory_pos)
        st = transpose01(memory_pos, &mp, err);
    char name[SAMC_LAYER_NAME_MAX];
    for (int i = 0; !st && i < ma->n_layers; i++) {
        snprintf(name, sizeof name, "memory_attention.layers.%d", i);
        const samc_video_ops *o = vops(m, name, err);
        if (!o || (st = samc_tensor_alloc(&y, x.ndim, x.shape, err))) {
            st = st ? st : SAMC_ERR_UNSUPPORTED;
            break;
        }
        if ((st = o->memory_attention_layer(&m->ctx, &ma->layers[i], &x, &mem, memory_pos ? &mp : NULL,
                                            curr_pos ? &qp : NULL, num_obj_ptr_tokens, &y))) {
            st = samc_fail(err, st, "%s failed (%s)", name, samc_status_name(st));
            break;
        }
        const samc_tensor *t = &y;
        emit(m, name, 1, slot0, &t);
        samc_tensor_release(&x);
        x = y;
        memset(&y, 0, sizeof y);
    }
    if (!st) { /* final norm, back to sequence-first */
        samc_tensor n = {0};
        const samc_video_ops *o = vops(m, "memory_attention", err);
        if (!o)
            st = SAMC_ERR_UNSUPPORTED;
        else if (!(st = samc_tensor_alloc(&n, x.ndim, x.shape, err)) && !(st = o->layer_norm(&m->ctx, &ma->norm, &x, &n)))
            st = transpose01(&n, out, err);
        samc_tensor_release(&n);
    }
    if (!st) {
        const samc_tensor *t = out;
        emit(m, "memory_attention", 1, slot0, &t);
    } else {
        samc_tensor_release(out);
    }
    samc_tensor_release(&x), samc_tensor_release(&qp), samc_tensor_release(&mem), samc_tensor_release(&mp);
    samc_tensor_release(&y);
    return st;
}

samc_status samc_sam2_obj_ptr_proj(samc_sam2_model *m, const samc_tensor *tokens, samc_tensor *out, samc_error *err)
{
    if (!m->has_obj_ptr_proj)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "this config has no obj_ptr_proj (use_obj_ptrs_in_encoder false)");
    const samc_video_ops *o = vops(m, "obj_ptr_proj", err);
    if (!o)
        return SAMC_ERR_UNSUPPORTED;
    samc_status st = samc_tensor_alloc(out, tokens->ndim, tokens->shape, err);
    if (!st && (st = o->mlp(&m->ctx, &m->obj_ptr_proj, tokens, out)))
        st = samc_fail(err, st, "obj_ptr_proj failed (%s)", samc_status_name(st));
    if (!st) {
        const samc_tensor *t = out;
        emit(m, "obj_ptr_proj", 1, slot0, &t);
    }
    return st;
}
