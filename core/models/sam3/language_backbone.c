/* SPDX-License-Identifier: Apache-2.0 */
/* language_backbone.c - the language backbone part (sam3/model/
 * text_encoder_ve.py VETextEncoder: the TextTransformer and the resizer),
 * mounted at "backbone.language_backbone", and its tokenizer's function
 * point @tokenize (a part of the same instance mounted at the top): rows,
 * weights, forwards, isolated runners and op-test inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/models/sam3/sam3_io.h"
#include "core/models/sam3/sam3_modules.h"
#include "core/models/sam3/sam3_parts.h"
#include "core/text/clip_tokenizer.h"

enum { TOKENIZE, N_TOKENIZER_ROWS };
enum { EMBED, BLOCK, FINAL, ENCODER, RESIZE, LANGUAGE, N_ROWS };

static int count_blocks(const void *self)
{
    return ((const samc_sam3_language_backbone *)self)->text.n_layers;
}

static samc_isolated_body iso_tokenize, iso_embed, iso_block, iso_final, iso_encoder, iso_resize, iso_language;
static samc_status ex_embed(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_block(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_tokens(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def tokenizer_rows[N_TOKENIZER_ROWS] = {
    [TOKENIZE] = {.pattern = "@tokenize", .parity = true, .isolated = iso_tokenize},
};
const samc_part_def samc_sam3_tokenizer_part = {"SimpleTokenizer", tokenizer_rows, N_TOKENIZER_ROWS, NULL};

static const samc_layer_def rows[N_ROWS] = {
    [EMBED] = {.pattern = "encoder.token_embedding", .table = SAMC_OPS_SAM3,
               .body = SAMC_BODY(samc_sam3_ops, sam3_text_embed), .isolated = iso_embed, .example = ex_embed},
    [BLOCK] = {.pattern = "encoder.transformer.resblocks.#", .table = SAMC_OPS_SAM3,
               .body = SAMC_BODY(samc_sam3_ops, sam3_text_block), .parity = true, .count = count_blocks,
               .isolated = iso_block, .example = ex_block},
    /* TextTransformer's tail: ln_final and the text projection */
    [FINAL] = {.pattern = "encoder.ln_final", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_text_final),
               .isolated = iso_final, .example = ex_tokens},
    [ENCODER] = {.pattern = "encoder", .parity = true, .isolated = iso_encoder},
    [RESIZE] = {.pattern = "resizer", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_text_resize),
                .isolated = iso_resize, .example = ex_tokens},
    [LANGUAGE] = {.pattern = "", .parity = true, .isolated = iso_language},
};
const samc_part_def samc_sam3_language_part = {"VETextEncoder", rows, N_ROWS, describe};

static const char *const slot0[] = {"0"};

/* ---- weights ---------------------------------------------------------------- */

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    (void)err;
    const samc_sam3_text_config *c = cfg;
    samc_sam3_text_encoder *t = &((samc_sam3_language_backbone *)self)->text;
    t->width = c->width, t->heads = c->heads, t->n_layers = c->layers, t->context_length = c->context_length;
    t->vocab = c->vocab_size, t->has_ln_final = c->use_ln_post;
    t->causal = true;  /* VETextEncoder builds TextTransformer with the default no_causal_mask False */
    t->proj_dim = 512; /* VETextEncoder leaves TextTransformer's output_dim at its default */
    const int W = t->width, mlp_w = (int)(W * 4.0); /* ResidualAttentionBlock: int(d_model * mlp_ratio) */
    samc_sd_prefix(sd, "encoder.");
    t->token_embedding = samc_sd_tensor(sd, 2, (const int64_t[]){t->vocab, W}, "token_embedding.weight");
    t->positional_embedding = samc_sd_tensor(sd, 2, (const int64_t[]){t->context_length, W}, "positional_embedding");
    t->text_projection = samc_sd_tensor(sd, 2, (const int64_t[]){W, t->proj_dim}, "text_projection");
    for (int i = 0; i < t->n_layers; i++) {
        samc_sam3_text_block *blk = &t->layers[i];
        samc_sd_prefix(sd, "encoder.transformer.resblocks.%d.", i);
        blk->width = W, blk->heads = t->heads;
        samc_sd_norm(sd, &blk->ln_1, "ln_1", W, 1e-5f);
        samc_sd_norm(sd, &blk->ln_2, "ln_2", W, 1e-5f);
        samc__sam3_sd_mha(sd, &blk->attn, "attn", W, t->heads);
        samc_sd_linear(sd, &blk->c_fc, "mlp.c_fc", W, mlp_w, true);
        samc_sd_linear(sd, &blk->c_proj, "mlp.c_proj", mlp_w, W, true);
    }
    samc_sd_prefix(sd, "%s", "");
    if (t->has_ln_final)
        samc_sd_norm(sd, &t->ln_final, "encoder.ln_final", W, 1e-5f);
    samc_sd_linear(sd, &t->resizer, "resizer", W, c->d_model, true);
    return SAMC_OK;
}

