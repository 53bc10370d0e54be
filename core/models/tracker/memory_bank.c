/* SPDX-License-Identifier: Apache-2.0 */
/* memory_bank.c - SAM2Base._prepare_memory_conditioned_features: the
 * memory tokens (conditioning frames, the previous num_maskmem-1 frames,
 * object pointers) and memory attention over them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/memory.h"
#include "core/models/tracker/sam_heads.h"
#include "core/models/tracker/track_step.h"

enum { PREPARE, N_ROWS };
static samc_isolated_body iso_prepare;
static const samc_layer_def rows[N_ROWS] = {
    /* a composite: memory attention over the memory it assembles */
    [PREPARE] = {.pattern = "@prepare_memory_conditioned_features", .parity = true, .isolated = iso_prepare},
};
/* A row of the tracker (its instance; no weights of its own). */
const samc_part_def samc_memory_bank_part = {"memory bank", rows, N_ROWS, NULL};

typedef struct mem_build { /* sequence-first (Nk, 1, mem_dim) memory and its pos */
    float *mem, *pos;
    int64_t n, cap;
    int mem_dim;
} mem_build;

static samc_status mem_reserve(mem_build *b, int64_t more)
{
    if (b->n + more <= b->cap)
        return SAMC_OK;
    int64_t cap = (b->n + more) * 2;
    float *m = realloc(b->mem, (size_t)(cap * b->mem_dim) * sizeof *m);
    if (m)
        b->mem = m;
    float *p = m ? realloc(b->pos, (size_t)(cap * b->mem_dim) * sizeof *p) : NULL;
    if (!m || !p)
        return SAMC_ERR_NOMEM;
    b->pos = p, b->cap = cap;
    return SAMC_OK;
}

/* A stored frame's memory: features (1,c,h,w) -> tokens, pos + tpos row. */
static samc_status add_frame(mem_build *b, const samc_frame_out *o, const samc_tensor *pos_enc, const float *tpos)
{
    const int64_t c = b->mem_dim, hw = o->maskmem.shape[2] * o->maskmem.shape[3];
    if (mem_reserve(b, hw))
        return SAMC_ERR_NOMEM;
    for (int64_t i = 0; i < hw; i++)
        for (int64_t k = 0; k < c; k++) {
            b->mem[(b->n + i) * c + k] = o->maskmem.data[k * hw + i];
            b->pos[(b->n + i) * c + k] = pos_enc->data[k * hw + i] + tpos[k];
        }
    b->n += hw;
    return SAMC_OK;
}

/* select_closest_cond_frames: every cond frame when max == -1 or there are
 * at most max; otherwise (keep_first: the earliest before the frame, else
 * the latest after it,) the closest before, the closest at/after, then the
 * temporally closest others. `sel` marks selected entries of `cond`, `order`
 * lists them in the order of the official selected dict; returns their count. */
static int select_cond(const samc_frame_dict *cond, int frame_idx, int max_n, bool keep_first, bool *sel, int *order)
{
    int n = 0;
    if (max_n == -1 || cond->n <= max_n) {
        for (int i = 0; i < cond->n; i++)
            sel[i] = true, order[n++] = i;
        return n;
    }
    int first = -1, first_after = -1, before = -1, after = -1;
    for (int i = 0; i < cond->n; i++) {
        sel[i] = false;
        const int t = cond->items[i].frame_idx;
        if (t < frame_idx && (first < 0 || t < cond->items[first].frame_idx))
            first = i;
        if (t > frame_idx && (first_after < 0 || t > cond->items[first_after].frame_idx))
            first_after = i;
        if (t < frame_idx && (before < 0 || t > cond->items[before].frame_idx))
            before = i;
        if (t >= frame_idx && (after < 0 || t < cond->items[after].frame_idx))
            after = i;
    }
    const int picks[3] = {keep_first ? (first >= 0 ? first : first_after) : -1, before, after};
    for (int k = 0; k < 3; k++)
        if (picks[k] >= 0 && !sel[picks[k]])
            sel[picks[k]] = true, order[n++] = picks[k];
    while (n < max_n) { /* sorted by |t - frame_idx|, stable in dict order */
        int best = -1;
        for (int i = 0; i < cond->n; i++)
            if (!sel[i] && (best < 0 || abs(cond->items[i].frame_idx - frame_idx) <
                                            abs(cond->items[best].frame_idx - frame_idx)))
                best = i;
        if (best < 0)
            break;
        sel[best] = true, order[n++] = best;
    }
    return n;
}

