/* sam2_decoder.c - prompts -> masks: the prompt encoder, the two-way
 * transformer, the mask decoder (MaskDecoder.forward/predict_masks,
 * TwoWayTransformer.forward) and @postprocess. Registry rows, weights,
 * isolated runners and wiring of these layers. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/mask_select.h"
#include "core/models/sam2/sam2_transforms.h"
#include "core/nn/connected_components.h"
#include "core/nn/layout.h"
#include "core/models/sam2/sam2_model.h"

#define IMG SAMC_OPS_SAM2_IMAGE
#define OP(kind) offsetof(samc_sam2_image_ops, kind)
#define OPS(L) ((const samc_sam2_image_ops *)(L)->ops)

enum { PROMPT_ENCODER, PE_LAYER, TWOWAY_LAYER, TRANSFORMER, MASK_DECODER, POSTPROCESS, N_DEFS };

static int count_layers(const void *model)
{
    return ((const samc_sam2_model *)model)->mask_decoder.transformer.depth;
}

static int twoway_class(const void *model, int index)
{
    return ((const samc_sam2_model *)model)->mask_decoder.transformer.layers[index].skip_first_layer_pe;
}

static samc_isolated_body iso_pe_layer, iso_prompt_encoder, iso_twoway_layer, iso_transformer, iso_mask_decoder, iso_postprocess;
static samc_status ex_prompt_encoder(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_pe_layer(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_twoway_layer(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_transformer(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_mask_decoder(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_postprocess(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);

static const samc_layer_def defs[N_DEFS] = {
    [PROMPT_ENCODER] = {"sam_prompt_encoder", IMG, OP(prompt_encoder), SAMC_NO_OP, SAMC_LAYER_PARITY, NULL,
                        iso_prompt_encoder, ex_prompt_encoder},
    /* get_dense_pe: pe_layer over the embedding grid */
    [PE_LAYER] = {"sam_prompt_encoder.pe_layer", IMG, OP(dense_pe), SAMC_NO_OP, 0, NULL, iso_pe_layer, ex_pe_layer},
    [TWOWAY_LAYER] = {"sam_mask_decoder.transformer.layers.#", IMG, OP(twoway_block), SAMC_NO_OP, SAMC_LAYER_PARITY,
                      count_layers, iso_twoway_layer, ex_twoway_layer, twoway_class},
    [TRANSFORMER] = {"sam_mask_decoder.transformer", IMG, OP(twoway_final), SAMC_NO_OP, SAMC_LAYER_PARITY, NULL,
                     iso_transformer, ex_transformer},
    [MASK_DECODER] = {"sam_mask_decoder", IMG, OP(mask_decoder_heads), SAMC_NO_OP, SAMC_LAYER_PARITY, NULL,
                      iso_mask_decoder, ex_mask_decoder},
    [POSTPROCESS] = {"@postprocess", IMG, OP(postprocess), SAMC_NO_OP, SAMC_LAYER_PARITY, NULL,
                     iso_postprocess, ex_postprocess},
};
const samc_layer_part samc__sam2_decoder_part = {defs, N_DEFS};

static const char *const slot_names[] = {"0", "1", "2", "3"};

/* ---- weights ---------------------------------------------------------------- */

static void describe_prompt_encoder(samc_sd *sd, samc_sam2_model *m)
{
    const int D = m->cfg.neck.d_model, c = m->cfg.mask_in_chans;
    samc_prompt_encoder *p = &m->prompt_encoder;
    samc_sd_prefix(sd, "sam_prompt_encoder.");
    p->embed_dim = D;
    p->emb_h = p->emb_w = m->emb;
    p->input_h = p->input_w = m->cfg.image_size;
    p->gauss = samc_sd_tensor(sd, 2, (const int64_t[]){2, D / 2}, "pe_layer.positional_encoding_gaussian_matrix");
    for (int i = 0; i < 4; i++)
        p->point_embed[i] = samc_sd_tensor(sd, 2, (const int64_t[]){1, D}, "point_embeddings.%d.weight", i);
    p->not_a_point = samc_sd_tensor(sd, 2, (const int64_t[]){1, D}, "not_a_point_embed.weight");
    p->no_mask = samc_sd_tensor(sd, 2, (const int64_t[]){1, D}, "no_mask_embed.weight");
    samc_sd_conv(sd, &p->md_conv0, "mask_downscaling.0", 1, c / 4, 2, 2, 0, 1, true);
    samc_sd_norm(sd, &p->md_norm1, "mask_downscaling.1", c / 4, 1e-6f);
    samc_sd_conv(sd, &p->md_conv3, "mask_downscaling.3", c / 4, c, 2, 2, 0, 1, true);
    samc_sd_norm(sd, &p->md_norm4, "mask_downscaling.4", c, 1e-6f);
    samc_sd_conv(sd, &p->md_conv6, "mask_downscaling.6", c, D, 1, 1, 0, 1, true);
}

