/* SPDX-License-Identifier: Apache-2.0 */
/* image_encoder.c - SAM 2's ImageEncoder part: the Hiera trunk and the FPN
 * neck (sam2/modeling/backbones/hieradet.py, image_encoder.py), mounted
 * at "image_encoder": its rows, weights, forward, isolated runners and
 * op-test inputs. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/hiera_pos_embed.h"
#include "core/models/sam2/sam2_model.h"
#include "core/nn/nn_ops.h"
#include "core/nn/nn_rows.h"

enum { PATCH_EMBED, POS_EMBED, BLOCK, PERMUTE, TRUNK, NECK, IMAGE_ENCODER, N_ROWS };

static int count_blocks(const void *self) { return ((const samc_sam2_image_encoder *)self)->depth; }
static int count_stages(const void *self) { return ((const samc_sam2_image_encoder *)self)->n_stages; }
static int block_class(const void *self, int index);

static samc_isolated_body iso_patch_embed, iso_block, iso_neck, iso_encoder;
static samc_status ex_patch_embed(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_block(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_neck(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def rows[N_ROWS] = {
    [PATCH_EMBED] = {.pattern = "trunk.patch_embed", .table = SAMC_OPS_SAM2,
                     .body = SAMC_BODY(samc_sam2_ops, patch_embed), .parity = true, .isolated = iso_patch_embed,
                     .example = ex_patch_embed},
    /* x + self._get_pos_embed(...) (the embedding is computed at load) */
    [POS_EMBED] = {.pattern = "trunk.@pos_embed", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, add),
                   .isolated = samc_nn_run_add, .example = samc_nn_example_add},
    [BLOCK] = {.pattern = "trunk.blocks.#", .table = SAMC_OPS_SAM2, .body = SAMC_BODY(samc_sam2_ops, hiera_block),
               .parity = true, .count = count_blocks, .isolated = iso_block, .example = ex_block,
               .op_class = block_class},
    /* each stage's output x.permute(0, 3, 1, 2) */
    [PERMUTE] = {.pattern = "trunk.@permute.#", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, tokens_to_planes),
                 .count = count_stages, .isolated = samc_nn_run_tokens_to_planes,
                 .example = samc_nn_example_tokens_to_planes},
    /* composites: the trunk (its stage outputs) and the whole encoder (after scalp) */
    [TRUNK] = {.pattern = "trunk", .parity = true, .isolated = iso_encoder},
    [NECK] = {.pattern = "neck", .table = SAMC_OPS_SAM2, .body = SAMC_BODY(samc_sam2_ops, fpn_neck), .parity = true,
              .isolated = iso_neck, .example = ex_neck},
    /* ... or, with an implementation that has it, the whole part and the
     * tracker's features in one body (samc_sam2_image_features_fn) */
    [IMAGE_ENCODER] = {.pattern = "", .table = SAMC_OPS_SAM2, .whole = SAMC_BODY(samc_sam2_ops, image_features),
                       .parity = true, .isolated = iso_encoder},
};
const samc_part_def samc_sam2_image_encoder_part = {"ImageEncoder", rows, N_ROWS, describe};

static const char *const slot0[] = {"0"};

/* ---- weights ---------------------------------------------------------------- */

static void describe_block(samc_sd *sd, samc_hiera_block *blk, const samc_hiera_block_spec *sp, int i)
{
    const int d = sp->dim, o = sp->dim_out;
    *blk = (samc_hiera_block){.dim = d, .dim_out = o, .heads = sp->heads, .window = sp->window,
                              .q_stride = sp->q_stride, .has_proj = d != o};
    samc_sd_prefix(sd, "trunk.blocks.%d.", i);
    samc_sd_norm(sd, &blk->norm1, "norm1", d, 1e-6f); /* Hiera's "LayerNorm" string -> eps 1e-6 */
    samc_sd_linear(sd, &blk->qkv, "attn.qkv", d, 3 * o, true);
    samc_sd_linear(sd, &blk->attn_proj, "attn.proj", o, o, true);
    samc_sd_norm(sd, &blk->norm2, "norm2", o, 1e-6f);
    samc_sd_linear(sd, &blk->mlp_fc1, "mlp.layers.0", o, 4 * o, true);
    samc_sd_linear(sd, &blk->mlp_fc2, "mlp.layers.1", 4 * o, o, true);
    if (blk->has_proj)
        samc_sd_linear(sd, &blk->proj, "proj", d, o, true);
}