static const samc_frame_out *unselected(const samc_frame_dict *cond, const bool *sel, int t)
{
    for (int i = 0; i < cond->n; i++)
        if (!sel[i] && cond->items[i].frame_idx == t)
            return &cond->items[i];
    return NULL;
}

/* Which stored outputs the memory reads: the selected conditioning frames
 * (flags over `cond` and their order in the official selected dict) and,
 * with memory selection, frame_filter's frames (ascending in time forward,
 * descending in reverse: the nearest last). */
typedef struct mem_select {
    bool *sel;
    int *order, n_order;
    bool use_valid;
    int valid[SAMC_TRACKER_MAX_VALID], n_valid;
} mem_select;

/* get_1d_sine_pe(pos / t_diff_max, dim) then obj_ptr_tpos_proj, float32. */
static samc_status ptr_pos(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc, const int *d, int n,
                           int t_diff_max, float *out, samc_error *err)
{
    const int C = tr->cfg.d_model, mem = tr->mem_dim;
    const int dim = tr->has_obj_ptr_tpos_proj ? C : mem, pe_dim = dim / 2;
    float *pe = malloc((size_t)n * dim * sizeof *pe);
    if (!pe)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        const float t = (float)d[i] / (float)t_diff_max; /* int64 tensor / int -> float32 */
        for (int k = 0; k < pe_dim; k++) {
            const float e = 2.0f * floorf((float)k / 2.0f) / (float)pe_dim;
            const float v = t / powf(10000.0f, e);
            pe[(size_t)i * dim + k] = sinf(v);
            pe[(size_t)i * dim + pe_dim + k] = cosf(v);
        }
    }
    samc_status st = SAMC_OK;
    if (tr->has_obj_ptr_tpos_proj) {
        const int64_t sh_in[2] = {n, dim};
        samc_tensor a = samc_tensor_view(pe, 2, sh_in), b = {0};
        if (!(st = samc_tracker_obj_ptr_tpos_proj(x, tr, sc, &a, &b, err)))
            memcpy(out, b.data, (size_t)n * mem * sizeof *out);
        samc_tensor_release(&b);
    } else {
        memcpy(out, pe, (size_t)n * mem * sizeof *out);
    }
    free(pe);
    return st;
}

/* The frame t_diff steps back (forward; ahead in reverse) whose pointer or
 * memory may be read, or -1 past the video's (or the selection's) end. */
static int frame_back(const samc_track_in *in, const mem_select *ms, int t_diff)
{
    if (ms->use_valid)
        return t_diff < ms->n_valid ? ms->valid[ms->n_valid - t_diff] : -1;
    const int t = in->reverse ? in->frame_idx + t_diff : in->frame_idx - t_diff;
    return t < 0 || t >= in->num_frames ? -1 : t;
}

/* Object pointers of past selected cond frames and of up to max_obj_ptrs-1
 * recent frames, each split into C/mem_dim tokens sharing one pos. */
