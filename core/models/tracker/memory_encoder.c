/* SPDX-License-Identifier: Apache-2.0 */
/* memory_encoder.c - the MemoryEncoder part (sam2/modeling/memory_encoder.py):
 * its rows (relative to its root: "memory_encoder" in SAM 2,
 * "tracker.maskmem_backbone" in SAM 3), weights, forward, isolated runners
 * and op-test inputs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/memory.h"
#include "core/nn/nn_ops.h"
#include "core/nn/nn_rows.h"
#include "core/nn/position_encoding.h"

enum { SIGMOID, INTERPOLATE, DOWNSAMPLER, PIX_FEAT_PROJ, ADD_MASKS, FUSER, OUT_PROJ, POSITION, ENCODER, N_ROWS };

static int count_fuser(const void *self) { return ((const samc_memory_encoder *)self)->n_fuser; }
static int has_interpolate(const void *self) { return ((const samc_memory_encoder *)self)->downsampler.interpol_h > 0; }
static int has_out_proj(const void *self) { return ((const samc_memory_encoder *)self)->has_out_proj; }

static samc_isolated_body iso_sigmoid, iso_interpolate, iso_downsampler, iso_conv, iso_fuser, iso_position, iso_encoder;
static samc_status ex_sigmoid(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_interpolate(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_downsampler(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_pix_feat_proj(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_fuser(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_out_proj(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_position(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_encoder(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

/* MemoryEncoder.forward, step by step: every step a body (the part's own
 * arithmetic too: the sigmoid, the sum, the position encoding). */
static const samc_layer_def rows[N_ROWS] = {
    [SIGMOID] = {.pattern = "@sigmoid", .table = SAMC_OPS_TRACKER, .body = SAMC_BODY(samc_tracker_ops, mask_for_memory),
                 .isolated = iso_sigmoid, .example = ex_sigmoid},
    /* SAM 3's SimpleMaskDownSampler resizes the mask first (interpol_size) */
    [INTERPOLATE] = {.pattern = "mask_downsampler.@interpolate", .table = SAMC_OPS_TRACKER,
                     .body = SAMC_BODY(samc_tracker_ops, mask_interpolate), .count = has_interpolate,
                     .isolated = iso_interpolate, .example = ex_interpolate},
    [DOWNSAMPLER] = {.pattern = "mask_downsampler", .table = SAMC_OPS_TRACKER,
                     .body = SAMC_BODY(samc_tracker_ops, mask_downsampler), .parity = true,
                     .isolated = iso_downsampler, .example = ex_downsampler},
    [PIX_FEAT_PROJ] = {.pattern = "pix_feat_proj", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, conv2d),
                       .isolated = iso_conv, .example = ex_pix_feat_proj},
    [ADD_MASKS] = {.pattern = "@add_masks", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, add),
                   .isolated = samc_nn_run_add, .example = samc_nn_example_add},
    [FUSER] = {.pattern = "fuser.layers.#", .table = SAMC_OPS_TRACKER, .body = SAMC_BODY(samc_tracker_ops, cxblock),
               .parity = true, .count = count_fuser, .isolated = iso_fuser, .example = ex_fuser},
    [OUT_PROJ] = {.pattern = "out_proj", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, conv2d),
                  .count = has_out_proj, .isolated = iso_conv, .example = ex_out_proj},
    [POSITION] = {.pattern = "position_encoding", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, sine_pe),
                  .isolated = iso_position, .example = ex_position},
    /* the part itself, a composite of the rows above */
    [ENCODER] = {.pattern = "", .parity = true, .isolated = iso_encoder, .example = ex_encoder},
};
const samc_part_def samc_memory_encoder_part = {"MemoryEncoder", rows, N_ROWS, describe};

static const char *const slot0[] = {"0"};

