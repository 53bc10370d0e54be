/* SPDX-License-Identifier: Apache-2.0 */
/* track_step.c - SAM2Base.track_step: SAM heads on the memory-conditioned
 * feature (or a mask prompt used as output), object pointer, and the new
 * memory (sam2/modeling/sam2_base.py). */
#include "core/models/tracker/track_step.h"

#include <math.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/mask_select.h"
#include "core/models/tracker/memory.h"
#include "core/models/tracker/sam_heads.h"
#include "core/nn/resize_bilinear.h"

#define NO_OBJ_SCORE (-1024.0f)

/* Sam3TrackerBase's function points that SAM 3's dump format records (the
 * tracker's config says when: cfg.sam3.traced): composites of the parts'
 * calls, compared in chained runs (their inputs are a call tree's state). */
enum { TRACK_STEP, MASK_AS_OUTPUT, ENCODE_MEMORY, N_ROWS };
static int sam3_traced(const void *self) { return ((const samc_tracker_model *)self)->cfg.sam3.traced; }
static const samc_layer_def rows[N_ROWS] = {
    [TRACK_STEP] = {.pattern = "@track_step", .parity_if = sam3_traced, .chained_only = true},
    [MASK_AS_OUTPUT] = {.pattern = "@use_mask_as_output", .parity_if = sam3_traced, .chained_only = true},
    [ENCODE_MEMORY] = {.pattern = "@encode_new_memory", .parity_if = sam3_traced, .chained_only = true},
};
const samc_part_def samc_track_step_part = {"Sam3TrackerBase.track_step", rows, N_ROWS, NULL};

static void emit(samc_exec *x, const samc_tracker_model *tr, int row, const samc_scope *sc, int n,
                 const char *const *slots, const samc_tensor *const *t)
{
    if (x->trace && tr->cfg.sam3.traced)
        samc_layer_emit(x, samc_part_layer(x, tr, &rows[row], 0), sc, n, slots, t);
}

float samc_tracker_mem_score(const float *scores, const float *ious, int n)
{
    /* cal_mem_score: the mean of the broadcast [n, n] product of the
     * normalised object scores (2 sigmoid - 1 where present, else 0) and
     * the IoUs, in float32 */
    float sum = 0;
    for (int i = 0; i < n; i++) {
        const float norm = scores[i] > 0 ? 1.0f / (1.0f + expf(-scores[i])) * 2.0f - 1.0f : 0.0f;
        for (int j = 0; j < n; j++)
            sum += norm * ious[j];
    }
    return sum / (float)(n * n);
}

void samc_track_out_release(samc_track_out *o)
{
    samc_tensor_release(&o->pred_masks);
    samc_tensor_release(&o->pred_masks_high_res);
    samc_tensor_release(&o->obj_ptr);
    samc_tensor_release(&o->maskmem);
    o->has_mem = false;
}

/* obj_ptr gating by the object score (fixed / soft no-object pointer). */
static void gate_obj_ptr(const samc_tracker_model *tr, float score_or_lambda, bool is_lambda, float *ptr)
{
    const samc_tracker_config *c = &tr->cfg;
    if (!c->pred_obj_scores)
        return;
    float lam = is_lambda ? score_or_lambda
                          : (c->soft_no_obj_ptr ? 1.0f / (1.0f + expf(-score_or_lambda)) : (score_or_lambda > 0 ? 1.0f : 0.0f));
    for (int k = 0; k < c->d_model; k++) {
        float v = ptr[k];
        if (c->fixed_no_obj_ptr)
            v = lam * v;
        ptr[k] = v + (1.0f - lam) * tr->no_obj_ptr[k];
    }
}