static samc_status add_pointers(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                const samc_track_in *in, const mem_select *ms, mem_build *b, int *num_ptr_tokens,
                                samc_error *err)
{
    const samc_tracker_config *c = &tr->cfg;
    const int C = c->d_model, mem = tr->mem_dim, split = C / mem;
    const int max_ptrs = in->num_frames < c->max_obj_ptrs_in_encoder ? in->num_frames : c->max_obj_ptrs_in_encoder;
    const int sign = in->reverse ? -1 : 1, cap = in->cond->n + max_ptrs;
    int *d = malloc((size_t)cap * sizeof *d), n = 0;
    const float **ptr = malloc((size_t)cap * sizeof *ptr);
    if (!d || !ptr) {
        free(d), free(ptr);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < ms->n_order; k++) {
        const samc_frame_out *o = &in->cond->items[ms->order[k]];
        const int t = o->frame_idx;
        const bool past = in->reverse ? t >= in->frame_idx : t <= in->frame_idx;
        if (c->only_obj_ptrs_in_the_past_for_eval && !past)
            continue;
        d[n] = c->use_signed_tpos_enc_to_obj_ptrs ? (in->frame_idx - t) * sign : abs(in->frame_idx - t);
        ptr[n++] = o->obj_ptr.data;
    }
    for (int td = 1; td < max_ptrs; td++) {
        const int t = frame_back(in, ms, td);
        if (t < 0)
            break;
        const samc_frame_out *o = samc_frame_dict_get(in->non_cond, t);
        if (!o)
            o = unselected(in->cond, ms->sel, t);
        if (o)
            d[n] = td, ptr[n++] = o->obj_ptr.data;
    }
    samc_status st = SAMC_OK;
    float *pos = n ? calloc((size_t)n * mem, sizeof *pos) : NULL;
    if (n && !pos)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st && n && c->add_tpos_enc_to_obj_ptrs)
        st = ptr_pos(x, tr, sc, d, n, max_ptrs - 1, pos, err);
    if (!st && n && mem_reserve(b, (int64_t)n * split))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < n; i++) /* (N,1,C) -> (N*split, 1, mem), pos repeated */
        for (int s = 0; s < split; s++) {
            memcpy(b->mem + (b->n) * mem, ptr[i] + s * mem, (size_t)mem * sizeof(float));
            memcpy(b->pos + (b->n) * mem, pos + (size_t)i * mem, (size_t)mem * sizeof(float));
            b->n++;
        }
    *num_ptr_tokens = n * split;
    free(d), free(ptr), free(pos);
    return st;
}

/* The memory t_rel frames back: with memory selection frame_filter's
 * valid[-t_rel] (none past its start), else t_rel = 1 the adjacent frame
 * and every r-th frame before it (-1: none). */
static int memory_frame(const samc_tracker_model *tr, const samc_track_in *in, const mem_select *ms, int t_rel)
{
    const int r = tr->cfg.memory_temporal_stride_for_eval;
    if (ms->use_valid)
        return t_rel > ms->n_valid ? -1 : ms->valid[ms->n_valid - t_rel];
    if (t_rel == 1)
        return in->reverse ? in->frame_idx + 1 : in->frame_idx - 1;
    if (!in->reverse) /* Python floor division */
        return (int)floor((double)(in->frame_idx - 2) / r) * r - (t_rel - 2) * r;
    return -(int)floor((double)(-(in->frame_idx + 2)) / r) * r + (t_rel - 2) * r;
}

/* The selected conditioning frames (t_pos 0), then frames t_rel =
 * num_maskmem-1 .. 1 back, skipping missing ones. */
static samc_status add_frames(const samc_tracker_model *tr, const samc_track_in *in, const mem_select *ms,
                              const samc_tensor *pe, mem_build *b)
{
    const int nm = tr->cfg.num_maskmem;
    for (int k = 0; k < ms->n_order; k++) {
        const samc_frame_out *o = &in->cond->items[ms->order[k]];
        if (o->has_mem && add_frame(b, o, pe, tr->maskmem_tpos_enc + (size_t)(nm - 1) * tr->mem_dim))
            return SAMC_ERR_NOMEM;
    }
    for (int t_pos = 1; t_pos < nm; t_pos++) {
        const int prev = memory_frame(tr, in, ms, nm - t_pos);
        if (prev < 0)
            continue;
        const samc_frame_out *o = samc_frame_dict_get(in->non_cond, prev);
        if (!o)
            o = unselected(in->cond, ms->sel, prev);
        if (o && o->has_mem && add_frame(b, o, pe, tr->maskmem_tpos_enc + (size_t)(nm - t_pos - 1) * tr->mem_dim))
            return SAMC_ERR_NOMEM;
    }
    return SAMC_OK;
}

static samc_status init_frame_feat(const samc_frame_features *f, samc_tensor *pix, samc_error *err)
{
    /* directly_add_no_mem_embed: the feature + no_mem_embed (= the image embed) */
    return samc_tensor_copy(pix, &f->image_embed, err);
}

