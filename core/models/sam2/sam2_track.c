/* sam2_track.c - SAM2Base.track_step: SAM heads on the memory-conditioned
 * feature (or a mask prompt used as output), object pointer, and the new
 * memory (sam2/modeling/sam2_base.py). */
#include "core/models/sam2/sam2_track.h"

#include <math.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/mask_select.h"
#include "core/nn/position_encoding.h"
#include "core/nn/resize_bilinear.h"
#include "core/models/sam2/sam2_memory.h"

#define NO_OBJ_SCORE (-1024.0f)

void samc_track_out_release(samc_track_out *o)
{
    samc_tensor_release(&o->pred_masks);
    samc_tensor_release(&o->pred_masks_high_res);
    samc_tensor_release(&o->obj_ptr);
    samc_tensor_release(&o->maskmem);
    o->has_mem = false;
}

/* obj_ptr gating by the object score (fixed / soft no-object pointer). */
static void gate_obj_ptr(const samc_sam2_model *m, float score_or_lambda, bool is_lambda, float *ptr)
{
    const samc_sam2_config *c = &m->cfg;
    if (!c->pred_obj_scores)
        return;
    float lam = is_lambda ? score_or_lambda
                          : (c->soft_no_obj_ptr ? 1.0f / (1.0f + expf(-score_or_lambda)) : (score_or_lambda > 0 ? 1.0f : 0.0f));
    for (int k = 0; k < m->cfg.neck.d_model; k++) {
        float v = ptr[k];
        if (c->fixed_no_obj_ptr)
            v = lam * v;
        ptr[k] = v + (1.0f - lam) * m->no_obj_ptr[k];
    }
}

/* _forward_sam_heads for one object (B = 1). */
static samc_status sam_heads(samc_exec *x, const samc_scope *sc, const samc_tensor *pix, const samc_sam2_features *f,
                             int n_points, const float *coords, const int32_t *labels, const samc_tensor *mask,
                             bool multimask, samc_track_out *out, samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const int64_t e = m->emb, s4 = 4 * e, S = m->cfg.image_size;
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
        st = samc_sam2_prompt_encoder(x, sc, coords, labels, n_points, mask, &sparse, &dense, err);
    if (!st)
        st = samc_sam2_dense_pe(x, &pe, err);
    const bool hr = m->cfg.use_high_res_features_in_sam;
    if (!st)
        st = samc_sam2_mask_decoder(x, sc, pix, &pe, &sparse, &dense, multimask, false, hr ? &f->feat_s0 : NULL,
                                    hr ? &f->feat_s1 : NULL, dec, err);
    if (!st) {
        const int M = (int)dec[0].shape[1];
        /* decision points: object presence (> 0) and the best of the multimask outputs */
        samc_decision obj = {.kind = SAMC_DECISION_OBJECT_SCORE, .module = "sam_mask_decoder", .values = dec[3].data,
                             .n = 1, .threshold = 0};
        if (m->cfg.pred_obj_scores)
            samc_exec_decide(x, sc, &obj);
        samc_decision pick = {.kind = SAMC_DECISION_BEST_MASK, .module = "sam_mask_decoder", .values = dec[1].data,
                              .n = M};
        if (multimask)
            samc_exec_decide(x, sc, &pick);
        out->object_score = dec[3].data[0];
        if (m->cfg.pred_obj_scores && !(out->object_score > 0))
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
                st = samc_sam2_obj_ptr_proj(x, sc, &tok, &out->obj_ptr, err);
            }
            samc_tensor_release(&tok);
        }
        if (!st)
            gate_obj_ptr(m, out->object_score, false, out->obj_ptr.data);
    }
    samc_tensor_release(&sm), samc_tensor_release(&sparse), samc_tensor_release(&dense), samc_tensor_release(&pe);
    samc_tensor_release(&high);
    for (int i = 0; i < 4; i++)
        samc_tensor_release(&dec[i]);
    return st;
}

/* _use_mask_as_output: the {0,1} mask at +-10 logits, its pointer from the
 * SAM heads on the raw feature with the downsampled mask as prompt. */