static void describe_transformer(samc_sd *sd, samc_sam2_model *m)
{
    const samc_sam2_config *c = &m->cfg;
    const int D = c->neck.d_model, H = c->twoway_heads;
    samc_twoway_transformer *t = &m->mask_decoder.transformer;
    t->depth = c->twoway_depth;
    for (int l = 0; l < t->depth; l++) {
        samc_twoway_block *blk = &t->layers[l];
        samc_sd_prefix(sd, "sam_mask_decoder.transformer.layers.%d.", l);
        samc_sd_attention(sd, &blk->self_attn, "self_attn", D, D, D, H);
        samc_sd_attention(sd, &blk->cross_t2i, "cross_attn_token_to_image", D, D / 2, D, H);
        samc_sd_attention(sd, &blk->cross_i2t, "cross_attn_image_to_token", D, D / 2, D, H);
        samc_sd_linear(sd, &blk->mlp_fc1, "mlp.layers.0", D, c->twoway_mlp_dim, true);
        samc_sd_linear(sd, &blk->mlp_fc2, "mlp.layers.1", c->twoway_mlp_dim, D, true);
        samc_sd_norm(sd, &blk->norm1, "norm1", D, 1e-5f); /* nn.LayerNorm default eps */
        samc_sd_norm(sd, &blk->norm2, "norm2", D, 1e-5f);
        samc_sd_norm(sd, &blk->norm3, "norm3", D, 1e-5f);
        samc_sd_norm(sd, &blk->norm4, "norm4", D, 1e-5f);
        blk->skip_first_layer_pe = l == 0;
    }
    samc_sd_prefix(sd, "sam_mask_decoder.transformer.");
    samc_sd_attention(sd, &t->final_attn, "final_attn_token_to_image", D, D / 2, D, H);
    samc_sd_norm(sd, &t->norm_final, "norm_final_attn", D, 1e-5f);
}

static void describe_mask_decoder(samc_sd *sd, samc_sam2_model *m)
{
    const samc_sam2_config *c = &m->cfg;
    const int D = c->neck.d_model, M = c->num_multimask_outputs + 1;
    samc_mask_decoder *d = &m->mask_decoder;
    d->dim = D, d->num_mask_tokens = M;
    d->pred_obj_scores = c->pred_obj_scores, d->pred_obj_scores_mlp = c->pred_obj_scores_mlp;
    d->use_high_res_features = c->use_high_res_features_in_sam;
    d->iou_sigmoid = c->iou_prediction_use_sigmoid;
    d->dynamic_multimask_via_stability = c->dynamic_multimask_via_stability;
    d->dynamic_multimask_stability_delta = (float)c->dynamic_multimask_stability_delta;
    d->dynamic_multimask_stability_thresh = (float)c->dynamic_multimask_stability_thresh;
    d->use_multimask_token_for_obj_ptr = c->use_multimask_token_for_obj_ptr;
    samc_sd_prefix(sd, "sam_mask_decoder.");
    d->iou_token = samc_sd_tensor(sd, 2, (const int64_t[]){1, D}, "iou_token.weight");
    d->mask_tokens = samc_sd_tensor(sd, 2, (const int64_t[]){M, D}, "mask_tokens.weight");
    d->obj_score_token = c->pred_obj_scores ? samc_sd_tensor(sd, 2, (const int64_t[]){1, D}, "obj_score_token.weight")
                                            : NULL;
    describe_transformer(sd, m);
    samc_sd_prefix(sd, "sam_mask_decoder.");
    samc_sd_conv_t(sd, &d->up0, "output_upscaling.0", D, D / 4, 2);
    samc_sd_norm(sd, &d->up_norm, "output_upscaling.1", D / 4, 1e-6f);
    samc_sd_conv_t(sd, &d->up1, "output_upscaling.3", D / 4, D / 8, 2);
    if (c->use_high_res_features_in_sam) {
        samc_sd_conv(sd, &d->conv_s0, "conv_s0", D, D / 8, 1, 1, 0, 1, true);
        samc_sd_conv(sd, &d->conv_s1, "conv_s1", D, D / 4, 1, 1, 0, 1, true);
    }
    char k[96];
    for (int t = 0; t < M; t++) {
        snprintf(k, sizeof k, "output_hypernetworks_mlps.%d", t);
        samc_sd_mlp(sd, &d->hyper[t], k, D, D, D / 8, 3, false);
    }
    samc_sd_mlp(sd, &d->iou_head, "iou_prediction_head", D, c->iou_head_hidden_dim, M, c->iou_head_depth, false);
    if (c->pred_obj_scores && c->pred_obj_scores_mlp)
        samc_sd_mlp(sd, &d->obj_head, "pred_obj_score_head", D, D, 1, 3, false);
    else if (c->pred_obj_scores) {
        d->obj_head = (samc_mlp){.num_layers = 1};
        samc_sd_linear(sd, &d->obj_head.layers[0], "pred_obj_score_head", D, 1, true);
    }
}

