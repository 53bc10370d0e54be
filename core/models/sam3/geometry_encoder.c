/* SPDX-License-Identifier: Apache-2.0 */
/* geometry_encoder.c - the geometry encoder part (sam3/model/
 * geometry_encoders.py SequenceGeometryEncoder: point and box prompts
 * encoded, then a few TransformerEncoderLayers over the image features),
 * mounted at "geometry_encoder": rows, weights, forward, isolated runners
 * and op-test inputs. What the ref and fast bodies of the prompt encoding
 * share is sam3_geo_prompt.c. */
#include <string.h>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/models/sam3/sam3_io.h"
#include "core/models/sam3/sam3_modules.h"
#include "core/models/sam3/sam3_parts.h"
#include "core/nn/nn_ops.h"

enum { PROMPT, LAYER, NORM, ENCODER, N_ROWS };

static int count_layers(const void *self) { return ((const samc_sam3_geometry_encoder *)self)->n_layers; }

static samc_isolated_body iso_prompt, iso_layer, iso_norm, iso_encoder;
static samc_status ex_prompt(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_layer(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_norm(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def rows[N_ROWS] = {
    /* forward up to the layers: the prompt's encodings, CLS, final_proj + norm */
    [PROMPT] = {.pattern = "@encode_prompt", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_geo_prompt),
                .isolated = iso_prompt, .example = ex_prompt},
    [LAYER] = {.pattern = "encode.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_enc_layer),
               .parity = true, .count = count_layers, .isolated = iso_layer, .example = ex_layer},
    [NORM] = {.pattern = "encode_norm", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, layer_norm),
              .isolated = iso_norm, .example = ex_norm},
    [ENCODER] = {.pattern = "", .parity = true, .isolated = iso_encoder, .example = ex_prompt},
};
const samc_part_def samc_sam3_geometry_part = {"SequenceGeometryEncoder", rows, N_ROWS, describe};

/* ---- weights ---------------------------------------------------------------- */

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    (void)err;
    samc_sam3_geometry_encoder *g = self;
    const samc_sam3_geometry_config *c = cfg;
    const int d = g->d_model = c->d_model;
    g->roi_size = c->roi_size;
    samc_sd_prefix(sd, "%s", "");
    g->label_embed = samc_sd_tensor(sd, 2, (const int64_t[]){2, d}, "label_embed.weight");
    if (c->add_cls)
        g->cls_embed = samc_sd_tensor(sd, 2, (const int64_t[]){1, d}, "cls_embed.weight");
    if (c->points_direct_project)
        samc_sd_linear(sd, &g->points_direct, "points_direct_project", 2, d, true);
    if (c->points_pool)
        samc_sd_linear(sd, &g->points_pool, "points_pool_project", d, d, true);
    if (c->points_pos_enc)
        samc_sd_linear(sd, &g->points_pos, "points_pos_enc_project", d, d, true);
    if (c->boxes_direct_project)
        samc_sd_linear(sd, &g->boxes_direct, "boxes_direct_project", 4, d, true);
    if (c->boxes_pool)
        samc_sd_conv(sd, &g->boxes_pool, "boxes_pool_project", d, d, g->roi_size, 1, 0, 1, true);
    if (c->boxes_pos_enc)
        samc_sd_linear(sd, &g->boxes_pos, "boxes_pos_enc_project", d + 2, d, true);
    g->has_final_proj = c->add_post_encode_proj;
    if (g->has_final_proj) {
        samc_sd_linear(sd, &g->final_proj, "final_proj", d, d, true);
        samc_sd_norm(sd, &g->norm, "norm", d, 1e-5f);
    }
    /* a LayerNorm when either pooling projection is built (from the config:
     * a describe-only walk binds no data) */
    g->has_img_pre_norm = c->points_pool || c->boxes_pool;
    if (g->has_img_pre_norm)
        samc_sd_norm(sd, &g->img_pre_norm, "img_pre_norm", d, 1e-5f);
    g->pe = samc__sam3_sine_pe(&c->pos_enc);
    g->n_layers = c->num_layers;
    for (int i = 0; i < g->n_layers; i++) {
        samc_sd_prefix(sd, "encode.%d.", i);
        samc__sam3_sd_enc_layer(sd, &g->layers[i], &c->layer);
    }
    samc_sd_prefix(sd, "%s", "");
    if (g->n_layers > 0)
        samc_sd_norm(sd, &g->encode_norm, "encode_norm", d, 1e-5f);
    return SAMC_OK;
}

