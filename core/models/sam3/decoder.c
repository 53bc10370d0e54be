/* SPDX-License-Identifier: Apache-2.0 */
/* decoder.c - the decoder part (sam3/model/decoder.py TransformerDecoder:
 * box-refining DETR layers with a presence token and box-relative position
 * bias), mounted at "transformer.decoder": rows, weights, forward, isolated
 * runners and op-test inputs. */
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_io.h"
#include "core/models/sam3/sam3_modules.h"
#include "core/models/sam3/sam3_parts.h"
#include "core/nn/box_geom.h"
#include "core/nn/nn_ops.h"

enum { QUERY_POS, RPB, LAYER, REFINE, PRESENCE_NORM, PRESENCE_HEAD, DECODER, N_ROWS };

static int count_layers(const void *self) { return ((const samc_sam3_decoder *)self)->n_layers; }

static samc_isolated_body iso_query_pos, iso_rpb, iso_layer, iso_refine, iso_presence, iso_decoder;
static samc_status ex_boxes(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_layer(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_refine(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_presence(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_decoder(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

/* The per-layer steps of TransformerDecoder.forward are named for the
 * module (or function) whose work they do. */
static const samc_layer_def rows[N_ROWS] = {
    /* gen_sineembed_for_position + ref_point_head */
    [QUERY_POS] = {.pattern = "ref_point_head", .table = SAMC_OPS_SAM3,
                   .body = SAMC_BODY(samc_sam3_ops, sam3_dec_query_pos), .isolated = iso_query_pos,
                   .example = ex_boxes},
    [RPB] = {.pattern = "@get_rpb_matrix", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_dec_boxrpb),
             .isolated = iso_rpb, .example = ex_boxes},
    [LAYER] = {.pattern = "layers.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_dec_layer),
               .parity = true, .count = count_layers, .isolated = iso_layer, .example = ex_layer},
    /* out_norm, then the box refinement through bbox_embed */
    [REFINE] = {.pattern = "bbox_embed", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_dec_refine),
                .isolated = iso_refine, .example = ex_refine},
    [PRESENCE_NORM] = {.pattern = "presence_token_out_norm", .table = SAMC_OPS_NN,
                       .body = SAMC_BODY(samc_nn_ops, layer_norm), .isolated = iso_presence, .example = ex_presence},
    [PRESENCE_HEAD] = {.pattern = "presence_token_head", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, mlp),
                       .isolated = iso_presence, .example = ex_presence},
    [DECODER] = {.pattern = "", .parity = true, .isolated = iso_decoder, .example = ex_decoder},
};
const samc_part_def samc_sam3_decoder_part = {"TransformerDecoder", rows, N_ROWS, describe};

/* ---- weights ---------------------------------------------------------------- */

/* model_misc.MLP at `name` (ReLU between layers). */
static void mlp(samc_sd *sd, samc_mlp *m, const char *name, int n, int in, int hidden, int out)
{
    samc_sd_mlp(sd, m, name, in, hidden, out, n, false);
}

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    (void)err;
    samc_sam3_decoder *dec = self;
    const samc_sam3_decoder_config *c = cfg;
    const int d = c->d_model, ch = c->cross_attention.num_heads;
    dec->d_model = d, dec->n_layers = c->num_layers, dec->num_queries = c->num_queries;
    dec->heads = ch; /* boxRPB: nheads = layers[0].cross_attn.num_heads */
    dec->boxrpb = c->boxrpb;
    dec->normed_output_consistently = c->use_normed_output_consistently;
    dec->has_presence = c->presence_token;
    for (int i = 0; i < dec->n_layers; i++) {
        samc_sam3_dec_layer *l = &dec->layers[i];
        samc_sd_prefix(sd, "layers.%d.", i);
        l->d_model = d, l->heads = ch, l->use_text_cross_attention = c->use_text_cross_attention;
        samc__sam3_sd_mha(sd, &l->self_attn, "self_attn", d, c->n_heads);
        if (l->use_text_cross_attention) {
            samc__sam3_sd_mha(sd, &l->ca_text, "ca_text", d, c->n_heads);
            samc_sd_norm(sd, &l->catext_norm, "catext_norm", d, 1e-5f);
        }
        samc__sam3_sd_mha(sd, &l->cross_attn, "cross_attn", d, ch);
        samc_sd_norm(sd, &l->norm1, "norm1", d, 1e-5f);
        samc_sd_norm(sd, &l->norm2, "norm2", d, 1e-5f);
        samc_sd_norm(sd, &l->norm3, "norm3", d, 1e-5f);
        samc_sd_linear(sd, &l->linear1, "linear1", d, c->dim_feedforward, true);
        samc_sd_linear(sd, &l->linear2, "linear2", c->dim_feedforward, d, true);
    }
    samc_sd_prefix(sd, "%s", "");
    samc_sd_norm(sd, &dec->norm, "norm", d, 1e-5f);
    mlp(sd, &dec->bbox_embed, "bbox_embed", 3, d, d, 4);
    dec->query_embed = samc_sd_tensor(sd, 2, (const int64_t[]){dec->num_queries, d}, "query_embed.weight");
    dec->reference_points = samc_sd_tensor(sd, 2, (const int64_t[]){dec->num_queries, 4}, "reference_points.weight");
    if (dec->boxrpb != SAMC_SAM3_RPB_NONE) {
        const int n_in = dec->boxrpb == SAMC_SAM3_RPB_BOTH ? 4 : 2;
        mlp(sd, &dec->boxrpb_x, "boxRPB_embed_x", 2, n_in, d, ch);
        mlp(sd, &dec->boxrpb_y, "boxRPB_embed_y", 2, n_in, d, ch);
    }
    if (dec->has_presence) {
        dec->presence_token = samc_sd_tensor(sd, 2, (const int64_t[]){1, d}, "presence_token.weight");
        mlp(sd, &dec->presence_head, "presence_token_head", 3, d, d, 1);
        samc_sd_norm(sd, &dec->presence_out_norm, "presence_token_out_norm", d, 1e-5f);
    }
    mlp(sd, &dec->ref_point_head, "ref_point_head", 2, 2 * d, d, d);
    return SAMC_OK;
}

/* ---- forward ------------------------------------------------------------------ */

#define OPS(L) ((const samc_sam3_ops *)(L)->ops)
#define NN(L) ((const samc_nn_ops *)(L)->ops)

static samc_status done(samc_exec *x, const samc_layer *L, samc_status st, samc_error *err)
{
    return samc_layer_done(x, L, NULL, st, err, 0, NULL, NULL);
}

void samc_sam3_decoded_release(samc_sam3_decoded *d)
{
    samc_tensor_release(&d->hs), samc_tensor_release(&d->refs), samc_tensor_release(&d->presence_logits);
    samc_tensor_release(&d->presence_feats), samc_tensor_release(&d->boxes);
}

/* The working tensors of one forward. */
typedef struct work {
    samc_tensor ref, nref, sine, qpos, a, b, nrm, p0, p1, pn, plog, rpb;
} work;

static samc_status work_alloc(const samc_sam3_decoder *dec, int64_t nq, int64_t B, int H, int W, work *w,
                              samc_sam3_decoded *out, samc_error *err)
{
    const int64_t D = dec->d_model, Lr = dec->n_layers;
    samc_status st = samc_tensor_allocv(&out->hs, err, 4, Lr, nq, B, D);
    if (!st)
        st = samc_tensor_allocv(&out->refs, err, 4, Lr, nq, B, (int64_t)4);
    if (!st)
        st = samc_tensor_allocv(&w->ref, err, 3, nq, B, (int64_t)4);
    if (!st)
        st = samc_tensor_allocv(&w->nref, err, 3, nq, B, (int64_t)4);
    if (!st)
        st = samc_tensor_allocv(&w->sine, err, 3, nq, B, 2 * D);
    if (!st)
        st = samc_tensor_allocv(&w->qpos, err, 3, nq, B, D);
    if (!st)
        st = samc_tensor_allocv(&w->a, err, 3, nq, B, D);
    if (!st)
        st = samc_tensor_allocv(&w->b, err, 3, nq, B, D);
    if (!st)
        st = samc_tensor_allocv(&w->nrm, err, 3, nq, B, D);
    if (!st && dec->has_presence) {
        st = samc_tensor_allocv(&out->presence_logits, err, 3, Lr, (int64_t)1, B);
        if (!st)
            st = samc_tensor_allocv(&out->presence_feats, err, 3, (int64_t)1, B, D);
        if (!st)
            st = samc_tensor_allocv(&w->p0, err, 3, (int64_t)1, B, D);
        if (!st)
            st = samc_tensor_allocv(&w->p1, err, 3, (int64_t)1, B, D);
        if (!st)
            st = samc_tensor_allocv(&w->pn, err, 2, B, D);
        if (!st)
            st = samc_tensor_allocv(&w->plog, err, 2, B, (int64_t)1);
    }
    if (!st && dec->boxrpb != SAMC_SAM3_RPB_NONE)
        st = samc_tensor_allocv(&w->rpb, err, 3, B * dec->heads, nq, (int64_t)H * W);
    return st;
}

static void work_free(work *w)
{
    samc_tensor *t[] = {&w->ref, &w->nref, &w->sine, &w->qpos, &w->a, &w->b, &w->nrm,
                        &w->p0, &w->p1, &w->pn, &w->plog, &w->rpb};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        samc_tensor_release(t[i]);
}

/* presence_token_head(presence_token_out_norm(presence)): (1,B,d) -> (B,1). */
static samc_status presence_logit(samc_exec *x, const samc_sam3_decoder *dec, work *w, samc_error *err)
{
    samc_tensor p = w->p1; /* (1,B,d) as (B,d) */
    p.ndim = 2, p.shape[0] = w->p1.shape[1], p.shape[1] = w->p1.shape[2], p.owns = false;
    const samc_layer *Ln = samc_part_layer(x, dec, &rows[PRESENCE_NORM], 0);
    const samc_layer *Lh = samc_part_layer(x, dec, &rows[PRESENCE_HEAD], 0);
    samc_status st = done(x, Ln, NN(Ln)->layer_norm(samc_layer_ctx(x, Ln), &dec->presence_out_norm, &p, &w->pn), err);
    return st ? st : done(x, Lh, NN(Lh)->mlp(samc_layer_ctx(x, Lh), &dec->presence_head, &w->pn, &w->plog), err);
}

/* Layer l on the boxes w->ref: query position, box bias, the layer (traced),
 * its refinement into hs[l] and w->nref, the presence logit. */
static samc_status step(samc_exec *x, const samc_sam3_decoder *dec, int l, work *w, const samc_tensor *memory,
                        const samc_tensor *pos, const samc_tensor *memory_text, const samc_tensor *text_mask, int H,
                        int W, samc_sam3_decoded *out, samc_error *err)
{
    const int64_t nq = w->ref.shape[0], B = w->ref.shape[1], D = dec->d_model;
    const bool presence = dec->has_presence;
    memcpy(out->refs.data + l * nq * B * 4, w->ref.data, (size_t)(nq * B * 4) * sizeof *w->ref.data);
    const samc_layer *L = samc_part_layer(x, dec, &rows[QUERY_POS], 0);
    samc_status st = done(x, L, OPS(L)->sam3_dec_query_pos(samc_layer_ctx(x, L), dec, &w->ref, &w->sine, &w->qpos), err);
    L = samc_part_layer(x, dec, &rows[RPB], 0);
    if (!st && w->rpb.data)
        st = done(x, L, OPS(L)->sam3_dec_boxrpb(samc_layer_ctx(x, L), dec, &w->ref, H, W, &w->rpb), err);
    L = samc_part_layer(x, dec, &rows[LAYER], l);
    static const char *const slots[] = {"0", "1"};
    const samc_tensor *outs[] = {&w->b, &w->p1};
    if (!st)
        st = samc_layer_done(x, L, NULL,
                             OPS(L)->sam3_dec_layer(samc_layer_ctx(x, L), &dec->layers[l], &w->a, &w->qpos, memory_text,
                                                    text_mask, memory, pos, w->rpb.data ? &w->rpb : NULL,
                                                    presence ? &w->p0 : NULL, &w->b, presence ? &w->p1 : NULL),
                             err, presence ? 2 : 1, slots, outs);
    L = samc_part_layer(x, dec, &rows[REFINE], 0);
    if (!st)
        st = done(x, L, OPS(L)->sam3_dec_refine(samc_layer_ctx(x, L), dec, &w->b, &w->ref, &w->nrm, &w->nref), err);
    if (!st)
        memcpy(out->hs.data + l * nq * B * D, w->nrm.data, (size_t)(nq * B * D) * sizeof *w->nrm.data);
    if (!st && presence && !(st = presence_logit(x, dec, w, err)))
        memcpy(out->presence_logits.data + l * B, w->plog.data, (size_t)B * sizeof *w->plog.data);
    return st;
}

samc_status samc_sam3_decoder_forward(samc_exec *x, const samc_sam3_decoder *dec, const samc_tensor *tgt,
                                      const samc_tensor *memory, const samc_tensor *pos,
                                      const samc_tensor *memory_text, const samc_tensor *text_mask, int H, int W,
                                      samc_sam3_decoded *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    const int64_t D = dec->d_model;
    if (tgt->ndim != 3 || tgt->shape[2] != D || tgt->shape[0] != dec->num_queries || H < 1 || W < 1)
        return samc_fail(err, SAMC_ERR_SHAPE, "decoder: tgt (%d,B,%lld) and one level expected", dec->num_queries,
                         (long long)D);
    const int64_t nq = tgt->shape[0], B = tgt->shape[1];
    work w = {0};
    samc_status st = work_alloc(dec, nq, B, H, W, &w, out, err);
    if (!st) {
        /* reference_points.weight.unsqueeze(1).repeat(1, bs, 1).sigmoid() */
        for (int64_t q = 0; q < nq; q++)
            for (int64_t b = 0; b < B; b++)
                for (int k = 0; k < 4; k++)
                    w.ref.data[(q * B + b) * 4 + k] = samc_sigmoidf(dec->reference_points[q * 4 + k]);
        memcpy(w.a.data, tgt->data, (size_t)samc_numel(&w.a) * sizeof *w.a.data);
        for (int64_t b = 0; b < B && w.p0.data; b++) /* presence_token.weight[None].expand(1, bs, -1) */
            memcpy(w.p0.data + b * D, dec->presence_token, (size_t)D * sizeof *w.p0.data);
    }
    for (int l = 0; l < dec->n_layers && !st; l++) {
        st = step(x, dec, l, &w, memory, pos, memory_text, text_mask, H, W, out, err);
        samc_tensor t = w.a;
        w.a = w.b, w.b = t;
        t = w.ref, w.ref = w.nref, w.nref = t;
        t = w.p0, w.p0 = w.p1, w.p1 = t;
    }
    if (!st && w.p0.data) /* presence_feats = presence_out.clone() */
        memcpy(out->presence_feats.data, w.p0.data, (size_t)samc_numel(&out->presence_feats) * sizeof *w.p0.data);
    /* Sam3Image._update_scores_and_boxes: pred_boxes = sigmoid(inverse_sigmoid(
     * the last layer's boxes) + bbox_embed(hs[-1])): the same operations as that
     * layer's refinement, so its new boxes */
    if (!st)
        st = samc_tensor_copy(&out->boxes, &w.ref, err);
    work_free(&w);
    if (st) {
        samc_sam3_decoded_release(out);
        return st;
    }
    static const char *const slots[] = {"0", "1", "2", "3"};
    const samc_tensor *ts[] = {&out->hs, &out->refs, &out->presence_logits, &out->presence_feats};
    samc_layer_emit(x, samc_part_layer(x, dec, &rows[DECODER], 0), NULL, dec->has_presence ? 4 : 2, slots, ts);
    return SAMC_OK;
}

/* ---- isolated runners ------------------------------------------------------------ */

/* The reference boxes "0" (nq,B,4): sine "0" and query_pos "1". */
static samc_status iso_query_pos(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                 samc_error *err)
{
    const samc_sam3_decoder *dec = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *ref = samc__sam3_in(&r, "0", NULL);
    if (ref && ref->ndim != 3)
        samc__sam3_io_shape(&r, "%s: boxes are not (nq,B,4)", L->name);
    const int64_t nq = r.st ? 0 : ref->shape[0], B = r.st ? 0 : ref->shape[1];
    samc_tensor *sine = samc__sam3_out_v(&r, "0", 3, nq, B, (int64_t)2 * dec->d_model);
    samc_tensor *qpos = samc__sam3_out_v(&r, "1", 3, nq, B, (int64_t)dec->d_model);
    if (qpos)
        r.st = done(x, L, OPS(L)->sam3_dec_query_pos(samc_layer_ctx(x, L), dec, ref, sine, qpos), err);
    return samc__sam3_io_end(&r);
}

static samc_status iso_rpb(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                           samc_error *err)
{
    const samc_sam3_decoder *dec = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *ref = samc__sam3_in(&r, "0", NULL);
    const int H = (int)samc__sam3_in_num(&r, "H", NULL), W = (int)samc__sam3_in_num(&r, "W", NULL);
    if (ref && (ref->ndim != 3 || H < 1 || W < 1))
        samc__sam3_io_shape(&r, "%s: boxes (nq,B,4) and a positive H, W expected", L->name);
    samc_tensor *y = r.st ? NULL
                          : samc__sam3_out_v(&r, "0", 3, ref->shape[1] * dec->heads, ref->shape[0], (int64_t)H * W);
    if (y)
        r.st = done(x, L, OPS(L)->sam3_dec_boxrpb(samc_layer_ctx(x, L), dec, ref, H, W, y), err);
    return samc__sam3_io_end(&r);
}

static samc_status iso_layer(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    const samc_sam3_decoder *dec = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *tgt = samc__sam3_in(&r, "tgt", "0"), *qpos = samc__sam3_in(&r, "tgt_query_pos", NULL);
    const samc_tensor *mt = samc__sam3_in_opt(&r, "memory_text"), *tm = samc__sam3_in_opt(&r, "text_attention_mask");
    const samc_tensor *mem = samc__sam3_in(&r, "memory", NULL), *mpos = samc__sam3_in_opt(&r, "memory_pos");
    const samc_tensor *cam = samc__sam3_in_opt(&r, "cross_attn_mask"), *pres = samc__sam3_in_opt(&r, "presence_token");
    if (!r.st && samc__sam3_in_opt(&r, "memory_key_padding_mask"))
        r.st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "decoder layer: a memory key padding mask");
    if (!r.st && in->has(in->user, "dac") && samc__sam3_in_num(&r, "dac", NULL) != 0.0)
        r.st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "decoder layer: DAC (training only)");
    if (tgt && tgt->ndim != 3)
        samc__sam3_io_shape(&r, "%s: tgt is not 3-D", L->name);
    samc_tensor *y = r.st ? NULL : samc__sam3_out(&r, "0", 3, tgt->shape);
    samc_tensor *po = r.st || !pres ? NULL : samc__sam3_out(&r, "1", pres->ndim, pres->shape);
    if (y && !r.st)
        r.st = done(x, L,
                    OPS(L)->sam3_dec_layer(samc_layer_ctx(x, L), &dec->layers[L->index], tgt, qpos, mt, tm, mem, mpos,
                                           cam, pres, y, po),
                    err);
    return samc__sam3_io_end(&r);
}

