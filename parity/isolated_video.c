/* isolated_video.c - memory-path points run alone on their recorded inputs:
 * memory_encoder(.mask_downsampler, .fuser.layers.j), memory_attention
 * (.layers.i) and obj_ptr_proj. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/sam2_memory.h"
#include "isolated_internal.h"

static samc_status run_downsampler(parity_run *r, int rec, outputs *o, samc_error *err)
{
    samc_sam2_model *m = r->model;
    const samc_mask_downsampler *ds = &m->memory_encoder.downsampler;
    const samc_video_ops *ops = samc_sam2_video_ops_for(m, "memory_encoder.mask_downsampler");
    samc_tensor x = {0};
    samc_status st = ops ? read_in(r, rec, "x", "0", &x, err) : samc_fail(err, SAMC_ERR_UNSUPPORTED, "no fast body");
    int64_t s = 1;
    for (int l = 0; l < ds->n_layers; l++)
        s *= ds->convs[l].stride;
    samc_tensor *y = out_slot(o, "0");
    if (!st && x.ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "mask_downsampler input is not 4-D");
    if (!st && !(st = samc_tensor_allocv(y, err, 4, x.shape[0], (int64_t)ds->proj.cout, x.shape[2] / s, x.shape[3] / s)))
        st = ops->mask_downsampler(&m->ctx, ds, &x, y);
    samc_tensor_release(&x);
    return st;
}

static samc_status run_cxblock(parity_run *r, int rec, int j, outputs *o, samc_error *err)
{
    samc_sam2_model *m = r->model;
    char name[64];
    snprintf(name, sizeof name, "memory_encoder.fuser.layers.%d", j);
    const samc_video_ops *ops = samc_sam2_video_ops_for(m, name);
    samc_tensor x = {0};
    samc_status st = ops ? read_in(r, rec, "x", "0", &x, err) : samc_fail(err, SAMC_ERR_UNSUPPORTED, "no fast body");
    samc_tensor *y = out_slot(o, "0");
    if (!st && !(st = samc_tensor_alloc(y, x.ndim, x.shape, err)))
        st = ops->cxblock(&m->ctx, &m->memory_encoder.fuser[j], &x, y);
    samc_tensor_release(&x);
    return st;
}

static samc_status run_mem_attn_layer(parity_run *r, int rec, int i, outputs *o, samc_error *err)
{
    samc_sam2_model *m = r->model;
    char name[64];
    snprintf(name, sizeof name, "memory_attention.layers.%d", i);
    const samc_video_ops *ops = samc_sam2_video_ops_for(m, name);
    samc_tensor tgt = {0}, mem = {0}, pos = {0}, qp = {0};
    double nx = 0;
    bool none = false;
    samc_status st = ops ? read_in(r, rec, "tgt", "0", &tgt, err) : samc_fail(err, SAMC_ERR_UNSUPPORTED, "no fast body");
    if (!st)
        st = read_in(r, rec, "memory", "1", &mem, err);
    if (!st && (has_in(r, rec, "pos") || has_in(r, rec, "2")))
        st = read_in(r, rec, "pos", "2", &pos, err);
    if (!st && (has_in(r, rec, "query_pos") || has_in(r, rec, "3")))
        st = read_in(r, rec, "query_pos", "3", &qp, err);
    if (!st && in_attr(r, rec, "num_k_exclude_rope", "4", &nx, &none, NULL) != SAMC_OK)
        nx = 0; /* absent: the default 0 */
    samc_tensor *y = out_slot(o, "0");
    if (!st && !(st = samc_tensor_alloc(y, tgt.ndim, tgt.shape, err)))
        st = ops->memory_attention_layer(&m->ctx, &m->memory_attention.layers[i], &tgt, &mem, pos.data ? &pos : NULL,
                                         qp.data ? &qp : NULL, (int)nx, y);
    samc_tensor_release(&tgt), samc_tensor_release(&mem), samc_tensor_release(&pos), samc_tensor_release(&qp);
    return st;
}

/* Composites: run with a capturing trace from their recorded inputs. */
static samc_status run_video_composite(parity_run *r, int rec, const char *module, outputs *o, samc_error *err)
{
    samc_sam2_model *m = r->model;
    samc_tensor a = {0}, b = {0}, c = {0}, d = {0}, y = {0}, z = {0};
    double v = 0;
    bool none = false;
    samc_status st;
    o->target = module;
    samc_sam2_set_trace(m, capture, o);
    if (!strcmp(module, "memory_encoder")) {
        st = read_in(r, rec, "pix_feat", "0", &a, err);
        if (!st)
            st = read_in(r, rec, "masks", "1", &b, err);
        if (!st && in_attr(r, rec, "skip_mask_sigmoid", "2", &v, &none, NULL) != SAMC_OK)
            v = 0;
        if (!st)
            st = samc_sam2_memory_encoder(m, &a, &b, v != 0, &y, &z, err);
    } else if (!strcmp(module, "memory_attention")) {
        /* curr / curr_pos may be one-element lists (the official call passes them so) */
        st = read_in(r, rec, has_in(r, rec, "curr.0") ? "curr.0" : "curr", "0", &a, err);
        if (!st)
            st = read_in(r, rec, "memory", "1", &b, err);
        if (!st && (has_in(r, rec, "curr_pos") || has_in(r, rec, "curr_pos.0") || has_in(r, rec, "2")))
            st = read_in(r, rec, has_in(r, rec, "curr_pos.0") ? "curr_pos.0" : "curr_pos", "2", &c, err);
        if (!st && (has_in(r, rec, "memory_pos") || has_in(r, rec, "3")))
            st = read_in(r, rec, "memory_pos", "3", &d, err);
        if (!st && in_attr(r, rec, "num_obj_ptr_tokens", "4", &v, &none, NULL) != SAMC_OK)
            v = 0;
        if (!st)
            st = samc_sam2_memory_attention(m, &a, &b, c.data ? &c : NULL, d.data ? &d : NULL, (int)v, &y, err);
    } else { /* obj_ptr_proj */
        st = read_in(r, rec, "input", "0", &a, err);
        if (!st)
            st = samc_sam2_obj_ptr_proj(m, &a, &y, err);
    }
    samc_sam2_set_trace(m, NULL, NULL);
    samc_tensor *all[] = {&a, &b, &c, &d, &y, &z};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        samc_tensor_release(all[i]);
    if (!st && o->n == 0)
        st = samc_fail(err, SAMC_ERR_INTERNAL, "%s produced no trace output", module);
    return st;
}

samc_status run_video_point(parity_run *r, int rec, const char *module, outputs *o, samc_error *err)
{
    int idx = -1;
    if (!strcmp(module, "memory_encoder.mask_downsampler"))
        return run_downsampler(r, rec, o, err);
    if (sscanf(module, "memory_encoder.fuser.layers.%d", &idx) == 1)
        return run_cxblock(r, rec, idx, o, err);
    if (sscanf(module, "memory_attention.layers.%d", &idx) == 1)
        return run_mem_attn_layer(r, rec, idx, o, err);
    if (!strcmp(module, "memory_encoder") || !strcmp(module, "memory_attention") || !strcmp(module, "obj_ptr_proj"))
        return run_video_composite(r, rec, module, o, err);
    return samc_fail(err, SAMC_ERR_KEY, "%s is not a memory-path point", module);
}
