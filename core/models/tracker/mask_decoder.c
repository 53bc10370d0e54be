/* SPDX-License-Identifier: Apache-2.0 */
/* mask_decoder.c - the MaskDecoder part with its TwoWayTransformer
 * (sam2/modeling/sam/mask_decoder.py, transformer.py): its rows (relative
 * to its root: "sam_mask_decoder", "tracker.sam_mask_decoder"), weights,
 * forwards (the decoder, and forward_image's conv_s0/conv_s1, which are
 * its modules), isolated runners and op-test inputs. */
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/mask_select.h"
#include "core/models/tracker/sam_heads.h"
#include "core/nn/nn_ops.h"
#include "core/nn/nn_rows.h"

enum { IMAGE_TOKENS, TWOWAY_LAYER, TRANSFORMER, DECODER, CONV_S0, CONV_S1, N_ROWS };

static int count_layers(const void *self) { return ((const samc_mask_decoder *)self)->transformer.depth; }
static int has_high_res(const void *self) { return ((const samc_mask_decoder *)self)->use_high_res_features; }
static int high_res_traced(const void *self) { return ((const samc_mask_decoder *)self)->trace_high_res; }
static int twoway_class(const void *self, int index)
{
    return ((const samc_mask_decoder *)self)->transformer.layers[index].skip_first_layer_pe;
}