/* ---- forwards -------------------------------------------------------------------- */

samc_status samc_sam3_tokenize_batch(samc_exec *x, const samc_sam3_language_backbone *lb, const char *const *texts,
                                     int n, int context_length, samc_tensor *ids, samc_error *err)
{
    memset(ids, 0, sizeof *ids);
    if (!lb->tok)
        return samc_fail(err, SAMC_ERR_ARG, "@tokenize: no vocabulary loaded (bpe_simple_vocab_16e6.txt.gz)");
    if (context_length < 2 || context_length > lb->text.context_length)
        return samc_fail(err, SAMC_ERR_ARG, "@tokenize: context length %d (the model has %d)", context_length,
                         lb->text.context_length);
    samc_status st = samc_tensor_allocv(ids, err, 2, (int64_t)n, (int64_t)context_length);
    for (int b = 0; !st && b < n; b++) {
        int64_t raw[512]; /* the config bounds context_length to 512 */
        st = samc_clip_tokenizer_encode(lb->tok, texts[b], context_length, raw, NULL, NULL, err);
        for (int i = 0; i < context_length && !st; i++)
            ids->data[(int64_t)b * context_length + i] = (float)raw[i];
    }
    if (st) {
        samc_tensor_release(ids);
        return st;
    }
    const samc_tensor *outs[] = {ids};
    samc_layer_emit(x, samc_part_layer(x, lb, &tokenizer_rows[TOKENIZE], 0), NULL, 1, slot0, outs);
    return SAMC_OK;
}

samc_status samc_sam3_tokenize(samc_exec *x, const samc_sam3_language_backbone *lb, const char *text,
                               int context_length, samc_tensor *ids, samc_error *err)
{
    return samc_sam3_tokenize_batch(x, lb, &text, 1, context_length, ids, err);
}

/* A row's body of this part called on the exec, its status through
 * samc_layer_done (traced with `y` when given). */
static samc_status done(samc_exec *x, const samc_layer *L, samc_status st, const samc_tensor *y, samc_error *err)
{
    const samc_tensor *outs[] = {y};
    return samc_layer_done(x, L, NULL, st, err, y ? 1 : 0, slot0, outs);
}

#define OPS(L) ((const samc_sam3_ops *)(L)->ops)

/* TextTransformer.forward: ids (B,L) -> tokens (B,L,W) and, when `proj`,
 * the projection (B,L,P) (unused downstream: computed for the trace). */