/* ---- weights ---------------------------------------------------------------- */

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    const samc_tracker_config *tc = cfg;
    const samc_memory_encoder_config *c = &tc->mem_enc;
    samc_memory_encoder *e = self;
    samc_mask_downsampler *ds = &e->downsampler;
    int cin = 1, n = 0; /* MaskDownSampler: log(total_stride) / log(stride) layers */
    ds->interpol_h = c->ds_interpol_h, ds->interpol_w = c->ds_interpol_w;
    for (long long s = 1; s < c->ds_total_stride && c->ds_stride > 1; s *= c->ds_stride)
        n++;
    /* the arrays these counts index (whatever config reader filled c) */
    if (n > SAMC_MAX_DOWNSAMPLE_LAYERS || c->fuser_layers < 0 || c->fuser_layers > SAMC_MAX_FUSER_LAYERS)
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "config: memory_encoder needs %d mask-downsampler layers (at most %d) and %d fuser layers "
                         "(0..%d)", n, SAMC_MAX_DOWNSAMPLE_LAYERS, c->fuser_layers, SAMC_MAX_FUSER_LAYERS);
    ds->n_layers = n;
    samc_sd_prefix(sd, "mask_downsampler.encoder.");
    char k[64];
    for (int l = 0; l < n; l++) {
        const int cout = cin * c->ds_stride * c->ds_stride;
        snprintf(k, sizeof k, "%d", 3 * l);
        samc_sd_conv(sd, &ds->convs[l], k, cin, cout, c->ds_kernel, c->ds_stride, c->ds_padding, 1, true);
        snprintf(k, sizeof k, "%d", 3 * l + 1);
        samc_sd_norm(sd, &ds->norms[l], k, cout, 1e-6f);
        cin = cout;
    }
    snprintf(k, sizeof k, "%d", 3 * n);
    samc_sd_conv(sd, &ds->proj, k, cin, c->ds_embed_dim, 1, 1, 0, 1, true);
    samc_sd_prefix(sd, "%s", "");
    e->in_dim = c->in_dim, e->out_dim = c->out_dim;
    e->emb = samc_tracker_emb(tc), e->image_size = tc->image_size;
    samc_sd_conv(sd, &e->pix_feat_proj, "pix_feat_proj", c->in_dim, c->in_dim, 1, 1, 0, 1, true);
    e->n_fuser = c->fuser_layers;
    for (int j = 0; j < c->fuser_layers; j++) {
        samc_cxblock *x = &e->fuser[j];
        samc_sd_prefix(sd, "fuser.layers.%d.", j);
        x->gamma = c->layer_scale_init_value > 0 ? samc_sd_tensor(sd, 1, (const int64_t[]){c->fuser_dim}, "gamma")
                                                 : NULL;
        samc_sd_conv(sd, &x->dwconv, "dwconv", c->fuser_dim, c->fuser_dim, c->fuser_kernel, 1, c->fuser_padding,
                     c->use_dwconv ? c->fuser_dim : 1, true);
        samc_sd_norm(sd, &x->norm, "norm", c->fuser_dim, 1e-6f);
        samc_sd_linear(sd, &x->pw1, "pwconv1", c->fuser_dim, 4 * c->fuser_dim, true);
        samc_sd_linear(sd, &x->pw2, "pwconv2", 4 * c->fuser_dim, c->fuser_dim, true);
    }
    samc_sd_prefix(sd, "%s", "");
    e->has_out_proj = c->out_dim != c->in_dim;
    if (e->has_out_proj)
        samc_sd_conv(sd, &e->out_proj, "out_proj", c->in_dim, c->out_dim, 1, 1, 0, 1, true);
    e->pe = (samc_sine_pe){c->pe.num_pos_feats, (float)c->pe.temperature, c->pe.normalize,
                           c->pe.scale > 0 ? (float)c->pe.scale : (float)(2.0 * 3.14159265358979323846)};
    return SAMC_OK;
}

/* ---- forward ------------------------------------------------------------------- */

/* One step: its layer (instance 0 of `row`), its ops, its context. */
static const samc_layer *step(const samc_exec *x, const samc_memory_encoder *e, int row, int index)
{
    return samc_part_layer(x, e, &rows[row], index);
}

