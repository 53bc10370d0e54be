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
#include "core/nn/position_encoding.h"

enum { DOWNSAMPLER, FUSER, ENCODER, N_ROWS };

static int count_fuser(const void *self) { return ((const samc_memory_encoder *)self)->n_fuser; }

static samc_isolated_body iso_downsampler, iso_fuser, iso_encoder;
static samc_status ex_downsampler(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_fuser(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_encoder(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def rows[N_ROWS] = {
    [DOWNSAMPLER] = {.pattern = "mask_downsampler", .table = SAMC_OPS_TRACKER,
                     .body = SAMC_BODY(samc_tracker_ops, mask_downsampler), .parity = true,
                     .isolated = iso_downsampler, .example = ex_downsampler},
    [FUSER] = {.pattern = "fuser.layers.#", .table = SAMC_OPS_TRACKER, .body = SAMC_BODY(samc_tracker_ops, cxblock),
               .parity = true, .count = count_fuser, .isolated = iso_fuser, .example = ex_fuser},
    /* the part itself; its own body: the pix_feat_proj / out_proj convolutions */
    [ENCODER] = {.pattern = "", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, conv2d), .parity = true,
                 .isolated = iso_encoder, .example = ex_encoder},
};
const samc_part_def samc_memory_encoder_part = {"MemoryEncoder", rows, N_ROWS, describe};

static const char *const slot0[] = {"0"};

/* ---- weights ---------------------------------------------------------------- */

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    (void)err;
    const samc_tracker_config *tc = cfg;
    const samc_memory_encoder_config *c = &tc->mem_enc;
    samc_memory_encoder *e = self;
    samc_mask_downsampler *ds = &e->downsampler;
    int cin = 1, n = 0; /* MaskDownSampler: log(total_stride) / log(stride) layers */
    for (int s = 1; s < c->ds_total_stride && c->ds_stride > 1; s *= c->ds_stride)
        n++;
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

static samc_status run_fuser(samc_exec *x, const samc_memory_encoder *e, const samc_scope *sc, samc_tensor *t,
                             samc_error *err)
{
    samc_tensor y = {0};
    for (int j = 0; j < e->n_fuser; j++) {
        const samc_layer *L = samc_part_layer(x, e, &rows[FUSER], j);
        const samc_tracker_ops *ops = L->ops;
        const samc_tensor *outs[] = {&y};
        samc_status st = samc_tensor_alloc(&y, t->ndim, t->shape, err);
        if (!st)
            st = samc_layer_done(x, L, sc, ops->cxblock(samc_layer_ctx(x, L), &e->fuser[j], t, &y), err, 1, slot0,
                                 outs);
        if (st) {
            samc_tensor_release(&y);
            return st;
        }
        samc_tensor_release(t);
        *t = y;
        memset(&y, 0, sizeof y);
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

samc_status samc_memory_encoder_forward(samc_exec *x, const samc_memory_encoder *e, const samc_scope *sc,
                                        const samc_tensor *pix_feat, const samc_tensor *masks,
                                        bool skip_mask_sigmoid, samc_tensor *features, samc_tensor *pos,
                                        samc_error *err)
{
    const samc_layer *enc = samc_part_layer(x, e, &rows[ENCODER], 0), *dsl = samc_part_layer(x, e, &rows[DOWNSAMPLER], 0);
    const samc_tracker_ops *ops = dsl->ops;
    const int64_t B = pix_feat->shape[0], h = pix_feat->shape[2], w = pix_feat->shape[3];
    samc_tensor mk = {0}, ds = {0}, t = {0};
    memset(features, 0, sizeof *features), memset(pos, 0, sizeof *pos);
    samc_status st = samc_tensor_copy(&mk, masks, err);
    if (!st && !skip_mask_sigmoid)
        for (int64_t i = 0; i < samc_numel(&mk); i++)
            mk.data[i] = 1.0f / (1.0f + expf(-mk.data[i]));
    const samc_tensor *outs[] = {&ds};
    if (!st && !(st = samc_tensor_allocv(&ds, err, 4, B, (int64_t)e->downsampler.proj.cout, h, w)))
        st = samc_layer_done(x, dsl, sc, ops->mask_downsampler(samc_layer_ctx(x, dsl), &e->downsampler, &mk, &ds),
                             err, 1, slot0, outs);
    if (!st) /* x = pix_feat_proj(pix_feat) + masks */
        st = conv(x, enc, &e->pix_feat_proj, pix_feat, &t, err);
    for (int64_t i = 0; !st && i < samc_numel(&t); i++)
        t.data[i] += ds.data[i];
    if (!st)
        st = run_fuser(x, e, sc, &t, err);
    if (!st && e->has_out_proj) {
        st = conv(x, enc, &e->out_proj, &t, features, err);
    } else if (!st) {
        *features = t;
        memset(&t, 0, sizeof t);
    }
    if (!st && !(st = samc_tensor_alloc(pos, 4, features->shape, err)))
        for (int64_t b = 0; b < B; b++)
            samc_sine_pe_fill(&e->pe, (int)h, (int)w, pos->data + b * samc_numel(pos) / B);
    if (!st) {
        static const char *const slots[] = {"vision_features", "vision_pos_enc.0"};
        const samc_tensor *o2[] = {features, pos};
        samc_layer_emit(x, enc, sc, 2, slots, o2);
    } else {
        samc_tensor_release(features), samc_tensor_release(pos);
    }
    samc_tensor_release(&mk), samc_tensor_release(&ds), samc_tensor_release(&t);
    return st;
}

const char *samc_memory_encoder_name(const samc_exec *x, const samc_memory_encoder *e)
{
    return samc_part_layer(x, e, &rows[ENCODER], 0)->name;
}

samc_status samc_memory_encoder_pos(const samc_memory_encoder *e, samc_tensor *pos, samc_error *err)
{
    const int64_t n = e->emb, c = e->pe.num_pos_feats;
    samc_status st = samc_tensor_allocv(pos, err, 4, (int64_t)1, c, n, n);
    if (!st && (st = samc_sine_pe_fill(&e->pe, (int)n, (int)n, pos->data)))
        samc_tensor_release(pos);
    return st;
}

/* ---- isolated runners ------------------------------------------------------- */

static samc_status iso_downsampler(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    const samc_mask_downsampler *ds = &((const samc_memory_encoder *)L->self)->downsampler;
    const samc_tracker_ops *ops = L->ops;
    samc_tensor t = {0};
    samc_status st = samc_io_tensor(in, "x", "0", &t, err);
    int64_t s = 1;
    for (int l = 0; l < ds->n_layers; l++)
        s *= ds->convs[l].stride;
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && t.ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "mask_downsampler input is not 4-D");
    if (!st && !(st = samc_tensor_allocv(y, err, 4, t.shape[0], (int64_t)ds->proj.cout, t.shape[2] / s, t.shape[3] / s)))
        st = samc_layer_done(x, L, NULL, ops->mask_downsampler(samc_layer_ctx(x, L), ds, &t, y), err, 0, NULL, NULL);
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
    const int64_t n = full ? e->emb : 16, S = n * (e->image_size / e->emb);
    SAMC_INPUT_RANDOM("pix_feat", -2, 2, 4, (int64_t)1, (int64_t)e->in_dim, n, n);
    SAMC_INPUT_RANDOM("masks", -10, 10, 4, (int64_t)1, (int64_t)1, S, S);
    return samc_inputs_scalar(in, "skip_mask_sigmoid", 0, err);
}