static samc_status describe_trunk(samc_sd *sd, samc_sam2_image_encoder *m, const samc_sam2_config *cfg,
                                  samc_error *err)
{
    const samc_hiera_config *h = &cfg->trunk;
    samc_hiera_block_spec sp[SAMC_MAX_BLOCKS];
    samc_status st = samc_hiera_block_specs(h, sp, SAMC_MAX_BLOCKS, err);
    if (st)
        return st;
    const int C = h->embed_dim, ws = h->window_spec[0];
    samc_sd_prefix(sd, "trunk.");
    const float *pos = samc_sd_tensor(sd, 4, (const int64_t[]){1, C, h->bkg_h, h->bkg_w}, "pos_embed");
    const float *pos_win = samc_sd_tensor(sd, 4, (const int64_t[]){1, C, ws, ws}, "pos_embed_window");
    samc_sd_conv(sd, &m->patch_embed, "patch_embed.proj", 3, C, h->patch_kernel, h->patch_stride, h->patch_padding, 1,
                 true);
    m->depth = samc_hiera_depth(h);
    m->n_stages = samc_hiera_stage_ends(h, m->stage_ends);
    for (int i = 0; i < m->depth; i++)
        describe_block(sd, &m->blocks[i], &sp[i], i);
    m->image_size = cfg->image_size, m->grid = cfg->image_size / h->patch_stride;
    if (!pos || !pos_win)
        return SAMC_OK; /* describing only, or a missing key: samc_sd_finish reports it */
    /* The absolute position embedding depends only on the weights and the
     * grid: computed once (Hiera._get_pos_embed). */
    m->pos_embed = malloc((size_t)m->grid * m->grid * C * sizeof(float));
    if (!m->pos_embed)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory for the position embedding");
    st = samc_hiera_pos_embed(pos, C, h->bkg_h, h->bkg_w, pos_win, ws, ws, m->grid, m->grid, m->pos_embed);
    return st ? samc_fail(err, st, "cannot compute the Hiera position embedding") : SAMC_OK;
}

static void describe_neck(samc_sd *sd, samc_sam2_image_encoder *m, const samc_sam2_config *cfg)
{
    const samc_neck_config *n = &cfg->neck;
    samc_fpn_neck *k = &m->neck;
    memset(k, 0, sizeof *k);
    k->d_model = n->d_model, k->n_levels = n->n_levels;
    samc_sd_prefix(sd, "neck.");
    m->scalp = n->scalp;
    char name[64];
    for (int i = 0; i < n->n_levels; i++) {
        snprintf(name, sizeof name, "convs.%d.conv", i);
        samc_sd_conv(sd, &k->convs[i], name, n->backbone_channel_list[i], n->d_model, n->conv_kernel, n->conv_stride,
                     n->conv_padding, 1, true);
    }
    for (int i = 0; i < n->n_top_down; i++)
        k->top_down[n->fpn_top_down_levels[i]] = true;
    k->fuse_avg = n->fuse_avg;
    k->interp_bilinear = n->interp_bilinear;
    k->pe = (samc_sine_pe){n->pe.num_pos_feats, (float)n->pe.temperature, n->pe.normalize,
                           n->pe.scale > 0 ? (float)n->pe.scale : (float)(2.0 * 3.14159265358979323846)};
}

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    samc_status st = describe_trunk(sd, self, cfg, err);
    if (!st)
        describe_neck(sd, self, cfg);
    return st;
}

/* ---- forward ------------------------------------------------------------------- */

static const samc_sam2_ops *ops(const samc_layer *L) { return L->ops; }

/* Layer outputs are allocated uninitialised: every body writes its whole
 * output (docs/architecture.md), and zero-filling them was a serial
 * memset of ~380 MB per image at t. The layout passes between the bodies
 * run on the exec's threads (core/nn/layout.c). */