void samc__sam2_describe_decoder(samc_sd *sd, samc_sam2_model *m)
{
    describe_prompt_encoder(sd, m);
    describe_mask_decoder(sd, m);
}

/* ---- wiring ------------------------------------------------------------------- */

/* Wire slots (samc_exec_wire): the two-way transformer's key maps (the
 * keys ping-pong between KEYS_A and KEYS_B across layers, their PE) and
 * the dense prompt embedding (live from the prompt encoder to the decoder). */
enum { WIRE_KEYS_A, WIRE_KEYS_B, WIRE_KEY_PE, WIRE_DENSE };

/* (B,C,H,W) [+ dense (b_out,C,H,W)] -> (b_out,HW,C): flatten(2).permute(0,2,1),
 * with predict_masks' `src = image_embeddings + dense_prompt_embeddings`
 * fused into the read (the same float sums, no (B,C,H,W) temporary); a
 * source of batch 1 serves every b (repeat / expand semantics). Written in
 * full into wire slot `slot`. */
static samc_status image_tokens(samc_exec *x, int slot, const samc_tensor *img, const samc_tensor *dense,
                                int64_t b_out, samc_tensor *y, samc_error *err)
{
    const int64_t B = img->shape[0], C = img->shape[1], HW = img->shape[2] * img->shape[3];
    samc_status st = samc_exec_wire(x, slot, 3, (const int64_t[]){b_out, HW, C}, y, err);
    if (st)
        return st;
    samc_layout_planes_to_tokens(samc_exec_wire_threads(x, b_out * HW * C), img->data, B,
                                 dense ? dense->data : NULL, b_out, HW, C, y->data);
    return SAMC_OK;
}

/* TwoWayTransformer.forward on src = image_embedding (+ dense when given,
 * of the tokens' batch: predict_masks' sum, fused into the token layout).
 * The positional encoding keeps its own batch (1: one copy read by every
 * batch element, as the bodies accept). */
static samc_status twoway_transformer(samc_exec *x, const samc_scope *sc, const samc_tensor *image_embedding,
                                      const samc_tensor *dense, const samc_tensor *image_pe, const samc_tensor *tokens,
                                      samc_tensor *q_out, samc_tensor *k_out, samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const samc_twoway_transformer *tr = &m->mask_decoder.transformer;
    const int64_t B = tokens->shape[0];
    const samc_tensor *img = image_embedding;
    if (img->ndim != 4 || image_pe->ndim != 4 || (dense && (dense->ndim != 4 || dense->shape[1] != img->shape[1] ||
                                                            dense->shape[2] != img->shape[2] ||
                                                            dense->shape[3] != img->shape[3])))
        return samc_fail(err, SAMC_ERR_SHAPE, "two-way transformer: image, pe and dense must be (B,C,H,W) alike");
    if ((img->shape[0] != B && img->shape[0] != 1) || (image_pe->shape[0] != B && image_pe->shape[0] != 1) ||
        (dense && dense->shape[0] != B))
        return samc_fail(err, SAMC_ERR_SHAPE, "image embedding batch %lld / pe batch %lld vs prompt batch %lld",
                         (long long)img->shape[0], (long long)image_pe->shape[0], (long long)B);
    samc_tensor k = {0}, kpe = {0}, q = {0}, q2 = {0}, k2 = {0};
    int kslot = WIRE_KEYS_A;
    samc_status st = image_tokens(x, kslot, image_embedding, dense, B, &k, err);
    if (!st)
        st = image_tokens(x, WIRE_KEY_PE, image_pe, NULL, image_pe->shape[0], &kpe, err);
    if (!st)
        st = samc_tensor_copy(&q, tokens, err);
    for (int l = 0; !st && l < tr->depth; l++) {
        const samc_layer *L = samc_layer_get(x, &defs[TWOWAY_LAYER], l);
        const int kslot2 = kslot == WIRE_KEYS_A ? WIRE_KEYS_B : WIRE_KEYS_A;
        if ((st = samc_tensor_alloc(&q2, q.ndim, q.shape, err)) || (st = samc_exec_wire(x, kslot2, k.ndim, k.shape, &k2, err)))
            break;
        const samc_tensor *outs[] = {&q2, &k2};
        st = OPS(L)->twoway_block(samc_layer_ctx(x, L), &tr->layers[l], &q, &k, tokens, &kpe, &q2, &k2);
        if ((st = samc_layer_done(x, L, sc, st, err, 2, slot_names, outs)))
            break;
        samc_tensor_release(&q), samc_tensor_release(&k);
        q = q2, k = k2, kslot = kslot2;
        memset(&q2, 0, sizeof q2), memset(&k2, 0, sizeof k2);
    }
    const samc_layer *L = samc_layer_get(x, &defs[TRANSFORMER], 0);
    if (!st && !(st = samc_tensor_alloc(q_out, q.ndim, q.shape, err))) {
        *k_out = k;
        memset(&k, 0, sizeof k);
        const samc_tensor *outs[] = {q_out, k_out};
        st = OPS(L)->twoway_final(samc_layer_ctx(x, L), tr, &q, k_out, tokens, &kpe, q_out);
        st = samc_layer_done(x, L, sc, st, err, 2, slot_names, outs);
    }
    if (st)
        samc_tensor_release(q_out), samc_tensor_release(k_out);
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
    for (int64_t b = 0; !st && b < B; b++) {
        float *t = tok->data + b * (n_out + Ns) * D;
        if (d->pred_obj_scores)
            memcpy(t, d->obj_score_token, (size_t)D * sizeof(float)), t += D;
        memcpy(t, d->iou_token, (size_t)D * sizeof(float)), t += D;
        memcpy(t, d->mask_tokens, (size_t)(d->num_mask_tokens * D) * sizeof(float)), t += d->num_mask_tokens * D;
        memcpy(t, sparse->data + b * Ns * D, (size_t)(Ns * D) * sizeof(float));
    }
    return st;
}