/* ---- forward ------------------------------------------------------------------ */

static int64_t count_of(const samc_tensor *t) { return t && samc_numel(t) ? t->shape[0] : 0; }

/* One call of a body of this part, its status through samc_layer_done. */
static samc_status done(samc_exec *x, const samc_layer *L, samc_status st, const samc_tensor *y, samc_error *err)
{
    static const char *const slot0[] = {"0"};
    const samc_tensor *outs[] = {y};
    return samc_layer_done(x, L, NULL, st, err, y ? 1 : 0, slot0, outs);
}

static samc_status encode_prompt(samc_exec *x, const samc_sam3_geometry_encoder *g, const samc_sam3_geometry_prompt *p,
                                 const samc_tensor *img, int H, int W, samc_tensor *embeds, samc_tensor *mask,
                                 samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, g, &rows[PROMPT], 0);
    return done(x, L,
                ((const samc_sam3_ops *)L->ops)
                    ->sam3_geo_prompt(samc_layer_ctx(x, L), g, p->points, p->point_mask, p->point_labels, p->boxes,
                                      p->box_mask, p->box_labels, img, H, W, embeds, mask),
                NULL, err);
}

samc_status samc_sam3_geometry_forward(samc_exec *x, const samc_sam3_geometry_encoder *g,
                                       const samc_sam3_geometry_prompt *p, const samc_tensor *img,
                                       const samc_tensor *img_pos, int H, int W, samc_tensor *embeds,
                                       samc_tensor *mask, samc_error *err)
{
    memset(embeds, 0, sizeof *embeds), memset(mask, 0, sizeof *mask);
    if (img->ndim != 3 || img->shape[0] != (int64_t)H * W || (img_pos && !samc_tensor_same_shape(img, img_pos)))
        return samc_fail(err, SAMC_ERR_SHAPE, "geometry encoder: img_feats (and img_pos_embeds) are not (%d,B,C)",
                         H * W);
    const int64_t B = img->shape[1], N = count_of(p->points) + count_of(p->boxes) + (g->cls_embed ? 1 : 0);
    samc_tensor a = {0}, zpos = {0};
    samc_status st = samc_tensor_allocv(embeds, err, 3, N, B, (int64_t)g->d_model);
    if (!st)
        st = samc_tensor_allocv(mask, err, 2, B, N);
    if (!st)
        st = samc_tensor_allocv(&a, err, 3, N, B, (int64_t)g->d_model);
    if (!st && !img_pos) /* pos: the image's position encoding, else zeros */
        st = samc_tensor_alloc(&zpos, img->ndim, img->shape, err);
    if (!st)
        st = encode_prompt(x, g, p, img, H, W, &a, mask, err);
    /* encode layers (tgt_key_padding_mask = final_mask), then encode_norm */
    for (int i = 0; i < g->n_layers && !st; i++) {
        const samc_layer *L = samc_part_layer(x, g, &rows[LAYER], i);
        st = done(x, L,
                  ((const samc_sam3_ops *)L->ops)
                      ->sam3_enc_layer(samc_layer_ctx(x, L), &g->layers[i], &a, img, mask, NULL,
                                       img_pos ? img_pos : &zpos, NULL, embeds),
                  embeds, err);
        samc_tensor t = a;
        a = *embeds, *embeds = t;
    }
    const samc_layer *L = samc_part_layer(x, g, &rows[NORM], 0);
    if (!st && g->n_layers > 0)
        st = done(x, L, ((const samc_nn_ops *)L->ops)->layer_norm(samc_layer_ctx(x, L), &g->encode_norm, &a, embeds),
                  NULL, err);
    else if (!st)
        memcpy(embeds->data, a.data, (size_t)samc_numel(embeds) * sizeof *embeds->data);
    samc_tensor_release(&a), samc_tensor_release(&zpos);
    if (st) {
        samc_tensor_release(embeds), samc_tensor_release(mask);
        return st;
    }
    static const char *const slots[] = {"0", "1"};
    const samc_tensor *outs[] = {embeds, mask};
    samc_layer_emit(x, samc_part_layer(x, g, &rows[ENCODER], 0), NULL, 2, slots, outs);
    return SAMC_OK;
}

