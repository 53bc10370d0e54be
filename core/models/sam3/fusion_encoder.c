/* SPDX-License-Identifier: Apache-2.0 */
/* fusion_encoder.c - the fusion encoder part (sam3/model/encoder.py
 * TransformerEncoderFusion: the image tokens attend to themselves and to
 * the prompt), mounted at "transformer.encoder": rows, weights, forward,
 * isolated runners and op-test inputs. */
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_io.h"
#include "core/models/sam3/sam3_modules.h"
#include "core/models/sam3/sam3_parts.h"
#include "core/nn/nn_ops.h"
#include "core/nn/nn_rows.h"

enum { BATCH_FIRST, LAYER, SEQ_FIRST, ENCODER, N_ROWS };

static int count_layers(const void *self) { return ((const samc_sam3_fusion_encoder *)self)->n_layers; }

static samc_isolated_body iso_layer, iso_encoder;
static samc_status ex_layer(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_encoder(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def rows[N_ROWS] = {
    /* the image tokens, their positions and the prompt batch-first, as the layers take them */
    [BATCH_FIRST] = {.pattern = "@batch_first", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, transpose01),
                     .isolated = samc_nn_run_transpose01, .example = samc_nn_example_transpose01},
    [LAYER] = {.pattern = "layers.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_enc_layer),
               .parity = true, .count = count_layers, .isolated = iso_layer, .example = ex_layer},
    /* output.transpose(0, 1) */
    [SEQ_FIRST] = {.pattern = "@seq_first", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, transpose01),
                   .isolated = samc_nn_run_transpose01, .example = samc_nn_example_transpose01},
    [ENCODER] = {.pattern = "", .parity = true, .isolated = iso_encoder, .example = ex_encoder},
};
const samc_part_def samc_sam3_fusion_part = {"TransformerEncoderFusion", rows, N_ROWS, describe};

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    (void)err;
    samc_sam3_fusion_encoder *enc = self;
    const samc_sam3_fusion_config *c = cfg;
    enc->d_model = c->d_model, enc->n_layers = c->num_layers;
    for (int i = 0; i < enc->n_layers; i++) {
        samc_sd_prefix(sd, "layers.%d.", i);
        samc__sam3_sd_enc_layer(sd, &enc->layers[i], &c->layer);
    }
    return SAMC_OK;
}

/* ---- forward ------------------------------------------------------------------ */

/* x (A, B, C) -> y (B, A, C) by row `row`'s body (y allocated here). */
static samc_status transpose(samc_exec *x, const samc_sam3_fusion_encoder *enc, int row, const samc_tensor *t,
                             samc_tensor *y, samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, enc, &rows[row], 0);
    samc_status st = samc_tensor_allocv(y, err, 3, t->shape[1], t->shape[0], t->shape[2]);
    return st ? st
              : samc_layer_done(x, L, NULL, ((const samc_nn_ops *)L->ops)->transpose01(samc_layer_ctx(x, L), t, y), err,
                                0, NULL, NULL);
}

/* The encoder's output dict, for the trace: memory, and what it passes on
 * (memory_text = the prompt, pos_embed = src_pos, the one level's shape). */
static void emit_encoder(samc_exec *x, const samc_sam3_fusion_encoder *enc, const samc_tensor *memory,
                         const samc_tensor *src_pos, const samc_tensor *prompt, int H, int W)
{
    if (!x->trace)
        return;
    const int64_t B = memory->shape[1];
    samc_tensor lsi = {0}, ss = {0}, vr = {0};
    if (!samc_tensor_allocv(&lsi, NULL, 1, (int64_t)1) && !samc_tensor_allocv(&ss, NULL, 2, (int64_t)1, (int64_t)2) &&
        !samc_tensor_allocv(&vr, NULL, 3, B, (int64_t)1, (int64_t)2)) {
        lsi.data[0] = 0.0f;
        ss.data[0] = (float)H, ss.data[1] = (float)W;
        for (int64_t i = 0; i < 2 * B; i++)
            vr.data[i] = 1.0f;
        static const char *const names[] = {"level_start_index", "memory", "memory_text", "pos_embed",
                                            "spatial_shapes", "valid_ratios"};
        const samc_tensor *t[] = {&lsi, memory, prompt, src_pos, &ss, &vr};
        samc_layer_emit(x, samc_part_layer(x, enc, &rows[ENCODER], 0), NULL, 6, names, t);
    }
    samc_tensor_release(&lsi), samc_tensor_release(&ss), samc_tensor_release(&vr);
}

