/* SPDX-License-Identifier: Apache-2.0 */
/* vision_backbone.c - the vision backbone part (sam3/model/necks.py
 * Sam3DualViTDetNeck with its vitdet.ViT trunk), mounted at
 * "backbone.vision_backbone": its rows, weights (trunk, convs and the
 * tracker's sam2_convs copy, RoPE tables computed where a store lacks
 * them), forwards, isolated runners and op-test inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_io.h"
#include "core/models/sam3/sam3_modules.h"
#include "core/models/sam3/sam3_parts.h"
#include "core/nn/axial_rope.h"
#include "core/nn/nn_rows.h"

enum { PATCH_EMBED, LN_PRE, BLOCK, PERMUTE, TRUNK, NECK, SAM2_NECK, POSITION, VISION, N_ROWS };

static int count_blocks(const void *self) { return ((const samc_sam3_vision_backbone *)self)->n_blocks; }
static int count_neck(const void *self) { return ((const samc_sam3_vision_backbone *)self)->neck.n_levels; }
static int count_sam2_neck(const void *self)
{
    const samc_sam3_vision_backbone *v = self;
    return v->has_sam2_neck ? v->sam2_neck.n_levels : 0;
}
/* window and global blocks; each neck scale its own path (sam2_convs are
 * the same bodies: one level of them is run) */
static int block_class(const void *self, int i) { return ((const samc_sam3_vision_backbone *)self)->blocks[i].window > 0; }
static int level_class(const void *self, int i) { return (void)self, i; }
static int sam2_level_class(const void *self, int i) { return (void)self, (void)i, 0; }