static samc_status encoder_forward(samc_exec *x, const samc_sam3_language_backbone *lb, const samc_tensor *ids,
                                   samc_tensor *tokens, samc_tensor *proj, samc_error *err)
{
    const samc_sam3_text_encoder *t = &lb->text;
    if (ids->ndim != 2)
        return samc_fail(err, SAMC_ERR_SHAPE, "text encoder: ids are not (B,L)");
    const int64_t B = ids->shape[0], L = ids->shape[1], W = t->width;
    samc_tensor a = {0}, b = {0}, mask = {0};
    samc_status st = samc_tensor_allocv(&a, err, 3, B, L, W);
    if (!st)
        st = samc_tensor_allocv(&b, err, 3, B, L, W);
    if (!st && t->causal && !(st = samc_tensor_allocv(&mask, err, 2, L, L)))
        for (int64_t i = 0; i < L; i++) /* build_causal_mask()[:L, :L]: -inf above the diagonal */
            for (int64_t j = 0; j < L; j++)
                mask.data[i * L + j] = j > i ? -INFINITY : 0.0f;
    const samc_layer *Le = samc_part_layer(x, lb, &rows[EMBED], 0);
    if (!st)
        st = done(x, Le, OPS(Le)->sam3_text_embed(samc_layer_ctx(x, Le), t, ids, &a), NULL, err);
    for (int i = 0; i < t->n_layers && !st; i++) {
        const samc_layer *Lb = samc_part_layer(x, lb, &rows[BLOCK], i);
        st = done(x, Lb, OPS(Lb)->sam3_text_block(samc_layer_ctx(x, Lb), &t->layers[i], &a, mask.data ? &mask : NULL, &b),
                  &b, err);
        samc_tensor s = a;
        a = b, b = s;
    }
    const samc_layer *Lf = samc_part_layer(x, lb, &rows[FINAL], 0);
    if (!st)
        st = done(x, Lf, OPS(Lf)->sam3_text_final(samc_layer_ctx(x, Lf), t, &a, tokens, proj), NULL, err);
    samc_tensor_release(&a), samc_tensor_release(&b), samc_tensor_release(&mask);
    if (!st && proj) { /* the encoder's outputs: the projection and the tokens */
        static const char *const slots[] = {"0", "1"};
        const samc_tensor *ts[] = {proj, tokens};
        samc_layer_emit(x, samc_part_layer(x, lb, &rows[ENCODER], 0), NULL, 2, slots, ts);
    }
    return st;
}

void samc_sam3_text_release(samc_sam3_text *t)
{
    samc_tensor_release(&t->mask), samc_tensor_release(&t->memory), samc_tensor_release(&t->embeds);
}

samc_status samc_sam3_language_forward(samc_exec *x, const samc_sam3_language_backbone *lb, const samc_tensor *ids,
                                       samc_sam3_text *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    const samc_sam3_text_encoder *t = &lb->text;
    if (ids->ndim != 2)
        return samc_fail(err, SAMC_ERR_SHAPE, "language backbone: ids are not (B,L)");
    const int64_t B = ids->shape[0], L = ids->shape[1];
    samc_tensor tok = {0}, proj = {0};
    samc_status st = samc_tensor_allocv(&tok, err, 3, B, L, (int64_t)t->width);
    if (!st && x->trace)
        st = samc_tensor_allocv(&proj, err, 3, B, L, (int64_t)t->proj_dim);
    if (!st)
        st = encoder_forward(x, lb, ids, &tok, proj.data ? &proj : NULL, err);
    if (!st)
        st = samc_tensor_allocv(&out->mask, err, 2, B, L);
    if (!st)
        st = samc_tensor_allocv(&out->memory, err, 3, L, B, (int64_t)t->resizer.out);
    if (!st)
        st = samc_tensor_allocv(&out->embeds, err, 3, L, B, (int64_t)t->width);
    const samc_layer *Lr = samc_part_layer(x, lb, &rows[RESIZE], 0);
    if (!st) /* resizer(text_memory.transpose(0, 1)) */
        st = done(x, Lr, OPS(Lr)->sam3_text_resize(samc_layer_ctx(x, Lr), t, &tok, &out->memory), NULL, err);
    for (int64_t b = 0; b < B && !st; b++)
        for (int64_t l = 0; l < L; l++) {
            const float id = ids->data[b * L + l];
            out->mask.data[b * L + l] = id == 0.0f ? 1.0f : 0.0f; /* (tokenized != 0).ne(1) */
            /* inputs_embeds = token_embedding(tokenized), returned seq-first
             * (the ids were checked by the token_embedding body) */
            memcpy(out->embeds.data + (l * B + b) * t->width, t->token_embedding + (int64_t)id * t->width,
                   (size_t)t->width * sizeof *out->embeds.data);
        }
    samc_tensor_release(&tok), samc_tensor_release(&proj);
    if (st) {
        samc_sam3_text_release(out);
        return st;
    }
    static const char *const slots[] = {"0", "1", "2"};
    const samc_tensor *ts[] = {&out->mask, &out->memory, &out->embeds};
    samc_layer_emit(x, samc_part_layer(x, lb, &rows[LANGUAGE], 0), NULL, 3, slots, ts);
    return SAMC_OK;
}