/* ---- isolated runners ----------------------------------------------------------- */

/* The recorded geo_prompt fields and image level of SequenceGeometryEncoder.forward. */
static void read_prompt(samc_sam3_io *r, samc_sam3_geometry_prompt *p, const samc_tensor **img, int *H, int *W)
{
    p->points = samc__sam3_in_opt(r, "geo_prompt.point_embeddings");
    p->point_mask = samc__sam3_in_opt(r, "geo_prompt.point_mask");
    p->point_labels = samc__sam3_in_opt(r, "geo_prompt.point_labels");
    p->boxes = samc__sam3_in_opt(r, "geo_prompt.box_embeddings");
    p->box_mask = samc__sam3_in_opt(r, "geo_prompt.box_mask");
    p->box_labels = samc__sam3_in_opt(r, "geo_prompt.box_labels");
    *img = samc__sam3_in(r, "img_feats.0", NULL);
    *H = (int)samc__sam3_in_num(r, "img_sizes.0.0", NULL);
    *W = (int)samc__sam3_in_num(r, "img_sizes.0.1", NULL);
    if (!r->st && r->io->has(r->io->user, "geo_prompt.mask_embeddings") &&
        samc__sam3_in_opt(r, "geo_prompt.mask_embeddings"))
        r->st = samc_fail(r->err, SAMC_ERR_UNSUPPORTED, "geometry encoder: mask prompts (no mask encoder is built)");
}

static samc_status iso_prompt(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                              samc_error *err)
{
    const samc_sam3_geometry_encoder *g = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    samc_sam3_geometry_prompt p;
    const samc_tensor *img;
    int H, W;
    read_prompt(&r, &p, &img, &H, &W);
    if (img && img->ndim != 3)
        samc__sam3_io_shape(&r, "%s: img_feats is not (HW,B,C)", L->name);
    const int64_t B = r.st ? 0 : img->shape[1], N = count_of(p.points) + count_of(p.boxes) + (g->cls_embed ? 1 : 0);
    samc_tensor *e = samc__sam3_out_v(&r, "0", 3, N, B, (int64_t)g->d_model), *m = samc__sam3_out_v(&r, "1", 2, B, N);
    if (m)
        r.st = encode_prompt(x, g, &p, img, H, W, e, m, err);
    return samc__sam3_io_end(&r);
}

static samc_status iso_layer(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    return samc__sam3_iso_enc_layer(x, L, &((const samc_sam3_geometry_encoder *)L->self)->layers[L->index], in, out, err);
}

static samc_status iso_norm(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                            samc_error *err)
{
    const samc_sam3_geometry_encoder *g = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *t = samc__sam3_in(&r, "0", NULL);
    samc_tensor *y = r.st ? NULL : samc__sam3_out(&r, "0", t->ndim, t->shape);
    if (y)
        r.st = done(x, L, ((const samc_nn_ops *)L->ops)->layer_norm(samc_layer_ctx(x, L), &g->encode_norm, t, y), NULL,
                    err);
    return samc__sam3_io_end(&r);
}