static samc_isolated_body iso_patch_embed, iso_ln_pre, iso_block, iso_trunk, iso_level, iso_position, iso_vision;
static samc_status ex_patch_embed(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_ln_pre(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_block(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_level(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_position(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def rows[N_ROWS] = {
    [PATCH_EMBED] = {.pattern = "trunk.patch_embed", .table = SAMC_OPS_SAM3,
                     .body = SAMC_BODY(samc_sam3_ops, sam3_vit_patch_embed), .parity = true,
                     .isolated = iso_patch_embed, .example = ex_patch_embed},
    /* ViT.forward between patch_embed and the blocks: the tiled abs pos, ln_pre */
    [LN_PRE] = {.pattern = "trunk.ln_pre", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_vit_pos_ln_pre),
                .isolated = iso_ln_pre, .example = ex_ln_pre},
    [BLOCK] = {.pattern = "trunk.blocks.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_vit_block),
               .parity = true, .count = count_blocks, .isolated = iso_block, .example = ex_block,
               .op_class = block_class},
    /* ViT.forward's feats.permute(0, 3, 1, 2) */
    [PERMUTE] = {.pattern = "trunk.@permute", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, tokens_to_planes),
                 .isolated = samc_nn_run_tokens_to_planes, .example = samc_nn_example_tokens_to_planes},
    [TRUNK] = {.pattern = "trunk", .parity = true, .isolated = iso_trunk},
    [NECK] = {.pattern = "convs.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_neck_level),
              .parity = true, .count = count_neck, .isolated = iso_level, .example = ex_level, .op_class = level_class},
    /* the tracker's neck copy (add_sam2_neck: the video and predict_inst dumps) */
    [SAM2_NECK] = {.pattern = "sam2_convs.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_neck_level),
                   .parity = true, .count = count_sam2_neck, .isolated = iso_level, .example = ex_level,
                   .op_class = sam2_level_class},
    /* every level's encoding (both necks share the module) */
    [POSITION] = {.pattern = "position_encoding", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, sine_pe),
                  .isolated = iso_position, .example = ex_position},
    [VISION] = {.pattern = "", .parity = true, .isolated = iso_vision},
};
const samc_part_def samc_sam3_vision_part = {"Sam3DualViTDetNeck", rows, N_ROWS, describe};

static const char *const slot0[] = {"0"};

/* ---- weights ---------------------------------------------------------------- */

/* Whether the store holds `name` under the walk's current prefix. */
static bool stored(const samc_sd *sd, const char *name)
{
    char key[512];
    snprintf(key, sizeof key, "%s%s%s%s", sd->base, sd->root, sd->prefix, name);
    return samc_weights_find(sd->w, key) != NULL;
}

/* Block i's attn.freqs_cis: a buffer, described (and checked) when the
 * store holds it, else (a converted checkpoint) computed as
 * Attention._setup_rope_freqs does: input_size = grid (global) or window,
 * rope_pt_size = (window, window) unless given, scale = pt / input. */
static samc_status rope_table(samc_sd *sd, samc_sam3_vision_backbone *v, const samc_sam3_vit_config *c, int i,
                              samc_error *err)
{
    samc_sam3_vit_block *blk = &v->blocks[i];
    const int side = blk->window ? c->window_size : v->grid, hd = c->embed_dim / c->num_heads;
    const int pt = c->rope_pt_size > 0 ? c->rope_pt_size : c->window_size;
    const float scale = c->use_interp_rope ? (float)((double)pt / (double)side) : 1.0f;
    blk->rope_tokens = side * side;
    if (!sd->w || stored(sd, "attn.freqs_cis")) {
        blk->freqs_cis = samc_sd_tensor(sd, 3, (const int64_t[]){(int64_t)side * side, hd / 2, 2}, "attn.freqs_cis");
        return SAMC_OK;
    }
    float *t = malloc((size_t)side * side * hd * sizeof *t); /* sizes bounded by the config's validation */
    if (!t)
        return samc_fail(err, SAMC_ERR_NOMEM, "RoPE table of trunk.blocks.%d", i);
    free(v->rope[i]);
    v->rope[i] = t;
    samc_status st = samc_axial_rope_cis(hd, side, side, (float)c->rope_theta, scale, 0, t);
    blk->freqs_cis = t;
    return st ? samc_fail(err, st, "RoPE table of trunk.blocks.%d: head dim %d", i, hd) : SAMC_OK;
}

static bool is_global(const samc_sam3_vit_config *c, int i)
{
    for (int k = 0; k < c->n_global; k++)
        if (c->global_att_blocks[k] == i)
            return true;
    return false;
}

static samc_status describe_trunk(samc_sd *sd, samc_sam3_vision_backbone *v, const samc_sam3_vit_config *c,
                                  samc_error *err)
{
    const int C = c->embed_dim, hidden = (int)(C * c->mlp_ratio); /* int(dim * mlp_ratio) */
    v->resolution = c->img_size, v->grid = c->img_size / c->patch_size;
    samc_sam3_vit_embed *e = &v->embed;
    samc_sd_prefix(sd, "trunk.");
    samc_sd_conv(sd, &e->patch, "patch_embed.proj", c->in_chans, C, c->patch_size, c->patch_size, 0, 1,
                 c->bias_patch_embed);
    e->pos_has_cls = c->pretrain_use_cls_token;
    e->pos_tile = c->tile_abs_pos;
    if (c->use_abs_pos) {
        const int g = c->pretrain_img_size / c->patch_size;
        e->pos_embed = samc_sd_tensor(sd, 3, (const int64_t[]){1, (int64_t)g * g + (e->pos_has_cls ? 1 : 0), C},
                                      "pos_embed");
        e->pos_grid = g;
    }
    e->has_ln_pre = c->ln_pre;
    if (e->has_ln_pre)
        samc_sd_norm(sd, &e->ln_pre, "ln_pre", C, 1e-5f);
    v->n_blocks = c->depth;
    for (int i = 0; i < c->depth; i++) {
        samc_sam3_vit_block *blk = &v->blocks[i];
        samc_sd_prefix(sd, "trunk.blocks.%d.", i);
        blk->dim = C, blk->heads = c->num_heads, blk->window = is_global(c, i) ? 0 : c->window_size;
        samc_sd_norm(sd, &blk->norm1, "norm1", C, 1e-5f);
        samc_sd_norm(sd, &blk->norm2, "norm2", C, 1e-5f);
        samc_sd_linear(sd, &blk->qkv, "attn.qkv", C, 3 * C, c->qkv_bias);
        samc_sd_linear(sd, &blk->proj, "attn.proj", C, C, true);
        samc_sd_linear(sd, &blk->fc1, "mlp.fc1", C, hidden, true);
        samc_sd_linear(sd, &blk->fc2, "mlp.fc2", hidden, C, true);
        samc_status st = c->use_rope ? rope_table(sd, v, c, i, err) : SAMC_OK;
        if (st)
            return st;
    }
    /* ViT.forward returns the output of block full_attn_ids[-1]: the last
     * entry of global_att_blocks as listed (blocks after it run unused) */
    v->last_block = c->global_att_blocks[c->n_global - 1];
    return SAMC_OK;
}

/* The branches of Sam3DualViTDetNeck under `name` (convs or sam2_convs). */
static void describe_neck(samc_sd *sd, samc_sam3_neck *nk, const samc_sam3_neck_config *c, int C, const char *name)
{
    nk->n_levels = c->n_scales, nk->d_model = c->d_model;
    for (int i = 0; i < c->n_scales; i++) {
        samc_sam3_neck_level *l = &nk->levels[i];
        samc_sd_prefix(sd, "%s.%d.", name, i);
        l->scale = (float)c->scale_factors[i];
        int cin = C;
        if (l->scale == 4.0f) {
            samc_sd_conv_t(sd, &l->dconv0, "dconv_2x2_0", C, C / 2, 2);
            samc_sd_conv_t(sd, &l->dconv1, "dconv_2x2_1", C / 2, C / 4, 2);
            cin = C / 4;
        } else if (l->scale == 2.0f) {
            samc_sd_conv_t(sd, &l->dconv0, "dconv_2x2", C, C / 2, 2);
            cin = C / 2;
        }
        samc_sd_conv(sd, &l->conv_1x1, "conv_1x1", cin, c->d_model, 1, 1, 0, 1, true);
        samc_sd_conv(sd, &l->conv_3x3, "conv_3x3", c->d_model, c->d_model, 3, 1, 1, 1, true);
    }
    nk->pe = samc__sam3_sine_pe(&c->pe);
}

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    samc_sam3_vision_backbone *v = self;
    const samc_sam3_vision_config *c = cfg;
    samc_status st = describe_trunk(sd, v, &c->trunk, err);
    if (st)
        return st;
    v->scalp = c->scalp;
    describe_neck(sd, &v->neck, &c->neck, c->trunk.embed_dim, "convs");
    v->has_sam2_neck = c->neck.add_sam2_neck; /* a deep copy with its own weights (the tracker's neck) */
    if (v->has_sam2_neck)
        describe_neck(sd, &v->sam2_neck, &c->neck, c->trunk.embed_dim, "sam2_convs");
    return SAMC_OK;
}

void samc_sam3_vision_release(samc_sam3_vision_backbone *v)
{
    for (int i = 0; i < SAMC_SAM3_MAX_BLOCKS; i++)
        free(v->rope[i]), v->rope[i] = NULL;
}

/* ---- forward ------------------------------------------------------------------- */

/* (B, h, w, C) of the patch embedding of an image (B, 3, S, S). */
static samc_status embed_shape(const samc_sam3_vision_backbone *v, const samc_tensor *img, int64_t *s,
                               samc_error *err)
{
    const samc_conv2d *p = &v->embed.patch;
    if (img->ndim != 4 || img->shape[1] != p->cin || img->shape[2] < p->kh || img->shape[3] < p->kw)
        return samc_fail(err, SAMC_ERR_SHAPE, "trunk: image is not (B,%d,S,S) with S >= %d", p->cin, p->kh);
    s[0] = img->shape[0], s[3] = p->cout;
    s[1] = samc_conv2d_out_dim((int)img->shape[2], p->kh, p->stride, p->pad);
    s[2] = samc_conv2d_out_dim((int)img->shape[3], p->kw, p->stride, p->pad);
    return SAMC_OK;
}

/* One layer call of this part: the body's status through samc_layer_done,
 * its output traced. */
static samc_status traced(samc_exec *x, const samc_layer *L, samc_status st, const samc_tensor *y, samc_error *err)
{
    const samc_tensor *outs[] = {y};
    return samc_layer_done(x, L, NULL, st, err, 1, slot0, outs);
}

samc_status samc_sam3_trunk_forward(samc_exec *x, const samc_sam3_vision_backbone *v, const samc_tensor *img,
                                    samc_tensor *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    int64_t s[4];
    samc_tensor a = {0}, b = {0};
    samc_status st = embed_shape(v, img, s, err);
    if (!st)
        st = samc_tensor_alloc(&a, 4, s, err);
    if (!st)
        st = samc_tensor_alloc(&b, 4, s, err);
    const samc_layer *L = samc_part_layer(x, v, &rows[PATCH_EMBED], 0);
    if (!st)
        st = traced(x, L, ((const samc_sam3_ops *)L->ops)->sam3_vit_patch_embed(samc_layer_ctx(x, L), &v->embed, img, &a),
                    &a, err);
    L = samc_part_layer(x, v, &rows[LN_PRE], 0);
    if (!st)
        st = samc_layer_done(x, L, NULL,
                             ((const samc_sam3_ops *)L->ops)->sam3_vit_pos_ln_pre(samc_layer_ctx(x, L), &v->embed, &a, &b),
                             err, 0, NULL, NULL);
    for (int i = 0; i <= v->last_block && !st; i++) {
        L = samc_part_layer(x, v, &rows[BLOCK], i);
        st = traced(x, L, ((const samc_sam3_ops *)L->ops)->sam3_vit_block(samc_layer_ctx(x, L), &v->blocks[i], &b, &a),
                    &a, err);
        samc_tensor t = a;
        a = b, b = t;
    }
    if (!st)
        st = samc_tensor_allocv(out, err, 4, s[0], s[3], s[1], s[2]);
    L = samc_part_layer(x, v, &rows[PERMUTE], 0); /* feats.permute(0, 3, 1, 2) */
    if (!st)
        st = samc_layer_done(x, L, NULL, ((const samc_nn_ops *)L->ops)->tokens_to_planes(samc_layer_ctx(x, L), &b, out),
                             err, 0, NULL, NULL);
    samc_tensor_release(&a), samc_tensor_release(&b);
    if (st) {
        samc_tensor_release(out);
        return st;
    }
    const samc_tensor *outs[] = {out};
    samc_layer_emit(x, samc_part_layer(x, v, &rows[TRUNK], 0), NULL, 1, slot0, outs);
    return SAMC_OK;
}

void samc_sam3_features_release(samc_sam3_features *f)
{
    for (int i = 0; i < SAMC_SAM3_NECK_MAX; i++) {
        samc_tensor_release(&f->level[i]), samc_tensor_release(&f->pos[i]);
        samc_tensor_release(&f->sam2_level[i]), samc_tensor_release(&f->sam2_pos[i]);
    }
    f->n_levels = f->n_sam2 = 0;
}

/* Output side of a neck level for an input side. */
static int64_t level_side(const samc_sam3_neck_level *l, int64_t in)
{
    const float s = l->scale;
    return s == 4.0f ? 4 * in : s == 2.0f ? 2 * in : s == 0.5f ? in / 2 : in;
}

/* One neck (convs or sam2_convs, row `row`) on the trunk's map: each level
 * and its position_encoding. */
static samc_status neck_forward(samc_exec *x, const samc_sam3_vision_backbone *v, int row, const samc_sam3_neck *nk,
                                const samc_tensor *feat, samc_tensor *level, samc_tensor *pos, samc_error *err)
{
    const int64_t B = feat->shape[0], h = feat->shape[2], w = feat->shape[3];
    samc_status st = SAMC_OK;
    for (int i = 0; i < nk->n_levels && !st; i++) {
        const int64_t H = level_side(&nk->levels[i], h), W = level_side(&nk->levels[i], w);
        const samc_layer *L = samc_part_layer(x, v, &rows[row], i);
        st = samc_tensor_allocv(&level[i], err, 4, B, (int64_t)nk->d_model, H, W);
        if (!st)
            st = traced(x, L, ((const samc_sam3_ops *)L->ops)->sam3_neck_level(samc_layer_ctx(x, L), &nk->levels[i],
                                                                              feat, &level[i]),
                        &level[i], err);
        if (!st)
            st = samc_tensor_allocv(&pos[i], err, 4, B, (int64_t)nk->d_model, H, W);
        const samc_layer *Lp = samc_part_layer(x, v, &rows[POSITION], 0);
        if (!st)
            st = samc_layer_done(x, Lp, NULL, ((const samc_nn_ops *)Lp->ops)->sine_pe(samc_layer_ctx(x, Lp), &nk->pe, &pos[i]),
                                 err, 0, NULL, NULL);
    }
    return st;
}

/* The backbone's point: sam3_out "0.i", sam3_pos "1.i", then sam2_out "2.i"
 * and sam2_pos "3.i" (None without the tracker's neck). */
static void emit_vision(samc_exec *x, const samc_sam3_vision_backbone *v, const samc_sam3_features *f)
{
    char names[4 * SAMC_SAM3_NECK_MAX][8];
    const char *slots[4 * SAMC_SAM3_NECK_MAX];
    const samc_tensor *t[4 * SAMC_SAM3_NECK_MAX];
    int n = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < f->n_levels; i++, n++)
            snprintf(names[n], sizeof names[n], "%d.%d", k, i), t[n] = k ? &f->pos[i] : &f->level[i];
    for (int i = 0; i < f->n_sam2; i++)
        for (int k = 2; k < 4; k++, n++)
            snprintf(names[n], sizeof names[n], "%d.%d", k, i), t[n] = k == 3 ? &f->sam2_pos[i] : &f->sam2_level[i];
    for (int i = 0; i < n; i++)
        slots[i] = names[i];
    samc_layer_emit(x, samc_part_layer(x, v, &rows[VISION], 0), NULL, n, slots, t);
}

