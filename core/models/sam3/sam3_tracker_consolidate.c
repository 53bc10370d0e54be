/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_tracker_consolidate.c - Sam3TrackerPredictor._consolidate_temp_output_across_obj
 * and propagate_in_video_preflight (docs/sam3_video.md 6.3): the new
 * inputs of a frame (clicks, masks) merged across the state's objects,
 * their memory encoded after a pixel-wise non-overlap, stored as the
 * frame's conditioning output. */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_tracker_state_internal.h"
#include "core/models/tracker/memory.h"
#include "core/nn/resize_bilinear.h"

enum { CONSOLIDATE, N_ROWS };
static const samc_layer_def rows[N_ROWS] = {
    [CONSOLIDATE] = {.pattern = "@consolidate", .parity = true, .chained_only = true},
};
const samc_part_def samc_s3_tracker_predictor_part = {"Sam3TrackerPredictor", rows, N_ROWS, NULL};

void samc__s3_emit_consolidate(samc_s3_state *s, const samc_scope *sc, int n, const char *const *slots,
                               const samc_tensor *const *t)
{
    if (s->x->trace)
        samc_layer_emit(s->x, samc_part_layer(s->x, s->tr, &rows[CONSOLIDATE], 0), sc, n, slots, t);
}

samc_scope samc__s3_scope(const samc_s3_state *s, int frame)
{
    return (samc_scope){frame, s->n_obj == 1 ? s->objs[0].id : -1};
}

/* The object's output on the frame that consolidation reads: its temporary
 * one, else its conditioning slice, else its non-conditioning slice. */
typedef struct source {
    const samc_tensor *mask;            /* NULL: none */
    bool video;                         /* a video-size mask input */
    const samc_tensor *obj_ptr;
    float score, iou;
} source;

static source find_source(samc_s3_state *s, int i, int frame, bool cond)
{
    samc_s3_object *o = &s->objs[i];
    const samc_s3_temp *t = samc__s3_temp_get(o, frame, cond);
    if (t) {
        const bool video = t->video_masks.data != NULL;
        return (source){video ? &t->video_masks : &t->pred_masks, video, &t->obj_ptr, t->object_score, t->iou_score};
    }
    for (int kind = 0; kind < 2; kind++) {
        const samc_s3_entry *e = samc__s3_set_has(&o->slices[kind], frame) ? samc__s3_dict_get(&s->out[kind], frame) : NULL;
        if (e)
            return (source){&e->obj[i].pred_masks, false, &e->obj[i].obj_ptr, e->obj[i].object_score,
                            e->obj[i].iou_score};
    }
    return (source){0};
}

/* _get_empty_mask_ptr: the pointer of an empty (1,1,R,R) mask. */
static samc_status empty_mask_ptr(samc_s3_state *s, const samc_s3_frame *fr, samc_tensor *ptr, samc_error *err)
{
    const int64_t R = s->tr->cfg.image_size;
    samc_tensor zeros = {0};
    samc_frame_out o = {0};
    samc_status st = samc_tensor_allocv(&zeros, err, 4, (int64_t)1, (int64_t)1, R, R);
    const samc_s3_step_in in = {.is_init = true, .n_points = -1, .mask = &zeros};
    if (!st) /* the state's first object names the call (the official one is the state's) */
        st = samc__s3_step(s, fr, 0, &in, &o, err);
    if (!st)
        *ptr = o.obj_ptr, memset(&o.obj_ptr, 0, sizeof o.obj_ptr);
    samc_frame_out_release(&o);
    samc_tensor_release(&zeros);
    return st;
}

/* _apply_non_overlapping_constraints over the batch (n planes of hw): at
 * each pixel the first object with the largest logit keeps it, the others
 * get min(value, -10). A decision point. */
static void non_overlap(samc_s3_state *s, const samc_scope *sc, float *m, int n, int64_t hw)
{
    if (n <= 1)
        return;
    samc_decision d = {.kind = SAMC_DECISION_NON_OVERLAP, .module = "@consolidate", .values = m, .n = n * hw,
                       .n_masks = n, .hw = hw};
    samc_exec_decide(s->x, sc, &d);
    for (int64_t p = 0; p < hw; p++) {
        int best = 0;
        for (int i = 1; i < n; i++)
            best = m[i * hw + p] > m[best * hw + p] ? i : best;
        for (int i = 0; i < n; i++)
            if (i != best && m[i * hw + p] > -10.0f)
                m[i * hw + p] = -10.0f;
    }
}