/* _forward_sam_heads for one object (B = 1). */
static samc_status sam_heads(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc, const samc_tensor *pix,
                             const samc_frame_features *f, int n_points, const float *coords, const int32_t *labels,
                             const samc_tensor *mask, bool multimask, samc_track_out *out, samc_error *err)
{
    const int64_t e = tr->emb, s4 = 4 * e, S = tr->cfg.image_size;
    float pad_xy[2] = {0, 0};
    int32_t pad_label[1] = {-1};
    if (n_points < 0) /* no points: one (0,0) point with label -1 */
        n_points = 1, coords = pad_xy, labels = pad_label;
    samc_tensor sm = {0}, sparse = {0}, dense = {0}, pe = {0}, dec[4] = {{0}}, high = {0};
    samc_status st = SAMC_OK;
    if (mask && (mask->shape[2] != s4 || mask->shape[3] != s4)) { /* antialiased resize to the prompt size */
        if (!(st = samc_tensor_allocv(&sm, err, 4, (int64_t)1, (int64_t)1, s4, s4)))
            st = samc_resize_bilinear_aa(mask->data, 1, (int)mask->shape[2], (int)mask->shape[3], (int)s4, (int)s4, sm.data);
        mask = &sm;
    }
    if (!st)
        st = samc_prompt_encoder_forward(x, &tr->prompt_encoder, sc, coords, labels, 1, n_points, mask, &sparse,
                                         &dense, err);
    if (!st)
        st = samc_prompt_encoder_dense_pe(x, &tr->prompt_encoder, &pe, err);
    const bool hr = tr->cfg.use_high_res_features_in_sam;
    if (!st)
        st = samc_mask_decoder_forward(x, &tr->mask_decoder, sc, pix, &pe, &sparse, &dense, multimask, false,
                                       hr ? &f->feat_s0 : NULL, hr ? &f->feat_s1 : NULL, dec, err);
    if (!st) {
        const int M = (int)dec[0].shape[1];
        /* decision points: object presence (> 0) and the best of the multimask outputs */
        const char *decoder = samc_mask_decoder_name(x, &tr->mask_decoder);
        samc_decision obj = {.kind = SAMC_DECISION_OBJECT_SCORE, .module = decoder, .values = dec[3].data, .n = 1,
                             .threshold = 0};
        if (tr->cfg.pred_obj_scores)
            samc_exec_decide(x, sc, &obj);
        samc_decision pick = {.kind = SAMC_DECISION_BEST_MASK, .module = decoder, .values = dec[1].data, .n = M};
        if (multimask)
            samc_exec_decide(x, sc, &pick);
        out->object_score = dec[3].data[0];
        out->iou_score = dec[1].data[0]; /* ious.max(-1) */
        for (int k = 1; k < M; k++)
            out->iou_score = dec[1].data[k] > out->iou_score ? dec[1].data[k] : out->iou_score;
        if (tr->cfg.pred_obj_scores && !(out->object_score > 0))
            for (int64_t i = 0; i < samc_numel(&dec[0]); i++)
                dec[0].data[i] = NO_OBJ_SCORE;
        const int best = multimask ? samc_argmax_first(dec[1].data, M) : 0;
        /* high_res_multimasks: all M channels resized together (torch 1.13
         * picks its kernel, and so its rounding, by the channel count). */
        samc_tensor all_high = {0};
        if (!(st = samc_tensor_allocv(&all_high, err, 4, (int64_t)1, (int64_t)M, S, S)))
            st = samc_resize_bilinear(dec[0].data, 1, M, (int)s4, (int)s4, (int)S, (int)S, all_high.data);
        if (!st && !(st = samc_tensor_allocv(&out->pred_masks, err, 4, (int64_t)1, (int64_t)1, s4, s4)))
            memcpy(out->pred_masks.data, dec[0].data + best * s4 * s4, (size_t)(s4 * s4) * sizeof(float));
        if (!st && !(st = samc_tensor_allocv(&high, err, 4, (int64_t)1, (int64_t)1, S, S)))
            memcpy(high.data, all_high.data + best * S * S, (size_t)(S * S) * sizeof(float));
        samc_tensor_release(&all_high);
        if (!st) {
            out->pred_masks_high_res = high;
            memset(&high, 0, sizeof high);
            const int64_t D = dec[2].shape[2], ntok = dec[2].shape[1];
            samc_tensor tok = {0};
            if (!(st = samc_tensor_allocv(&tok, err, 2, (int64_t)1, D))) {
                memcpy(tok.data, dec[2].data + (multimask && ntok > 1 ? best : 0) * D, (size_t)D * sizeof(float));
                st = samc_tracker_obj_ptr_proj(x, tr, sc, &tok, &out->obj_ptr, err);
            }
            samc_tensor_release(&tok);
        }
        if (!st)
            gate_obj_ptr(tr, out->object_score, false, out->obj_ptr.data);
    }
    samc_tensor_release(&sm), samc_tensor_release(&sparse), samc_tensor_release(&dense), samc_tensor_release(&pe);
    samc_tensor_release(&high);
    for (int i = 0; i < 4; i++)
        samc_tensor_release(&dec[i]);
    return st;
}