/* A layer's output "0" (nq,B,d) and its boxes "1" (nq,B,4): normed "0", new boxes "1". */
static samc_status iso_refine(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                              samc_error *err)
{
    const samc_sam3_decoder *dec = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *y = samc__sam3_in(&r, "0", NULL), *ref = samc__sam3_in(&r, "1", NULL);
    samc_tensor *nrm = r.st ? NULL : samc__sam3_out(&r, "0", y->ndim, y->shape);
    samc_tensor *nref = r.st ? NULL : samc__sam3_out(&r, "1", ref->ndim, ref->shape);
    if (nref)
        r.st = done(x, L, OPS(L)->sam3_dec_refine(samc_layer_ctx(x, L), dec, y, ref, nrm, nref), err);
    return samc__sam3_io_end(&r);
}

/* presence_token_out_norm (B,d) -> (B,d), presence_token_head (B,d) -> (B,1). */
static samc_status iso_presence(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                samc_error *err)
{
    const samc_sam3_decoder *dec = L->self;
    const bool norm = L->def == &rows[PRESENCE_NORM];
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *p = samc__sam3_in(&r, "0", NULL);
    if (p && p->ndim != 2)
        samc__sam3_io_shape(&r, "%s: input is not (B,d)", L->name);
    samc_tensor *y = r.st ? NULL : samc__sam3_out_v(&r, "0", 2, p->shape[0], norm ? p->shape[1] : (int64_t)1);
    if (y)
        r.st = done(x, L,
                    norm ? NN(L)->layer_norm(samc_layer_ctx(x, L), &dec->presence_out_norm, p, y)
                         : NN(L)->mlp(samc_layer_ctx(x, L), &dec->presence_head, p, y),
                    err);
    return samc__sam3_io_end(&r);
}