samc_status samc_sam3_vision_forward(samc_exec *x, const samc_sam3_vision_backbone *v, const samc_tensor *img,
                                     bool sam2, samc_sam3_features *f, samc_error *err)
{
    memset(f, 0, sizeof *f);
    samc_tensor feat = {0};
    samc_status st = samc_sam3_trunk_forward(x, v, img, &feat, err);
    if (!st) {
        f->n_levels = v->neck.n_levels;
        st = neck_forward(x, v, NECK, &v->neck, &feat, f->level, f->pos, err);
    }
    if (!st && v->has_sam2_neck && (sam2 || x->trace)) {
        f->n_sam2 = v->sam2_neck.n_levels;
        st = neck_forward(x, v, SAM2_NECK, &v->sam2_neck, &feat, f->sam2_level, f->sam2_pos, err);
    }
    samc_tensor_release(&feat);
    if (st) {
        samc_sam3_features_release(f);
        return st;
    }
    emit_vision(x, v, f);
    return SAMC_OK;
}

/* ---- isolated runners ----------------------------------------------------------- */

static samc_status iso_patch_embed(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    const samc_sam3_vision_backbone *v = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *img = samc__sam3_in(&r, "0", NULL);
    int64_t s[4];
    if (!r.st)
        r.st = embed_shape(v, img, s, err);
    samc_tensor *y = samc__sam3_out(&r, "0", 4, s);
    if (y)
        r.st = samc_layer_done(x, L, NULL,
                               ((const samc_sam3_ops *)L->ops)->sam3_vit_patch_embed(samc_layer_ctx(x, L), &v->embed, img, y),
                               err, 0, NULL, NULL);
    return samc__sam3_io_end(&r);
}