/* Stage `stage`'s output (B,H,W,C) -> (B,C,H,W), as Hiera.forward's permute(0,3,1,2). */
static samc_status permute(samc_exec *x, const samc_sam2_image_encoder *m, int stage, const samc_tensor *in,
                           samc_tensor *y, samc_error *err)
{
    const int64_t B = in->shape[0], H = in->shape[1], W = in->shape[2], C = in->shape[3];
    const samc_layer *L = samc_part_layer(x, m, &rows[PERMUTE], stage);
    samc_status st = samc_tensor_alloc_uninit(y, 4, (const int64_t[]){B, C, H, W}, err);
    if (!st)
        st = samc_layer_done(x, L, NULL, ((const samc_nn_ops *)L->ops)->tokens_to_planes(samc_layer_ctx(x, L), in, y),
                             err, 0, NULL, NULL);
    return st;
}

/* Hiera.forward: patch embed, + pos embed, blocks, stage outputs (NCHW). */
static samc_status trunk(samc_exec *x, const samc_sam2_image_encoder *m, const samc_tensor *img,
                         const samc_scope *sc, samc_tensor *stage_out, samc_error *err)
{
    const int G = m->grid, C = m->patch_embed.cout, S = m->image_size;
    if (img->ndim != 4 || img->shape[0] != 1 || img->shape[1] != 3 || img->shape[2] != S || img->shape[3] != S)
        return samc_fail(err, SAMC_ERR_SHAPE, "image encoder input must be (1,3,%d,%d)", S, S);
    samc_tensor cur = {0}, nxt = {0};
    samc_status st = samc_tensor_alloc_uninit(&cur, 4, (const int64_t[]){1, G, G, C}, err);
    const samc_layer *L = samc_part_layer(x, m, &rows[PATCH_EMBED], 0);
    const samc_tensor *outs[SAMC_MAX_STAGES] = {&cur};
    if (!st)
        st = samc_layer_done(x, L, sc, ops(L)->patch_embed(samc_layer_ctx(x, L), &m->patch_embed, img, &cur), err, 1,
                             slot0, outs);
    if (!st) {
        const samc_layer *P = samc_part_layer(x, m, &rows[POS_EMBED], 0);
        const samc_tensor pe = samc_tensor_view(m->pos_embed, 4, cur.shape);
        st = samc_layer_done(x, P, NULL, ((const samc_nn_ops *)P->ops)->add(samc_layer_ctx(x, P), &cur, &pe, 1.0f, &cur),
                             err, 0, NULL, NULL);
    }
    for (int i = 0, stage = 0; !st && i < m->depth; i++) {
        const samc_hiera_block *blk = &m->blocks[i];
        const int64_t s = blk->q_stride ? blk->q_stride : 1;
        if ((st = samc_tensor_alloc_uninit(
                 &nxt, 4, (const int64_t[]){cur.shape[0], cur.shape[1] / s, cur.shape[2] / s, blk->dim_out}, err)))
            break;
        L = samc_part_layer(x, m, &rows[BLOCK], i);
        outs[0] = &nxt;
        if ((st = samc_layer_done(x, L, sc, ops(L)->hiera_block(samc_layer_ctx(x, L), blk, &cur, &nxt), err, 1,
                                  slot0, outs)))
            break;
        samc_tensor_release(&cur);
        cur = nxt;
        memset(&nxt, 0, sizeof nxt);
        if (stage < m->n_stages && i == m->stage_ends[stage]) {
            st = permute(x, m, stage, &cur, &stage_out[stage], err);
            stage++;
        }
    }
    if (!st) {
        static const char *const slots[] = {"0", "1", "2", "3"};
        for (int k = 0; k < m->n_stages; k++)
            outs[k] = &stage_out[k];
        samc_layer_emit(x, samc_part_layer(x, m, &rows[TRUNK], 0), sc, m->n_stages, slots, outs);
    }
    samc_tensor_release(&cur), samc_tensor_release(&nxt);
    return st;
}