/* _use_mask_as_output: the {0,1} mask at +-10 logits, its pointer from the
 * SAM heads on the raw feature with the downsampled mask as prompt. */
static samc_status mask_as_output(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc, const samc_track_in *in,
                                  samc_track_out *out, samc_error *err)
{
    const samc_tensor *mk = in->mask_inputs;
    const int64_t S = mk->shape[2], n = samc_numel(mk);
    /* the low-res side: S // 4 (SAM2Base), S // backbone_stride * 4 (Sam3TrackerBase) */
    const int64_t s4 = tr->cfg.sam3.mask_low_res_by_stride ? S / tr->cfg.backbone_stride * 4 : S / 4;
    samc_tensor high = {0}, small = {0};
    samc_track_out heads = {0};
    samc_status st = samc_tensor_alloc(&high, 4, mk->shape, err);
    bool appearing = false;
    for (int64_t i = 0; !st && i < n; i++) {
        high.data[i] = mk->data[i] * 20.0f + -10.0f;
        appearing |= mk->data[i] > 0.0f;
    }
    if (!st && !(st = samc_tensor_allocv(&out->pred_masks, err, 4, (int64_t)1, (int64_t)1, s4, s4)))
        st = samc_resize_bilinear_aa(high.data, 1, (int)S, (int)S, (int)s4, (int)s4, out->pred_masks.data);
    const float lam = appearing ? 1.0f : 0.0f;
    if (!st && tr->cfg.use_obj_ptrs_in_encoder) {
        if (!(st = samc_tracker_mask_downsample(x, tr, sc, mk, &small, err)))
            st = sam_heads(x, tr, sc, &in->f->vision_features, in->f, -1, NULL, NULL, &small, false, &heads, err);
        if (!st) {
            out->obj_ptr = heads.obj_ptr;
            memset(&heads.obj_ptr, 0, sizeof heads.obj_ptr);
        }
    } else if (!st) {
        st = samc_tensor_allocv(&out->obj_ptr, err, 2, (int64_t)1, (int64_t)tr->cfg.d_model);
    }
    if (!st) {
        out->object_score = 20.0f * lam + -10.0f;
        out->iou_score = 1.0f;
        gate_obj_ptr(tr, lam, true, out->obj_ptr.data);
        float one = 1.0f, score = out->object_score;
        const samc_tensor iou = samc_tensor_view(&one, 2, (const int64_t[]){1, 1});
        const samc_tensor sc_t = samc_tensor_view(&score, 2, (const int64_t[]){1, 1});
        const char *slots[] = {"0", "1", "2", "3", "4", "5", "6"};
        const samc_tensor *t[] = {&out->pred_masks, &high, &iou, &out->pred_masks, &high, &out->obj_ptr, &sc_t};
        emit(x, tr, MASK_AS_OUTPUT, sc, 7, slots, t);
        out->pred_masks_high_res = high;
        memset(&high, 0, sizeof high);
    }
    samc_tensor_release(&high), samc_tensor_release(&small);
    samc_track_out_release(&heads);
    return st;
}