/* ---- isolated runners ------------------------------------------------------------- */

/* The texts are attributes "0", "1", ... (one, or the video loop's batch of two). */
static samc_status iso_tokenize(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                samc_error *err)
{
    char *texts[8] = {0}, key[8];
    int n = 0;
    double ctx = 0;
    bool none = false;
    samc_status st = SAMC_OK;
    for (; !st && n < 8; n++) { /* "0" is required; the batch ends at the first missing one */
        snprintf(key, sizeof key, "%d", n);
        if (n > 0 && in->string(in->user, key, NULL, &texts[n], NULL))
            break;
        if (n == 0)
            st = in->string(in->user, key, NULL, &texts[n], err);
    }
    if (!st)
        st = in->scalar(in->user, "context_length", NULL, &ctx, &none, err);
    if (!st && (none || ctx < 2 || ctx > 512))
        st = samc_fail(err, SAMC_ERR_ARG, "@tokenize: bad context_length");
    samc_tensor ids = {0};
    samc_capture cap;
    samc_capture_begin(x, &cap, L->name, out);
    if (!st)
        st = samc_sam3_tokenize_batch(x, L->self, (const char *const *)texts, n, (int)ctx, &ids, err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&ids);
    for (int i = 0; i < 8; i++)
        free(texts[i]);
    return st;
}

static samc_status iso_embed(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    const samc_sam3_text_encoder *t = &((const samc_sam3_language_backbone *)L->self)->text;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *ids = samc__sam3_in(&r, "text", "0");
    if (ids && ids->ndim != 2)
        samc__sam3_io_shape(&r, "%s: ids are not (B,L)", L->name);
    samc_tensor *y = r.st ? NULL : samc__sam3_out_v(&r, "0", 3, ids->shape[0], ids->shape[1], (int64_t)t->width);
    if (y)
        r.st = done(x, L, OPS(L)->sam3_text_embed(samc_layer_ctx(x, L), t, ids, y), NULL, err);
    return samc__sam3_io_end(&r);
}

static samc_status iso_block(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    const samc_sam3_text_encoder *t = &((const samc_sam3_language_backbone *)L->self)->text;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *q = samc__sam3_in(&r, "q_x", "0"), *mask = samc__sam3_in_opt(&r, "attn_mask");
    if (q && q->ndim != 3)
        samc__sam3_io_shape(&r, "%s: input is not (B,L,W)", L->name);
    samc_tensor *y = r.st ? NULL : samc__sam3_out(&r, "0", 3, q->shape);
    if (y)
        r.st = done(x, L, OPS(L)->sam3_text_block(samc_layer_ctx(x, L), &t->layers[L->index], q, mask, y), NULL, err);
    return samc__sam3_io_end(&r);
}

/* ln_final: tokens "0" and the projection "1". */
static samc_status iso_final(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    const samc_sam3_text_encoder *t = &((const samc_sam3_language_backbone *)L->self)->text;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *a = samc__sam3_in(&r, "0", NULL);
    if (a && a->ndim != 3)
        samc__sam3_io_shape(&r, "%s: input is not (B,L,W)", L->name);
    samc_tensor *tok = r.st ? NULL : samc__sam3_out(&r, "0", 3, a->shape);
    samc_tensor *proj = r.st ? NULL : samc__sam3_out_v(&r, "1", 3, a->shape[0], a->shape[1], (int64_t)t->proj_dim);
    if (proj)
        r.st = done(x, L, OPS(L)->sam3_text_final(samc_layer_ctx(x, L), t, a, tok, proj), NULL, err);
    return samc__sam3_io_end(&r);
}