/* (B,H,W,C) -> (B,H,W,C): ln_pre and a ViT block share the runner's shape. */
static samc_status iso_ln_pre(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                              samc_error *err)
{
    const samc_sam3_vision_backbone *v = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *t = samc__sam3_in(&r, "0", NULL);
    if (t && t->ndim != 4)
        samc__sam3_io_shape(&r, "%s: input is not (B,H,W,C)", L->name);
    samc_tensor *y = r.st ? NULL : samc__sam3_out(&r, "0", 4, t->shape);
    const samc_sam3_ops *ops = L->ops;
    if (y)
        r.st = samc_layer_done(x, L, NULL,
                               L->def == &rows[LN_PRE]
                                   ? ops->sam3_vit_pos_ln_pre(samc_layer_ctx(x, L), &v->embed, t, y)
                                   : ops->sam3_vit_block(samc_layer_ctx(x, L), &v->blocks[L->index], t, y),
                               err, 0, NULL, NULL);
    return samc__sam3_io_end(&r);
}

static samc_status iso_block(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    return iso_ln_pre(x, L, in, out, err);
}

static samc_status iso_trunk(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *img = samc__sam3_in(&r, "0", NULL);
    samc_tensor y = {0};
    samc_capture cap;
    samc_capture_begin(x, &cap, L->name, out);
    if (!r.st)
        r.st = samc_sam3_trunk_forward(x, L->self, img, &y, err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&y);
    return samc__sam3_io_end(&r);
}

