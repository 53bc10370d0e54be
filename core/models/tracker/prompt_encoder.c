/* SPDX-License-Identifier: Apache-2.0 */
/* prompt_encoder.c - the PromptEncoder part (sam2/modeling/sam/
 * prompt_encoder.py): its rows (relative to its root: "sam_prompt_encoder",
 * "tracker.sam_prompt_encoder"), weights, forwards, isolated runners and
 * op-test inputs. */
#include <math.h>
#include <stdlib.h>

#include "core/base/error.h"
#include "core/models/tracker/sam_heads.h"

enum { ENCODER, PE_LAYER, N_ROWS };

static samc_isolated_body iso_encoder, iso_pe_layer;
static samc_status ex_encoder(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_pe_layer(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def rows[N_ROWS] = {
    [ENCODER] = {.pattern = "", .table = SAMC_OPS_TRACKER, .body = SAMC_BODY(samc_tracker_ops, prompt_encoder),
                 .parity = true, .isolated = iso_encoder, .example = ex_encoder},
    /* get_dense_pe: pe_layer over the embedding grid */
    [PE_LAYER] = {.pattern = "pe_layer", .table = SAMC_OPS_TRACKER, .body = SAMC_BODY(samc_tracker_ops, dense_pe),
                  .isolated = iso_pe_layer, .example = ex_pe_layer},
};
const samc_part_def samc_prompt_encoder_part = {"PromptEncoder", rows, N_ROWS, describe};

static const char *const slot_names[] = {"0", "1"};

/* ---- weights ---------------------------------------------------------------- */

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    (void)err;
    const samc_tracker_config *tc = cfg;
    const int D = tc->d_model, c = tc->mask_in_chans;
    samc_prompt_encoder *p = self;
    p->embed_dim = D;
    p->emb_h = p->emb_w = samc_tracker_emb(tc);
    p->input_h = p->input_w = tc->image_size;
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
    return SAMC_OK;
}

/* ---- forwards ------------------------------------------------------------------ */

samc_status samc_prompt_encoder_forward(samc_exec *x, const samc_prompt_encoder *pe, const samc_scope *sc,
                                        const float *coords, const int32_t *labels, int B, int n,
                                        const samc_tensor *mask, samc_tensor *sparse, samc_tensor *dense,
                                        samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, pe, &rows[ENCODER], 0);
    const samc_tracker_ops *ops = L->ops;
    const int64_t D = pe->embed_dim, eh = pe->emb_h, ew = pe->emb_w;
    const int64_t n_sparse = n ? n + 1 : 0; /* + the padding point (boxes=None) */
    samc_status st = samc_tensor_allocv(sparse, err, 3, (int64_t)B, n_sparse, D);
    if (!st) /* written in full by the body; the caller releases it before its next prompt encoding */
        st = samc_exec_wire(x, SAMC_WIRE_DENSE, 4, (const int64_t[]){B, D, eh, ew}, dense, err);
    if (!st) {
        const samc_tensor *outs[] = {sparse, dense};
        st = ops->prompt_encoder(samc_layer_ctx(x, L), pe, coords, labels, B, n, NULL, mask, sparse, dense);
        st = samc_layer_done(x, L, sc, st, err, 2, slot_names, outs);
    }
    if (st)
        samc_tensor_release(sparse), samc_tensor_release(dense);
    return st;
}

bool samc_prompt_encoder_served_by(const samc_exec *x, const samc_prompt_encoder *pe, const samc_impl *impl)
{
    return samc_part_layer(x, pe, &rows[ENCODER], 0)->asked == impl &&
           samc_part_layer(x, pe, &rows[PE_LAYER], 0)->asked == impl;
}

samc_status samc_prompt_encoder_dense_pe(samc_exec *x, const samc_prompt_encoder *pe, samc_tensor *out,
                                         samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, pe, &rows[PE_LAYER], 0);
    const samc_tracker_ops *ops = L->ops;
    const int64_t shape[4] = {1, pe->embed_dim, pe->emb_h, pe->emb_w};
    samc_status st = samc_tensor_alloc_uninit(out, 4, shape, err); /* the body writes it in full */
    if (!st)
        st = samc_layer_done(x, L, NULL, ops->dense_pe(samc_layer_ctx(x, L), pe, out), err, 0, NULL, NULL);
    if (st)
        samc_tensor_release(out);
    return st;
}

/* ---- isolated runners ------------------------------------------------------- */

static samc_status iso_encoder(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                               samc_error *err)
{
    const samc_prompt_encoder *pe = L->self;
    const samc_tracker_ops *ops = L->ops;
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
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: points must be (B,N,2) with (B,N) labels", L->name);
    const int64_t B = pts ? coords.shape[0] : boxes.data ? boxes.shape[0] : masks.data ? masks.shape[0] : 1;
    const int64_t N = pts ? coords.shape[1] : 0, D = pe->embed_dim;
    int32_t *lab = NULL;
    if (!st && pts && !(lab = malloc((size_t)(B * N > 0 ? B * N : 1) * sizeof *lab)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; lab && i < B * N; i++)
        lab[i] = (int32_t)labels.data[i];
    samc_tensor *sp = samc_layer_out_slot(out, "0"), *de = samc_layer_out_slot(out, "1");
    const int64_t ns = N + (N > 0 && !boxes.data) + (boxes.data ? 2 : 0);
    if (!st && !(st = samc_tensor_allocv(sp, err, 3, B, ns, D)) &&
        !(st = samc_tensor_allocv(de, err, 4, B, D, (int64_t)pe->emb_h, (int64_t)pe->emb_w)))
        st = samc_layer_done(x, L, NULL,
                             ops->prompt_encoder(samc_layer_ctx(x, L), pe, coords.data, lab, (int)B, (int)N,
                                                 boxes.data, masks.data ? &masks : NULL, sp, de),
                             err, 0, NULL, NULL);
    free(lab);
    samc_tensor_release(&coords), samc_tensor_release(&labels), samc_tensor_release(&boxes);
    samc_tensor_release(&masks);
    return st;
}

/* get_dense_pe has no input: in/0 is not read. */
static samc_status iso_pe_layer(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                samc_error *err)
{
    (void)in;
    return samc_prompt_encoder_dense_pe(x, L->self, samc_layer_out_slot(out, "0"), err);
}

/* ---- op-test inputs ------------------------------------------------------------ */

static samc_status ex_encoder(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                              samc_error *err)
{
    (void)index, (void)full;
    const samc_prompt_encoder *pe = self;
    const int64_t S = pe->input_w, s4 = 4 * (int64_t)pe->emb_w;
    if (!samc_inputs_random(in, "points.0", seed++, 0, (float)S, err, 3, (int64_t)1, (int64_t)3, (int64_t)2))
        return SAMC_ERR_NOMEM;
    samc_tensor *lab = samc_inputs_random(in, "points.1", seed++, 0, 4, err, 2, (int64_t)1, (int64_t)3);
    if (!lab)
        return SAMC_ERR_NOMEM;
    for (int i = 0; i < 3; i++) /* labels 0..3 */
        lab->data[i] = floorf(lab->data[i]);
    return samc_inputs_random(in, "masks", seed++, -8, 8, err, 4, (int64_t)1, (int64_t)1, s4, s4) ? SAMC_OK
                                                                                                   : SAMC_ERR_NOMEM;
}

static samc_status ex_pe_layer(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                               samc_error *err)
{
    (void)self, (void)index, (void)seed, (void)full;
    return samc_inputs_scalar(in, "unused", 0, err); /* no input: the grid is the part's */
}