/* The masks (B,1,4G,4G) resized to R, made non-overlapping, binarised and
 * encoded per object, rounded to bfloat16. */
static samc_status encode(samc_s3_state *s, const samc_s3_frame *fr, const samc_tensor *low, const float *scores,
                          samc_tensor *mem, samc_error *err)
{
    const int B = s->n_obj;
    const int64_t R = s->tr->cfg.image_size, s4 = low->shape[2];
    const samc_scope sc = samc__s3_scope(s, fr->t);
    samc_tensor high = {0};
    samc_status st = samc_tensor_allocv(&high, err, 4, (int64_t)B, (int64_t)1, R, R);
    if (!st && samc_resize_bilinear(low->data, B, 1, (int)s4, (int)s4, (int)R, (int)R, high.data))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory (resize)");
    if (!st)
        non_overlap(s, &sc, high.data, B, R * R);
    for (int i = 0; !st && i < B; i++) {
        const samc_tensor hi = samc_tensor_view(high.data + i * R * R, 4, (const int64_t[]){1, 1, R, R});
        const samc_scope so = {fr->t, s->objs[i].id};
        st = samc_tracker_encode_new_memory(s->x, s->tr, &so, fr->f, &hi, scores[i], true, &mem[i], err);
        if (!st)
            samc__s3_round_memory(s, &so, &mem[i]);
    }
    samc_tensor_release(&high);
    return st;
}

/* The consolidated tensors: masks (B,1,h,w), pointers (B,D), scores, IoUs. */
typedef struct consolidated {
    samc_tensor masks, ptr, score, iou;
    samc_tensor *mem;                   /* B memories, or NULL */
} consolidated;

static void consolidated_release(consolidated *c, int B)
{
    samc_tensor_release(&c->masks), samc_tensor_release(&c->ptr);
    samc_tensor_release(&c->score), samc_tensor_release(&c->iou);
    for (int i = 0; c->mem && i < B; i++)
        samc_tensor_release(&c->mem[i]);
    free(c->mem);
}