/* FpnNeck + ImageEncoder (scalp), traced under their module names. */
static samc_status neck_and_scalp(samc_exec *x, const samc_sam2_image_encoder *m, const samc_scope *sc,
                                  samc_tensor *xs, samc_tensor *feat, samc_tensor *pos, samc_error *err)
{
    const int L = m->neck.n_levels, D = m->neck.d_model;
    samc_status st = SAMC_OK;
    for (int i = 0; !st && i < L; i++)
        if (!(st = samc_tensor_alloc_uninit(&feat[i], 4, (const int64_t[]){1, D, xs[i].shape[2], xs[i].shape[3]}, err)))
            st = samc_tensor_alloc_uninit(&pos[i], 4, (const int64_t[]){1, D, xs[i].shape[2], xs[i].shape[3]}, err);
    char names[1 + 2 * SAMC_FPN_MAX_LEVELS][24];
    const char *slots[1 + 2 * SAMC_FPN_MAX_LEVELS];
    const samc_tensor *t[1 + 2 * SAMC_FPN_MAX_LEVELS];
    for (int i = 0; i < L; i++) {
        snprintf(names[i], 24, "0.%d", i), slots[i] = names[i], t[i] = &feat[i];
        snprintf(names[L + i], 24, "1.%d", i), slots[L + i] = names[L + i], t[L + i] = &pos[i];
    }
    const samc_layer *neck = samc_part_layer(x, m, &rows[NECK], 0);
    if (!st)
        st = samc_layer_done(x, neck, sc, ops(neck)->fpn_neck(samc_layer_ctx(x, neck), &m->neck, xs, feat, pos), err,
                             2 * L, slots, t);
    if (st)
        return st;
    /* ImageEncoder.forward: drop the `scalp` lowest-resolution levels. */
    const int K = L - m->scalp;
    int n = 0;
    snprintf(names[n], 24, "vision_features"), slots[n] = names[n], t[n++] = &feat[K - 1];
    for (int i = 0; i < K; i++)
        snprintf(names[n], 24, "vision_pos_enc.%d", i), slots[n] = names[n], t[n++] = &pos[i];
    for (int i = 0; i < K; i++)
        snprintf(names[n], 24, "backbone_fpn.%d", i), slots[n] = names[n], t[n++] = &feat[i];
    samc_layer_emit(x, samc_part_layer(x, m, &rows[IMAGE_ENCODER], 0), sc, n, slots, t);
    return SAMC_OK;
}

samc_status samc_sam2_image_encoder_forward(samc_exec *x, const samc_sam2_image_encoder *e, const samc_scope *sc,
                                            const samc_tensor *img, samc_tensor *levels, samc_tensor *pos,
                                            int *n_levels, samc_error *err)
{
    samc_tensor xs[SAMC_MAX_STAGES] = {{0}};
    samc_status st = trunk(x, e, img, sc, xs, err);
    if (!st)
        st = neck_and_scalp(x, e, sc, xs, levels, pos, err);
    for (int i = 0; i < SAMC_MAX_STAGES; i++)
        samc_tensor_release(&xs[i]);
    *n_levels = st ? 0 : e->neck.n_levels - e->scalp;
    for (int i = *n_levels; i < SAMC_FPN_MAX_LEVELS; i++) /* the scalped levels are not kept */
        samc_tensor_release(&levels[i]), samc_tensor_release(&pos[i]);
    return st;
}

const samc_layer *samc_sam2_image_encoder_whole(const samc_exec *x, const samc_sam2_image_encoder *e)
{
    const samc_layer *L = samc_part_layer(x, e, &rows[IMAGE_ENCODER], 0);
    return L->whole_ops ? L : NULL;
}

samc_status samc_sam2_image_features_whole(samc_exec *x, const samc_layer *W, const samc_tracker_feature_spec *spec,
                                           const samc_scope *sc, const samc_tensor *img, samc_frame_features *f,
                                           samc_error *err)
{
    const samc_sam2_image_encoder *m = W->self;
    const int S = m->image_size;
    memset(f, 0, sizeof *f);
    if (img->ndim != 4 || img->shape[0] != 1 || img->shape[1] != 3 || img->shape[2] != S || img->shape[3] != S)
        return samc_fail(err, SAMC_ERR_SHAPE, "image encoder input must be (1,3,%d,%d)", S, S);
    const samc_sam2_ops *whole = W->whole_ops;
    samc_status st = whole->image_features(samc_part_ctx(x, W, sc), m, spec, img, f);
    if ((st = samc_layer_done(x, W, sc, st, err, 0, NULL, NULL)))
        samc_frame_features_release(f);
    return st;
}