static samc_status attend(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc, const samc_track_in *in,
                          mem_build *b, int n_ptr, samc_tensor *pix, samc_error *err)
{
    const samc_tensor *vf = &in->f->vision_features, *vp = &in->f->vision_pos;
    const int64_t C = vf->shape[1], hw = vf->shape[2] * vf->shape[3], mem = tr->mem_dim;
    samc_tensor curr = {0}, cpos = {0}, out = {0};
    const int64_t mshape[3] = {b->n, 1, mem};
    samc_tensor memory = samc_tensor_view(b->mem, 3, mshape), mpos = samc_tensor_view(b->pos, 3, mshape);
    samc_status st = samc_tensor_allocv(&curr, err, 3, hw, (int64_t)1, C);
    if (!st)
        st = samc_tensor_allocv(&cpos, err, 3, hw, (int64_t)1, C);
    for (int64_t i = 0; !st && i < hw; i++) /* (1,C,h,w) -> (hw,1,C) */
        for (int64_t k = 0; k < C; k++)
            curr.data[i * C + k] = vf->data[k * hw + i], cpos.data[i * C + k] = vp->data[k * hw + i];
    if (!st)
        st = samc_memory_attention_forward(x, &tr->memory_attention, sc, &curr, &memory, &cpos, &mpos, n_ptr, &out,
                                           err);
    if (!st && !(st = samc_tensor_alloc(pix, 4, vf->shape, err)))
        for (int64_t i = 0; i < hw; i++)
            for (int64_t k = 0; k < C; k++)
                pix->data[k * hw + i] = out.data[i * C + k];
    samc_tensor_release(&curr), samc_tensor_release(&cpos), samc_tensor_release(&out);
    return st;
}

/* The trace record: out/0 and, as "in/..." slots, the object's memory bank
 * as the official call received it (output_dict.<kind>.<t>.<field>). */
static samc_status trace_prepare(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc, const samc_track_in *in,
                                 const samc_tensor *pix, samc_error *err)
{
    const int n_entries = in->cond->n + in->non_cond->n, max_slots = 1 + 3 * n_entries;
    char (*names)[96] = malloc((size_t)max_slots * sizeof *names);
    const char **slots = malloc((size_t)max_slots * sizeof *slots);
    const samc_tensor **t = malloc((size_t)max_slots * sizeof *t);
    if (!names || !slots || !t) {
        free(names), free(slots), free(t);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    int n = 0;
    slots[n] = "0", t[n++] = pix;
    for (int kind = 0; kind < 2; kind++) {
        const samc_frame_dict *d = kind ? in->non_cond : in->cond;
        const char *kn = kind ? "non_cond_frame_outputs" : "cond_frame_outputs";
        for (int i = 0; i < d->n; i++) {
            const samc_frame_out *o = &d->items[i];
            if (o->has_mem) {
                snprintf(names[n], 96, "in/output_dict.%s.%d.maskmem_features", kn, o->frame_idx);
                slots[n] = names[n], t[n++] = &o->maskmem;
            }
            snprintf(names[n], 96, "in/output_dict.%s.%d.pred_masks", kn, o->frame_idx);
            slots[n] = names[n], t[n++] = &o->pred_masks;
            snprintf(names[n], 96, "in/output_dict.%s.%d.obj_ptr", kn, o->frame_idx);
            slots[n] = names[n], t[n++] = &o->obj_ptr;
        }
    }
    samc_layer_emit(x, samc_part_layer(x, tr, &rows[PREPARE], 0), sc, n, slots, t);
    free(names), free(slots), free(t);
    return SAMC_OK;
}

const char *samc_memory_bank_name(const samc_exec *x, const samc_tracker_model *tr)
{
    return samc_part_layer(x, tr, &rows[PREPARE], 0)->name;
}

/* The memory of a frame that is not an initial conditioning frame: the
 * stored outputs it reads, their tokens and memory attention over them. */
static samc_status attend_memory(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                 const samc_track_in *in, samc_tensor *pix, samc_error *err)
{
    const samc_tracker_config *c = &tr->cfg;
    mem_select ms = {.sel = calloc((size_t)in->cond->n, sizeof(bool)),
                     .order = malloc((size_t)in->cond->n * sizeof(int))};
    mem_build b = {.mem_dim = tr->mem_dim};
    samc_tensor pe = {0};
    int n_ptr = 0;
    samc_status st = ms.sel && ms.order ? samc_memory_encoder_pos(x, &tr->memory_encoder, &pe, err)
                                        : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st) {
        ms.n_order = select_cond(in->cond, in->frame_idx, c->max_cond_frames_in_attn, c->sam3.keep_first_cond_frame,
                                 ms.sel, ms.order);
        ms.use_valid = c->sam3.use_memory_selection;
        if (ms.use_valid)
            ms.n_valid = samc_tracker_frame_filter(x, tr, sc, in, ms.valid);
        if (add_frames(tr, in, &ms, &pe, &b))
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory (memory tokens)");
    }
    if (!st && c->use_obj_ptrs_in_encoder)
        st = add_pointers(x, tr, sc, in, &ms, &b, &n_ptr, err);
    if (!st)
        st = attend(x, tr, sc, in, &b, n_ptr, pix, err);
    free(ms.sel), free(ms.order), free(b.mem), free(b.pos);
    samc_tensor_release(&pe);
    return st;
}

