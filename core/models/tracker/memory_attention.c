/* SPDX-License-Identifier: Apache-2.0 */
/* memory_attention.c - the MemoryAttention part (sam2/modeling/
 * memory_attention.py): its rows (relative to its root: "memory_attention"
 * in SAM 2, "tracker.transformer.encoder" in SAM 3), weights, forward,
 * isolated runners and op-test inputs. */
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/memory.h"
#include "core/nn/nn_ops.h"
#include "core/nn/nn_rows.h"

enum { BATCH_FIRST, POS_AT_INPUT, LAYER, NORM, SEQ_FIRST, ATTENTION, N_ROWS };

static int count_layers(const void *self) { return ((const samc_memory_attention *)self)->n_layers; }

static samc_isolated_body iso_layer, iso_norm, iso_attention;
static samc_status ex_layer(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_norm(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_attention(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

/* MemoryAttention.forward, step by step: every step a body. */
static const samc_layer_def rows[N_ROWS] = {
    /* every input to batch-first, then curr + 0.1 * curr_pos */
    [BATCH_FIRST] = {.pattern = "@batch_first", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, transpose01),
                     .isolated = samc_nn_run_transpose01, .example = samc_nn_example_transpose01},
    [POS_AT_INPUT] = {.pattern = "@pos_enc_at_input", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, add),
                      .isolated = samc_nn_run_add, .example = samc_nn_example_add},
    [LAYER] = {.pattern = "layers.#", .table = SAMC_OPS_TRACKER,
               .body = SAMC_BODY(samc_tracker_ops, memory_attention_layer), .parity = true,
               .count = count_layers, .isolated = iso_layer, .example = ex_layer},
    [NORM] = {.pattern = "norm", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, layer_norm),
              .isolated = iso_norm, .example = ex_norm},
    [SEQ_FIRST] = {.pattern = "@seq_first", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, transpose01),
                   .isolated = samc_nn_run_transpose01, .example = samc_nn_example_transpose01},
    /* the part itself, a composite of the rows above (or one whole-part body) */
    [ATTENTION] = {.pattern = "", .table = SAMC_OPS_TRACKER, .whole = SAMC_BODY(samc_tracker_ops, memory_attention),
                   .parity = true, .isolated = iso_attention, .example = ex_attention},
};
const samc_part_def samc_memory_attention_part = {"MemoryAttention", rows, N_ROWS, describe};

static const char *const slot0[] = {"0"};

/* The part's record: its output (SAM 2), or SAM 3's dict {memory, pos_embed}
 * (pos_embed: curr_pos handed back, sequence-first). */
static void emit_attention(samc_exec *x, const samc_layer *A, const samc_scope *sc, const samc_tensor *out,
                           const samc_tensor *curr_pos)
{
    const samc_memory_attention *ma = A->self;
    static const char *const sam3_slots[] = {"memory", "pos_embed"};
    const samc_tensor *outs[] = {out, curr_pos};
    const bool pos = ma->sam3_io && curr_pos;
    samc_layer_emit(x, A, sc, pos ? 2 : 1, ma->sam3_io ? sam3_slots : slot0, outs);
}

