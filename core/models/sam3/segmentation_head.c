/* SPDX-License-Identifier: Apache-2.0 */
/* segmentation_head.c - the segmentation head part (sam3/model/
 * maskformer_segmentation.py UniversalSegmentationHead: the encoder's
 * visual tokens attend to the prompt, the PixelDecoder upsamples them with
 * the backbone levels, the mask predictor and the semantic head), mounted
 * at "segmentation_head": rows, weights, forward, isolated runners and
 * op-test inputs. */
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_io.h"
#include "core/models/sam3/sam3_modules.h"
#include "core/models/sam3/sam3_parts.h"

enum { CROSS, PIXEL_DECODER, HEADS, HEAD, N_ROWS };

static samc_isolated_body iso_cross, iso_pixel_decoder, iso_heads, iso_head;
static samc_status ex_cross(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_pixel_decoder(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_heads(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_head(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def rows[N_ROWS] = {
    /* memory + cross_attend_prompt(cross_attn_norm(memory), prompt) */
    [CROSS] = {.pattern = "cross_attend_prompt", .table = SAMC_OPS_SAM3,
               .body = SAMC_BODY(samc_sam3_ops, sam3_seg_cross_attend), .isolated = iso_cross, .example = ex_cross},
    [PIXEL_DECODER] = {.pattern = "pixel_decoder", .table = SAMC_OPS_SAM3,
                       .body = SAMC_BODY(samc_sam3_ops, sam3_pixel_decoder), .parity = true,
                       .isolated = iso_pixel_decoder, .example = ex_pixel_decoder},
    /* instance_seg_head, the mask predictor and semantic_seg_head */
    [HEADS] = {.pattern = "mask_predictor", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_seg_heads),
               .isolated = iso_heads, .example = ex_heads},
    [HEAD] = {.pattern = "", .parity = true, .isolated = iso_head, .example = ex_head},
};
const samc_part_def samc_sam3_segmentation_part = {"UniversalSegmentationHead", rows, N_ROWS, describe};

/* ---- weights ---------------------------------------------------------------- */

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    (void)err;
    samc_sam3_seg_head *g = self;
    const samc_sam3_seg_config *c = cfg;
    g->present = c->present;
    if (!g->present)
        return SAMC_OK;
    const int hd = g->d_model = c->hidden_dim;
    g->has_cross_attend = c->has_cross_attend;
    if (g->has_cross_attend) {
        samc__sam3_sd_mha(sd, &g->cross_attend_prompt, "cross_attend_prompt", hd, c->cross_attend_prompt.num_heads);
        samc_sd_norm(sd, &g->cross_attn_norm, "cross_attn_norm", hd, 1e-5f);
    }
    g->shared_conv = c->shared_conv;
    g->interp_nearest = true; /* the only interpolation_mode the config reader accepts */
    g->n_convs = g->shared_conv ? 1 : c->num_upsampling_stages;
    for (int i = 0; i < g->n_convs; i++) {
        samc_sd_prefix(sd, "pixel_decoder.");
        char name[32];
        snprintf(name, sizeof name, "conv_layers.%d", i);
        samc_sd_conv(sd, &g->convs[i], name, hd, hd, 3, 1, 1, 1, true);
        const float *w = samc_sd_tensor(sd, 1, (const int64_t[]){hd}, "norms.%d.weight", i);
        const float *b = samc_sd_tensor(sd, 1, (const int64_t[]){hd}, "norms.%d.bias", i);
        g->norms[i] = (samc_group_norm){w, b, hd, 8, 1e-5f}; /* nn.GroupNorm(8, hidden_dim) */
    }
    samc_sd_prefix(sd, "%s", "");
    samc_sd_conv(sd, &g->instance_seg_head, "instance_seg_head", hd, hd, 1, 1, 0, 1, true);
    samc_sd_conv(sd, &g->semantic_seg_head, "semantic_seg_head", hd, 1, 1, 1, 0, 1, true);
    samc_sd_mlp(sd, &g->mask_embed, "mask_predictor.mask_embed", hd, hd, hd, 3, false);
    return SAMC_OK;
}

/* ---- forward ------------------------------------------------------------------ */

#define OPS(L) ((const samc_sam3_ops *)(L)->ops)

static samc_status done(samc_exec *x, const samc_layer *L, samc_status st, const samc_tensor *y, samc_error *err)
{
    static const char *const slot0[] = {"0"};
    const samc_tensor *outs[] = {y};
    return samc_layer_done(x, L, NULL, st, err, y ? 1 : 0, slot0, outs);
}

samc_status samc_sam3_segmentation_forward(samc_exec *x, const samc_sam3_seg_head *s, const samc_tensor *feats,
                                           int n, const samc_tensor *obj_queries, const samc_tensor *memory,
                                           const samc_tensor *prompt, const samc_tensor *prompt_mask,
                                           samc_tensor *pred_masks, samc_tensor *semantic, samc_error *err)
{
    memset(pred_masks, 0, sizeof *pred_masks), memset(semantic, 0, sizeof *semantic);
    if (!s->present)
        return samc_fail(err, SAMC_ERR_ARG, "segmentation head: the model has none");
    const int64_t D = s->d_model;
    const samc_tensor *q = obj_queries, *ehs = memory;
    if (n < 1 || n > SAMC_SAM3_PIXDEC_MAX + 1 || feats[n - 1].ndim != 4 || feats[0].ndim != 4 || q->ndim != 4 ||
        q->shape[3] != D || ehs->ndim != 3 || ehs->shape[2] != D || q->shape[1] != ehs->shape[1] ||
        ehs->shape[0] < feats[n - 1].shape[2] * feats[n - 1].shape[3])
        return samc_fail(err, SAMC_ERR_SHAPE, "segmentation head: backbone_feats, obj_queries (L,B,Q,%lld) or "
                         "encoder_hidden_states (S,B,%lld) do not fit", (long long)D, (long long)D);
    const int64_t S = ehs->shape[0], B = ehs->shape[1], H = feats[n - 1].shape[2], W = feats[n - 1].shape[3];
    const int64_t Q = q->shape[2], H0 = feats[0].shape[2], W0 = feats[0].shape[3];
    samc_tensor ca = {0}, vis = {0}, pix = {0}, levels[SAMC_SAM3_PIXDEC_MAX + 1];
    samc_status st = samc_tensor_allocv(pred_masks, err, 4, B, Q, H0, W0);
    if (!st)
        st = samc_tensor_allocv(semantic, err, 4, B, (int64_t)1, H0, W0);
    if (!st)
        st = samc_tensor_allocv(&ca, err, 3, S, B, D);
    if (!st)
        st = samc_tensor_allocv(&vis, err, 4, B, D, H, W);
    if (!st)
        st = samc_tensor_allocv(&pix, err, 4, B, D, H0, W0);
    const samc_layer *L = samc_part_layer(x, s, &rows[CROSS], 0);
    if (!st) /* encoder_hidden_states = tgt2 + encoder_hidden_states */
        st = done(x, L, OPS(L)->sam3_seg_cross_attend(samc_layer_ctx(x, L), s, ehs, prompt, prompt_mask, &ca), NULL,
                  err);
    if (!st) { /* encoder_hidden_states.permute(1, 2, 0)[..., :H*W].reshape(-1, C, H, W) */
        for (int64_t b = 0; b < B; b++)
            for (int64_t c = 0; c < D; c++)
                for (int64_t p = 0; p < H * W; p++)
                    vis.data[(b * D + c) * H * W + p] = ca.data[(p * B + b) * D + c];
        memcpy(levels, feats, (size_t)n * sizeof *levels);
        levels[n - 1] = vis; /* backbone_visual_feats[-1] = encoder_visual_embed */
        L = samc_part_layer(x, s, &rows[PIXEL_DECODER], 0);
        st = done(x, L, OPS(L)->sam3_pixel_decoder(samc_layer_ctx(x, L), s, levels, n, &pix), &pix, err);
    }
    if (!st) { /* mask_predictor(obj_queries[-1], instance_seg_head(pixel_embed)) */
        samc_tensor last = *q;
        last.ndim = 3, last.shape[0] = B, last.shape[1] = Q, last.shape[2] = D;
        last.data = q->data + (q->shape[0] - 1) * B * Q * D;
        last.owns = false;
        L = samc_part_layer(x, s, &rows[HEADS], 0);
        st = done(x, L, OPS(L)->sam3_seg_heads(samc_layer_ctx(x, L), s, &pix, &last, pred_masks, semantic), NULL, err);
    }
    samc_tensor_release(&ca), samc_tensor_release(&vis), samc_tensor_release(&pix);
    if (st) {
        samc_tensor_release(pred_masks), samc_tensor_release(semantic);
        return st;
    }
    static const char *const names[] = {"pred_masks", "semantic_seg"};
    const samc_tensor *outs[] = {pred_masks, semantic};
    samc_layer_emit(x, samc_part_layer(x, s, &rows[HEAD], 0), NULL, 2, names, outs);
    return SAMC_OK;
}

/* ---- isolated runners ---------------------------------------------------------- */

/* The levels `prefix`0, `prefix`1, ... that the record holds (n of them). */
static void read_levels(samc_sam3_io *r, const char *prefix, samc_tensor *feats, int *n)
{
    *n = 0;
    for (int i = 0; i <= SAMC_SAM3_PIXDEC_MAX && !r->st; i++) {
        char name[48];
        snprintf(name, sizeof name, "%s%d", prefix, i);
        if (!r->io->has(r->io->user, name))
            break;
        const samc_tensor *t = samc__sam3_in(r, name, NULL);
        if (t)
            feats[(*n)++] = *t;
    }
    if (!r->st && *n == 0)
        r->st = samc_fail(r->err, SAMC_ERR_KEY, "segmentation head: no input levels (%s0, ...)", prefix);
}

static samc_status iso_cross(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *m = samc__sam3_in(&r, "memory", NULL), *p = samc__sam3_in(&r, "prompt", NULL);
    const samc_tensor *pm = samc__sam3_in_opt(&r, "prompt_mask");
    samc_tensor *y = r.st ? NULL : samc__sam3_out(&r, "0", m->ndim, m->shape);
    if (y)
        r.st = done(x, L, OPS(L)->sam3_seg_cross_attend(samc_layer_ctx(x, L), L->self, m, p, pm, y), NULL, err);
    return samc__sam3_io_end(&r);
}

static samc_status iso_pixel_decoder(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                     samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    samc_tensor feats[SAMC_SAM3_PIXDEC_MAX + 1];
    int n = 0;
    read_levels(&r, "0.", feats, &n);
    samc_tensor *y = r.st ? NULL : samc__sam3_out(&r, "0", 4, feats[0].shape);
    if (y)
        r.st = done(x, L, OPS(L)->sam3_pixel_decoder(samc_layer_ctx(x, L), L->self, feats, n, y), NULL, err);
    return samc__sam3_io_end(&r);
}

/* The pixel embedding "pixel" (B,d,H,W) and the queries (B,Q,d): masks "0", semantic "1". */
static samc_status iso_heads(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *pix = samc__sam3_in(&r, "pixel", NULL), *q = samc__sam3_in(&r, "queries", NULL);
    if (pix && q && (pix->ndim != 4 || q->ndim != 3))
        samc__sam3_io_shape(&r, "%s: pixel (B,d,H,W) and queries (B,Q,d) expected", L->name);
    samc_tensor *m = r.st ? NULL : samc__sam3_out_v(&r, "0", 4, pix->shape[0], q->shape[1], pix->shape[2], pix->shape[3]);
    samc_tensor *s = r.st ? NULL : samc__sam3_out_v(&r, "1", 4, pix->shape[0], (int64_t)1, pix->shape[2], pix->shape[3]);
    if (s)
        r.st = done(x, L, OPS(L)->sam3_seg_heads(samc_layer_ctx(x, L), L->self, pix, q, m, s), NULL, err);
    return samc__sam3_io_end(&r);
}

static samc_status iso_head(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                            samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    samc_tensor feats[SAMC_SAM3_PIXDEC_MAX + 1];
    int n = 0;
    read_levels(&r, "backbone_feats.", feats, &n);
    const samc_tensor *q = samc__sam3_in(&r, "obj_queries", "1");
    const samc_tensor *ehs = samc__sam3_in(&r, "encoder_hidden_states", NULL), *p = samc__sam3_in(&r, "prompt", NULL);
    const samc_tensor *pm = samc__sam3_in_opt(&r, "prompt_mask");
    samc_tensor masks = {0}, sem = {0};
    samc_capture cap;
    samc_capture_begin(x, &cap, L->name, out);
    if (!r.st)
        r.st = samc_sam3_segmentation_forward(x, L->self, feats, n, q, ehs, p, pm, &masks, &sem, err);
    samc_capture_end(x, &cap);
    samc_tensor_release(&masks), samc_tensor_release(&sem);
    return samc__sam3_io_end(&r);
}

/* ---- op-test inputs --------------------------------------------------------------- */

/* The side of the lowest-resolution level: reduced, half the model's. */
static int64_t base_side(const samc_sam3_seg_head *s, bool full)
{
    return full || s->feat_side < 4 ? s->feat_side : s->feat_side / 2;
}

static samc_status ex_cross(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index;
    const samc_sam3_seg_head *s = self;
    const int64_t S = base_side(s, full) * base_side(s, full);
    SAMC_INPUT_RANDOM("memory", -2, 2, 3, S, (int64_t)1, (int64_t)s->d_model);
    return samc__sam3_example_prompt(in, "prompt", "prompt_mask", s->d_model, false, &seed, err);
}

/* The three levels the released head takes: 4, 2 and 1 times the base
 * side, named `prefix`0.. */
static samc_status levels(const samc_sam3_seg_head *s, bool full, const char *prefix, uint64_t *seed,
                          samc_layer_inputs *in, samc_error *err)
{
    for (int i = 0; i < 3; i++) {
        char name[48];
        snprintf(name, sizeof name, "%s%d", prefix, i);
        const int64_t side = base_side(s, full) << (2 - i);
        if (!samc_inputs_random(in, name, (*seed)++, -2, 2, err, 4, (int64_t)1, (int64_t)s->d_model, side, side))
            return SAMC_ERR_NOMEM;
    }
    return SAMC_OK;
}

static samc_status ex_pixel_decoder(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                    samc_error *err)
{
    (void)index;
    return levels(self, full, "0.", &seed, in, err);
}

static samc_status ex_heads(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index;
    const samc_sam3_seg_head *s = self;
    const int64_t side = base_side(s, full) * 4;
    SAMC_INPUT_RANDOM("pixel", -2, 2, 4, (int64_t)1, (int64_t)s->d_model, side, side);
    SAMC_INPUT_RANDOM("queries", -2, 2, 3, (int64_t)1, (int64_t)200, (int64_t)s->d_model);
    return SAMC_OK;
}

static samc_status ex_head(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                           samc_error *err)
{
    (void)index;
    const samc_sam3_seg_head *s = self;
    const int64_t S = base_side(s, full) * base_side(s, full), D = s->d_model;
    samc_status st = levels(s, full, "backbone_feats.", &seed, in, err);
    if (st)
        return st;
    SAMC_INPUT_RANDOM("obj_queries", -2, 2, 4, (int64_t)6, (int64_t)1, (int64_t)200, D);
    SAMC_INPUT_RANDOM("encoder_hidden_states", -2, 2, 3, S, (int64_t)1, D);
    return samc__sam3_example_prompt(in, "prompt", "prompt_mask", D, false, &seed, err);
}