static samc_status gather(samc_s3_state *s, const samc_s3_frame *fr, bool cond, bool run_mem, int64_t h, int64_t w,
                          consolidated *c, samc_error *err)
{
    const int B = s->n_obj, D = s->tr->cfg.d_model;
    const int64_t hw = h * w;
    samc_status st = samc_tensor_allocv(&c->masks, err, 4, (int64_t)B, (int64_t)1, h, w);
    if (!st)
        st = samc_tensor_allocv(&c->ptr, err, 2, (int64_t)B, (int64_t)D);
    if (!st)
        st = samc_tensor_allocv(&c->score, err, 2, (int64_t)B, (int64_t)1);
    if (!st)
        st = samc_tensor_allocv(&c->iou, err, 2, (int64_t)B, (int64_t)1);
    if (st)
        return st;
    for (int64_t k = 0; k < B * hw; k++)
        c->masks.data[k] = SAMC_S3_NO_OBJ_SCORE;
    for (int64_t k = 0; k < (int64_t)B * D; k++)
        c->ptr.data[k] = SAMC_S3_NO_OBJ_SCORE;
    samc_tensor empty = {0};
    for (int i = 0; !st && i < B; i++) {
        c->score.data[i] = 10.0f; /* present, as predict_masks' default */
        const source src = find_source(s, i, fr->t, cond);
        if (!src.mask) {
            if (run_mem && !empty.data)
                st = empty_mask_ptr(s, fr, &empty, err);
            if (!st && run_mem)
                memcpy(c->ptr.data + (int64_t)i * D, empty.data, (size_t)D * sizeof(float));
            continue;
        }
        float *dst = c->masks.data + i * hw;
        const int sh = (int)src.mask->shape[2], sw = (int)src.mask->shape[3];
        if (sh == h && sw == w)
            memcpy(dst, src.mask->data, (size_t)hw * sizeof(float));
        else if ((src.video ? samc_resize_bilinear_aa(src.mask->data, 1, sh, sw, (int)h, (int)w, dst)
                            : samc_resize_bilinear(src.mask->data, 1, 1, sh, sw, (int)h, (int)w, dst)))
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory (resize)");
        memcpy(c->ptr.data + (int64_t)i * D, src.obj_ptr->data, (size_t)D * sizeof(float));
        c->score.data[i] = src.score, c->iou.data[i] = src.iou;
    }
    samc_tensor_release(&empty);
    if (!st && run_mem && !(c->mem = calloc((size_t)B, sizeof *c->mem)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st && run_mem)
        st = encode(s, fr, &c->masks, c->score.data, c->mem, err);
    return st;
}

static samc_status trace(samc_s3_state *s, int frame, bool video, const consolidated *c, samc_error *err)
{
    const int B = s->n_obj;
    samc_tensor mem = {0}, pos = {0};
    samc_status st = SAMC_OK;
    if (c->mem) { /* (B, mem, G, G) and the one position encoding, expanded */
        const samc_tensor *m0 = &c->mem[0];
        const int64_t n1 = samc_numel(m0);
        st = samc_tensor_allocv(&mem, err, 4, (int64_t)B, m0->shape[1], m0->shape[2], m0->shape[3]);
        for (int i = 0; !st && i < B; i++)
            memcpy(mem.data + i * n1, c->mem[i].data, (size_t)n1 * sizeof(float));
        samc_tensor p1 = {0};
        if (!st && !(st = samc_memory_encoder_pos(s->x, &s->tr->memory_encoder, &p1, err)) &&
            !(st = samc_tensor_allocv(&pos, err, 4, (int64_t)B, p1.shape[1], p1.shape[2], p1.shape[3])))
            for (int i = 0; i < B; i++)
                memcpy(pos.data + i * samc_numel(&p1), p1.data, (size_t)samc_numel(&p1) * sizeof(float));
        samc_tensor_release(&p1);
    }
    const samc_scope sc = samc__s3_scope(s, frame);
    const char *slots[] = {video ? "pred_masks_video_res" : "pred_masks", "obj_ptr", "object_score_logits", "iou_score",
                           "maskmem_features", "maskmem_pos_enc.0"};
    const samc_tensor *t[] = {&c->masks, &c->ptr, &c->score, &c->iou, &mem, &pos};
    if (!st)
        samc__s3_emit_consolidate(s, &sc, c->mem ? 6 : 4, slots, t);
    samc_tensor_release(&mem), samc_tensor_release(&pos);
    return st;
}

samc_status samc__s3_consolidate(samc_s3_state *s, const samc_s3_frame *fr, bool cond, bool run_mem,
                                 samc_s3_entry *entry, samc_tensor *video, samc_error *err)
{
    const int B = s->n_obj;
    const int64_t s4 = 4LL * (s->tr->cfg.image_size / s->tr->cfg.backbone_stride);
    const bool at_video = video != NULL;
    consolidated c = {0};
    samc_status st = at_video && run_mem ? samc_fail(err, SAMC_ERR_INTERNAL, "memory cannot be encoded at video size")
                                         : gather(s, fr, cond, run_mem, at_video ? s->H : s4, at_video ? s->W : s4, &c, err);
    if (!st && s->x->trace)
        st = trace(s, fr->t, at_video, &c, err);
    if (!st && at_video) {
        *video = c.masks, memset(&c.masks, 0, sizeof c.masks);
    } else if (!st) {
        memset(entry, 0, sizeof *entry);
        entry->frame = fr->t, entry->iou_2d = true;
        if (!(entry->obj = calloc((size_t)B, sizeof *entry->obj)))
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        const int D = s->tr->cfg.d_model;
        for (int i = 0; !st && i < B; i++) {
            samc_frame_out *o = &entry->obj[i];
            o->frame_idx = fr->t, o->object_score = c.score.data[i], o->iou_score = c.iou.data[i];
            st = samc_tensor_allocv(&o->pred_masks, err, 4, (int64_t)1, (int64_t)1, s4, s4);
            if (!st)
                memcpy(o->pred_masks.data, c.masks.data + i * s4 * s4, (size_t)(s4 * s4) * sizeof(float));
            if (!st && !(st = samc_tensor_allocv(&o->obj_ptr, err, 2, (int64_t)1, (int64_t)D)))
                memcpy(o->obj_ptr.data, c.ptr.data + (int64_t)i * D, (size_t)D * sizeof(float));
            if (!st && c.mem)
                o->maskmem = c.mem[i], memset(&c.mem[i], 0, sizeof c.mem[i]), o->has_mem = true;
        }
        if (st)
            samc__s3_entry_release(entry, B);
    }
    consolidated_release(&c, B);
    return st;
}

/* _clear_non_cond_mem_around_input: the per-object slices only. */
void samc__s3_clear_around(samc_s3_state *s, int frame)
{
    const int r = s->tr->cfg.memory_temporal_stride_for_eval, n = s->tr->cfg.num_maskmem;
    for (int i = 0; i < s->n_obj; i++)
        for (int t = frame - r * n; t <= frame + r * n; t++)
            samc__s3_set_del(&s->objs[i].slices[1], t);
}

bool samc__s3_clears_around(const samc_s3_state *s)
{
    return s->opt->clear_non_cond_mem_around_input && (s->opt->clear_non_cond_mem_for_multi_obj || s->n_obj <= 1);
}

/* The frames some object has a temporary output of this kind on, ascending
 * (the official set; with add_all_frames_to_correct_as_cond there is at
 * most one at a time). */
static int temp_frames(const samc_s3_state *s, bool cond, int *frames, int cap)
{
    int n = 0;
    for (int i = 0; i < s->n_obj; i++)
        for (int k = 0; k < s->objs[i].n_temp; k++) {
            const int f = s->objs[i].temp[k].frame;
            bool seen = s->objs[i].temp[k].cond != cond;
            for (int j = 0; j < n && !seen; j++)
                seen = frames[j] == f;
            if (!seen && n < cap) {
                int j = n++;
                while (j > 0 && frames[j - 1] > f)
                    frames[j] = frames[j - 1], j--;
                frames[j] = f;
            }
        }
    return n;
}

static samc_status consolidate_kind(samc_s3_state *s, const samc_s3_frame *fr, bool cond, bool run_mem,
                                    samc_error *err)
{
    int frames[64];
    const int n = temp_frames(s, cond, frames, 64), kind = cond ? 0 : 1;
    samc_status st = SAMC_OK;
    for (int k = 0; !st && k < n; k++) {
        if (frames[k] != fr->t)
            return samc_fail(err, SAMC_ERR_INTERNAL, "frame %d's features are not cached (frame %d's are)",
                             frames[k], fr->t);
        samc_s3_entry e;
        if ((st = samc__s3_set_add(&s->consolidated[kind], frames[k])) ? samc_fail(err, st, "out of memory") : SAMC_OK)
            break;
        if (!(st = samc__s3_consolidate(s, fr, cond, run_mem, &e, NULL, err)) &&
            !(st = samc__s3_dict_put(&s->out[kind], &e, s->n_obj, err)) && samc__s3_add_slices(s, kind, frames[k]))
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        if (!st && samc__s3_clears_around(s))
            samc__s3_clear_around(s, frames[k]);
    }
    for (int i = 0; i < s->n_obj; i++) /* the temporary outputs of this kind are consumed */
        for (int k = s->objs[i].n_temp - 1; k >= 0; k--)
            if (s->objs[i].temp[k].cond == cond)
                samc__s3_temp_pop(&s->objs[i], s->objs[i].temp[k].frame, cond);
    return st;
}

/* The smallest frame with inputs (points or masks) of any object, or -1. */
static int first_input_frame(const samc_s3_state *s)
{
    int best = -1;
    for (int i = 0; i < s->n_obj; i++) {
        const samc_s3_object *o = &s->objs[i];
        for (int k = 0; k < o->n_points; k++)
            best = best < 0 || o->points[k].frame < best ? o->points[k].frame : best;
        for (int k = 0; k < o->mask_frames.n; k++)
            best = best < 0 || o->mask_frames.v[k] < best ? o->mask_frames.v[k] : best;
    }
    return best;
}

samc_status samc_s3_preflight(samc_s3_state *s, const samc_s3_frame *fr, bool run_mem_encoder, samc_error *err)
{
    s->tracking_started = true;
    samc_status st = consolidate_kind(s, fr, false, run_mem_encoder, err);
    if (!st)
        st = consolidate_kind(s, fr, true, run_mem_encoder, err);
    if (st)
        return st;
    for (int k = 0; k < s->out[0].n; k++) /* a conditioning output replaces a non-conditioning one */
        samc__s3_dict_pop(&s->out[1], s->out[0].e[k].frame, NULL, s->n_obj);
    for (int k = 0; k < s->consolidated[0].n; k++)
        samc__s3_set_del(&s->consolidated[1], s->consolidated[0].v[k]);
    for (int i = 0; i < s->n_obj; i++)
        for (int k = 0; k < s->objs[i].slices[0].n; k++)
            samc__s3_set_del(&s->objs[i].slices[1], s->objs[i].slices[0].v[k]);
    if (s->first_ann_frame < 0)
        s->first_ann_frame = first_input_frame(s);
    if (!samc__s3_dict_get(&s->out[0], s->first_ann_frame)) {
        s->first_ann_frame = -1;
        for (int k = 0; k < s->out[0].n; k++)
            if (s->first_ann_frame < 0 || s->out[0].e[k].frame < s->first_ann_frame)
                s->first_ann_frame = s->out[0].e[k].frame;
    }
    return SAMC_OK;
}