/* ---- weights ---------------------------------------------------------------- */

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    const samc_tracker_config *tc = cfg;
    const samc_memory_attention_config *c = &tc->mem_attn;
    samc_memory_attention *a = self;
    if (c->num_layers < 0 || c->num_layers > SAMC_MAX_MEMATTN_LAYERS) /* the array it indexes */
        return samc_fail(err, SAMC_ERR_FORMAT, "config: memory_attention.num_layers = %d is outside 0..%d",
                         c->num_layers, SAMC_MAX_MEMATTN_LAYERS);
    a->n_layers = c->num_layers, a->d_model = c->d_model, a->pos_enc_at_input = c->pos_enc_at_input;
    a->emb = samc_tracker_emb(tc), a->mem_dim = samc_tracker_mem_dim(tc), a->num_maskmem = tc->num_maskmem;
    a->sam3_io = tc->sam3.traced;
    for (int i = 0; i < c->num_layers; i++) {
        samc_memory_attention_layer *l = &a->layers[i];
        samc_sd_prefix(sd, "layers.%d.", i);
        samc_sd_attention(sd, &l->self_attn.attn, "self_attn", c->d_model, c->d_model, c->d_model, c->self_heads);
        samc_sd_attention(sd, &l->cross_attn.attn, "cross_attn_image", c->d_model, c->d_model, c->kv_in_dim,
                          c->cross_heads);
        for (int k = 0; k < 2; k++) {
            samc_rope_attention *r = k ? &l->cross_attn : &l->self_attn;
            r->theta = (float)c->rope_theta, r->rope_k_repeat = k ? c->rope_k_repeat : false;
            r->feat_w = c->feat_w, r->feat_h = c->feat_h;
        }
        samc_sd_linear(sd, &l->linear1, "linear1", c->d_model, c->dim_feedforward, true);
        samc_sd_linear(sd, &l->linear2, "linear2", c->dim_feedforward, c->d_model, true);
        samc_sd_norm(sd, &l->norm1, "norm1", c->d_model, 1e-5f);
        samc_sd_norm(sd, &l->norm2, "norm2", c->d_model, 1e-5f);
        samc_sd_norm(sd, &l->norm3, "norm3", c->d_model, 1e-5f);
        l->pos_enc_at_attn = c->pos_enc_at_attn;
        l->pos_enc_at_cross_attn_queries = c->pos_enc_at_cross_attn_queries;
        l->pos_enc_at_cross_attn_keys = c->pos_enc_at_cross_attn_keys;
    }
    samc_sd_prefix(sd, "%s", "");
    samc_sd_norm(sd, &a->norm, "norm", c->d_model, 1e-5f);
    return SAMC_OK;
}

/* ---- forward ------------------------------------------------------------------- */

/* (L,B,C) <-> (B,L,C) through the row's transpose body. */
static samc_status transpose01(samc_exec *x, const samc_layer *L, const samc_tensor *t, samc_tensor *y,
                               samc_error *err)
{
    const samc_nn_ops *nn = L->ops;
    samc_status st = samc_tensor_allocv(y, err, 3, t->shape[1], t->shape[0], t->shape[2]);
    return st ? st : samc_layer_done(x, L, NULL, nn->transpose01(samc_layer_ctx(x, L), t, y), err, 0, NULL, NULL);
}

static samc_status attention_layers(samc_exec *x, const samc_memory_attention *ma, const samc_scope *sc,
                                    samc_tensor *t, const samc_tensor *mem, const samc_tensor *mp,
                                    const samc_tensor *qp, int num_obj_ptr_tokens, samc_error *err)
{
    samc_tensor y = {0};
    for (int i = 0; i < ma->n_layers; i++) {
        const samc_layer *L = samc_part_layer(x, ma, &rows[LAYER], i);
        const samc_tracker_ops *ops = L->ops;
        const samc_tensor *outs[] = {&y};
        samc_status st = samc_tensor_alloc(&y, t->ndim, t->shape, err);
        if (!st)
            st = samc_layer_done(x, L, sc,
                                 ops->memory_attention_layer(samc_layer_ctx(x, L), &ma->layers[i], t, mem, mp, qp,
                                                             num_obj_ptr_tokens, &y),
                                 err, 1, slot0, outs);
        if ((st = samc_tensor_advance(t, &y, st)))
            return st;
    }
    return SAMC_OK;
}

/* The part in one call of its implementation's whole-part body. */
static samc_status whole(samc_exec *x, const samc_layer *A, const samc_scope *sc, const samc_tensor *curr,
                         const samc_tensor *memory, const samc_tensor *curr_pos, const samc_tensor *memory_pos,
                         int num_obj_ptr_tokens, samc_tensor *out, samc_error *err)
{
    const samc_tracker_ops *ops = A->whole_ops;
    samc_status st = samc_tensor_alloc(out, curr->ndim, curr->shape, err);
    if (!st)
        st = samc_layer_done(x, A, sc,
                             ops->memory_attention(samc_part_ctx(x, A, sc), A->self, curr, memory, curr_pos,
                                                   memory_pos, num_obj_ptr_tokens, out),
                             err, 0, NULL, NULL);
    if (!st)
        emit_attention(x, A, sc, out, curr_pos);
    else
        samc_tensor_release(out);
    return st;
}