/* ---- isolated runners ------------------------------------------------------- */

static samc_status iso_patch_embed(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    const samc_sam2_image_encoder *m = L->self;
    samc_tensor img = {0};
    samc_status st = samc_io_tensor(in, "x", "0", &img, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    const int64_t G = img.ndim == 4 ? img.shape[2] / m->patch_embed.stride : 0;
    if (!st && !(st = samc_tensor_allocv(y, err, 4, img.shape[0], G, G, (int64_t)m->patch_embed.cout)))
        st = samc_layer_done(x, L, NULL, ops(L)->patch_embed(samc_layer_ctx(x, L), &m->patch_embed, &img, y), err, 0,
                             NULL, NULL);
    samc_tensor_release(&img);
    return st;
}

static samc_status iso_block(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    const samc_sam2_image_encoder *m = L->self;
    const samc_hiera_block *b = &m->blocks[L->index];
    const int64_t s = b->q_stride ? b->q_stride : 1;
    samc_tensor t = {0};
    samc_status st = samc_io_tensor(in, "x", "0", &t, err);
    if (!st && (t.ndim != 4 || t.shape[3] != b->dim))
        st = samc_fail(err, SAMC_ERR_SHAPE, "block %d: recorded input is not (B,H,W,%d)", L->index, b->dim);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && !(st = samc_tensor_allocv(y, err, 4, t.shape[0], t.shape[1] / s, t.shape[2] / s, (int64_t)b->dim_out)))
        st = samc_layer_done(x, L, NULL, ops(L)->hiera_block(samc_layer_ctx(x, L), b, &t, y), err, 0, NULL, NULL);
    samc_tensor_release(&t);
    return st;
}

static samc_status iso_neck(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                            samc_error *err)
{
    const samc_sam2_image_encoder *m = L->self;
    const int n = m->neck.n_levels;
    samc_tensor xs[SAMC_FPN_MAX_LEVELS] = {{0}}, feat[SAMC_FPN_MAX_LEVELS] = {{0}}, pos[SAMC_FPN_MAX_LEVELS] = {{0}};
    samc_status st = SAMC_OK;
    char name[16], alt[16];
    for (int i = 0; !st && i < n; i++) {
        snprintf(name, sizeof name, "xs.%d", i), snprintf(alt, sizeof alt, "0.%d", i);
        st = samc_io_tensor(in, name, alt, &xs[i], err);
    }
    for (int i = 0; !st && i < n; i++)
        if (!(st = samc_tensor_allocv(&feat[i], err, 4, xs[i].shape[0], (int64_t)m->neck.d_model, xs[i].shape[2],
                                      xs[i].shape[3])))
            st = samc_tensor_alloc(&pos[i], 4, feat[i].shape, err);
    if (!st)
        st = samc_layer_done(x, L, NULL, ops(L)->fpn_neck(samc_layer_ctx(x, L), &m->neck, xs, feat, pos), err, 0, NULL,
                             NULL);
    for (int k = 0; k < 2; k++) /* the op writes arrays of outputs; hand them over as slots 0.i, 1.i */
        for (int i = 0; i < n; i++) {
            samc_tensor *src = k ? &pos[i] : &feat[i];
            snprintf(name, sizeof name, "%d.%d", k, i);
            samc_tensor *y = st ? NULL : samc_layer_out_slot(out, name);
            if (y)
                *y = *src, memset(src, 0, sizeof *src);
        }
    for (int i = 0; i < n; i++)
        samc_tensor_release(&xs[i]), samc_tensor_release(&feat[i]), samc_tensor_release(&pos[i]);
    return st;
}