static samc_status iso_decoder(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                               samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *tgt = samc__sam3_in(&r, "tgt", "0"), *mem = samc__sam3_in(&r, "memory", "1");
    const samc_tensor *pos = samc__sam3_in_opt(&r, "pos"), *mt = samc__sam3_in_opt(&r, "memory_text");
    const samc_tensor *tm = samc__sam3_in_opt(&r, "text_attention_mask");
    const samc_tensor *ss = samc__sam3_in(&r, "spatial_shapes", NULL);
    if (!r.st && (samc__sam3_in_opt(&r, "reference_boxes") || samc__sam3_in_opt(&r, "memory_key_padding_mask") ||
                  samc__sam3_in_opt(&r, "tgt_mask") || samc__sam3_in_opt(&r, "memory_mask")))
        r.st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "decoder: given reference boxes or masks");
    if (!r.st && in->has(in->user, "apply_dac") && samc__sam3_in_num(&r, "apply_dac", NULL) != 0.0)
        r.st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "decoder: DAC (training only)");
    if (ss && samc_numel(ss) != 2)
        samc__sam3_io_shape(&r, "decoder: one level expected");
    samc_sam3_decoded d = {0};
    samc_capture cap;
    samc_capture_begin(x, &cap, L->name, out);
    if (!r.st)
        r.st = samc_sam3_decoder_forward(x, L->self, tgt, mem, pos, mt, tm, (int)ss->data[0], (int)ss->data[1], &d, err);
    samc_capture_end(x, &cap);
    samc_sam3_decoded_release(&d);
    return samc__sam3_io_end(&r);
}