samc_status samc_sam3_fusion_forward(samc_exec *x, const samc_sam3_fusion_encoder *enc, const samc_tensor *src,
                                     const samc_tensor *src_pos, const samc_tensor *prompt,
                                     const samc_tensor *prompt_mask, int H, int W, samc_tensor *memory,
                                     samc_error *err)
{
    memset(memory, 0, sizeof *memory);
    const int64_t C = enc->d_model, S = (int64_t)H * W;
    if (src->ndim != 3 || src->shape[0] != S || src->shape[2] != C || !samc_tensor_same_shape(src, src_pos) ||
        prompt->ndim != 3 || prompt->shape[1] != src->shape[1] || prompt->shape[2] != C)
        return samc_fail(err, SAMC_ERR_SHAPE, "fusion encoder: src/src_pos (%lld,B,%lld), prompt (T,B,%lld) expected",
                         (long long)S, (long long)C, (long long)C);
    samc_tensor a = {0}, b = {0}, qp = {0}, pm = {0};
    /* src.reshape(h, w, bs, -1).permute(2, 3, 0, 1) then flatten(2).transpose(1, 2); prompt.transpose(0, 1) */
    samc_status st = transpose(x, enc, BATCH_FIRST, src, &a, err);
    if (!st)
        st = transpose(x, enc, BATCH_FIRST, src_pos, &qp, err);
    if (!st)
        st = transpose(x, enc, BATCH_FIRST, prompt, &pm, err);
    if (!st)
        st = samc_tensor_alloc(&b, a.ndim, a.shape, err);
    static const char *const slot0[] = {"0"};
    for (int i = 0; i < enc->n_layers && !st; i++) {
        const samc_layer *L = samc_part_layer(x, enc, &rows[LAYER], i);
        const samc_tensor *outs[] = {&b};
        st = samc_layer_done(x, L, NULL,
                             ((const samc_sam3_ops *)L->ops)
                                 ->sam3_enc_layer(samc_layer_ctx(x, L), &enc->layers[i], &a, &pm, NULL, prompt_mask,
                                                  NULL, &qp, &b),
                             err, 1, slot0, outs);
        samc_tensor t = a;
        a = b, b = t;
    }
    if (!st) /* output.transpose(0, 1) */
        st = transpose(x, enc, SEQ_FIRST, &a, memory, err);
    samc_tensor_release(&a), samc_tensor_release(&b), samc_tensor_release(&qp), samc_tensor_release(&pm);
    if (st) {
        samc_tensor_release(memory);
        return st;
    }
    emit_encoder(x, enc, memory, src_pos, prompt, H, W);
    return SAMC_OK;
}

/* ---- isolated runners ---------------------------------------------------------- */

static samc_status iso_layer(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    return samc__sam3_iso_enc_layer(x, L, &((const samc_sam3_fusion_encoder *)L->self)->layers[L->index], in, out, err);
}

static samc_status iso_encoder(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                               samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *src = samc__sam3_in(&r, "src.0", NULL), *spos = samc__sam3_in(&r, "src_pos.0", NULL);
    const samc_tensor *prompt = samc__sam3_in(&r, "prompt", "1");
    const samc_tensor *pmask = samc__sam3_in_opt(&r, "prompt_key_padding_mask");
    const int H = (int)samc__sam3_in_num(&r, "feat_sizes.0.0", NULL), W = (int)samc__sam3_in_num(&r, "feat_sizes.0.1", NULL);
    samc_tensor memory = {0};
    samc_capture cap;
    samc_capture_begin(x, &cap, L->name, out);
    if (!r.st)
        r.st = samc_sam3_fusion_forward(x, L->self, src, spos, prompt, pmask, H, W, &memory, err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&memory);
    return samc__sam3_io_end(&r);
}

/* ---- op-test inputs ------------------------------------------------------------- */

/* A layer as the encoder calls it: batch-first image tokens and prompt. */
static samc_status ex_layer(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_fusion_encoder *enc = self;
    const int64_t S = (int64_t)enc->feat_side * enc->feat_side, C = enc->d_model;
    SAMC_INPUT_RANDOM("tgt", -2, 2, 3, (int64_t)1, S, C);
    SAMC_INPUT_RANDOM("query_pos", -1, 1, 3, (int64_t)1, S, C);
    return samc__sam3_example_prompt(in, "memory", "memory_key_padding_mask", C, true, &seed, err);
}

static samc_status ex_encoder(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                              samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_fusion_encoder *enc = self;
    const int64_t s = enc->feat_side, C = enc->d_model;
    SAMC_INPUT_RANDOM("src.0", -2, 2, 3, s * s, (int64_t)1, C);
    SAMC_INPUT_RANDOM("src_pos.0", -1, 1, 3, s * s, (int64_t)1, C);
    samc_status st = samc__sam3_example_prompt(in, "prompt", "prompt_key_padding_mask", C, false, &seed, err);
    if (!st)
        st = samc_inputs_scalar(in, "feat_sizes.0.0", (double)s, err);
    return st ? st : samc_inputs_scalar(in, "feat_sizes.0.1", (double)s, err);
}