samc_status samc_tracker_prepare_memory(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                        const samc_track_in *in, samc_tensor *pix, samc_error *err)
{
    const samc_tracker_config *c = &tr->cfg;
    samc_status st;
    memset(pix, 0, sizeof *pix);
    if (c->num_maskmem == 0)
        st = samc_tensor_copy(pix, &in->f->vision_features, err);
    else if ((in->is_init_cond_frame || in->no_memory) && c->directly_add_no_mem_embed)
        st = init_frame_feat(in->f, pix, err); /* Sam3TrackerBase: also without use_prev_mem_frame */
    else if (in->is_init_cond_frame || in->no_memory)
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "configs without directly_add_no_mem_embed are not supported");
    else if (in->cond->n == 0)
        st = samc_fail(err, SAMC_ERR_ARG, "frame %d: the object has no conditioning frame", in->frame_idx);
    else
        st = attend_memory(x, tr, sc, in, pix, err);
    if (!st && x->trace)
        st = trace_prepare(x, tr, sc, in, pix, err);
    return st;
}

/* ---- the isolated runner: the recorded memory bank -------------------------- */

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

static samc_status load_entry(const samc_layer_io *in, int kind, int t, samc_frame_dict *dict, samc_error *err)
{
    const char *kn = kind ? "non_cond_frame_outputs" : "cond_frame_outputs";
    char p[160];
    samc_frame_out o = {.frame_idx = t};
    samc_tensor score = {0};
    snprintf(p, sizeof p, "output_dict.%s.%d.obj_ptr", kn, t);
    samc_status st = samc_io_tensor(in, p, NULL, &o.obj_ptr, err);
    snprintf(p, sizeof p, "output_dict.%s.%d.pred_masks", kn, t);
    if (!st)
        st = samc_io_tensor(in, p, NULL, &o.pred_masks, err);
    snprintf(p, sizeof p, "output_dict.%s.%d.maskmem_features", kn, t);
    if (!st && samc_io_has(in, p, NULL) && !(st = samc_io_tensor(in, p, NULL, &o.maskmem, err)))
        o.has_mem = true;
    snprintf(p, sizeof p, "output_dict.%s.%d.object_score_logits", kn, t);
    if (!st && samc_io_has(in, p, NULL) && !(st = samc_io_tensor(in, p, NULL, &score, err)))
        o.object_score = score.data[0];
    samc_tensor_release(&score);
    if (!st)
        st = samc_frame_dict_put(dict, &o, err);
    else
        samc_frame_out_release(&o);
    return st;
}

/* The memory bank as recorded. Dict insertion order is not recorded: entries
 * go in frame order (the order in which a forward run inserts them). */
static samc_status load_bank(const samc_layer_io *in, samc_frame_dict *dicts, samc_error *err)
{
    char **names = NULL;
    int n = 0, frames[2][1024], nf[2] = {0, 0};
    samc_status st = in->names(in->user, &names, &n, err);
    for (int i = 0; !st && i < n; i++) {
        int kind, t;
        const char *field;
        if (parse_entry(names[i], &kind, &t, &field) && !strcmp(field, "obj_ptr") && nf[kind] < 1024)
            frames[kind][nf[kind]++] = t;
    }
    samc_layer_io_free_names(names, n);
    for (int kind = 0; !st && kind < 2; kind++) {
        qsort(frames[kind], (size_t)nf[kind], sizeof(int), cmp_int);
        for (int i = 0; !st && i < nf[kind]; i++)
            st = load_entry(in, kind, frames[kind][i], &dicts[kind], err);
    }
    return st;
}