/* ---- op-test inputs --------------------------------------------------------------- */

/* Valid cxcywh boxes (nq, 1, 4) in [0, 1]. */
static samc_status random_boxes(samc_layer_inputs *in, const char *name, int64_t nq, uint64_t *seed, samc_error *err)
{
    samc_tensor *t = samc_inputs_random(in, name, (*seed)++, 0.1f, 0.6f, err, 3, nq, (int64_t)1, (int64_t)4);
    if (!t)
        return SAMC_ERR_NOMEM;
    for (int64_t q = 0; q < nq; q++) /* sizes below the centres' distance to an edge */
        t->data[q * 4 + 2] *= 0.5f, t->data[q * 4 + 3] *= 0.5f;
    return SAMC_OK;
}

static samc_status ex_boxes(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_decoder *dec = self;
    samc_status st = random_boxes(in, "0", dec->num_queries, &seed, err);
    if (!st)
        st = samc_inputs_scalar(in, "H", dec->feat_side, err);
    return st ? st : samc_inputs_scalar(in, "W", dec->feat_side, err);
}

/* A layer as the decoder calls it on the image level, with the presence
 * token and the box bias when the model has them. */
static samc_status ex_layer(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_decoder *dec = self;
    const int64_t nq = dec->num_queries, D = dec->d_model, S = (int64_t)dec->feat_side * dec->feat_side;
    SAMC_INPUT_RANDOM("tgt", -2, 2, 3, nq, (int64_t)1, D);
    SAMC_INPUT_RANDOM("tgt_query_pos", -1, 1, 3, nq, (int64_t)1, D);
    SAMC_INPUT_RANDOM("memory", -2, 2, 3, S, (int64_t)1, D);
    SAMC_INPUT_RANDOM("memory_pos", -1, 1, 3, S, (int64_t)1, D);
    if (dec->boxrpb != SAMC_SAM3_RPB_NONE)
        SAMC_INPUT_RANDOM("cross_attn_mask", -4, 1, 3, (int64_t)dec->heads, nq, S);
    if (dec->has_presence)
        SAMC_INPUT_RANDOM("presence_token", -2, 2, 3, (int64_t)1, (int64_t)1, D);
    return samc__sam3_example_prompt(in, "memory_text", "text_attention_mask", D, false, &seed, err);
}