static samc_status iso_encoder(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                               samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    samc_sam3_geometry_prompt p;
    const samc_tensor *img;
    int H, W;
    read_prompt(&r, &p, &img, &H, &W);
    const samc_tensor *pos = samc__sam3_in_opt(&r, "img_pos_embeds.0");
    samc_tensor e = {0}, m = {0};
    samc_capture cap;
    samc_capture_begin(x, &cap, L->name, out);
    if (!r.st)
        r.st = samc_sam3_geometry_forward(x, L->self, &p, img, pos, H, W, &e, &m, err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&e), samc_tensor_release(&m);
    return samc__sam3_io_end(&r);
}

/* ---- op-test inputs ---------------------------------------------------------------- */

static samc_status add_scalar(samc_layer_inputs *in, const char *name, double v, samc_error *err)
{
    return samc_inputs_scalar(in, name, v, err);
}

/* Three points and two boxes (one of each padded, labels 0 and 1) on the
 * image level, with its position encoding. */
static samc_status ex_prompt(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                             samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_geometry_encoder *g = self;
    const int64_t s = g->feat_side, C = g->d_model;
    SAMC_INPUT_RANDOM("geo_prompt.point_embeddings", 0.05f, 0.95f, 3, (int64_t)3, (int64_t)1, (int64_t)2);
    SAMC_INPUT_RANDOM("geo_prompt.box_embeddings", 0.3f, 0.6f, 3, (int64_t)2, (int64_t)1, (int64_t)4);
    samc_tensor *pm = samc_inputs_tensor(in, "geo_prompt.point_mask", 2, (const int64_t[]){1, 3}, err);
    samc_tensor *pl = pm ? samc_inputs_tensor(in, "geo_prompt.point_labels", 2, (const int64_t[]){3, 1}, err) : NULL;
    samc_tensor *bm = pl ? samc_inputs_tensor(in, "geo_prompt.box_mask", 2, (const int64_t[]){1, 2}, err) : NULL;
    samc_tensor *bl = bm ? samc_inputs_tensor(in, "geo_prompt.box_labels", 2, (const int64_t[]){2, 1}, err) : NULL;
    if (!bl)
        return SAMC_ERR_NOMEM;
    pm->data[2] = bm->data[1] = 1.0f; /* padding */
    pl->data[0] = bl->data[0] = 1.0f, pl->data[1] = 0.0f, pl->data[2] = 1.0f, bl->data[1] = 0.0f;
    SAMC_INPUT_RANDOM("img_feats.0", -2, 2, 3, s * s, (int64_t)1, C);
    SAMC_INPUT_RANDOM("img_pos_embeds.0", -1, 1, 3, s * s, (int64_t)1, C);
    samc_status st = add_scalar(in, "img_sizes.0.0", (double)s, err);
    return st ? st : add_scalar(in, "img_sizes.0.1", (double)s, err);
}

/* A layer over six prompt tokens (one padded) and the image level. */
static samc_status ex_layer(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index, (void)full;
    const samc_sam3_geometry_encoder *g = self;
    const int64_t s = g->feat_side, C = g->d_model;
    SAMC_INPUT_RANDOM("tgt", -2, 2, 3, (int64_t)6, (int64_t)1, C);
    SAMC_INPUT_RANDOM("memory", -2, 2, 3, s * s, (int64_t)1, C);
    SAMC_INPUT_RANDOM("pos", -1, 1, 3, s * s, (int64_t)1, C);
    samc_tensor *k = samc_inputs_tensor(in, "tgt_key_padding_mask", 2, (const int64_t[]){1, 6}, err);
    if (!k)
        return SAMC_ERR_NOMEM;
    k->data[4] = 1.0f;
    return SAMC_OK;
}

static samc_status ex_norm(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                           samc_error *err)
{
    (void)index, (void)full;
    SAMC_INPUT_RANDOM("0", -2, 2, 3, (int64_t)6, (int64_t)1, (int64_t)((const samc_sam3_geometry_encoder *)self)->d_model);
    return SAMC_OK;
}