/* sam_tokens_out: tokens 1.. with multimask (and the flag), else token 0. */
static samc_status sam_tokens_out(const samc_mask_decoder *d, const samc_tensor *hs, bool multimask, samc_tensor *out,
                                  samc_error *err)
{
    const bool many = multimask && d->use_multimask_token_for_obj_ptr;
    const int64_t B = hs->shape[0], T = hs->shape[1], D = d->dim, s = d->pred_obj_scores ? 1 : 0;
    const int64_t first = many ? 1 : 0, n = many ? d->num_mask_tokens - 1 : 1;
    samc_status st = samc_tensor_allocv(out, err, 3, B, n, D);
    for (int64_t b = 0; !st && b < B; b++)
        memcpy(out->data + b * n * D, hs->data + (b * T + s + 1 + first) * D, (size_t)(n * D) * sizeof(float));
    return st;
}

/* _dynamic_multimask_via_stability's choice as a decision point (one prompt):
 * token 0 when its stability reaches the threshold, else the best multimask
 * token. -1: no such decision here. */
static int stability_choice(samc_exec *x, const samc_scope *sc, const samc_mask_decoder *d, const samc_tensor *masks,
                            const samc_tensor *iou, bool multimask)
{
    if (multimask || !d->dynamic_multimask_via_stability || !x->decide || masks->shape[0] != 1)
        return -1;
    const int M = d->num_mask_tokens;
    const int64_t hw = masks->shape[2] * masks->shape[3];
    float s = samc_mask_stability_score(masks->data, hw, d->dynamic_multimask_stability_delta);
    samc_decision dd = {.kind = SAMC_DECISION_STABILITY, .module = defs[MASK_DECODER].pattern, .values = &s, .n = 1,
                        .threshold = d->dynamic_multimask_stability_thresh, .masks = masks->data, .n_masks = M,
                        .hw = hw, .choices = {0, 1 + samc_argmax_first(iou->data + 1, M - 1)}};
    samc_exec_decide(x, sc, &dd);
    return s >= dd.threshold ? 0 : dd.choices[1];
}