static samc_status iso_encoder(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                               samc_error *err)
{
    const samc_sam3_language_backbone *lb = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *ids = samc__sam3_in(&r, "text", "0");
    if (ids && ids->ndim != 2)
        samc__sam3_io_shape(&r, "%s: ids are not (B,L)", L->name);
    samc_tensor *proj = r.st ? NULL : samc__sam3_out_v(&r, "0", 3, ids->shape[0], ids->shape[1], (int64_t)lb->text.proj_dim);
    samc_tensor *tok = r.st ? NULL : samc__sam3_out_v(&r, "1", 3, ids->shape[0], ids->shape[1], (int64_t)lb->text.width);
    if (tok) { /* run alone: its outputs are the slots, nothing to trace */
        samc_trace_fn saved = x->trace;
        void *user = x->trace_user;
        samc_exec_set_trace(x, NULL, NULL);
        r.st = encoder_forward(x, lb, ids, tok, proj, err);
        samc_exec_set_trace(x, saved, user);
    }
    return samc__sam3_io_end(&r);
}

static samc_status iso_resize(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                              samc_error *err)
{
    const samc_sam3_text_encoder *t = &((const samc_sam3_language_backbone *)L->self)->text;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *tok = samc__sam3_in(&r, "0", NULL);
    if (tok && tok->ndim != 3)
        samc__sam3_io_shape(&r, "%s: input is not (B,L,W)", L->name);
    samc_tensor *y = r.st ? NULL : samc__sam3_out_v(&r, "0", 3, tok->shape[1], tok->shape[0], (int64_t)t->resizer.out);
    if (y)
        r.st = done(x, L, OPS(L)->sam3_text_resize(samc_layer_ctx(x, L), t, tok, y), NULL, err);
    return samc__sam3_io_end(&r);
}

/* The backbone receives its captions as strings: its token ids come as
 * in-slot "input_ids" (the @tokenize call recorded before it). */
static samc_status iso_language(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *ids = samc__sam3_in(&r, "input_ids", NULL);
    samc_sam3_text t = {0};
    samc_capture cap;
    samc_capture_begin(x, &cap, L->name, out);
    if (!r.st)
        r.st = samc_sam3_language_forward(x, L->self, ids, &t, err);
    samc_capture_end(x, &cap);
    samc_sam3_text_release(&t);
    return samc__sam3_io_end(&r);
}

/* ---- op-test inputs --------------------------------------------------------------- */

/* A caption's ids: start, random tokens, end, zero padding. */
static samc_status ex_embed(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_text_encoder *t = &((const samc_sam3_language_backbone *)self)->text;
    const int L = t->context_length;
    samc_tensor *ids = samc_inputs_tensor(in, "text", 2, (const int64_t[]){1, L}, err);
    if (!ids)
        return SAMC_ERR_NOMEM;
    for (int i = 0; i < L; i++)
        ids->data[i] = i == 0       ? (float)(t->vocab - 2)
                       : i < L / 2  ? floorf((float)(t->vocab - 3) * 0.5f * (samc_rng_uniform(&seed) + 1.0f))
                       : i == L / 2 ? (float)(t->vocab - 1)
                                    : 0.0f;
    return SAMC_OK;
}

/* A resblock on the whole context with the causal mask. */
static samc_status ex_block(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_text_encoder *t = &((const samc_sam3_language_backbone *)self)->text;
    const int64_t L = t->context_length;
    SAMC_INPUT_RANDOM("q_x", -2, 2, 3, (int64_t)1, L, (int64_t)t->width);
    samc_tensor *mask = samc_inputs_tensor(in, "attn_mask", 2, (const int64_t[]){L, L}, err);
    if (!mask)
        return SAMC_ERR_NOMEM;
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < L; j++)
            mask->data[i * L + j] = j > i ? -INFINITY : 0.0f;
    return SAMC_OK;
}

/* The tokens out of the last block (ln_final) or of ln_final (resizer). */
static samc_status ex_tokens(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                             samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_text_encoder *t = &((const samc_sam3_language_backbone *)self)->text;
    SAMC_INPUT_RANDOM("0", -2, 2, 3, (int64_t)1, (int64_t)t->context_length, (int64_t)t->width);
    return SAMC_OK;
}