/* image_encoder.trunk and image_encoder: the subtree from the recorded input. */
static samc_status iso_encoder(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                               samc_error *err)
{
    const bool trunk_only = L->def == &rows[TRUNK];
    samc_tensor img = {0}, stages[SAMC_MAX_STAGES] = {{0}}, levels[SAMC_FPN_MAX_LEVELS] = {{0}},
                pos[SAMC_FPN_MAX_LEVELS] = {{0}};
    int n = 0;
    samc_capture c;
    samc_status st = samc_io_tensor(in, trunk_only ? "x" : "sample", "0", &img, err);
    samc_capture_begin(x, &c, L->name, out);
    if (!st)
        st = trunk_only ? trunk(x, L->self, &img, &samc_no_scope, stages, err)
                        : samc_sam2_image_encoder_forward(x, L->self, &samc_no_scope, &img, levels, pos, &n, err);
    samc_capture_end(x, &c);
    for (int i = 0; i < SAMC_MAX_STAGES; i++)
        samc_tensor_release(&stages[i]);
    for (int i = 0; i < SAMC_FPN_MAX_LEVELS; i++)
        samc_tensor_release(&levels[i]), samc_tensor_release(&pos[i]);
    samc_tensor_release(&img);
    if (!st && out->n == 0)
        st = samc_fail(err, SAMC_ERR_INTERNAL, "%s produced no trace output", L->name);
    return st;
}

/* ---- op-test inputs ------------------------------------------------------------ */

/* The side of block i's input map at the model's image size, or a reduced
 * side: two windows across (16 for global attention), one window (8) for the
 * wide late-stage blocks whose scalar reference is the slowest. */
static int block_side(const samc_sam2_image_encoder *m, int i, bool full)
{
    int H = m->grid;
    for (int k = 0; k < i; k++)
        if (m->blocks[k].q_stride)
            H /= m->blocks[k].q_stride;
    const int w = m->blocks[i].window, wide = m->blocks[i].dim_out >= 512;
    const int cap = w ? (wide ? w : 2 * w) : (wide ? 8 : 16);
    return full || H <= cap ? H : cap;
}

/* Blocks differ by dims, heads, window, pooling and map size (reduced grid). */
static int block_class(const void *self, int index)
{
    const samc_sam2_image_encoder *m = self;
    const samc_hiera_block *b = &m->blocks[index];
    unsigned h = 2166136261u;
    const int key[] = {b->dim, b->dim_out, b->heads, b->window, b->q_stride, block_side(m, index, false)};
    for (size_t i = 0; i < sizeof key / sizeof key[0]; i++)
        h = (h ^ (unsigned)key[i]) * 16777619u;
    return (int)(h & 0x7fffffff);
}

static samc_status ex_patch_embed(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                  samc_error *err)
{
    (void)index;
    const int64_t S = full ? ((const samc_sam2_image_encoder *)self)->image_size : 256;
    return samc_inputs_random(in, "x", seed, -2, 2, err, 4, (int64_t)1, (int64_t)3, S, S) ? SAMC_OK : SAMC_ERR_NOMEM;
}

static samc_status ex_block(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    const samc_sam2_image_encoder *m = self;
    const int64_t H = block_side(m, index, full);
    return samc_inputs_random(in, "x", seed, -2, 2, err, 4, (int64_t)1, H, H, (int64_t)m->blocks[index].dim)
               ? SAMC_OK
               : SAMC_ERR_NOMEM;
}

static samc_status ex_neck(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                           samc_error *err)
{
    (void)index;
    const samc_sam2_image_encoder *m = self;
    int64_t H = full ? m->grid : 32;
    char name[16];
    for (int i = 0; i < m->neck.n_levels; i++, H /= 2) { /* xs high -> low resolution; convs are reversed */
        snprintf(name, sizeof name, "xs.%d", i);
        const int64_t C = m->neck.convs[m->neck.n_levels - 1 - i].cin;
        if (!samc_inputs_random(in, name, seed + (uint64_t)i, -2, 2, err, 4, (int64_t)1, C, H, H))
            return SAMC_ERR_NOMEM;
    }
    return SAMC_OK;
}