/* (HW,1,C) tokens -> (1,C,h,w) */
static samc_status tokens_to_map(const samc_tensor *t, int h, int w, samc_tensor *y, samc_error *err)
{
    const int64_t C = t->shape[2], hw = (int64_t)h * w;
    if (t->ndim != 3 || t->shape[0] != hw || t->shape[1] != 1)
        return samc_fail(err, SAMC_ERR_SHAPE, "vision features are not (%lld,1,C)", (long long)hw);
    samc_status st = samc_tensor_allocv(y, err, 4, (int64_t)1, C, (int64_t)h, (int64_t)w);
    for (int64_t i = 0; !st && i < hw; i++)
        for (int64_t c = 0; c < C; c++)
            y->data[c * hw + i] = t->data[i * C + c];
    return st;
}

/* The features the call received, as set_image / init frames make them. */
static samc_status recorded_features(const samc_tracker_model *tr, const samc_layer_io *in, samc_frame_features *f,
                                     samc_error *err)
{
    samc_tensor feats = {0}, pos = {0};
    samc_status st = samc_io_tensor(in, "current_vision_feats.0", NULL, &feats, err);
    if (!st)
        st = samc_io_tensor(in, "current_vision_pos_embeds.0", NULL, &pos, err);
    if (!st && !(st = tokens_to_map(&feats, tr->emb, tr->emb, &f->vision_features, err)) &&
        !(st = tokens_to_map(&pos, tr->emb, tr->emb, &f->vision_pos, err)) &&
        !(st = samc_tensor_copy(&f->image_embed, &f->vision_features, err))) {
        const int64_t hw = (int64_t)tr->emb * tr->emb; /* + no_mem_embed */
        for (int64_t c = 0; c < f->image_embed.shape[1]; c++)
            for (int64_t i = 0; i < hw; i++)
                f->image_embed.data[c * hw + i] += tr->no_mem_embed[c];
    }
    samc_tensor_release(&feats), samc_tensor_release(&pos);
    return st;
}

static samc_status iso_prepare(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                               samc_error *err)
{
    const samc_tracker_model *tr = L->self;
    samc_frame_dict dicts[2] = {{0}};
    samc_frame_features f = {0};
    const double frame = samc_io_scalar_or(in, "frame_idx", NULL, -1);
    samc_status st = frame < 0 ? samc_fail(err, SAMC_ERR_KEY, "in/frame_idx is missing") : SAMC_OK;
    if (!st)
        st = recorded_features(tr, in, &f, err);
    if (!st)
        st = load_bank(in, dicts, err);
    if (!st) {
        samc_track_in tin = {.frame_idx = (int)frame, .is_init_cond_frame = samc_io_scalar_or(in, "is_init_cond_frame", NULL, 0) != 0,
                             .f = &f, .n_points = -1, .cond = &dicts[0], .non_cond = &dicts[1],
                             .num_frames = (int)samc_io_scalar_or(in, "num_frames", NULL, 1),
                             .reverse = samc_io_scalar_or(in, "track_in_reverse", NULL, 0) != 0,
                             /* Sam3TrackerBase's use_prev_mem_frame (absent: SAM 2, always) */
                             .no_memory = samc_io_scalar_or(in, "use_prev_mem_frame", NULL, 1) == 0};
        samc_tensor pix = {0};
        samc_capture cap;
        samc_layer_out all = {0};
        samc_capture_begin(x, &cap, L->name, &all);
        st = samc_tracker_prepare_memory(x, tr, &samc_no_scope, &tin, &pix, err);
        samc_capture_end(x, &cap);
        samc_tensor_release(&pix);
        for (int i = 0; i < all.n; i++) { /* keep the output; the inputs were read from the record */
            samc_tensor *y = strncmp(all.names[i], "in/", 3) ? samc_layer_out_slot(out, all.names[i]) : NULL;
            if (y)
                *y = all.t[i], memset(&all.t[i], 0, sizeof all.t[i]);
        }
        samc_layer_out_free(&all);
    }
    samc_frame_dict_free(&dicts[0]), samc_frame_dict_free(&dicts[1]);
    samc_frame_features_release(&f);
    return st;
}
