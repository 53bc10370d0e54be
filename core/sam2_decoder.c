/* sam2_decoder.c - prompts -> masks (SAM2ImagePredictor._predict,
 * MaskDecoder.forward/predict_masks, TwoWayTransformer.forward), wired from
 * layers with the trace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mask_select.h"
#include "sam2_model.h"

static void emit(samc_sam2_model *m, const char *module, int n, const char *const *slots,
                 const samc_tensor *const *t)
{
    if (m->trace)
        m->trace(m->trace_user, module, n, slots, t);
}

static const char *const slot_names[] = {"0", "1", "2", "3"};

static samc_status layer_failed(samc_error *err, samc_status st, const char *layer)
{
    return samc_fail(err, st, "%s failed (%s)", layer, samc_status_name(st));
}

/* (B,C,H,W) -> (B,HW,C): flatten(2).permute(0,2,1); b_out repeats batch 0
 * when the source has batch 1 (repeat / expand semantics). */
static samc_status nchw_to_tokens(const samc_tensor *x, int64_t b_out, samc_tensor *y, samc_error *err)
{
    const int64_t B = x->shape[0], C = x->shape[1], HW = x->shape[2] * x->shape[3];
    samc_status st = samc_tensor_allocv(y, err, 3, b_out, HW, C);
    if (st)
        return st;
    for (int64_t b = 0; b < b_out; b++) {
        const float *xb = x->data + (B == 1 ? 0 : b) * C * HW;
        for (int64_t i = 0; i < HW; i++)
            for (int64_t c = 0; c < C; c++)
                y->data[(b * HW + i) * C + c] = xb[c * HW + i];
    }
    return SAMC_OK;
}

samc_status samc_sam2_twoway_transformer(samc_sam2_model *m, const samc_tensor *image_embedding,
                                         const samc_tensor *image_pe, const samc_tensor *tokens,
                                         samc_tensor *q_out, samc_tensor *k_out, samc_error *err)
{
    const samc_twoway_transformer *tr = &m->mask_decoder.transformer;
    const int64_t B = image_embedding->shape[0];
    samc_tensor k = {0}, kpe = {0}, q = {0}, q2 = {0}, k2 = {0};
    samc_status st = nchw_to_tokens(image_embedding, B, &k, err);
    if (!st)
        st = nchw_to_tokens(image_pe, B, &kpe, err);
    if (!st)
        st = samc_tensor_copy(&q, tokens, err);
    char name[SAMC_LAYER_NAME_MAX];
    for (int l = 0; !st && l < tr->depth; l++) {
        snprintf(name, sizeof name, "sam_mask_decoder.transformer.layers.%d", l);
        if ((st = samc_tensor_alloc(&q2, q.ndim, q.shape, err)) || (st = samc_tensor_alloc(&k2, k.ndim, k.shape, err)))
            break;
        if ((st = samc_sam2_ops_for(m, name)->twoway_block(&m->ctx, &tr->layers[l], &q, &k, tokens, &kpe, &q2, &k2))) {
            st = layer_failed(err, st, name);
            break;
        }
        const samc_tensor *outs[] = {&q2, &k2};
        emit(m, name, 2, slot_names, outs);
        samc_tensor_release(&q), samc_tensor_release(&k);
        q = q2, k = k2;
        memset(&q2, 0, sizeof q2), memset(&k2, 0, sizeof k2);
    }
    if (!st && !(st = samc_tensor_alloc(q_out, q.ndim, q.shape, err))) {
        const char *tn = "sam_mask_decoder.transformer";
        if ((st = samc_sam2_ops_for(m, tn)->twoway_final(&m->ctx, tr, &q, &k, tokens, &kpe, q_out)))
            st = layer_failed(err, st, tn);
    }
    if (!st) {
        *k_out = k;
        memset(&k, 0, sizeof k);
        const samc_tensor *outs[] = {q_out, k_out};
        emit(m, "sam_mask_decoder.transformer", 2, slot_names, outs);
    } else {
        samc_tensor_release(q_out);
    }
    samc_tensor_release(&k), samc_tensor_release(&kpe), samc_tensor_release(&q);
    samc_tensor_release(&q2), samc_tensor_release(&k2);
    return st;
}

/* predict_masks' token assembly: [obj_score?, iou, mask tokens, sparse]. */
static samc_status assemble_tokens(const samc_mask_decoder *d, const samc_tensor *sparse, samc_tensor *tok,
                                   samc_error *err)
{
    const int64_t B = sparse->shape[0], Ns = sparse->shape[1], D = d->dim;
    const int64_t n_out = (d->pred_obj_scores ? 1 : 0) + 1 + d->num_mask_tokens;
    samc_status st = samc_tensor_allocv(tok, err, 3, B, n_out + Ns, D);
    if (st)
        return st;
    for (int64_t b = 0; b < B; b++) {
        float *t = tok->data + b * (n_out + Ns) * D;
        if (d->pred_obj_scores)
            memcpy(t, d->obj_score_token, (size_t)D * sizeof(float)), t += D;
        memcpy(t, d->iou_token, (size_t)D * sizeof(float)), t += D;
        memcpy(t, d->mask_tokens, (size_t)(d->num_mask_tokens * D) * sizeof(float)), t += d->num_mask_tokens * D;
        memcpy(t, sparse->data + b * Ns * D, (size_t)(Ns * D) * sizeof(float));
    }
    return SAMC_OK;
}