static samc_status run_fuser(samc_exec *x, const samc_memory_encoder *e, const samc_scope *sc, samc_tensor *t,
                             samc_error *err)
{
    samc_tensor y = {0};
    for (int j = 0; j < e->n_fuser; j++) {
        const samc_layer *L = step(x, e, FUSER, j);
        const samc_tracker_ops *ops = L->ops;
        const samc_tensor *outs[] = {&y};
        samc_status st = samc_tensor_alloc(&y, t->ndim, t->shape, err);
        if (!st)
            st = samc_layer_done(x, L, sc, ops->cxblock(samc_layer_ctx(x, L), &e->fuser[j], t, &y), err, 1, slot0,
                                 outs);
        if ((st = samc_tensor_advance(t, &y, st)))
            return st;
    }
    return SAMC_OK;
}

static samc_status conv(samc_exec *x, const samc_layer *L, const samc_conv2d *c, const samc_tensor *in,
                        samc_tensor *out, samc_error *err)
{
    const samc_nn_ops *nn = L->ops;
    samc_status st = samc_tensor_allocv(out, err, 4, in->shape[0], (int64_t)c->cout, in->shape[2], in->shape[3]);
    return st ? st : samc_layer_done(x, L, NULL, nn->conv2d(samc_layer_ctx(x, L), c, in, out), err, 0, NULL, NULL);
}

/* The mask at interpol_size when the config sets one it does not have
 * (*y then holds it), else *y is left empty and x is used as it is. */
static samc_status interpolate(samc_exec *x, const samc_memory_encoder *e, const samc_tensor *in, samc_tensor *y,
                               samc_error *err)
{
    const samc_mask_downsampler *ds = &e->downsampler;
    if (!ds->interpol_h || (in->shape[2] == ds->interpol_h && in->shape[3] == ds->interpol_w))
        return SAMC_OK;
    const samc_layer *L = step(x, e, INTERPOLATE, 0);
    samc_status st = samc_tensor_allocv(y, err, 4, in->shape[0], in->shape[1], (int64_t)ds->interpol_h,
                                        (int64_t)ds->interpol_w);
    return st ? st
              : samc_layer_done(x, L, NULL, ((const samc_tracker_ops *)L->ops)->mask_interpolate(samc_layer_ctx(x, L),
                                                                                                  in, y),
                                err, 0, NULL, NULL);
}

/* masks (sigmoid unless skipped) -> mask_downsampler (interpolated first
 * when it says so), traced. */
static samc_status downsample(samc_exec *x, const samc_memory_encoder *e, const samc_scope *sc,
                              const samc_tensor *masks, bool skip_mask_sigmoid, int64_t h, int64_t w, samc_tensor *ds,
                              samc_error *err)
{
    const samc_layer *sl = step(x, e, SIGMOID, 0), *dsl = step(x, e, DOWNSAMPLER, 0);
    const samc_tracker_ops *sig = sl->ops, *ops = dsl->ops;
    samc_tensor mk = {0}, mi = {0};
    const samc_tensor *in = masks;
    samc_status st = SAMC_OK;
    if (!skip_mask_sigmoid && !(st = samc_tensor_alloc(&mk, masks->ndim, masks->shape, err))) {
        st = samc_layer_done(x, sl, sc, sig->mask_for_memory(samc_layer_ctx(x, sl), masks, false, 1.0f, 0.0f, &mk),
                             err, 0, NULL, NULL);
        in = &mk;
    }
    if (!st && !(st = interpolate(x, e, in, &mi, err)) && mi.data)
        in = &mi;
    const samc_tensor *outs[] = {ds};
    if (!st && !(st = samc_tensor_allocv(ds, err, 4, masks->shape[0], (int64_t)e->downsampler.proj.cout, h, w)))
        st = samc_layer_done(x, dsl, sc, ops->mask_downsampler(samc_layer_ctx(x, dsl), &e->downsampler, in, ds), err,
                             1, slot0, outs);
    samc_tensor_release(&mk), samc_tensor_release(&mi);
    return st;
}