samc_status samc_sam2_mask_decoder(samc_exec *x, const samc_scope *sc, const samc_tensor *image_embed,
                                   const samc_tensor *image_pe, const samc_tensor *sparse,
                                   const samc_tensor *dense, bool multimask, bool repeat_image,
                                   const samc_tensor *feat_s0, const samc_tensor *feat_s1,
                                   samc_tensor out[4], samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const samc_mask_decoder *d = &m->mask_decoder;
    const samc_layer *L = samc_layer_get(x, &defs[MASK_DECODER], 0);
    const int64_t B = sparse->shape[0], M = d->num_mask_tokens, e = m->emb;
    samc_tensor tok = {0}, hs = {0}, keys = {0}, masks = {0}, iou = {0};
    memset(out, 0, 4 * sizeof *out);
    if (dense->shape[0] != B || (!repeat_image && image_embed->shape[0] != B && image_embed->shape[0] != 1))
        return samc_fail(err, SAMC_ERR_SHAPE, "image embedding batch %lld / dense batch %lld vs prompt batch %lld",
                         (long long)image_embed->shape[0], (long long)dense->shape[0], (long long)B);
    samc_status st = assemble_tokens(d, sparse, &tok, err);
    if (!st) /* src = image_embeddings (repeated over B) + dense, summed in the token layout */
        st = twoway_transformer(x, sc, image_embed, dense, image_pe, &tok, &hs, &keys, err);
    if (!st && !(st = samc_tensor_allocv(&masks, err, 4, B, M, 4 * e, 4 * e)) &&
        !(st = samc_tensor_allocv(&iou, err, 2, B, M)) && !(st = samc_tensor_allocv(&out[3], err, 2, B, (int64_t)1))) {
        st = OPS(L)->mask_decoder_heads(samc_layer_ctx(x, L), d, &hs, &keys, (int)e, (int)e, feat_s0, feat_s1, &masks,
                                        &iou, &out[3]);
        st = samc_layer_done(x, L, sc, st, err, 0, NULL, NULL);
    }
    int tok_idx[1] = {0};
    if (!st)
        st = samc_mask_decoder_select_forced(d, &masks, &iou, multimask, stability_choice(x, sc, d, &masks, &iou, multimask),
                                             &out[0], &out[1], tok_idx, err);
    if (!st)
        st = sam_tokens_out(d, &hs, multimask, &out[2], err);
    if (!st) {
        const samc_tensor *outs[] = {&out[0], &out[1], &out[2], &out[3]};
        samc_layer_emit(x, L, sc, 4, slot_names, outs);
    } else {
        for (int i = 0; i < 4; i++)
            samc_tensor_release(&out[i]);
    }
    samc_tensor_release(&tok), samc_tensor_release(&hs);
    samc_tensor_release(&keys), samc_tensor_release(&masks), samc_tensor_release(&iou);
    return st;
}

samc_status samc_sam2_prompt_encoder(samc_exec *x, const samc_scope *sc, const float *coords,
                                     const int32_t *labels, int n, const samc_tensor *mask, samc_tensor *sparse,
                                     samc_tensor *dense, samc_error *err)
{
    return samc_sam2_prompt_encoder_batch(x, sc, coords, labels, 1, n, mask, sparse, dense, err);
}

samc_status samc_sam2_prompt_encoder_batch(samc_exec *x, const samc_scope *sc, const float *coords,
                                           const int32_t *labels, int B, int n, const samc_tensor *mask,
                                           samc_tensor *sparse, samc_tensor *dense, samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const samc_layer *L = samc_layer_get(x, &defs[PROMPT_ENCODER], 0);
    const int64_t D = m->prompt_encoder.embed_dim, e = m->emb;
    const int64_t n_sparse = n ? n + 1 : 0; /* + the padding point (boxes=None) */
    samc_status st = samc_tensor_allocv(sparse, err, 3, (int64_t)B, n_sparse, D);
    if (!st) /* written in full by the body; the caller releases it before its next prompt encoding */
        st = samc_exec_wire(x, WIRE_DENSE, 4, (const int64_t[]){B, D, e, e}, dense, err);
    if (!st) {
        const samc_tensor *outs[] = {sparse, dense};
        st = OPS(L)->prompt_encoder(samc_layer_ctx(x, L), &m->prompt_encoder, coords, labels, B, n, NULL, mask, sparse,
                                    dense);
        st = samc_layer_done(x, L, sc, st, err, 2, slot_names, outs);
    }
    if (st)
        samc_tensor_release(sparse), samc_tensor_release(dense);
    return st;
}

samc_status samc_sam2_dense_pe(samc_exec *x, samc_tensor *pe, samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const samc_layer *L = samc_layer_get(x, &defs[PE_LAYER], 0);
    const int64_t shape[4] = {1, m->prompt_encoder.embed_dim, m->emb, m->emb};
    samc_status st = samc_tensor_alloc_uninit(pe, 4, shape, err); /* the body writes it in full */
    if (!st)
        st = samc_layer_done(x, L, NULL, OPS(L)->dense_pe(samc_layer_ctx(x, L), &m->prompt_encoder, pe), err, 0, NULL,
                             NULL);
    if (st)
        samc_tensor_release(pe);
    return st;
}