static samc_status iso_level(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    const samc_sam3_vision_backbone *v = L->self;
    const samc_sam3_neck *nk = L->def == &rows[NECK] ? &v->neck : &v->sam2_neck;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *t = samc__sam3_in(&r, "0", NULL);
    if (t && t->ndim != 4)
        samc__sam3_io_shape(&r, "%s: input is not (B,C,H,W)", L->name);
    const samc_sam3_neck_level *l = &nk->levels[L->index];
    samc_tensor *y = r.st ? NULL
                          : samc__sam3_out_v(&r, "0", 4, t->shape[0], (int64_t)nk->d_model, level_side(l, t->shape[2]),
                                             level_side(l, t->shape[3]));
    if (y)
        r.st = samc_layer_done(x, L, NULL, ((const samc_sam3_ops *)L->ops)->sam3_neck_level(samc_layer_ctx(x, L), l, t, y),
                               err, 0, NULL, NULL);
    return samc__sam3_io_end(&r);
}

/* The encoding of a level "x" (B, d, H, W) of convs (the same module for sam2_convs). */
static samc_status iso_position(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                samc_error *err)
{
    const samc_sam3_vision_backbone *v = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *t = samc__sam3_in(&r, "x", "0");
    if (t && t->ndim != 4)
        samc__sam3_io_shape(&r, "%s: input is not (B,C,H,W)", L->name);
    samc_tensor *y = r.st ? NULL : samc__sam3_out_v(&r, "0", 4, t->shape[0], (int64_t)v->neck.pe.num_pos_feats,
                                                   t->shape[2], t->shape[3]);
    if (y)
        r.st = samc_layer_done(x, L, NULL, ((const samc_nn_ops *)L->ops)->sine_pe(samc_layer_ctx(x, L), &v->neck.pe, y),
                               err, 0, NULL, NULL);
    return samc__sam3_io_end(&r);
}