samc_status samc_memory_encoder_forward(samc_exec *x, const samc_memory_encoder *e, const samc_scope *sc,
                                        const samc_tensor *pix_feat, const samc_tensor *masks,
                                        bool skip_mask_sigmoid, samc_tensor *features, samc_tensor *pos,
                                        samc_error *err)
{
    const int64_t h = pix_feat->shape[2], w = pix_feat->shape[3];
    samc_tensor ds = {0}, t = {0};
    memset(features, 0, sizeof *features), memset(pos, 0, sizeof *pos);
    samc_status st = downsample(x, e, sc, masks, skip_mask_sigmoid, h, w, &ds, err);
    if (!st) /* x = pix_feat_proj(pix_feat) + masks */
        st = conv(x, step(x, e, PIX_FEAT_PROJ, 0), &e->pix_feat_proj, pix_feat, &t, err);
    if (!st) {
        const samc_layer *L = step(x, e, ADD_MASKS, 0);
        st = samc_layer_done(x, L, NULL, ((const samc_nn_ops *)L->ops)->add(samc_layer_ctx(x, L), &t, &ds, 1.0f, &t),
                             err, 0, NULL, NULL);
    }
    if (!st)
        st = run_fuser(x, e, sc, &t, err);
    if (!st && e->has_out_proj) {
        st = conv(x, step(x, e, OUT_PROJ, 0), &e->out_proj, &t, features, err);
    } else if (!st) {
        *features = t;
        memset(&t, 0, sizeof t);
    }
    if (!st && !(st = samc_tensor_alloc(pos, 4, features->shape, err))) {
        const samc_layer *L = step(x, e, POSITION, 0);
        st = samc_layer_done(x, L, NULL, ((const samc_nn_ops *)L->ops)->sine_pe(samc_layer_ctx(x, L), &e->pe, pos),
                             err, 0, NULL, NULL);
    }
    if (!st) {
        static const char *const slots[] = {"vision_features", "vision_pos_enc.0"};
        const samc_tensor *o2[] = {features, pos};
        samc_layer_emit(x, step(x, e, ENCODER, 0), sc, 2, slots, o2);
    } else {
        samc_tensor_release(features), samc_tensor_release(pos);
    }
    samc_tensor_release(&ds), samc_tensor_release(&t);
    return st;
}

const char *samc_memory_encoder_name(const samc_exec *x, const samc_memory_encoder *e)
{
    return step(x, e, ENCODER, 0)->name;
}

samc_status samc_memory_encoder_pos(samc_exec *x, const samc_memory_encoder *e, samc_tensor *pos, samc_error *err)
{
    const int64_t n = e->emb, c = e->pe.num_pos_feats;
    const samc_layer *L = step(x, e, POSITION, 0);
    samc_status st = samc_tensor_allocv(pos, err, 4, (int64_t)1, c, n, n);
    if (!st)
        st = samc_layer_done(x, L, NULL, ((const samc_nn_ops *)L->ops)->sine_pe(samc_layer_ctx(x, L), &e->pe, pos),
                             err, 0, NULL, NULL);
    if (st)
        samc_tensor_release(pos);
    return st;
}

/* ---- isolated runners ------------------------------------------------------- */

/* The module's input as recorded: SAM 3's SimpleMaskDownSampler resizes it
 * to interpol_size inside its forward. */
static samc_status iso_downsampler(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    const samc_memory_encoder *e = L->self;
    const samc_mask_downsampler *ds = &e->downsampler;
    const samc_tracker_ops *ops = L->ops;
    samc_tensor t = {0}, ti = {0};
    samc_status st = samc_io_tensor(in, "x", "0", &t, err);
    int64_t s = 1;
    for (int l = 0; l < ds->n_layers; l++)
        s *= ds->convs[l].stride;
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && t.ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "mask_downsampler input is not 4-D");
    if (!st && !(st = interpolate(x, e, &t, &ti, err)) && ti.data)
        samc_tensor_release(&t), t = ti;
    if (!st && !(st = samc_tensor_allocv(y, err, 4, t.shape[0], (int64_t)ds->proj.cout, t.shape[2] / s, t.shape[3] / s)))
        st = samc_layer_done(x, L, NULL, ops->mask_downsampler(samc_layer_ctx(x, L), ds, &t, y), err, 0, NULL, NULL);
    samc_tensor_release(&t);
    return st;
}