samc_status samc_sam2_postprocess(samc_exec *x, const samc_tensor *low, int H, int W, samc_tensor *out,
                                  samc_error *err)
{
    const samc_layer *L = samc_layer_get(x, &defs[POSTPROCESS], 0);
    const int64_t shape[4] = {low->shape[0], low->shape[1], H, W};
    samc_status st = samc_tensor_alloc_uninit(out, 4, shape, err); /* every pixel is interpolated */
    const samc_tensor *outs[] = {out};
    if (!st)
        st = samc_layer_done(x, L, &samc_no_scope, OPS(L)->postprocess(samc_layer_ctx(x, L), low, H, W, out), err, 1,
                             slot_names, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

/* _apply_non_overlapping_constraints as a decision point: each pixel kept
 * for the object with the highest logit there (the others clamped). */
static void non_overlap(samc_exec *x, const samc_scope *sc, samc_tensor *m)
{
    const int n = (int)m->shape[0];
    const int64_t hw = m->shape[2] * m->shape[3];
    samc_decision d = {.kind = SAMC_DECISION_NON_OVERLAP, .module = defs[POSTPROCESS].pattern, .values = m->data,
                       .n = n * hw, .n_masks = n, .hw = hw};
    if (sc)
        samc_exec_decide(x, sc, &d);
    samc_sam2_non_overlap(m->data, n, hw);
}

samc_status samc_sam2_postprocess_video(samc_exec *x, const samc_scope *sc, const samc_tensor *low, int H, int W,
                                        bool non_overlap_masks, samc_tensor *out, samc_error *err)
{
    const samc_layer *L = samc_layer_get(x, &defs[POSTPROCESS], 0);
    samc_status st = samc_tensor_allocv(out, err, 4, low->shape[0], (int64_t)1, (int64_t)H, (int64_t)W);
    if (!st && low->shape[2] == H && low->shape[3] == W) /* _get_orig_video_res_output: no resize at that size */
        memcpy(out->data, low->data, (size_t)samc_numel(out) * sizeof(float));
    else if (!st)
        st = samc_layer_done(x, L, NULL, OPS(L)->postprocess(samc_layer_ctx(x, L), low, H, W, out), err, 0, NULL, NULL);
    if (!st && non_overlap_masks)
        non_overlap(x, sc, out);
    const samc_tensor *outs[] = {out};
    if (!st && sc)
        samc_layer_emit(x, L, sc, 1, slot_names, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

/* ---- isolated runners ------------------------------------------------------- */

static samc_status iso_prompt_encoder(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                      samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const samc_layer *L = samc_layer_get(x, &defs[PROMPT_ENCODER], index);
    samc_tensor coords = {0}, labels = {0}, boxes = {0}, masks = {0};
    samc_status st = SAMC_OK;
    const bool pts = samc_io_has(in, "points.0", "0.0");
    if (pts && !(st = samc_io_tensor(in, "points.0", "0.0", &coords, err)))
        st = samc_io_tensor(in, "points.1", "0.1", &labels, err);
    if (!st && samc_io_has(in, "boxes", "1"))
        st = samc_io_tensor(in, "boxes", "1", &boxes, err);
    if (!st && samc_io_has(in, "masks", "2"))
        st = samc_io_tensor(in, "masks", "2", &masks, err);
    if (!st && pts && (coords.ndim != 3 || coords.shape[2] != 2 || samc_numel(&labels) != coords.shape[0] * coords.shape[1]))
        st = samc_fail(err, SAMC_ERR_SHAPE, "sam_prompt_encoder: points must be (B,N,2) with (B,N) labels");
    const int64_t B = pts ? coords.shape[0] : boxes.data ? boxes.shape[0] : masks.data ? masks.shape[0] : 1;
    const int64_t N = pts ? coords.shape[1] : 0, D = m->prompt_encoder.embed_dim;
    int32_t *lab = NULL;
    if (!st && pts && !(lab = malloc((size_t)(B * N > 0 ? B * N : 1) * sizeof *lab)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; lab && i < B * N; i++)
        lab[i] = (int32_t)labels.data[i];
    samc_tensor *sp = samc_layer_out_slot(out, "0"), *de = samc_layer_out_slot(out, "1");
    const int64_t ns = N + (N > 0 && !boxes.data) + (boxes.data ? 2 : 0);
    if (!st && !(st = samc_tensor_allocv(sp, err, 3, B, ns, D)) &&
        !(st = samc_tensor_allocv(de, err, 4, B, D, (int64_t)m->emb, (int64_t)m->emb)))
        st = samc_layer_done(x, L, NULL,
                             OPS(L)->prompt_encoder(samc_layer_ctx(x, L), &m->prompt_encoder, coords.data, lab, (int)B,
                                                    (int)N, boxes.data, masks.data ? &masks : NULL, sp, de),
                             err, 0, NULL, NULL);
    free(lab);
    samc_tensor_release(&coords), samc_tensor_release(&labels), samc_tensor_release(&boxes);
    samc_tensor_release(&masks);
    return st;
}

/* get_dense_pe has no input: in/0 is not read. */
static samc_status iso_pe_layer(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                samc_error *err)
{
    (void)index, (void)in;
    samc_tensor *y = samc_layer_out_slot(out, "0");
    return samc_sam2_dense_pe(x, y, err);
}

static samc_status iso_twoway_layer(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                    samc_error *err)
{
    const samc_sam2_model *m = x->model;
    const samc_layer *L = samc_layer_get(x, &defs[TWOWAY_LAYER], index);
    samc_tensor q = {0}, k = {0}, qpe = {0}, kpe = {0};
    samc_status st = samc_io_tensor(in, "queries", "0", &q, err);
    if (!st)
        st = samc_io_tensor(in, "keys", "1", &k, err);
    if (!st)
        st = samc_io_tensor(in, "query_pe", "2", &qpe, err);
    if (!st)
        st = samc_io_tensor(in, "key_pe", "3", &kpe, err);
    samc_tensor *qo = samc_layer_out_slot(out, "0"), *ko = samc_layer_out_slot(out, "1");
    if (!st && !(st = samc_tensor_alloc(qo, q.ndim, q.shape, err)) && !(st = samc_tensor_alloc(ko, k.ndim, k.shape, err)))
        st = samc_layer_done(x, L, NULL,
                             OPS(L)->twoway_block(samc_layer_ctx(x, L), &m->mask_decoder.transformer.layers[index], &q,
                                                  &k, &qpe, &kpe, qo, ko),
                             err, 0, NULL, NULL);
    samc_tensor_release(&q), samc_tensor_release(&k), samc_tensor_release(&qpe), samc_tensor_release(&kpe);
    return st;
}

static samc_status iso_transformer(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    (void)index;
    samc_tensor a = {0}, b = {0}, c = {0}, q = {0}, k = {0};
    samc_capture cap;
    samc_status st = samc_io_tensor(in, "image_embedding", "0", &a, err);
    if (!st)
        st = samc_io_tensor(in, "image_pe", "1", &b, err);
    if (!st)
        st = samc_io_tensor(in, "point_embedding", "2", &c, err);
    samc_capture_begin(x, &cap, defs[TRANSFORMER].pattern, out);
    if (!st)
        st = twoway_transformer(x, &samc_no_scope, &a, NULL, &b, &c, &q, &k, err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&a), samc_tensor_release(&b), samc_tensor_release(&c);
    samc_tensor_release(&q), samc_tensor_release(&k);
    return st;
}

static samc_status iso_mask_decoder(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                    samc_error *err)
{
    (void)index;
    samc_tensor a = {0}, b = {0}, c = {0}, d = {0}, s0 = {0}, s1 = {0}, res[4] = {{0}};
    const bool hr = samc_io_has(in, "high_res_features.0", NULL);
    const double mm = samc_io_scalar_or(in, "multimask_output", "4", 0), rep = samc_io_scalar_or(in, "repeat_image", "5", 0);
    samc_capture cap;
    samc_status st = samc_io_tensor(in, "image_embeddings", "0", &a, err);
    if (!st)
        st = samc_io_tensor(in, "image_pe", "1", &b, err);
    if (!st)
        st = samc_io_tensor(in, "sparse_prompt_embeddings", "2", &c, err);
    if (!st)
        st = samc_io_tensor(in, "dense_prompt_embeddings", "3", &d, err);
    if (!st && hr && !(st = samc_io_tensor(in, "high_res_features.0", NULL, &s0, err)))
        st = samc_io_tensor(in, "high_res_features.1", NULL, &s1, err);
    samc_capture_begin(x, &cap, defs[MASK_DECODER].pattern, out);
    if (!st)
        st = samc_sam2_mask_decoder(x, &samc_no_scope, &a, &b, &c, &d, mm != 0, rep != 0, hr ? &s0 : NULL,
                                    hr ? &s1 : NULL, res, err);
    samc_capture_end(x, &cap);
    samc_tensor *all[] = {&a, &b, &c, &d, &s0, &s1, &res[0], &res[1], &res[2], &res[3]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        samc_tensor_release(all[i]);
    return st;
}

/* Image: SAM2Transforms.postprocess_masks (hole and sprinkle filling with
 * the task's predictor options, then the resize). Video: the resize to the video resolution, with the
 * non-overlap constraint when the config asks for it. */
static samc_status iso_postprocess(samc_exec *x, int index, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    (void)index;
    const samc_sam2_model *m = x->model;
    samc_tensor low = {0};
    samc_status st = samc_io_tensor(in, in->video ? "any_res_masks" : "masks", "0", &low, err);
    if (!st && low.ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "@postprocess input must be 4-D");
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && in->video) {
        samc_tensor r = {0};
        if (!(st = samc_sam2_postprocess_video(x, NULL, &low, in->video_h, in->video_w,
                                               m->cfg.video.non_overlap_masks, &r, err)))
            *y = r;
    } else if (!st) {
        const double h = samc_io_scalar_or(in, "1.0", NULL, -1), w = samc_io_scalar_or(in, "1.1", NULL, -1);
        if (h < 1 || w < 1)
            st = samc_fail(err, SAMC_ERR_KEY, "@postprocess: the original size (in/1.0, in/1.1) is missing");
        samc_tensor r = {0};
        if (!st && (in->max_hole_area > 0 || in->max_sprinkle_area > 0) &&
            (st = samc_fill_holes_image_predictor(&low, 0.0f, in->max_hole_area, in->max_sprinkle_area)))
            st = samc_fail(err, st, "@postprocess: hole filling failed");
        if (!st && !(st = samc_sam2_postprocess(x, &low, (int)h, (int)w, &r, err)))
            *y = r;
    }
    samc_tensor_release(&low);
    return st;
}

/* ---- op-test inputs ------------------------------------------------------------ */

#define RND(name, lo, hi, ...)                                                                            \
    do {                                                                                                  \
        if (!samc_inputs_random(in, name, seed++, lo, hi, err, __VA_ARGS__))                               \
            return SAMC_ERR_NOMEM;                                                                        \
    } while (0)

static samc_status ex_prompt_encoder(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                     samc_error *err)
{
    (void)index, (void)full;
    const samc_sam2_model *m = model;
    const int64_t S = m->cfg.image_size, s4 = 4 * (int64_t)m->emb;
    RND("points.0", 0, (float)S, 3, (int64_t)1, (int64_t)3, (int64_t)2);
    RND("points.1", 0, 4, 2, (int64_t)1, (int64_t)3);
    samc_tensor *lab = &in->items[in->n - 1].t;
    for (int i = 0; i < 3; i++) /* labels 0..3 */
        lab->data[i] = floorf(lab->data[i]);
    RND("masks", -8, 8, 4, (int64_t)1, (int64_t)1, s4, s4);
    return SAMC_OK;
}

static samc_status ex_twoway_layer(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                   samc_error *err)
{
    (void)index;
    const samc_sam2_model *m = model;
    const int64_t D = m->mask_decoder.dim, Nk = full ? (int64_t)m->emb * m->emb : 1024, Nq = 8;
    RND("queries", -2, 2, 3, (int64_t)1, Nq, D);
    RND("keys", -2, 2, 3, (int64_t)1, Nk, D);
    RND("query_pe", -1, 1, 3, (int64_t)1, Nq, D);
    RND("key_pe", -1, 1, 3, (int64_t)1, Nk, D);
    return SAMC_OK;
}

static samc_status ex_transformer(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                  samc_error *err)
{
    (void)index;
    const samc_sam2_model *m = model;
    const int64_t D = m->mask_decoder.dim, e = full ? m->emb : 32;
    RND("image_embedding", -2, 2, 4, (int64_t)1, D, e, e);
    RND("image_pe", -1, 1, 4, (int64_t)1, D, e, e);
    RND("point_embedding", -2, 2, 3, (int64_t)1, (int64_t)8, D);
    return SAMC_OK;
}

static samc_status ex_mask_decoder(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                   samc_error *err)
{
    (void)index, (void)full; /* the heads' upscaling needs the model's own grid */
    const samc_sam2_model *m = model;
    const int64_t D = m->mask_decoder.dim, e = m->emb;
    RND("image_embeddings", -2, 2, 4, (int64_t)1, D, e, e);
    RND("image_pe", -1, 1, 4, (int64_t)1, D, e, e);
    RND("sparse_prompt_embeddings", -2, 2, 3, (int64_t)1, (int64_t)3, D);
    RND("dense_prompt_embeddings", -1, 1, 4, (int64_t)1, D, e, e);
    if (m->mask_decoder.use_high_res_features) {
        RND("high_res_features.0", -2, 2, 4, (int64_t)1, D / 8, 4 * e, 4 * e);
        RND("high_res_features.1", -2, 2, 4, (int64_t)1, D / 4, 2 * e, 2 * e);
    }
    samc_status st = samc_inputs_scalar(in, "multimask_output", 1, err);
    return st ? st : samc_inputs_scalar(in, "repeat_image", 0, err);
}

/* Both variants: the image predictor's (masks, original size) and the video
 * predictor's (any_res_masks, the video size); in->video picks one. */
static samc_status ex_postprocess(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                  samc_error *err)
{
    (void)index;
    const samc_sam2_model *m = model;
    const int64_t s4 = 4 * (int64_t)m->emb;
    RND("masks", -20, 20, 4, (int64_t)1, (int64_t)3, s4, s4);
    RND("any_res_masks", -20, 20, 4, (int64_t)2, (int64_t)1, s4, s4);
    in->video_h = full ? 720 : 90, in->video_w = full ? 1280 : 160;
    samc_status st = samc_inputs_scalar(in, "1.0", full ? 768 : 96, err);
    return st ? st : samc_inputs_scalar(in, "1.1", full ? 1024 : 128, err);
}

static samc_status ex_pe_layer(const void *model, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                               samc_error *err)
{
    (void)model, (void)index, (void)seed, (void)full;
    return samc_inputs_scalar(in, "unused", 0, err); /* no input: the grid is the model's */
}