samc_status samc_memory_attention_forward(samc_exec *x, const samc_memory_attention *ma, const samc_scope *sc,
                                          const samc_tensor *curr, const samc_tensor *memory,
                                          const samc_tensor *curr_pos, const samc_tensor *memory_pos,
                                          int num_obj_ptr_tokens, samc_tensor *out, samc_error *err)
{
    const samc_layer *in = samc_part_layer(x, ma, &rows[BATCH_FIRST], 0), *nl = samc_part_layer(x, ma, &rows[NORM], 0);
    const samc_layer *pl = samc_part_layer(x, ma, &rows[POS_AT_INPUT], 0);
    const samc_nn_ops *nn_pos = pl->ops, *nn_norm = nl->ops;
    samc_tensor t = {0}, qp = {0}, mem = {0}, mp = {0}, n = {0};
    memset(out, 0, sizeof *out);
    const samc_layer *A = samc_part_layer(x, ma, &rows[ATTENTION], 0);
    if (A->whole_ops)
        return whole(x, A, sc, curr, memory, curr_pos, memory_pos, num_obj_ptr_tokens, out, err);
    samc_status st = transpose01(x, in, curr, &t, err);
    if (!st && curr_pos)
        st = transpose01(x, in, curr_pos, &qp, err);
    if (!st && ma->pos_enc_at_input && curr_pos) /* output = curr + 0.1 * curr_pos */
        st = samc_layer_done(x, pl, NULL, nn_pos->add(samc_layer_ctx(x, pl), &t, &qp, 0.1f, &t), err, 0, NULL, NULL);
    if (!st)
        st = transpose01(x, in, memory, &mem, err);
    if (!st && memory_pos)
        st = transpose01(x, in, memory_pos, &mp, err);
    if (!st)
        st = attention_layers(x, ma, sc, &t, &mem, memory_pos ? &mp : NULL, curr_pos ? &qp : NULL,
                              num_obj_ptr_tokens, err);
    if (!st && !(st = samc_tensor_alloc(&n, t.ndim, t.shape, err))) /* final norm, back to sequence-first */
        st = samc_layer_done(x, nl, NULL, nn_norm->layer_norm(samc_layer_ctx(x, nl), &ma->norm, &t, &n), err, 0, NULL,
                             NULL);
    if (!st)
        st = transpose01(x, samc_part_layer(x, ma, &rows[SEQ_FIRST], 0), &n, out, err);
    if (!st) {
        emit_attention(x, A, sc, out, curr_pos);
    } else {
        samc_tensor_release(out);
    }
    samc_tensor_release(&t), samc_tensor_release(&qp), samc_tensor_release(&mem), samc_tensor_release(&mp);
    samc_tensor_release(&n);
    return st;
}

/* ---- isolated runners ------------------------------------------------------- */

static samc_status iso_layer(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    const samc_memory_attention *ma = L->self;
    const samc_tracker_ops *ops = L->ops;
    samc_tensor tgt = {0}, mem = {0}, pos = {0}, qp = {0};
    samc_status st = samc_io_tensor(in, "tgt", "0", &tgt, err);
    if (!st)
        st = samc_io_tensor(in, "memory", "1", &mem, err);
    if (!st && samc_io_has(in, "pos", "2"))
        st = samc_io_tensor(in, "pos", "2", &pos, err);
    if (!st && samc_io_has(in, "query_pos", "3"))
        st = samc_io_tensor(in, "query_pos", "3", &qp, err);
    const int nx = (int)samc_io_scalar_or(in, "num_k_exclude_rope", "4", 0);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && !(st = samc_tensor_alloc(y, tgt.ndim, tgt.shape, err)))
        st = samc_layer_done(x, L, NULL,
                             ops->memory_attention_layer(samc_layer_ctx(x, L), &ma->layers[L->index], &tgt, &mem,
                                                         pos.data ? &pos : NULL, qp.data ? &qp : NULL, nx, y),
                             err, 0, NULL, NULL);
    samc_tensor_release(&tgt), samc_tensor_release(&mem), samc_tensor_release(&pos), samc_tensor_release(&qp);
    return st;
}