/* src = image_embeddings (repeated over B when repeat_image) + dense. */
static samc_status add_dense(const samc_tensor *img, const samc_tensor *dense, bool repeat, samc_tensor *src,
                             samc_error *err)
{
    const int64_t B = dense->shape[0], n = samc_numel(dense) / B;
    if (!repeat && img->shape[0] != B && img->shape[0] != 1)
        return samc_fail(err, SAMC_ERR_SHAPE, "image embedding batch %lld vs prompt batch %lld",
                         (long long)img->shape[0], (long long)B);
    samc_status st = samc_tensor_alloc(src, dense->ndim, dense->shape, err);
    if (st)
        return st;
    for (int64_t b = 0; b < B; b++) {
        const float *ib = img->data + (img->shape[0] == 1 ? 0 : b) * n;
        for (int64_t i = 0; i < n; i++)
            src->data[b * n + i] = ib[i] + dense->data[b * n + i];
    }
    return SAMC_OK;
}

samc_status samc_sam2_mask_decoder(samc_sam2_model *m, const samc_tensor *image_embed,
                                   const samc_tensor *image_pe, const samc_tensor *sparse,
                                   const samc_tensor *dense, bool multimask, bool repeat_image,
                                   const samc_tensor *feat_s0, const samc_tensor *feat_s1,
                                   samc_tensor out[4], samc_error *err)
{
    const samc_mask_decoder *d = &m->mask_decoder;
    const int64_t B = sparse->shape[0], M = d->num_mask_tokens, e = m->emb, s = d->pred_obj_scores ? 1 : 0;
    samc_tensor tok = {0}, src = {0}, hs = {0}, keys = {0}, masks = {0}, iou = {0};
    memset(out, 0, 4 * sizeof *out);
    samc_status st = assemble_tokens(d, sparse, &tok, err);
    if (!st)
        st = add_dense(image_embed, dense, repeat_image, &src, err);
    if (!st)
        st = samc_sam2_twoway_transformer(m, &src, image_pe, &tok, &hs, &keys, err);
    if (!st && !(st = samc_tensor_allocv(&masks, err, 4, B, M, 4 * e, 4 * e)) &&
        !(st = samc_tensor_allocv(&iou, err, 2, B, M)) && !(st = samc_tensor_allocv(&out[3], err, 2, B, (int64_t)1))) {
        if ((st = samc_sam2_ops_for(m, "sam_mask_decoder")->mask_decoder_heads(
                 &m->ctx, d, &hs, &keys, (int)e, (int)e, feat_s0, feat_s1, &masks, &iou, &out[3])))
            st = layer_failed(err, st, "sam_mask_decoder");
    }
    int tok_idx[1] = {0};
    if (!st)
        st = samc_mask_decoder_select(d, &masks, &iou, multimask, &out[0], &out[1], tok_idx, err);
    if (!st) { /* sam_tokens_out: tokens 1.. with multimask (and the flag), else token 0 */
        const bool many = multimask && d->use_multimask_token_for_obj_ptr;
        const int64_t first = many ? 1 : 0, n = many ? M - 1 : 1, T = hs.shape[1], D = d->dim;
        if (!(st = samc_tensor_allocv(&out[2], err, 3, B, n, D)))
            for (int64_t b = 0; b < B; b++)
                memcpy(out[2].data + b * n * D, hs.data + (b * T + s + 1 + first) * D, (size_t)(n * D) * sizeof(float));
    }
    if (!st) {
        const samc_tensor *outs[] = {&out[0], &out[1], &out[2], &out[3]};
        emit(m, "sam_mask_decoder", 4, slot_names, outs);
    } else {
        for (int i = 0; i < 4; i++)
            samc_tensor_release(&out[i]);
    }
    samc_tensor_release(&tok), samc_tensor_release(&src), samc_tensor_release(&hs);
    samc_tensor_release(&keys), samc_tensor_release(&masks), samc_tensor_release(&iou);
    return st;
}

samc_status samc_sam2_prompt_encoder(samc_sam2_model *m, const float *coords, const int32_t *labels, int n,
                                     const samc_tensor *mask, samc_tensor *sparse, samc_tensor *dense,
                                     samc_error *err)
{
    const int64_t D = m->prompt_encoder.embed_dim, e = m->emb;
    const int64_t n_sparse = n ? n + 1 : 0; /* + the padding point (boxes=None) */
    samc_status st = samc_tensor_allocv(sparse, err, 3, (int64_t)1, n_sparse, D);
    if (!st)
        st = samc_tensor_allocv(dense, err, 4, (int64_t)1, D, e, e);
    if (!st && (st = samc_sam2_ops_for(m, "sam_prompt_encoder")
                         ->prompt_encoder(&m->ctx, &m->prompt_encoder, coords, labels, 1, n, NULL, mask, sparse, dense)))
        st = samc_fail(err, st, "sam_prompt_encoder failed (%s)", samc_status_name(st));
    if (!st) {
        const samc_tensor *outs[] = {sparse, dense};
        emit(m, "sam_prompt_encoder", 2, slot_names, outs);
    } else {
        samc_tensor_release(sparse), samc_tensor_release(dense);
    }
    return st;
}