static samc_status ex_refine(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                             samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_decoder *dec = self;
    SAMC_INPUT_RANDOM("0", -2, 2, 3, (int64_t)dec->num_queries, (int64_t)1, (int64_t)dec->d_model);
    return random_boxes(in, "1", dec->num_queries, &seed, err);
}

static samc_status ex_presence(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                               samc_error *err)
{
    (void)index, (void)full;
    SAMC_INPUT_RANDOM("0", -2, 2, 2, (int64_t)1, (int64_t)((const samc_sam3_decoder *)self)->d_model);
    return SAMC_OK;
}

static samc_status ex_decoder(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                              samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_decoder *dec = self;
    const int64_t D = dec->d_model, s = dec->feat_side;
    SAMC_INPUT_RANDOM("tgt", -2, 2, 3, (int64_t)dec->num_queries, (int64_t)1, D);
    SAMC_INPUT_RANDOM("memory", -2, 2, 3, s * s, (int64_t)1, D);
    SAMC_INPUT_RANDOM("pos", -1, 1, 3, s * s, (int64_t)1, D);
    samc_tensor *ss = samc_inputs_tensor(in, "spatial_shapes", 2, (const int64_t[]){1, 2}, err);
    if (!ss)
        return SAMC_ERR_NOMEM;
    ss->data[0] = ss->data[1] = (float)s;
    return samc__sam3_example_prompt(in, "memory_text", "text_attention_mask", D, false, &seed, err);
}