/* The final LayerNorm alone: in/0 (B,L,D). */
static samc_status iso_norm(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                            samc_error *err)
{
    const samc_memory_attention *ma = L->self;
    samc_tensor t = {0};
    samc_status st = samc_io_tensor(in, "x", "0", &t, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && !(st = samc_tensor_alloc(y, t.ndim, t.shape, err)))
        st = samc_layer_done(x, L, NULL,
                             ((const samc_nn_ops *)L->ops)->layer_norm(samc_layer_ctx(x, L), &ma->norm, &t, y), err,
                             0, NULL, NULL);
    samc_tensor_release(&t);
    return st;
}

/* curr / curr_pos may be one-element lists (the official call passes them so). */
static samc_status iso_attention(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                 samc_error *err)
{
    samc_tensor a = {0}, b = {0}, c = {0}, d = {0}, y = {0};
    samc_capture cap;
    const bool s3 = ((const samc_memory_attention *)L->self)->sam3_io; /* SAM 3's argument names */
    const char *curr = s3 ? "src.0" : samc_io_has(in, "curr.0", NULL) ? "curr.0" : "curr";
    const char *cpos = s3 ? "src_pos.0" : samc_io_has(in, "curr_pos.0", NULL) ? "curr_pos.0" : "curr_pos";
    const char *mem = s3 ? "prompt" : "memory", *mpos = s3 ? "prompt_pos" : "memory_pos";
    samc_status st = samc_io_tensor(in, curr, "0", &a, err);
    if (!st)
        st = samc_io_tensor(in, mem, "1", &b, err);
    if (!st && samc_io_has(in, cpos, "2"))
        st = samc_io_tensor(in, cpos, "2", &c, err);
    if (!st && samc_io_has(in, mpos, "3"))
        st = samc_io_tensor(in, mpos, "3", &d, err);
    const int n_ptr = (int)samc_io_scalar_or(in, "num_obj_ptr_tokens", "4", 0);
    samc_capture_begin(x, &cap, L->name, out);
    if (!st)
        st = samc_memory_attention_forward(x, L->self, &samc_no_scope, &a, &b, c.data ? &c : NULL,
                                           d.data ? &d : NULL, n_ptr, &y, err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&a), samc_tensor_release(&b), samc_tensor_release(&c), samc_tensor_release(&d);
    samc_tensor_release(&y);
    return st;
}

/* ---- op-test inputs ------------------------------------------------------------ */

/* One layer with the memory of `frames` frames and 16 pointer tokens. */
static samc_status ex_layer(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    const samc_memory_attention *ma = self;
    const samc_memory_attention_layer *l = &ma->layers[index];
    const int64_t e = full ? ma->emb : 16, L = e * e, D = l->self_attn.attn.q.in, Dk = l->cross_attn.attn.k.in;
    const int64_t frames = full ? ma->num_maskmem : 2, Nk = frames * L + 16;
    SAMC_INPUT_RANDOM("tgt", -2, 2, 3, (int64_t)1, L, D);
    SAMC_INPUT_RANDOM("memory", -2, 2, 3, (int64_t)1, Nk, Dk);
    SAMC_INPUT_RANDOM("pos", -1, 1, 3, (int64_t)1, Nk, Dk);
    SAMC_INPUT_RANDOM("query_pos", -1, 1, 3, (int64_t)1, L, D);
    return samc_inputs_scalar(in, "num_k_exclude_rope", 16, err);
}

static samc_status ex_norm(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                           samc_error *err)
{
    (void)index;
    const samc_memory_attention *ma = self;
    const int64_t e = full ? ma->emb : 16;
    SAMC_INPUT_RANDOM("x", -2, 2, 3, (int64_t)1, e * e, (int64_t)ma->d_model);
    return SAMC_OK;
}

static samc_status ex_attention(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                samc_error *err)
{
    (void)index;
    const samc_memory_attention *ma = self;
    const int64_t e = full ? ma->emb : 16, L = e * e, D = ma->d_model, Dk = ma->mem_dim, Nk = L + 16;
    SAMC_INPUT_RANDOM("curr", -2, 2, 3, L, (int64_t)1, D);
    SAMC_INPUT_RANDOM("memory", -2, 2, 3, Nk, (int64_t)1, Dk);
    SAMC_INPUT_RANDOM("curr_pos", -1, 1, 3, L, (int64_t)1, D);
    SAMC_INPUT_RANDOM("memory_pos", -1, 1, 3, Nk, (int64_t)1, Dk);
    return samc_inputs_scalar(in, "num_obj_ptr_tokens", 16, err);
}