static samc_isolated_body iso_twoway_layer, iso_transformer, iso_mask_decoder, iso_conv_s;
static samc_status ex_twoway_layer(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_transformer(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_mask_decoder(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_conv_s0(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_conv_s1(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def rows[N_ROWS] = {
    /* predict_masks' src = image_embeddings + dense_prompt_embeddings and the
     * image PE, flattened to token rows for the transformer */
    [IMAGE_TOKENS] = {.pattern = "@image_tokens", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, planes_to_tokens),
                      .isolated = samc_nn_run_planes_to_tokens, .example = samc_nn_example_planes_to_tokens},
    [TWOWAY_LAYER] = {.pattern = "transformer.layers.#", .table = SAMC_OPS_TRACKER,
                      .body = SAMC_BODY(samc_tracker_ops, twoway_block), .parity = true, .count = count_layers,
                      .isolated = iso_twoway_layer, .example = ex_twoway_layer, .op_class = twoway_class},
    [TRANSFORMER] = {.pattern = "transformer", .table = SAMC_OPS_TRACKER,
                     .body = SAMC_BODY(samc_tracker_ops, twoway_final), .parity = true, .isolated = iso_transformer,
                     .example = ex_transformer},
    /* with an implementation that has it, the prompt encoder and this part
     * in one body (samc_tracker_sam_heads_fn) */
    [DECODER] = {.pattern = "", .table = SAMC_OPS_TRACKER, .body = SAMC_BODY(samc_tracker_ops, mask_decoder_heads),
                 .whole = SAMC_BODY(samc_tracker_ops, sam_heads), .parity = true, .isolated = iso_mask_decoder,
                 .example = ex_mask_decoder},
    [CONV_S0] = {.pattern = "conv_s0", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, conv2d),
                 .parity_if = high_res_traced, .count = has_high_res, .isolated = iso_conv_s, .example = ex_conv_s0},
    [CONV_S1] = {.pattern = "conv_s1", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, conv2d),
                 .parity_if = high_res_traced, .count = has_high_res, .isolated = iso_conv_s, .example = ex_conv_s1},
};
const samc_part_def samc_mask_decoder_part = {"MaskDecoder", rows, N_ROWS, describe};

static const char *const slot_names[] = {"0", "1", "2", "3"};

/* ---- weights ---------------------------------------------------------------- */

static void describe_transformer(samc_sd *sd, samc_twoway_transformer *t, const samc_tracker_config *c)
{
    const int D = c->d_model, H = c->twoway_heads;
    t->depth = c->twoway_depth;
    for (int l = 0; l < t->depth; l++) {
        samc_twoway_block *blk = &t->layers[l];
        samc_sd_prefix(sd, "transformer.layers.%d.", l);
        samc_sd_attention(sd, &blk->self_attn, "self_attn", D, D, D, H);
        samc_sd_attention(sd, &blk->cross_t2i, "cross_attn_token_to_image", D, D / 2, D, H);
        samc_sd_attention(sd, &blk->cross_i2t, "cross_attn_image_to_token", D, D / 2, D, H);
        /* SAM 2's MLP(num_layers=2) or SAM 3's MLPBlock: the same two Linears */
        samc_sd_linear(sd, &blk->mlp_fc1, c->sam3.mlp_block ? "mlp.lin1" : "mlp.layers.0", D, c->twoway_mlp_dim, true);
        samc_sd_linear(sd, &blk->mlp_fc2, c->sam3.mlp_block ? "mlp.lin2" : "mlp.layers.1", c->twoway_mlp_dim, D, true);
        samc_sd_norm(sd, &blk->norm1, "norm1", D, 1e-5f); /* nn.LayerNorm default eps */
        samc_sd_norm(sd, &blk->norm2, "norm2", D, 1e-5f);
        samc_sd_norm(sd, &blk->norm3, "norm3", D, 1e-5f);
        samc_sd_norm(sd, &blk->norm4, "norm4", D, 1e-5f);
        blk->skip_first_layer_pe = l == 0;
    }
    samc_sd_prefix(sd, "transformer.");
    samc_sd_attention(sd, &t->final_attn, "final_attn_token_to_image", D, D / 2, D, H);
    samc_sd_norm(sd, &t->norm_final, "norm_final_attn", D, 1e-5f);
}

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    (void)err;
    const samc_tracker_config *c = cfg;
    const int D = c->d_model, M = c->num_multimask_outputs + 1;
    samc_mask_decoder *d = self;
    d->dim = D, d->num_mask_tokens = M, d->emb = samc_tracker_emb(c);
    d->pred_obj_scores = c->pred_obj_scores, d->pred_obj_scores_mlp = c->pred_obj_scores_mlp;
    d->use_high_res_features = c->use_high_res_features_in_sam;
    d->trace_high_res = c->sam3.traced;
    d->iou_sigmoid = c->iou_prediction_use_sigmoid;
    d->dynamic_multimask_via_stability = c->dynamic_multimask_via_stability;
    d->dynamic_multimask_stability_delta = (float)c->dynamic_multimask_stability_delta;
    d->dynamic_multimask_stability_thresh = (float)c->dynamic_multimask_stability_thresh;
    d->use_multimask_token_for_obj_ptr = c->use_multimask_token_for_obj_ptr;
    samc_sd_prefix(sd, "%s", "");
    d->iou_token = samc_sd_tensor(sd, 2, (const int64_t[]){1, D}, "iou_token.weight");
    d->mask_tokens = samc_sd_tensor(sd, 2, (const int64_t[]){M, D}, "mask_tokens.weight");
    d->obj_score_token = c->pred_obj_scores ? samc_sd_tensor(sd, 2, (const int64_t[]){1, D}, "obj_score_token.weight")
                                            : NULL;
    describe_transformer(sd, &d->transformer, c);
    samc_sd_prefix(sd, "%s", "");
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
    return SAMC_OK;
}

/* ---- forwards ------------------------------------------------------------------ */

/* (B,C,H,W) [+ dense (b_out,C,H,W)] -> (b_out,HW,C): flatten(2).permute(0,2,1),
 * with predict_masks' `src = image_embeddings + dense_prompt_embeddings`
 * fused into the read (the same float sums, no (B,C,H,W) temporary); a
 * source of batch 1 serves every b (repeat / expand semantics). Written in
 * full into wire slot `slot`. */
static samc_status image_tokens(samc_exec *x, const samc_mask_decoder *d, int slot, const samc_tensor *img,
                                const samc_tensor *dense, int64_t b_out, samc_tensor *y, samc_error *err)
{
    const int64_t C = img->shape[1], HW = img->shape[2] * img->shape[3];
    const samc_layer *L = samc_part_layer(x, d, &rows[IMAGE_TOKENS], 0);
    samc_status st = samc_exec_wire(x, slot, 3, (const int64_t[]){b_out, HW, C}, y, err);
    return st ? st
              : samc_layer_done(x, L, NULL,
                                ((const samc_nn_ops *)L->ops)->planes_to_tokens(samc_layer_ctx(x, L), img, dense, y),
                                err, 0, NULL, NULL);
}

/* TwoWayTransformer.forward on src = image_embedding (+ dense when given,
 * of the tokens' batch: predict_masks' sum, fused into the token layout).
 * The positional encoding keeps its own batch (1: one copy read by every
 * batch element, as the bodies accept). */
static samc_status twoway_transformer(samc_exec *x, const samc_mask_decoder *d, const samc_scope *sc,
                                      const samc_tensor *image_embedding, const samc_tensor *dense,
                                      const samc_tensor *image_pe, const samc_tensor *tokens, samc_tensor *q_out,
                                      samc_tensor *k_out, samc_error *err)
{
    const samc_twoway_transformer *tr = &d->transformer;
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
    int kslot = SAMC_WIRE_KEYS_A;
    samc_status st = image_tokens(x, d, kslot, image_embedding, dense, B, &k, err);
    if (!st)
        st = image_tokens(x, d, SAMC_WIRE_KEY_PE, image_pe, NULL, image_pe->shape[0], &kpe, err);
    if (!st)
        st = samc_tensor_copy(&q, tokens, err);
    for (int l = 0; !st && l < tr->depth; l++) {
        const samc_layer *L = samc_part_layer(x, d, &rows[TWOWAY_LAYER], l);
        const samc_tracker_ops *ops = L->ops;
        const int kslot2 = kslot == SAMC_WIRE_KEYS_A ? SAMC_WIRE_KEYS_B : SAMC_WIRE_KEYS_A;
        if ((st = samc_tensor_alloc(&q2, q.ndim, q.shape, err)) || (st = samc_exec_wire(x, kslot2, k.ndim, k.shape, &k2, err)))
            break;
        const samc_tensor *outs[] = {&q2, &k2};
        st = ops->twoway_block(samc_layer_ctx(x, L), &tr->layers[l], &q, &k, tokens, &kpe, &q2, &k2);
        if ((st = samc_layer_done(x, L, sc, st, err, 2, slot_names, outs)))
            break;
        samc_tensor_release(&q), samc_tensor_release(&k);
        q = q2, k = k2, kslot = kslot2;
        memset(&q2, 0, sizeof q2), memset(&k2, 0, sizeof k2);
    }
    const samc_layer *L = samc_part_layer(x, d, &rows[TRANSFORMER], 0);
    const samc_tracker_ops *ops = L->ops;
    if (!st && !(st = samc_tensor_alloc(q_out, q.ndim, q.shape, err))) {
        *k_out = k;
        memset(&k, 0, sizeof k);
        const samc_tensor *outs[] = {q_out, k_out};
        st = ops->twoway_final(samc_layer_ctx(x, L), tr, &q, k_out, tokens, &kpe, q_out);
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
    samc_decision dd = {.kind = SAMC_DECISION_STABILITY, .module = samc_part_layer(x, d, &rows[DECODER], 0)->name, .values = &s, .n = 1,
                        .threshold = d->dynamic_multimask_stability_thresh, .masks = masks->data, .n_masks = M,
                        .hw = hw, .choices = {0, 1 + samc_argmax_first(iou->data + 1, M - 1)}};
    samc_exec_decide(x, sc, &dd);
    return s >= dd.threshold ? 0 : dd.choices[1];
}

/* MaskDecoder.forward after predict_masks: the choice among the mask
 * tokens, the SAM output tokens, the trace; out[3] (the object scores) is
 * already written. Releases out on failure. */
static samc_status choose_tokens(samc_exec *x, const samc_mask_decoder *d, const samc_layer *L, const samc_scope *sc,
                                 samc_status st, const samc_tensor *hs, const samc_tensor *masks,
                                 const samc_tensor *iou, bool multimask, samc_tensor out[4], samc_error *err)
{
    int tok_idx[1] = {0};
    if (!st)
        st = samc_mask_decoder_select_forced(d, masks, iou, multimask, stability_choice(x, sc, d, masks, iou, multimask),
                                             &out[0], &out[1], tok_idx, err);
    if (!st)
        st = sam_tokens_out(d, hs, multimask, &out[2], err);
    if (!st) {
        const samc_tensor *outs[] = {&out[0], &out[1], &out[2], &out[3]};
        samc_layer_emit(x, L, sc, 4, slot_names, outs);
    } else {
        for (int i = 0; i < 4; i++)
            samc_tensor_release(&out[i]);
    }
    return st;
}

samc_status samc_mask_decoder_forward(samc_exec *x, const samc_mask_decoder *d, const samc_scope *sc,
                                      const samc_tensor *image_embed, const samc_tensor *image_pe,
                                      const samc_tensor *sparse, const samc_tensor *dense, bool multimask,
                                      bool repeat_image, const samc_tensor *feat_s0, const samc_tensor *feat_s1,
                                      samc_tensor out[4], samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, d, &rows[DECODER], 0);
    const samc_tracker_ops *ops = L->ops;
    const int64_t B = sparse->shape[0], M = d->num_mask_tokens, e = d->emb;
    samc_tensor tok = {0}, hs = {0}, keys = {0}, masks = {0}, iou = {0};
    memset(out, 0, 4 * sizeof *out);
    if (dense->shape[0] != B || (!repeat_image && image_embed->shape[0] != B && image_embed->shape[0] != 1))
        return samc_fail(err, SAMC_ERR_SHAPE, "image embedding batch %lld / dense batch %lld vs prompt batch %lld",
                         (long long)image_embed->shape[0], (long long)dense->shape[0], (long long)B);
    samc_status st = assemble_tokens(d, sparse, &tok, err);
    if (!st) /* src = image_embeddings (repeated over B) + dense, summed in the token layout */
        st = twoway_transformer(x, d, sc, image_embed, dense, image_pe, &tok, &hs, &keys, err);
    if (!st && !(st = samc_tensor_allocv(&masks, err, 4, B, M, 4 * e, 4 * e)) &&
        !(st = samc_tensor_allocv(&iou, err, 2, B, M)) && !(st = samc_tensor_allocv(&out[3], err, 2, B, (int64_t)1))) {
        st = ops->mask_decoder_heads(samc_layer_ctx(x, L), d, &hs, &keys, (int)e, (int)e, feat_s0, feat_s1, &masks,
                                        &iou, &out[3]);
        st = samc_layer_done(x, L, sc, st, err, 0, NULL, NULL);
    }
    st = choose_tokens(x, d, L, sc, st, &hs, &masks, &iou, multimask, out, err);
    samc_tensor_release(&tok), samc_tensor_release(&hs);
    samc_tensor_release(&keys), samc_tensor_release(&masks), samc_tensor_release(&iou);
    return st;
}

const samc_layer *samc_sam_heads_whole(const samc_exec *x, const samc_prompt_encoder *pe, const samc_mask_decoder *d)
{
    const samc_layer *L = samc_part_layer(x, d, &rows[DECODER], 0);
    return L->whole_ops && samc_prompt_encoder_served_by(x, pe, L->asked) ? L : NULL;
}

samc_status samc_sam_heads_forward_whole(samc_exec *x, const samc_layer *W, const samc_prompt_encoder *pe,
                                         const samc_scope *sc, const float *coords, const int32_t *labels, int B,
                                         int N, const samc_tensor *mask, const samc_frame_features *f,
                                         bool multimask, samc_tensor out[4], samc_error *err)
{
    const samc_mask_decoder *d = W->self;
    const samc_tracker_ops *whole = W->whole_ops;
    const int64_t M = d->num_mask_tokens, e = d->emb, T = (d->pred_obj_scores ? 2 : 1) + M + (N ? N + 1 : 0);
    samc_tensor hs = {0}, masks = {0}, iou = {0};
    memset(out, 0, 4 * sizeof *out);
    samc_status st = samc_tensor_allocv(&hs, err, 3, (int64_t)B, T, (int64_t)d->dim);
    if (!st && !(st = samc_tensor_alloc_uninit(&masks, 4, (const int64_t[]){B, M, 4 * e, 4 * e}, err)) &&
        !(st = samc_tensor_allocv(&iou, err, 2, (int64_t)B, M)) &&
        !(st = samc_tensor_allocv(&out[3], err, 2, (int64_t)B, (int64_t)1))) {
        st = whole->sam_heads(samc_part_ctx(x, W, sc), pe, d, coords, labels, B, N, mask, f, &hs, &masks, &iou,
                              &out[3]);
        st = samc_layer_done(x, W, sc, st, err, 0, NULL, NULL);
    }
    st = choose_tokens(x, d, W, sc, st, &hs, &masks, &iou, multimask, out, err);
    samc_tensor_release(&hs), samc_tensor_release(&masks), samc_tensor_release(&iou);
    return st;
}

const char *samc_mask_decoder_name(const samc_exec *x, const samc_mask_decoder *d)
{
    return samc_part_layer(x, d, &rows[DECODER], 0)->name;
}

const samc_layer *samc_mask_decoder_high_res_layer(const samc_exec *x, const samc_mask_decoder *d, int level)
{
    return samc_part_layer(x, d, &rows[level ? CONV_S1 : CONV_S0], 0);
}

samc_status samc_mask_decoder_high_res(samc_exec *x, const samc_mask_decoder *d, const samc_scope *sc, int level,
                                       const samc_tensor *in, samc_tensor *out, samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, d, &rows[level ? CONV_S1 : CONV_S0], 0);
    const samc_nn_ops *nn = L->ops;
    const samc_conv2d *c = level ? &d->conv_s1 : &d->conv_s0;
    samc_status st = samc_tensor_alloc_uninit(out, 4, (const int64_t[]){1, c->cout, in->shape[2], in->shape[3]}, err);
    const samc_tensor *outs[] = {out};
    if (!st) /* a parity point where the config says so (SAM 3) */
        st = samc_layer_done(x, L, sc, nn->conv2d(samc_layer_ctx(x, L), c, in, out), err, 1, slot_names, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

/* ---- isolated runners ------------------------------------------------------- */

static samc_status iso_twoway_layer(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                    samc_error *err)
{
    const samc_mask_decoder *d = L->self;
    const samc_tracker_ops *ops = L->ops;
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
                             ops->twoway_block(samc_layer_ctx(x, L), &d->transformer.layers[L->index], &q, &k, &qpe,
                                               &kpe, qo, ko),
                             err, 0, NULL, NULL);
    samc_tensor_release(&q), samc_tensor_release(&k), samc_tensor_release(&qpe), samc_tensor_release(&kpe);
    return st;
}

static samc_status iso_transformer(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    samc_tensor a = {0}, b = {0}, c = {0}, q = {0}, k = {0};
    samc_capture cap;
    samc_status st = samc_io_tensor(in, "image_embedding", "0", &a, err);
    if (!st)
        st = samc_io_tensor(in, "image_pe", "1", &b, err);
    if (!st)
        st = samc_io_tensor(in, "point_embedding", "2", &c, err);
    samc_capture_begin(x, &cap, L->name, out);
    if (!st)
        st = twoway_transformer(x, L->self, &samc_no_scope, &a, NULL, &b, &c, &q, &k, err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&a), samc_tensor_release(&b), samc_tensor_release(&c);
    samc_tensor_release(&q), samc_tensor_release(&k);
    return st;
}

static samc_status iso_mask_decoder(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                    samc_error *err)
{
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
    samc_capture_begin(x, &cap, L->name, out);
    if (!st)
        st = samc_mask_decoder_forward(x, L->self, &samc_no_scope, &a, &b, &c, &d, mm != 0, rep != 0,
                                       hr ? &s0 : NULL, hr ? &s1 : NULL, res, err);
    samc_capture_end(x, &cap);
    samc_tensor *all[] = {&a, &b, &c, &d, &s0, &s1, &res[0], &res[1], &res[2], &res[3]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        samc_tensor_release(all[i]);
    return st;
}

/* conv_s0 / conv_s1 alone: in/0 (1,D,h,w). */
static samc_status iso_conv_s(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                              samc_error *err)
{
    samc_tensor t = {0};
    samc_status st = samc_io_tensor(in, "0", NULL, &t, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st)
        st = samc_mask_decoder_high_res(x, L->self, &samc_no_scope, L->def == &rows[CONV_S1], &t, y, err);
    samc_tensor_release(&t);
    return st;
}

/* ---- op-test inputs ------------------------------------------------------------ */

static samc_status ex_twoway_layer(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                   samc_error *err)
{
    (void)index;
    const samc_mask_decoder *d = self;
    const int64_t D = d->dim, Nk = full ? (int64_t)d->emb * d->emb : 1024, Nq = 8;
    SAMC_INPUT_RANDOM("queries", -2, 2, 3, (int64_t)1, Nq, D);
    SAMC_INPUT_RANDOM("keys", -2, 2, 3, (int64_t)1, Nk, D);
    SAMC_INPUT_RANDOM("query_pe", -1, 1, 3, (int64_t)1, Nq, D);
    SAMC_INPUT_RANDOM("key_pe", -1, 1, 3, (int64_t)1, Nk, D);
    return SAMC_OK;
}

static samc_status ex_transformer(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                  samc_error *err)
{
    (void)index;
    const samc_mask_decoder *d = self;
    const int64_t D = d->dim, e = full ? d->emb : 32;
    SAMC_INPUT_RANDOM("image_embedding", -2, 2, 4, (int64_t)1, D, e, e);
    SAMC_INPUT_RANDOM("image_pe", -1, 1, 4, (int64_t)1, D, e, e);
    SAMC_INPUT_RANDOM("point_embedding", -2, 2, 3, (int64_t)1, (int64_t)8, D);
    return SAMC_OK;
}

static samc_status ex_mask_decoder(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                   samc_error *err)
{
    (void)index, (void)full; /* the heads' upscaling needs the model's own grid */
    const samc_mask_decoder *d = self;
    const int64_t D = d->dim, e = d->emb;
    SAMC_INPUT_RANDOM("image_embeddings", -2, 2, 4, (int64_t)1, D, e, e);
    SAMC_INPUT_RANDOM("image_pe", -1, 1, 4, (int64_t)1, D, e, e);
    SAMC_INPUT_RANDOM("sparse_prompt_embeddings", -2, 2, 3, (int64_t)1, (int64_t)3, D);
    SAMC_INPUT_RANDOM("dense_prompt_embeddings", -1, 1, 4, (int64_t)1, D, e, e);
    if (d->use_high_res_features) {
        SAMC_INPUT_RANDOM("high_res_features.0", -2, 2, 4, (int64_t)1, D / 8, 4 * e, 4 * e);
        SAMC_INPUT_RANDOM("high_res_features.1", -2, 2, 4, (int64_t)1, D / 4, 2 * e, 2 * e);
    }
    samc_status st = samc_inputs_scalar(in, "multimask_output", 1, err);
    return st ? st : samc_inputs_scalar(in, "repeat_image", 0, err);
}

static samc_status ex_conv_s(const void *self, uint64_t seed, bool full, samc_layer_inputs *in, samc_error *err,
                             int level)
{
    const samc_mask_decoder *d = self;
    const int64_t H = (full ? 4 * d->emb : 64) >> level;
    return samc_inputs_random(in, "0", seed, -2, 2, err, 4, (int64_t)1, (int64_t)d->dim, H, H) ? SAMC_OK
                                                                                               : SAMC_ERR_NOMEM;
}

static samc_status ex_conv_s0(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                              samc_error *err)
{
    (void)index;
    return ex_conv_s(self, seed, full, in, err, 0);
}

static samc_status ex_conv_s1(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                              samc_error *err)
{
    (void)index;
    return ex_conv_s(self, seed, full, in, err, 1);
}