static samc_status iso_vision(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                              samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *img = samc__sam3_in(&r, "0", NULL);
    samc_sam3_features f = {0};
    samc_capture cap;
    samc_capture_begin(x, &cap, L->name, out);
    if (!r.st)
        r.st = samc_sam3_vision_forward(x, L->self, img, true, &f, err);
    samc_capture_end(x, &cap);
    samc_sam3_features_release(&f);
    return samc__sam3_io_end(&r);
}

/* ---- op-test inputs ------------------------------------------------------------- */

/* The reduced token grid: 8 x 8 (a quarter window of the released trunk,
 * padded), the real one with `full`. */
static int64_t side_of(const samc_sam3_vision_backbone *v, bool full) { return full || v->grid < 8 ? v->grid : 8; }

static samc_status ex_patch_embed(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                  samc_error *err)
{
    (void)index;
    const samc_sam3_vision_backbone *v = self;
    const int64_t S = side_of(v, full) * v->embed.patch.kh;
    SAMC_INPUT_RANDOM("0", -2, 2, 4, (int64_t)1, (int64_t)v->embed.patch.cin, S, S);
    return SAMC_OK;
}

static samc_status ex_ln_pre(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                             samc_error *err)
{
    (void)index;
    const samc_sam3_vision_backbone *v = self;
    const int64_t g = side_of(v, full);
    SAMC_INPUT_RANDOM("0", -2, 2, 4, (int64_t)1, g, g, (int64_t)v->embed.patch.cout);
    return SAMC_OK;
}

/* A global block runs on the model's grid (its RoPE table's); a windowed
 * one on the reduced grid, padded to one window, unless `full`. */
static samc_status ex_block(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    const samc_sam3_vision_backbone *v = self;
    const samc_sam3_vit_block *b = &v->blocks[index];
    const int64_t g = b->window ? side_of(v, full) : v->grid;
    SAMC_INPUT_RANDOM("0", -2, 2, 4, (int64_t)1, g, g, (int64_t)b->dim);
    return SAMC_OK;
}

/* The trunk's map; reduced, 4 x 4 (the 4x level's 3x3 convolution then
 * runs on 16 x 16). */
static samc_status ex_level(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index;
    const samc_sam3_vision_backbone *v = self;
    const int64_t g = full ? v->grid : side_of(v, full) / 2;
    SAMC_INPUT_RANDOM("0", -2, 2, 4, (int64_t)1, (int64_t)v->embed.patch.cout, g, g);
    return SAMC_OK;
}

/* The 4x level of two images (the encoding is repeated over the batch). */
static samc_status ex_position(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                               samc_error *err)
{
    (void)index;
    const samc_sam3_vision_backbone *v = self;
    const int64_t g = 4 * side_of(v, full);
    SAMC_INPUT_RANDOM("x", -1, 1, 4, (int64_t)2, (int64_t)v->neck.d_model, g, g);
    return SAMC_OK;
}