samc_status samc_tracker_encode_new_memory(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                           const samc_frame_features *f, const samc_tensor *high_res_masks,
                                           float object_score, bool binarize, samc_tensor *maskmem, samc_error *err)
{
    samc_tensor mk = {0}, pos = {0};
    samc_status st = samc_tensor_copy(&mk, high_res_masks, err);
    samc_decision bin = {.kind = SAMC_DECISION_BINARIZE, .module = samc_memory_encoder_name(x, &tr->memory_encoder),
                         .values = mk.data, .n = samc_numel(&mk), .threshold = 0};
    if (!st && binarize) /* a decision point: each pixel by > 0 */
        samc_exec_decide(x, sc, &bin);
    if (!st)
        st = samc_tracker_mask_for_memory(x, tr, &mk, binarize, err);
    if (!st)
        st = samc_memory_encoder_forward(x, &tr->memory_encoder, sc, &f->vision_features, &mk, true, maskmem, &pos,
                                         err);
    if (!st && tr->no_obj_embed_spatial) /* + (1 - is_obj_appearing) * no_obj_embed_spatial */
        st = samc_tracker_no_obj_embed(x, tr, maskmem, 1.0f - (object_score > 0 ? 1.0f : 0.0f), err);
    if (!st) {
        const char *slots[] = {"maskmem_features", "maskmem_pos_enc.0"};
        const samc_tensor *t[] = {maskmem, &pos};
        emit(x, tr, ENCODE_MEMORY, sc, 2, slots, t);
    }
    samc_tensor_release(&mk), samc_tensor_release(&pos);
    return st;
}

samc_status samc_tracker_trace_step(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                    const samc_track_out *o, const float *batch_eff, samc_error *err)
{
    if (!x->trace || !tr->cfg.sam3.traced)
        return SAMC_OK;
    samc_tensor pos = {0};
    samc_status st = o->has_mem ? samc_memory_encoder_pos(x, &tr->memory_encoder, &pos, err) : SAMC_OK;
    float score = o->object_score, iou = o->iou_score;
    float eff = batch_eff ? *batch_eff : samc_tracker_mem_score(&score, &iou, 1);
    const samc_tensor ts = samc_tensor_view(&score, 2, (const int64_t[]){1, 1});
    const samc_tensor ti = samc_tensor_view(&iou, 1, (const int64_t[]){1});
    const samc_tensor te = samc_tensor_view(&eff, 1, (const int64_t[]){1});
    const char *slots[] = {"pred_masks", "obj_ptr", "object_score_logits", "iou_score", "eff_iou_score",
                           "maskmem_features", "maskmem_pos_enc.0"};
    const samc_tensor *t[] = {&o->pred_masks, &o->obj_ptr, &ts, &ti, &te, &o->maskmem, &pos};
    if (!st)
        emit(x, tr, TRACK_STEP, sc, o->has_mem ? 7 : 5, slots, t);
    samc_tensor_release(&pos);
    return st;
}

static bool use_multimask(const samc_tracker_model *tr, const samc_track_in *in)
{
    const samc_tracker_config *c = &tr->cfg;
    const int n = in->n_points < 0 ? 0 : in->n_points;
    return c->multimask_output_in_sam && (in->is_init_cond_frame || c->multimask_output_for_tracking) &&
           c->multimask_min_pt_num <= n && n <= c->multimask_max_pt_num;
}

samc_status samc_tracker_track_step(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                    const samc_track_in *in, samc_track_out *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    samc_status st;
    if (in->mask_inputs && tr->cfg.use_mask_input_as_output_without_sam) {
        st = mask_as_output(x, tr, sc, in, out, err);
    } else {
        samc_tensor pix = {0};
        st = samc_tracker_prepare_memory(x, tr, sc, in, &pix, err);
        const samc_tensor *mask = in->prev_sam_mask_logits ? in->prev_sam_mask_logits : in->mask_inputs;
        if (!st)
            st = sam_heads(x, tr, sc, &pix, in->f, in->n_points, in->point_coords, in->point_labels, mask,
                           use_multimask(tr, in), out, err);
        samc_tensor_release(&pix);
    }
    if (!st && in->run_mem_encoder && tr->cfg.num_maskmem > 0) {
        st = samc_tracker_encode_new_memory(x, tr, sc, in->f, &out->pred_masks_high_res, out->object_score,
                                         in->binarize_mask_from_pts && in->n_points >= 0,
                                         &out->maskmem, err);
        out->has_mem = st == SAMC_OK;
    }
    if (!st && !in->no_step_record)
        st = samc_tracker_trace_step(x, tr, sc, out, NULL, err);
    if (st)
        samc_track_out_release(out);
    return st;
}
