/* isolated_video.c - memory-path points run alone on their recorded inputs:
 * memory_encoder(.mask_downsampler, .fuser.layers.j), memory_attention
 * (.layers.i) and obj_ptr_proj. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/sam2_memory.h"
#include "core/sam2_track.h"
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

/* ---- @prepare_memory_conditioned_features from its recorded inputs ---- */

/* "output_dict.<kind>.<t>.<field>" -> kind (0 cond, 1 non-cond), t, field. */
static bool parse_entry(const char *name, int *kind, int *t, const char **field)
{
    static const char *const kinds[] = {"output_dict.cond_frame_outputs.", "output_dict.non_cond_frame_outputs."};
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(kinds[k]);
        if (strncmp(name, kinds[k], n))
            continue;
        char *end;
        long v = strtol(name + n, &end, 10);
        if (end == name + n || *end != '.' || v < 0 || v > 1000000)
            return false;
        *kind = k, *t = (int)v, *field = end + 1;
        return true;
    }
    return false;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The memory bank as recorded. Dict insertion order is not recorded: entries
 * go in frame order (the order in which a forward run inserts them). */
static samc_status load_bank(parity_run *r, int rec, samc_frame_dict *dicts, samc_error *err)
{
    char g[64], **names = NULL;
    int n = 0, frames[2][1024], nf[2] = {0, 0};
    snprintf(g, sizeof g, "/trace/%06d/in", r->recs[rec].index);
    samc_status st = samc_dump_list(r->dump, g, &names, &n, err);
    for (int i = 0; !st && i < n; i++) {
        int kind, t;
        const char *field;
        if (parse_entry(names[i], &kind, &t, &field) && !strcmp(field, "obj_ptr") && nf[kind] < 1024)
            frames[kind][nf[kind]++] = t;
    }
    for (int kind = 0; !st && kind < 2; kind++) {
        qsort(frames[kind], (size_t)nf[kind], sizeof(int), cmp_int);
        for (int i = 0; !st && i < nf[kind]; i++) {
            const char *kn = kind ? "non_cond_frame_outputs" : "cond_frame_outputs";
            char p[160];
            samc_frame_out o = {.frame_idx = frames[kind][i]};
            samc_tensor score = {0};
            snprintf(p, sizeof p, "output_dict.%s.%d.obj_ptr", kn, o.frame_idx);
            st = read_in(r, rec, p, NULL, &o.obj_ptr, err);
            snprintf(p, sizeof p, "output_dict.%s.%d.pred_masks", kn, o.frame_idx);
            if (!st)
                st = read_in(r, rec, p, NULL, &o.pred_masks, err);
            snprintf(p, sizeof p, "output_dict.%s.%d.maskmem_features", kn, o.frame_idx);
            if (!st && has_in(r, rec, p) && !(st = read_in(r, rec, p, NULL, &o.maskmem, err)))
                o.has_mem = true;
            snprintf(p, sizeof p, "output_dict.%s.%d.object_score_logits", kn, o.frame_idx);
            if (!st && has_in(r, rec, p) && !(st = read_in(r, rec, p, NULL, &score, err)))
                o.object_score = score.data[0];
            samc_tensor_release(&score);
            if (!st)
                st = samc_frame_dict_put(&dicts[kind], &o, err);
            else
                samc_frame_out_release(&o);
        }
    }
    samc_dump_free_names(names, n);
    return st;
}

/* (HW,1,C) tokens -> (1,C,h,w) */
static samc_status tokens_to_map(const samc_tensor *x, int h, int w, samc_tensor *y, samc_error *err)
{
    const int64_t C = x->shape[2], hw = (int64_t)h * w;
    if (x->ndim != 3 || x->shape[0] != hw || x->shape[1] != 1)
        return samc_fail(err, SAMC_ERR_SHAPE, "vision features are not (%lld,1,C)", (long long)hw);
    samc_status st = samc_tensor_allocv(y, err, 4, (int64_t)1, C, (int64_t)h, (int64_t)w);
    for (int64_t i = 0; !st && i < hw; i++)
        for (int64_t c = 0; c < C; c++)
            y->data[c * hw + i] = x->data[i * C + c];
    return st;
}

static samc_status run_prepare_memory(parity_run *r, int rec, outputs *o, samc_error *err)
{
    samc_sam2_model *m = r->model;
    samc_frame_dict dicts[2] = {{0}};
    samc_tensor feats = {0}, pos = {0};
    samc_sam2_features f = {0};
    double frame = 0, init = 0, nframes = 1, rev = 0;
    samc_status st = in_attr(r, rec, "frame_idx", NULL, &frame, NULL, err);
    if (!st)
        st = in_attr(r, rec, "is_init_cond_frame", NULL, &init, NULL, err);
    if (!st)
        st = in_attr(r, rec, "num_frames", NULL, &nframes, NULL, err);
    if (!st && in_attr(r, rec, "track_in_reverse", NULL, &rev, NULL, NULL))
        rev = 0;
    if (!st)
        st = read_in(r, rec, "current_vision_feats.0", NULL, &feats, err);
    if (!st)
        st = read_in(r, rec, "current_vision_pos_embeds.0", NULL, &pos, err);
    if (!st && !(st = tokens_to_map(&feats, m->emb, m->emb, &f.vision_features, err)) &&
        !(st = tokens_to_map(&pos, m->emb, m->emb, &f.vision_pos, err)) &&
        !(st = samc_tensor_copy(&f.image_embed, &f.vision_features, err))) {
        const int64_t hw = (int64_t)m->emb * m->emb; /* + no_mem_embed, as set_image / init frames do */
        for (int64_t c = 0; c < f.image_embed.shape[1]; c++)
            for (int64_t i = 0; i < hw; i++)
                f.image_embed.data[c * hw + i] += m->no_mem_embed[c];
        st = load_bank(r, rec, dicts, err);
    }
    if (!st) {
        samc_track_in in = {.frame_idx = (int)frame, .is_init_cond_frame = init != 0, .f = &f, .n_points = -1,
                            .cond = &dicts[0], .non_cond = &dicts[1], .num_frames = (int)nframes, .reverse = rev != 0};
        samc_tensor pix = {0};
        o->target = "@prepare_memory_conditioned_features";
        samc_sam2_set_trace(m, capture, o);
        st = samc_sam2_prepare_memory(m, &in, &pix, err);
        samc_sam2_set_trace(m, NULL, NULL);
        samc_tensor_release(&pix);
        for (int i = o->n - 1; i >= 0; i--) /* keep the output; inputs were read from the dump */
            if (!strncmp(o->names[i], "in/", 3)) {
                samc_tensor_release(&o->t[i]);
                memmove(o->names + i, o->names + i + 1, (size_t)(o->n - i - 1) * sizeof o->names[0]);
                memmove(o->t + i, o->t + i + 1, (size_t)(o->n - i - 1) * sizeof o->t[0]);
                o->n--;
            }
    }
    samc_frame_dict_free(&dicts[0]), samc_frame_dict_free(&dicts[1]);
    samc_tensor_release(&feats), samc_tensor_release(&pos);
    samc_sam2_features_release(&f);
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
    if (!strcmp(module, "@prepare_memory_conditioned_features"))
        return run_prepare_memory(r, rec, o, err);
    if (!strcmp(module, "memory_encoder") || !strcmp(module, "memory_attention") || !strcmp(module, "obj_ptr_proj"))
        return run_video_composite(r, rec, module, o, err);
    return samc_fail(err, SAMC_ERR_KEY, "%s is not a memory-path point", module);
}