static samc_status iso_sigmoid(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                               samc_error *err)
{
    const samc_tracker_ops *ops = L->ops;
    samc_tensor t = {0};
    samc_status st = samc_io_tensor(in, "x", "0", &t, err);
    const bool bin = samc_io_scalar_or(in, "binarize", NULL, 0) != 0;
    const float scale = (float)samc_io_scalar_or(in, "scale", NULL, 1), bias = (float)samc_io_scalar_or(in, "bias", NULL, 0);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && !(st = samc_tensor_alloc(y, t.ndim, t.shape, err)))
        st = samc_layer_done(x, L, NULL, ops->mask_for_memory(samc_layer_ctx(x, L), &t, bin, scale, bias, y), err, 0,
                             NULL, NULL);
    samc_tensor_release(&t);
    return st;
}

/* The interpolation alone: in/x (B,1,h,w) to the config's interpol_size
 * (an error where the config has none). */
static samc_status iso_interpolate(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    const samc_memory_encoder *e = L->self;
    samc_tensor t = {0};
    samc_status st = !e->downsampler.interpol_h
                         ? samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: this config has no interpol_size", L->name)
                         : samc_io_tensor(in, "x", "0", &t, err);
    if (!st && t.ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: input is not 4-D", L->name);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && !(st = samc_tensor_allocv(y, err, 4, t.shape[0], t.shape[1], (int64_t)e->downsampler.interpol_h,
                                         (int64_t)e->downsampler.interpol_w)))
        st = samc_layer_done(x, L, NULL, ((const samc_tracker_ops *)L->ops)->mask_interpolate(samc_layer_ctx(x, L), &t, y),
                             err, 0, NULL, NULL);
    samc_tensor_release(&t);
    return st;
}