static samc_status mask_as_output(samc_exec *x, const samc_scope *sc, const samc_track_in *in, samc_track_out *out,
                                  samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const samc_tensor *mk = in->mask_inputs;
    const int64_t S = mk->shape[2], s4 = S / 4, n = samc_numel(mk);
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
    if (!st && m->cfg.use_obj_ptrs_in_encoder) {
        if (!(st = samc_sam2_mask_downsample(x, mk, &small, err)))
            st = sam_heads(x, sc, &in->f->vision_features, in->f, -1, NULL, NULL, &small, false, &heads, err);
        if (!st) {
            out->obj_ptr = heads.obj_ptr;
            memset(&heads.obj_ptr, 0, sizeof heads.obj_ptr);
        }
    } else if (!st) {
        st = samc_tensor_allocv(&out->obj_ptr, err, 2, (int64_t)1, (int64_t)m->cfg.neck.d_model);
    }
    if (!st) {
        out->object_score = 20.0f * lam + -10.0f;
        gate_obj_ptr(m, lam, true, out->obj_ptr.data);
        out->pred_masks_high_res = high;
        memset(&high, 0, sizeof high);
    }
    samc_tensor_release(&high), samc_tensor_release(&small);
    samc_track_out_release(&heads);
    return st;
}

samc_status samc_sam2_encode_new_memory(samc_exec *x, const samc_scope *sc, const samc_sam2_features *f,
                                        const samc_tensor *high_res_masks, float object_score, bool binarize,
                                        samc_tensor *maskmem, samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const samc_sam2_config *c = &m->cfg;
    samc_tensor mk = {0}, pos = {0};
    samc_status st = samc_tensor_copy(&mk, high_res_masks, err);
    samc_decision bin = {.kind = SAMC_DECISION_BINARIZE, .module = "memory_encoder", .values = mk.data,
                         .n = samc_numel(&mk), .threshold = 0};
    if (!st && binarize) /* a decision point: each pixel by > 0 */
        samc_exec_decide(x, sc, &bin);
    for (int64_t i = 0; !st && i < samc_numel(&mk); i++) {
        float v = binarize ? (mk.data[i] > 0 ? 1.0f : 0.0f) : 1.0f / (1.0f + expf(-mk.data[i]));
        if (c->sigmoid_scale_for_mem_enc != 1.0)
            v = v * (float)c->sigmoid_scale_for_mem_enc;
        if (c->sigmoid_bias_for_mem_enc != 0.0)
            v = v + (float)c->sigmoid_bias_for_mem_enc;
        mk.data[i] = v;
    }
    if (!st)
        st = samc_sam2_memory_encoder(x, sc, &f->vision_features, &mk, true, maskmem, &pos, err);
    if (!st && m->no_obj_embed_spatial) { /* + (1 - is_obj_appearing) * no_obj_embed_spatial */
        const float absent = 1.0f - (object_score > 0 ? 1.0f : 0.0f);
        const int64_t hw = maskmem->shape[2] * maskmem->shape[3];
        for (int64_t k = 0; k < maskmem->shape[1]; k++)
            for (int64_t i = 0; i < hw; i++)
                maskmem->data[k * hw + i] += absent * m->no_obj_embed_spatial[k];
    }
    samc_tensor_release(&mk), samc_tensor_release(&pos);
    return st;
}

static bool use_multimask(const samc_sam2_model *m, const samc_track_in *in)
{
    const samc_sam2_config *c = &m->cfg;
    const int n = in->n_points < 0 ? 0 : in->n_points;
    return c->multimask_output_in_sam && (in->is_init_cond_frame || c->multimask_output_for_tracking) &&
           c->multimask_min_pt_num <= n && n <= c->multimask_max_pt_num;
}

samc_status samc_sam2_track_step(samc_exec *x, const samc_scope *sc, const samc_track_in *in, samc_track_out *out,
                                 samc_error *err)
{
    const samc_sam2_model *m = x->model;
    memset(out, 0, sizeof *out);
    samc_status st;
    if (in->mask_inputs && m->cfg.use_mask_input_as_output_without_sam) {
        st = mask_as_output(x, sc, in, out, err);
    } else {
        samc_tensor pix = {0};
        st = samc_sam2_prepare_memory(x, sc, in, &pix, err);
        const samc_tensor *mask = in->prev_sam_mask_logits ? in->prev_sam_mask_logits : in->mask_inputs;
        if (!st)
            st = sam_heads(x, sc, &pix, in->f, in->n_points, in->point_coords, in->point_labels, mask,
                           use_multimask(m, in), out, err);
        samc_tensor_release(&pix);
    }
    if (!st && in->run_mem_encoder && m->cfg.num_maskmem > 0) {
        st = samc_sam2_encode_new_memory(x, sc, in->f, &out->pred_masks_high_res, out->object_score,
                                         in->binarize_mask_from_pts && in->n_points >= 0,
                                         &out->maskmem, err);
        out->has_mem = st == SAMC_OK;
    }
    if (st)
        samc_track_out_release(out);
    return st;
}