/* pix_feat_proj / out_proj alone: in/0 (B,C,h,w). */
static samc_status iso_conv(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                            samc_error *err)
{
    const samc_memory_encoder *e = L->self;
    const bool proj = L->def == &rows[OUT_PROJ];
    samc_tensor t = {0};
    samc_status st = proj && !e->has_out_proj ? samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: this config has none", L->name)
                                              : samc_io_tensor(in, "x", "0", &t, err);
    if (!st && t.ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: input is not 4-D", L->name);
    if (!st)
        st = conv(x, L, proj ? &e->out_proj : &e->pix_feat_proj, &t, samc_layer_out_slot(out, "0"), err);
    samc_tensor_release(&t);
    return st;
}

/* position_encoding(x): only x's size is read. */
static samc_status iso_position(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                samc_error *err)
{
    const samc_memory_encoder *e = L->self;
    samc_tensor t = {0};
    samc_status st = samc_io_tensor(in, "x", "0", &t, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && t.ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: input is not 4-D", L->name);
    if (!st && !(st = samc_tensor_allocv(y, err, 4, t.shape[0], (int64_t)e->pe.num_pos_feats, t.shape[2], t.shape[3])))
        st = samc_layer_done(x, L, NULL, ((const samc_nn_ops *)L->ops)->sine_pe(samc_layer_ctx(x, L), &e->pe, y), err,
                             0, NULL, NULL);
    samc_tensor_release(&t);
    return st;
}

static samc_status iso_fuser(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    const samc_cxblock *blk = &((const samc_memory_encoder *)L->self)->fuser[L->index];
    const samc_tracker_ops *ops = L->ops;
    samc_tensor t = {0};
    samc_status st = samc_io_tensor(in, "x", "0", &t, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && !(st = samc_tensor_alloc(y, t.ndim, t.shape, err)))
        st = samc_layer_done(x, L, NULL, ops->cxblock(samc_layer_ctx(x, L), blk, &t, y), err, 0, NULL, NULL);
    samc_tensor_release(&t);
    return st;
}

static samc_status iso_encoder(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                               samc_error *err)
{
    samc_tensor a = {0}, b = {0}, f = {0}, p = {0};
    samc_capture cap;
    samc_status st = samc_io_tensor(in, "pix_feat", "0", &a, err);
    if (!st)
        st = samc_io_tensor(in, "masks", "1", &b, err);
    const bool skip = samc_io_scalar_or(in, "skip_mask_sigmoid", "2", 0) != 0;
    samc_capture_begin(x, &cap, L->name, out);
    if (!st)
        st = samc_memory_encoder_forward(x, L->self, &samc_no_scope, &a, &b, skip, &f, &p, err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&a), samc_tensor_release(&b), samc_tensor_release(&f), samc_tensor_release(&p);
    return st;
}

/* ---- op-test inputs ------------------------------------------------------------ */

static samc_status ex_downsampler(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                  samc_error *err)
{
    (void)index;
    const int64_t S = full ? ((const samc_memory_encoder *)self)->image_size : 256;
    SAMC_INPUT_RANDOM("x", 0, 1, 4, (int64_t)1, (int64_t)1, S, S);
    return SAMC_OK;
}

static samc_status ex_sigmoid(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                              samc_error *err)
{
    (void)index;
    const int64_t S = full ? ((const samc_memory_encoder *)self)->image_size : 256;
    SAMC_INPUT_RANDOM("x", -10, 10, 4, (int64_t)1, (int64_t)1, S, S);
    samc_status st = samc_inputs_scalar(in, "scale", 20, err);
    return st ? st : samc_inputs_scalar(in, "bias", -10, err);
}

/* The mask at the model's size (SAM 3: 1008 -> 1152). */
static samc_status ex_interpolate(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                  samc_error *err)
{
    (void)index;
    const samc_memory_encoder *e = self;
    const int64_t S = full ? e->image_size : 256;
    SAMC_INPUT_RANDOM("x", 0, 1, 4, (int64_t)1, (int64_t)1, S, S);
    return SAMC_OK;
}

static samc_status ex_map(const samc_memory_encoder *e, int64_t C, uint64_t seed, bool full, samc_layer_inputs *in,
                          samc_error *err)
{
    const int64_t n = full ? e->emb : 32;
    SAMC_INPUT_RANDOM("x", -2, 2, 4, (int64_t)1, C, n, n);
    return SAMC_OK;
}

static samc_status ex_pix_feat_proj(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                    samc_error *err)
{
    (void)index;
    const samc_memory_encoder *e = self;
    return ex_map(e, e->in_dim, seed, full, in, err);
}

static samc_status ex_out_proj(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                               samc_error *err)
{
    (void)index;
    const samc_memory_encoder *e = self;
    return ex_map(e, e->in_dim, seed, full, in, err);
}

static samc_status ex_position(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                               samc_error *err)
{
    (void)index;
    const samc_memory_encoder *e = self;
    return ex_map(e, e->pe.num_pos_feats, seed, full, in, err);
}

static samc_status ex_fuser(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index;
    const samc_memory_encoder *e = self;
    const int64_t n = full ? e->emb : 32;
    SAMC_INPUT_RANDOM("x", -2, 2, 4, (int64_t)1, (int64_t)e->fuser[0].dwconv.cout, n, n);
    return SAMC_OK;
}

static samc_status ex_encoder(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                              samc_error *err)
{
    (void)index;
    const samc_memory_encoder *e = self;
    /* an interpol_size is absolute: then the part's own grid */
    const bool own = full || e->downsampler.interpol_h > 0;
    const int64_t n = own ? e->emb : 16, S = own ? e->image_size : n * (e->image_size / e->emb);
    SAMC_INPUT_RANDOM("pix_feat", -2, 2, 4, (int64_t)1, (int64_t)e->in_dim, n, n);
    SAMC_INPUT_RANDOM("masks", -10, 10, 4, (int64_t)1, (int64_t)1, S, S);
    return samc_inputs_scalar(in, "skip_mask_sigmoid", 0, err);
}
