/* sam3_runners.c - isolated runners of the SAM 3 image parity points, and the
 * composite forwards they need (trunk, vision backbone, text encoder,
 * geometry encoder, fusion encoder, decoder, segmentation head), each
 * written after the official forward it replays and calling layers only
 * through the bodies the exec resolved for each layer. */
#include "core/models/sam3/sam3_runners.h"

#include <stddef.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/position_encoding.h"
#include "core/nn/box_geom.h"
#include "core/text/clip_tokenizer.h"

static const samc_layer_def defs[S3_N_ROWS]; /* the registry, at the end */

/* ---- plumbing --------------------------------------------------------------- */

#define MAX_IN 24

/* Inputs read for one run (released at the end) and the context whose err
 * points at the caller's error record for the duration of the run. */
typedef struct run {
    samc_exec *x;
    const samc_sam3_model *m;
    const samc_layer_io *io;
    samc_layer_out *out;
    samc_error *err;
    samc_ctx *ctx;             /* the exec's context (one per exec) */
    samc_error *saved;
    samc_tensor in[MAX_IN];
    int n_in;
    samc_tensor tmp[MAX_IN];
    int n_tmp;
} run;

static void run_begin(run *r, samc_exec *x, const samc_layer_io *io, samc_layer_out *out, samc_error *err)
{
    memset(r, 0, sizeof *r);
    r->x = x, r->m = x->model, r->io = io, r->out = out, r->err = err;
    r->ctx = &x->ctx;
    r->saved = r->ctx->err;
    r->ctx->err = err;
}

/* The bodies serving instance `index` of row `row` (the implementation
 * resolved for that layer name, overrides included), with the context
 * prepared for them; bodies report to the runner's error record. */
static const samc_sam3_ops *body(run *r, int row, int index)
{
    const samc_layer *L = samc_part_layer(r->x, r->x->model, &defs[row], index);
    samc_layer_ctx(r->x, L);
    r->ctx->err = r->err;
    return L->ops;
}

/* A sub-step's outputs to the trace under its layer name (chained runs; a
 * runner called alone has no trace). */
static void emit(run *r, int row, int index, int n, const char *const *slots, const samc_tensor *const *t)
{
    if (r->x->trace)
        samc_layer_emit(r->x, samc_part_layer(r->x, r->x->model, &defs[row], index), &samc_no_scope, n, slots, t);
}

static void emit1(run *r, int row, int index, const samc_tensor *t)
{
    static const char *const slot0[] = {"0"};
    emit(r, row, index, 1, slot0, &t);
}

static samc_status run_end(run *r, samc_status st)
{
    for (int i = 0; i < r->n_in; i++)
        samc_tensor_release(&r->in[i]);
    for (int i = 0; i < r->n_tmp; i++)
        samc_tensor_release(&r->tmp[i]);
    r->ctx->err = r->saved;
    return st;
}

/* A required tensor input (in/<name>, else in/<pos>). */
static samc_tensor *in_t(run *r, const char *name, const char *pos, samc_status *st)
{
    if (*st)
        return NULL;
    if (r->n_in == MAX_IN) {
        *st = samc_fail(r->err, SAMC_ERR_INTERNAL, "runner: too many inputs");
        return NULL;
    }
    samc_tensor *t = &r->in[r->n_in];
    *st = r->io->tensor(r->io->user, name, pos, t, r->err);
    if (*st)
        return NULL;
    r->n_in++;
    return t;
}

/* An optional tensor input: NULL when absent or None. */
static samc_tensor *in_opt(run *r, const char *name, samc_status *st)
{
    if (*st || !r->io->has(r->io->user, name))
        return NULL;
    double v;
    bool none = false;
    if (r->io->scalar(r->io->user, name, NULL, &v, &none, NULL) == SAMC_OK)
        return NULL; /* a scalar (None): not a tensor */
    return in_t(r, name, NULL, st);
}

static double in_num(run *r, const char *name, const char *pos, samc_status *st)
{
    double v = 0;
    bool none = false;
    if (*st)
        return 0;
    *st = r->io->scalar(r->io->user, name, pos, &v, &none, r->err);
    if (!*st && none)
        *st = samc_fail(r->err, SAMC_ERR_ARG, "runner: input '%s' is None", name);
    return v;
}

static samc_tensor *alloc_into(run *r, samc_tensor *t, samc_status *st, int nd, const int64_t *shape)
{
    *st = samc_tensor_alloc(t, nd, shape, r->err);
    return *st ? NULL : t;
}

/* A new output slot of the given shape. */
static samc_tensor *out_a(run *r, const char *name, samc_status *st, int nd, const int64_t *shape)
{
    if (*st)
        return NULL;
    samc_tensor *t = samc_layer_out_slot(r->out, name);
    if (!t) {
        *st = samc_fail(r->err, SAMC_ERR_INTERNAL, "runner: too many output slots");
        return NULL;
    }
    t = alloc_into(r, t, st, nd, shape);
    if (*st) /* give the slot back */
        r->out->n--;
    return t;
}

/* A scratch tensor released at run_end. */
static samc_tensor *tmp_a(run *r, samc_status *st, int nd, const int64_t *shape)
{
    if (*st)
        return NULL;
    if (r->n_tmp == MAX_IN) {
        *st = samc_fail(r->err, SAMC_ERR_INTERNAL, "runner: too many temporaries");
        return NULL;
    }
    samc_tensor *t = alloc_into(r, &r->tmp[r->n_tmp], st, nd, shape);
    if (!*st)
        r->n_tmp++;
    return t;
}

#define out_t(r, name, st, nd, ...) out_a((r), (name), (st), (nd), (const int64_t[]){__VA_ARGS__})
#define tmp_t(r, st, nd, ...) tmp_a((r), (st), (nd), (const int64_t[]){__VA_ARGS__})

#define I64(x) ((int64_t)(x))

/* Output size of a convolution along one axis. */
static int conv_out(int in, int k, int stride, int pad)
{
    return (in + 2 * pad - k) / stride + 1;
}

static samc_status index_ok(int index, int n, const char *what, samc_error *err)
{
    return index >= 0 && index < n ? SAMC_OK
                                   : samc_fail(err, SAMC_ERR_ARG, "runner: %s %d of %d", what, index, n);
}

/* ---- composites ------------------------------------------------------------- */

/* ViT.forward: image (B,3,S,S) -> (B,C,h,w) after block full_attn_ids[-1]. */
static samc_status trunk_forward(run *r, const samc_tensor *img, samc_tensor *nchw)
{
    const samc_sam3_model *m = r->m;
    samc_status st = SAMC_OK;
    const samc_conv2d *p = &m->vit_embed.patch;
    if (img->ndim != 4)
        return samc_fail(r->err, SAMC_ERR_SHAPE, "trunk: image is not (B,3,S,S)");
    const int64_t B = img->shape[0], C = p->cout;
    const int64_t h = conv_out((int)img->shape[2], p->kh, p->stride, p->pad);
    const int64_t w = conv_out((int)img->shape[3], p->kw, p->stride, p->pad);
    samc_tensor *a = tmp_t(r, &st, 4, B, h, w, C), *b = tmp_t(r, &st, 4, B, h, w, C);
    if (st)
        return st;
    if ((st = body(r, S3_PATCH_EMBED, 0)->vit_patch_embed(r->ctx, &m->vit_embed, img, a)))
        return st;
    emit1(r, S3_PATCH_EMBED, 0, a);
    if ((st = body(r, S3_LN_PRE, 0)->vit_pos_ln_pre(r->ctx, &m->vit_embed, a, b)))
        return st;
    for (int i = 0; i <= m->last_block; i++) {
        if ((st = body(r, S3_BLOCK, i)->vit_block(r->ctx, &m->blocks[i], b, a)))
            return samc_fail(r->err, st, "trunk.blocks.%d", i);
        emit1(r, S3_BLOCK, i, a);
        samc_tensor t = *a;
        *a = *b, *b = t;
        if ((st = samc_exec_check_abort(r->x, samc_part_layer(r->x, r->x->model, &defs[S3_BLOCK], i)->name, r->err)))
            return st;
    }
    if (nchw->ndim != 4 || nchw->shape[0] != B || nchw->shape[1] != C || nchw->shape[2] != h ||
        nchw->shape[3] != w)
        return samc_fail(r->err, SAMC_ERR_INTERNAL, "trunk: output shape");
    for (int64_t bb = 0; bb < B; bb++) /* feats.permute(0, 3, 1, 2) */
        for (int64_t q = 0; q < h * w; q++)
            for (int64_t c = 0; c < C; c++)
                nchw->data[(bb * C + c) * h * w + q] = b->data[(bb * h * w + q) * C + c];
    return SAMC_OK;
}

/* Output size of neck level i for an h x w trunk map. */
static void level_size(const samc_sam3_neck_level *l, int64_t h, int64_t w, int64_t *H, int64_t *W)
{
    const float s = l->scale;
    *H = s == 4.0f ? 4 * h : s == 2.0f ? 2 * h : s == 0.5f ? h / 2 : h;
    *W = s == 4.0f ? 4 * w : s == 2.0f ? 2 * w : s == 0.5f ? w / 2 : w;
}

/* position_encoding(x) for a (B, d, H, W) level: one map repeated per image. */
static samc_status sine_pe(const samc_sine_pe *pe, samc_tensor *pos, samc_error *err)
{
    const int64_t B = pos->shape[0], per = pos->shape[1] * pos->shape[2] * pos->shape[3];
    samc_status st = samc_sine_pe_fill(pe, (int)pos->shape[2], (int)pos->shape[3], pos->data);
    for (int64_t b = 1; b < B && !st; b++)
        memcpy(pos->data + b * per, pos->data, (size_t)per * sizeof *pos->data);
    return st ? samc_fail(err, st, "sine position encoding") : SAMC_OK;
}

/* TextTransformer.forward: ids (B,L) -> proj (B,L,P) [optional], tokens (B,L,W). */
static samc_status text_forward(run *r, const samc_tensor *ids, samc_tensor *proj, samc_tensor *tokens)
{
    const samc_sam3_model *m = r->m;
    const samc_sam3_text_encoder *t = &m->text;
    samc_status st = SAMC_OK;
    if (ids->ndim != 2)
        return samc_fail(r->err, SAMC_ERR_SHAPE, "text encoder: ids are not (B,L)");
    const int64_t B = ids->shape[0], L = ids->shape[1];
    samc_tensor *a = tmp_t(r, &st, 3, B, L, I64(t->width)), *b = tmp_t(r, &st, 3, B, L, I64(t->width));
    samc_tensor *mask = t->causal ? tmp_t(r, &st, 2, L, L) : NULL;
    if (st)
        return st;
    for (int64_t i = 0; i < L && mask; i++) /* build_causal_mask()[:L, :L]: -inf above the diagonal */
        for (int64_t j = 0; j < L; j++)
            mask->data[i * L + j] = j > i ? -INFINITY : 0.0f;
    if ((st = body(r, S3_TEXT_EMBED, 0)->text_embed(r->ctx, t, ids, a)))
        return st;
    for (int i = 0; i < t->n_layers; i++) {
        if ((st = body(r, S3_TEXT_BLOCK, i)->text_block(r->ctx, &t->layers[i], a, mask, b)))
            return samc_fail(r->err, st, "text resblocks.%d", i);
        emit1(r, S3_TEXT_BLOCK, i, b);
        samc_tensor x = *a;
        *a = *b, *b = x;
    }
    return body(r, S3_TEXT_FINAL, 0)->text_final(r->ctx, t, a, tokens, proj);
}

/* ---- runners: vision ----------------------------------------------------------- */

samc_status samc_sam3_run_preprocess(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    samc_tensor *img = in_t(&r, "0", NULL, &st);
    if (!st && (img->ndim != 3 || img->shape[2] != 3))
        st = samc_fail(err, SAMC_ERR_SHAPE, "@preprocess: image is not (H,W,3)");
    uint8_t *u8 = NULL;
    if (!st) {
        const int64_t n = samc_numel(img);
        u8 = malloc((size_t)(n ? n : 1));
        if (!u8)
            st = samc_fail(err, SAMC_ERR_NOMEM, "@preprocess: image copy");
        for (int64_t i = 0; i < n && u8; i++) {
            const float v = img->data[i];
            u8[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    samc_tensor *y = out_t(&r, "0", &st, 4, I64(1), I64(3), I64(m->resolution), I64(m->resolution));
    if (!st)
        st = body(&r, S3_PREPROCESS, 0)->preprocess(r.ctx, u8, (int)img->shape[0], (int)img->shape[1], m->resolution, y);
    free(u8);
    return run_end(&r, st);
}

samc_status samc_sam3_run_patch_embed(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    samc_tensor *x = in_t(&r, "0", NULL, &st);
    const samc_conv2d *p = &m->vit_embed.patch;
    if (!st && x->ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "patch_embed: input is not 4-D");
    samc_tensor *y = st ? NULL
                        : out_t(&r, "0", &st, 4, x->shape[0],
                                I64(conv_out((int)x->shape[2], p->kh, p->stride, p->pad)),
                                I64(conv_out((int)x->shape[3], p->kw, p->stride, p->pad)),
                                I64(p->cout));
    if (!st)
        st = body(&r, S3_PATCH_EMBED, 0)->vit_patch_embed(r.ctx, &m->vit_embed, x, y);
    return run_end(&r, st);
}

samc_status samc_sam3_run_vit_block(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = index_ok(index, m->n_blocks, "ViT block", err);
    if (st)
        return st;
    run_begin(&r, ex, io, out, err);
    samc_tensor *x = in_t(&r, "0", NULL, &st);
    samc_tensor *y = st ? NULL : out_t(&r, "0", &st, 4, x->shape[0], x->shape[1], x->shape[2], x->shape[3]);
    if (!st && x->ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "ViT block: input is not 4-D");
    if (!st)
        st = body(&r, S3_BLOCK, index)->vit_block(r.ctx, &m->blocks[index], x, y);
    return run_end(&r, st);
}

/* (B, C, h, w) of the trunk output for an image x. */
static samc_status trunk_shape(const samc_sam3_model *m, const samc_tensor *x, int64_t *s, samc_error *err)
{
    const samc_conv2d *p = &m->vit_embed.patch;
    if (x->ndim != 4 || x->shape[1] != p->cin)
        return samc_fail(err, SAMC_ERR_SHAPE, "trunk: image is not (B,%d,S,S)", p->cin);
    s[0] = x->shape[0], s[1] = p->cout;
    s[2] = conv_out((int)x->shape[2], p->kh, p->stride, p->pad);
    s[3] = conv_out((int)x->shape[3], p->kw, p->stride, p->pad);
    return SAMC_OK;
}

samc_status samc_sam3_run_trunk(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    int64_t s[4] = {0, 0, 0, 0};
    samc_tensor *x = in_t(&r, "0", NULL, &st);
    if (!st)
        st = trunk_shape(m, x, s, err);
    samc_tensor *y = out_t(&r, "0", &st, 4, s[0], s[1], s[2], s[3]);
    if (!st)
        st = trunk_forward(&r, x, y);
    return run_end(&r, st);
}

samc_status samc_sam3_run_neck_level(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = index_ok(index, m->neck.n_levels, "neck level", err);
    if (st)
        return st;
    run_begin(&r, ex, io, out, err);
    samc_tensor *x = in_t(&r, "0", NULL, &st);
    if (!st && x->ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "neck level: input is not 4-D");
    int64_t H = 0, W = 0;
    if (!st)
        level_size(&m->neck.levels[index], x->shape[2], x->shape[3], &H, &W);
    samc_tensor *y = st ? NULL : out_t(&r, "0", &st, 4, x->shape[0], I64(m->neck.d_model), H, W);
    if (!st)
        st = body(&r, S3_NECK, index)->neck_level(r.ctx, &m->neck.levels[index], x, y);
    return run_end(&r, st);
}

samc_status samc_sam3_run_sam2_neck_level(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    const samc_sam3_model *m = ex->model;
    if (!m->has_sam2_neck)
        return samc_fail(err, SAMC_ERR_ARG, "sam2_convs: the model has no SAM 2 neck (add_sam2_neck)");
    run r;
    samc_status st = index_ok(index, m->sam2_neck.n_levels, "sam2_convs level", err);
    if (st)
        return st;
    run_begin(&r, ex, io, out, err);
    samc_tensor *x = in_t(&r, "0", NULL, &st);
    if (!st && x->ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "sam2_convs level: input is not 4-D");
    int64_t H = 0, W = 0;
    if (!st)
        level_size(&m->sam2_neck.levels[index], x->shape[2], x->shape[3], &H, &W);
    samc_tensor *y = st ? NULL : out_t(&r, "0", &st, 4, x->shape[0], I64(m->sam2_neck.d_model), H, W);
    if (!st)
        st = body(&r, S3_SAM2_NECK, index)->neck_level(r.ctx, &m->sam2_neck.levels[index], x, y);
    return run_end(&r, st);
}

samc_status samc_sam3_run_vision_backbone(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    int64_t s[4] = {0, 0, 0, 0};
    samc_tensor *x = in_t(&r, "0", NULL, &st);
    if (!st)
        st = trunk_shape(m, x, s, err);
    samc_tensor *feat = tmp_t(&r, &st, 4, s[0], s[1], s[2], s[3]);
    if (!st)
        st = trunk_forward(&r, x, feat);
    if (!st)
        emit1(&r, S3_TRUNK, 0, feat);
    const samc_sam3_neck *nk = &m->neck;
    samc_tensor *lv[SAMC_SAM3_NECK_MAX] = {0};
    for (int i = 0; i < nk->n_levels && !st; i++) { /* sam3_out[i] = convs[i](x) */
        char name[16];
        int64_t H, W;
        level_size(&nk->levels[i], s[2], s[3], &H, &W);
        snprintf(name, sizeof name, "0.%d", i);
        lv[i] = out_t(&r, name, &st, 4, s[0], I64(nk->d_model), H, W);
        if (!st)
            st = body(&r, S3_NECK, i)->neck_level(r.ctx, &nk->levels[i], feat, lv[i]);
        if (!st)
            emit1(&r, S3_NECK, i, lv[i]);
    }
    for (int i = 0; i < nk->n_levels && !st; i++) { /* sam3_pos[i] = position_encoding(out) */
        char name[16];
        snprintf(name, sizeof name, "1.%d", i);
        samc_tensor *pos = out_t(&r, name, &st, 4, lv[i]->shape[0], lv[i]->shape[1],
                                 lv[i]->shape[2], lv[i]->shape[3]);
        if (!st)
            st = sine_pe(&nk->pe, pos, err);
    }
    /* sam2_out / sam2_pos (add_sam2_neck): out-slots 2.i and 3.i, else None */
    const samc_sam3_neck *n2 = &m->sam2_neck;
    for (int i = 0; i < n2->n_levels && m->has_sam2_neck && !st; i++) {
        char name[16];
        int64_t H, W;
        level_size(&n2->levels[i], s[2], s[3], &H, &W);
        snprintf(name, sizeof name, "2.%d", i);
        samc_tensor *o = out_t(&r, name, &st, 4, s[0], I64(n2->d_model), H, W);
        if (!st)
            st = body(&r, S3_SAM2_NECK, i)->neck_level(r.ctx, &n2->levels[i], feat, o);
        snprintf(name, sizeof name, "3.%d", i);
        samc_tensor *pos = out_t(&r, name, &st, 4, s[0], I64(n2->d_model), H, W);
        if (!st)
            st = sine_pe(&n2->pe, pos, err);
    }
    return run_end(&r, st);
}

/* ---- runners: text ------------------------------------------------------------- */

samc_status samc_sam3_tokenize(samc_exec *ex, const char *text, int context_length, samc_tensor *ids,
                               samc_error *err)
{
    const samc_sam3_model *m = ex->model;
    if (!m->tok)
        return samc_fail(err, SAMC_ERR_ARG, "@tokenize: no vocabulary loaded (bpe_simple_vocab_16e6.txt.gz)");
    if (context_length < 2 || context_length > m->text.context_length)
        return samc_fail(err, SAMC_ERR_ARG, "@tokenize: context length %d (the model has %d)", context_length,
                         m->text.context_length);
    int64_t raw[512];
    samc_status st = samc_clip_tokenizer_encode(m->tok, text, context_length, raw, NULL, NULL, err);
    if (!st)
        st = samc_tensor_allocv(ids, err, 2, I64(1), I64(context_length));
    for (int i = 0; i < context_length && !st; i++)
        ids->data[i] = (float)raw[i];
    if (!st && ex->trace) {
        static const char *const slot0[] = {"0"};
        const samc_tensor *t = ids;
        samc_layer_emit(ex, samc_part_layer(ex, ex->model, &defs[S3_TOKENIZE], 0), &samc_no_scope, 1, slot0, &t);
    }
    return st;
}

samc_status samc_sam3_run_tokenize(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                   samc_error *err)
{
    const int index = layer->index;
    (void)index;
    char *text = NULL;
    double ctx = 0;
    bool none = false;
    samc_status st = io->string(io->user, "0", NULL, &text, err);
    if (!st)
        st = io->scalar(io->user, "context_length", NULL, &ctx, &none, err);
    if (!st && (none || ctx < 2 || ctx > 512))
        st = samc_fail(err, SAMC_ERR_ARG, "@tokenize: bad context_length");
    samc_tensor *ids = st ? NULL : samc_layer_out_slot(out, "0");
    if (!st && !ids)
        st = samc_fail(err, SAMC_ERR_INTERNAL, "@tokenize: no output slot");
    if (!st) {
        samc_trace_fn saved = ex->trace; /* run alone: nothing to trace */
        ex->trace = NULL;
        st = samc_sam3_tokenize(ex, text, (int)ctx, ids, err);
        ex->trace = saved;
    }
    free(text);
    return st;
}

samc_status samc_sam3_run_text_block(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = index_ok(index, m->text.n_layers, "text block", err);
    if (st)
        return st;
    run_begin(&r, ex, io, out, err);
    samc_tensor *x = in_t(&r, "q_x", "0", &st);
    samc_tensor *mask = in_opt(&r, "attn_mask", &st);
    samc_tensor *y = (st || x->ndim != 3) ? NULL : out_t(&r, "0", &st, 3, x->shape[0], x->shape[1], x->shape[2]);
    if (!st && !y)
        st = samc_fail(err, SAMC_ERR_SHAPE, "text block: input is not (B,L,W)");
    if (!st)
        st = body(&r, S3_TEXT_BLOCK, index)->text_block(r.ctx, &m->text.layers[index], x, mask, y);
    return run_end(&r, st);
}

samc_status samc_sam3_run_text_encoder(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    samc_tensor *ids = in_t(&r, "text", "0", &st);
    if (!st && ids->ndim != 2)
        st = samc_fail(err, SAMC_ERR_SHAPE, "text encoder: ids are not (B,L)");
    const samc_sam3_text_encoder *t = &m->text;
    samc_tensor *proj = st ? NULL : out_t(&r, "0", &st, 3, ids->shape[0], ids->shape[1], I64(t->proj_dim));
    samc_tensor *tok = st ? NULL : out_t(&r, "1", &st, 3, ids->shape[0], ids->shape[1], I64(t->width));
    if (!st)
        st = text_forward(&r, ids, proj, tok);
    return run_end(&r, st);
}

samc_status samc_sam3_run_language_backbone(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    const samc_sam3_text_encoder *t = &m->text;
    samc_tensor *ids = in_t(&r, "input_ids", NULL, &st);
    if (!st && ids->ndim != 2)
        st = samc_fail(err, SAMC_ERR_SHAPE, "language backbone: ids are not (B,L)");
    const int64_t B = st ? 0 : ids->shape[0], L = st ? 0 : ids->shape[1];
    samc_tensor *mask = out_t(&r, "0", &st, 2, B, L);
    samc_tensor *mem = out_t(&r, "1", &st, 3, L, B, I64(t->resizer.out));
    samc_tensor *emb = out_t(&r, "2", &st, 3, L, B, I64(t->width));
    samc_tensor *tok = tmp_t(&r, &st, 3, B, L, I64(t->width));
    samc_tensor *proj = r.x->trace ? tmp_t(&r, &st, 3, B, L, I64(t->proj_dim)) : NULL;
    if (!st)
        st = text_forward(&r, ids, proj, tok);
    if (!st && proj) { /* the encoder's outputs: the projection (unused downstream) and the tokens */
        static const char *const slots[] = {"0", "1"};
        const samc_tensor *ts[] = {proj, tok};
        emit(&r, S3_TEXT_ENCODER, 0, 2, slots, ts);
    }
    if (!st)
        st = body(&r, S3_TEXT_RESIZE, 0)->text_resize(r.ctx, t, tok, mem); /* resizer(text_memory.transpose(0, 1)) */
    for (int64_t b = 0; b < B && !st; b++)
        for (int64_t l = 0; l < L; l++) {
            const float id = ids->data[b * L + l];
            mask->data[b * L + l] = id == 0.0f ? 1.0f : 0.0f; /* (tokenized != 0).ne(1) */
            /* inputs_embeds = token_embedding(tokenized), returned seq-first */
            memcpy(emb->data + (l * B + b) * t->width, t->token_embedding + (int64_t)id * t->width,
                   (size_t)t->width * sizeof *emb->data);
        }
    return run_end(&r, st);
}

/* ---- runners: geometry encoder, fusion encoder ------------------------------------ */

samc_status samc_sam3_run_geo_layer(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = index_ok(index, m->geo.n_layers, "geometry encoder layer", err);
    if (st)
        return st;
    run_begin(&r, ex, io, out, err);
    samc_tensor *tgt = in_t(&r, "tgt", "0", &st);
    samc_tensor *mem = in_t(&r, "memory", "1", &st);
    samc_tensor *tkpm = in_opt(&r, "tgt_key_padding_mask", &st);
    samc_tensor *mkpm = in_opt(&r, "memory_key_padding_mask", &st);
    samc_tensor *pos = in_opt(&r, "pos", &st);
    samc_tensor *qpos = in_opt(&r, "query_pos", &st);
    samc_tensor *y = (st || tgt->ndim != 3) ? NULL : out_t(&r, "0", &st, 3, tgt->shape[0], tgt->shape[1], tgt->shape[2]);
    if (!st && !y)
        st = samc_fail(err, SAMC_ERR_SHAPE, "geometry encoder layer: tgt is not 3-D");
    if (!st)
        st = body(&r, S3_GEO_LAYER, index)->enc_layer(r.ctx, &m->geo.layers[index], tgt, mem, tkpm, mkpm, pos, qpos, y);
    return run_end(&r, st);
}

samc_status samc_sam3_run_geometry_encoder(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    const samc_sam3_geometry_encoder *g = &m->geo;
    samc_tensor *pts = in_opt(&r, "geo_prompt.point_embeddings", &st);
    samc_tensor *pmask = in_opt(&r, "geo_prompt.point_mask", &st);
    samc_tensor *plab = in_opt(&r, "geo_prompt.point_labels", &st);
    samc_tensor *box = in_opt(&r, "geo_prompt.box_embeddings", &st);
    samc_tensor *bmask = in_opt(&r, "geo_prompt.box_mask", &st);
    samc_tensor *blab = in_opt(&r, "geo_prompt.box_labels", &st);
    samc_tensor *img = in_t(&r, "img_feats.0", NULL, &st);
    samc_tensor *ipos = in_opt(&r, "img_pos_embeds.0", &st);
    const int H = (int)in_num(&r, "img_sizes.0.0", NULL, &st);
    const int W = (int)in_num(&r, "img_sizes.0.1", NULL, &st);
    if (!st && (img->ndim != 3 || img->shape[0] != (int64_t)H * W))
        st = samc_fail(err, SAMC_ERR_SHAPE, "geometry encoder: img_feats is not (%d,B,C)", H * W);
    if (!st && r.io->has(r.io->user, "geo_prompt.mask_embeddings") &&
        in_opt(&r, "geo_prompt.mask_embeddings", &st))
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "geometry encoder: mask prompts (no mask encoder is built)");
    const int64_t B = st ? 0 : img->shape[1];
    const int64_t Np = (pts && samc_numel(pts)) ? pts->shape[0] : 0;
    const int64_t Nb = (box && samc_numel(box)) ? box->shape[0] : 0;
    const int64_t N = Np + Nb + (g->cls_embed ? 1 : 0);
    samc_tensor *e = out_t(&r, "0", &st, 3, N, B, I64(g->d_model));
    samc_tensor *mk = out_t(&r, "1", &st, 2, B, N);
    samc_tensor *a = tmp_t(&r, &st, 3, N, B, I64(g->d_model));
    samc_tensor *zpos = (!st && !ipos) ? tmp_t(&r, &st, 3, img->shape[0], B, img->shape[2]) : NULL;
    if (!st)
        st = body(&r, S3_GEO_PROMPT, 0)->geo_prompt(r.ctx, g, pts, pmask, plab, box, bmask, blab, img, H, W, a, mk);
    /* encode layers (tgt_key_padding_mask = final_mask, pos = img_pos_embeds or zeros), encode_norm */
    for (int i = 0; i < g->n_layers && !st; i++) {
        if ((st = body(&r, S3_GEO_LAYER, i)->enc_layer(r.ctx, &g->layers[i], a, img, mk, NULL, ipos ? ipos : zpos, NULL, e)))
            st = samc_fail(err, st, "geometry_encoder.encode.%d", i);
        else
            memcpy(a->data, e->data, (size_t)samc_numel(e) * sizeof *a->data), emit1(&r, S3_GEO_LAYER, i, a);
    }
    if (!st)
        st = g->n_layers > 0 ? body(&r, S3_GEO_NORM, 0)->layer_norm(r.ctx, &g->encode_norm, a, e)
                             : (memcpy(e->data, a->data, (size_t)samc_numel(e) * sizeof *e->data), SAMC_OK);
    return run_end(&r, st);
}

samc_status samc_sam3_run_enc_layer(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = index_ok(index, m->enc.n_layers, "encoder layer", err);
    if (st)
        return st;
    run_begin(&r, ex, io, out, err);
    samc_tensor *tgt = in_t(&r, "tgt", "0", &st);
    samc_tensor *mem = in_t(&r, "memory", "1", &st);
    samc_tensor *tkpm = in_opt(&r, "tgt_key_padding_mask", &st);
    samc_tensor *mkpm = in_opt(&r, "memory_key_padding_mask", &st);
    samc_tensor *pos = in_opt(&r, "pos", &st);
    samc_tensor *qpos = in_opt(&r, "query_pos", &st);
    samc_tensor *y = (st || tgt->ndim != 3) ? NULL : out_t(&r, "0", &st, 3, tgt->shape[0], tgt->shape[1], tgt->shape[2]);
    if (!st && !y)
        st = samc_fail(err, SAMC_ERR_SHAPE, "encoder layer: tgt is not 3-D");
    if (!st)
        st = body(&r, S3_ENC_LAYER, index)->enc_layer(r.ctx, &m->enc.layers[index], tgt, mem, tkpm, mkpm, pos, qpos, y);
    return run_end(&r, st);
}

/* (S, B, C) seq-first <-> (B, S, C) batch-first. */
static void seq_to_batch(const float *s, int64_t S, int64_t B, int64_t C, float *b)
{
    for (int64_t i = 0; i < S; i++)
        for (int64_t bb = 0; bb < B; bb++)
            memcpy(b + (bb * S + i) * C, s + (i * B + bb) * C, (size_t)C * sizeof *b);
}

static void batch_to_seq(const float *b, int64_t S, int64_t B, int64_t C, float *s)
{
    for (int64_t i = 0; i < S; i++)
        for (int64_t bb = 0; bb < B; bb++)
            memcpy(s + (i * B + bb) * C, b + (bb * S + i) * C, (size_t)C * sizeof *s);
}

samc_status samc_sam3_run_fusion_encoder(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    const samc_sam3_fusion_encoder *enc = &m->enc;
    samc_tensor *src = in_t(&r, "src.0", NULL, &st);
    samc_tensor *spos = in_t(&r, "src_pos.0", NULL, &st);
    samc_tensor *prompt = in_t(&r, "prompt", "1", &st);
    samc_tensor *pmask = in_opt(&r, "prompt_key_padding_mask", &st);
    const int64_t H = (int64_t)in_num(&r, "feat_sizes.0.0", NULL, &st);
    const int64_t W = (int64_t)in_num(&r, "feat_sizes.0.1", NULL, &st);
    const int64_t C = enc->d_model;
    if (!st && (src->ndim != 3 || src->shape[0] != H * W || src->shape[2] != C ||
                !samc_tensor_same_shape(src, spos) || prompt->ndim != 3 ||
                prompt->shape[1] != src->shape[1] || prompt->shape[2] != C))
        st = samc_fail(err, SAMC_ERR_SHAPE, "fusion encoder: src/src_pos (%lld,B,%lld), prompt (T,B,%lld) expected",
                       (long long)(H * W), (long long)C, (long long)C);
    const int64_t S = H * W, B = st ? 0 : src->shape[1], T = st ? 0 : prompt->shape[0];
    samc_tensor *x = tmp_t(&r, &st, 3, B, S, C), *y = tmp_t(&r, &st, 3, B, S, C);
    samc_tensor *qp = tmp_t(&r, &st, 3, B, S, C), *pm = tmp_t(&r, &st, 3, B, T, C);
    if (!st) { /* src.reshape(h, w, bs, -1).permute(2, 3, 0, 1) then flatten(2).transpose(1, 2) */
        seq_to_batch(src->data, S, B, C, x->data);
        seq_to_batch(spos->data, S, B, C, qp->data);
        seq_to_batch(prompt->data, T, B, C, pm->data); /* prompt.transpose(0, 1) */
    }
    for (int i = 0; i < enc->n_layers && !st; i++) {
        if ((st = body(&r, S3_ENC_LAYER, i)->enc_layer(r.ctx, &enc->layers[i], x, pm, NULL, pmask, NULL, qp, y)))
            st = samc_fail(err, st, "transformer.encoder.layers.%d", i);
        else
            emit1(&r, S3_ENC_LAYER, i, y);
        samc_tensor t = *x;
        *x = *y, *y = t;
    }
    samc_tensor *lsi = out_t(&r, "level_start_index", &st, 1, I64(1));
    samc_tensor *mem = out_t(&r, "memory", &st, 3, S, B, C);
    samc_tensor *mt = out_t(&r, "memory_text", &st, 3, T, B, C);
    samc_tensor *pe = out_t(&r, "pos_embed", &st, 3, S, B, C);
    samc_tensor *ss = out_t(&r, "spatial_shapes", &st, 2, I64(1), I64(2));
    samc_tensor *vr = out_t(&r, "valid_ratios", &st, 3, B, I64(1), I64(2));
    if (!st) {
        batch_to_seq(x->data, S, B, C, mem->data); /* output.transpose(0, 1) */
        memcpy(pe->data, spos->data, (size_t)samc_numel(pe) * sizeof *pe->data);
        memcpy(mt->data, prompt->data, (size_t)samc_numel(mt) * sizeof *mt->data);
        lsi->data[0] = 0.0f;
        ss->data[0] = (float)H, ss->data[1] = (float)W;
        for (int64_t i = 0; i < 2 * B; i++)
            vr->data[i] = 1.0f;
    }
    return run_end(&r, st);
}

/* ---- runners: decoder, scoring ------------------------------------------------------ */

samc_status samc_sam3_run_dec_layer(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = index_ok(index, m->dec.n_layers, "decoder layer", err);
    if (st)
        return st;
    run_begin(&r, ex, io, out, err);
    samc_tensor *tgt = in_t(&r, "tgt", "0", &st);
    samc_tensor *qpos = in_t(&r, "tgt_query_pos", NULL, &st);
    samc_tensor *mt = in_opt(&r, "memory_text", &st);
    samc_tensor *tm = in_opt(&r, "text_attention_mask", &st);
    samc_tensor *mem = in_t(&r, "memory", NULL, &st);
    samc_tensor *mpos = in_opt(&r, "memory_pos", &st);
    samc_tensor *cam = in_opt(&r, "cross_attn_mask", &st);
    samc_tensor *pres = in_opt(&r, "presence_token", &st);
    if (!st && in_opt(&r, "memory_key_padding_mask", &st))
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "decoder layer: a memory key padding mask");
    if (!st && r.io->has(r.io->user, "dac") && in_num(&r, "dac", NULL, &st) != 0.0)
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "decoder layer: DAC (training only)");
    samc_tensor *y = (st || tgt->ndim != 3) ? NULL : out_t(&r, "0", &st, 3, tgt->shape[0], tgt->shape[1], tgt->shape[2]);
    if (!st && !y)
        st = samc_fail(err, SAMC_ERR_SHAPE, "decoder layer: tgt is not 3-D");
    samc_tensor *po = (st || !pres) ? NULL : out_t(&r, "1", &st, 3, pres->shape[0], pres->shape[1], pres->shape[2]);
    if (!st)
        st = body(&r, S3_DEC_LAYER, index)->dec_layer(r.ctx, &m->dec.layers[index], tgt, qpos, mt, tm, mem, mpos, cam, pres, y, po);
    return run_end(&r, st);
}

samc_status samc_sam3_run_decoder(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    const samc_sam3_decoder *dec = &m->dec;
    samc_tensor *tgt = in_t(&r, "tgt", "0", &st);
    samc_tensor *mem = in_t(&r, "memory", "1", &st);
    samc_tensor *pos = in_opt(&r, "pos", &st);
    samc_tensor *mt = in_opt(&r, "memory_text", &st);
    samc_tensor *tm = in_opt(&r, "text_attention_mask", &st);
    samc_tensor *ss = in_t(&r, "spatial_shapes", NULL, &st);
    if (!st && (in_opt(&r, "reference_boxes", &st) || in_opt(&r, "memory_key_padding_mask", &st) ||
                in_opt(&r, "tgt_mask", &st) || in_opt(&r, "memory_mask", &st)))
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "decoder: given reference boxes or masks");
    if (!st && r.io->has(r.io->user, "apply_dac") && in_num(&r, "apply_dac", NULL, &st) != 0.0)
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "decoder: DAC (training only)");
    const int64_t D = dec->d_model, Lr = dec->n_layers;
    if (!st && (tgt->ndim != 3 || tgt->shape[2] != D || samc_numel(ss) != 2))
        st = samc_fail(err, SAMC_ERR_SHAPE, "decoder: tgt (nq,B,%lld) and one level expected", (long long)D);
    const int64_t nq = st ? 0 : tgt->shape[0], B = st ? 0 : tgt->shape[1];
    const int H = st ? 0 : (int)ss->data[0], W = st ? 0 : (int)ss->data[1];
    if (!st && nq != dec->num_queries)
        st = samc_fail(err, SAMC_ERR_SHAPE, "decoder: %lld queries, %d reference points", (long long)nq, dec->num_queries);
    samc_tensor *hs = out_t(&r, "0", &st, 4, Lr, nq, B, D);
    samc_tensor *refs = out_t(&r, "1", &st, 4, Lr, nq, B, I64(4));
    samc_tensor *pl = dec->has_presence ? out_t(&r, "2", &st, 3, Lr, I64(1), B) : NULL;
    samc_tensor *pf = dec->has_presence ? out_t(&r, "3", &st, 3, I64(1), B, D) : NULL;
    samc_tensor *ref = tmp_t(&r, &st, 3, nq, B, I64(4)), *nref = tmp_t(&r, &st, 3, nq, B, I64(4));
    samc_tensor *sine = tmp_t(&r, &st, 3, nq, B, 2 * D), *qpos = tmp_t(&r, &st, 3, nq, B, D);
    samc_tensor *x = tmp_t(&r, &st, 3, nq, B, D), *y = tmp_t(&r, &st, 3, nq, B, D);
    samc_tensor *nrm = tmp_t(&r, &st, 3, nq, B, D);
    samc_tensor *p0 = dec->has_presence ? tmp_t(&r, &st, 3, I64(1), B, D) : NULL;
    samc_tensor *p1 = dec->has_presence ? tmp_t(&r, &st, 3, I64(1), B, D) : NULL;
    samc_tensor *plog = dec->has_presence ? tmp_t(&r, &st, 2, I64(1), B) : NULL;
    samc_tensor *rpb = dec->boxrpb != SAMC_SAM3_RPB_NONE
                           ? tmp_t(&r, &st, 3, B * dec->heads, nq, I64(H) * W) : NULL;
    if (st)
        return run_end(&r, st);
    /* reference_points.weight.unsqueeze(1).repeat(1, bs, 1).sigmoid() */
    for (int64_t q = 0; q < nq; q++)
        for (int64_t b = 0; b < B; b++)
            for (int k = 0; k < 4; k++)
                ref->data[(q * B + b) * 4 + k] = samc_sigmoidf(dec->reference_points[q * 4 + k]);
    memcpy(x->data, tgt->data, (size_t)samc_numel(x) * sizeof *x->data);
    for (int64_t b = 0; b < B && p0; b++) /* presence_token.weight[None].expand(1, bs, -1) */
        memcpy(p0->data + b * D, dec->presence_token, (size_t)D * sizeof *p0->data);
    for (int l = 0; l < dec->n_layers && !st; l++) {
        /* intermediate_ref_boxes: the boxes entering layer l */
        memcpy(refs->data + l * nq * B * 4, ref->data, (size_t)nq * B * 4 * sizeof *ref->data);
        if ((st = body(&r, S3_DEC_QPOS, 0)->dec_query_pos(r.ctx, dec, ref, sine, qpos)))
            break;
        if (rpb && (st = body(&r, S3_DEC_RPB, 0)->dec_boxrpb(r.ctx, dec, ref, H, W, rpb)))
            break;
        if ((st = body(&r, S3_DEC_LAYER, l)->dec_layer(r.ctx, &dec->layers[l], x, qpos, mt, tm, mem, pos, rpb, p0, y, p1))) {
            st = samc_fail(err, st, "transformer.decoder.layers.%d", l);
            break;
        }
        static const char *const lslots[] = {"0", "1"};
        const samc_tensor *lt[] = {y, p1};
        emit(&r, S3_DEC_LAYER, l, p1 ? 2 : 1, lslots, lt);
        if ((st = body(&r, S3_DEC_REFINE, 0)->dec_refine(r.ctx, dec, y, ref, nrm, nref)))
            break;
        memcpy(hs->data + l * nq * B * D, nrm->data, (size_t)nq * B * D * sizeof *nrm->data);
        if (p1) {
            if ((st = body(&r, S3_DEC_PRESENCE, 0)->dec_presence(r.ctx, dec, p1, plog)))
                break;
            memcpy(pl->data + l * B, plog->data, (size_t)B * sizeof *plog->data);
            samc_tensor t = *p0;
            *p0 = *p1, *p1 = t;
        }
        samc_tensor t = *x;
        *x = *y, *y = t;
        t = *ref, *ref = *nref, *nref = t;
    }
    if (!st && pf) /* presence_feats = presence_out.clone() */
        memcpy(pf->data, p0->data, (size_t)samc_numel(pf) * sizeof *pf->data);
    /* Sam3Image._update_scores_and_boxes: pred_boxes = sigmoid(inverse_sigmoid(
     * the last layer's boxes) + bbox_embed(hs[-1])): the same operations as that
     * layer's refinement, so its new boxes (asked for by the image wiring) */
    samc_tensor *pb = r.io->has(r.io->user, "@pred_boxes") ? out_t(&r, "@pred_boxes", &st, 3, nq, B, I64(4)) : NULL;
    if (!st && pb)
        memcpy(pb->data, ref->data, (size_t)samc_numel(pb) * sizeof *pb->data);
    return run_end(&r, st);
}

samc_status samc_sam3_run_dot_scoring(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    samc_tensor *hs = in_t(&r, "hs", "0", &st);
    samc_tensor *prompt = in_t(&r, "prompt", "1", &st);
    samc_tensor *pm = in_t(&r, "prompt_mask", "2", &st);
    samc_tensor *y = (st || hs->ndim != 4) ? NULL : out_t(&r, "0", &st, 4, hs->shape[0], hs->shape[1], hs->shape[2], I64(1));
    if (!st && !y)
        st = samc_fail(err, SAMC_ERR_SHAPE, "dot scoring: hs is not 4-D");
    if (!st)
        st = body(&r, S3_SCORING, 0)->dot_scoring(r.ctx, &m->scoring, hs, prompt, pm, y);
    return run_end(&r, st);
}

/* ---- runners: segmentation head, post-processing ------------------------------------- */

samc_status samc_sam3_run_pixel_decoder(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    samc_tensor feats[SAMC_SAM3_PIXDEC_MAX + 1];
    int n = 0;
    for (; n <= SAMC_SAM3_PIXDEC_MAX && !st; n++) {
        char name[16];
        snprintf(name, sizeof name, "0.%d", n);
        if (!r.io->has(r.io->user, name))
            break;
        samc_tensor *t = in_t(&r, name, NULL, &st);
        if (t)
            feats[n] = *t;
    }
    if (!st && n == 0)
        st = samc_fail(err, SAMC_ERR_KEY, "pixel decoder: no input levels");
    samc_tensor *y = st ? NULL : out_t(&r, "0", &st, 4, feats[0].shape[0], feats[0].shape[1],
                                      feats[0].shape[2], feats[0].shape[3]);
    if (!st)
        st = body(&r, S3_PIXDEC, 0)->pixel_decoder(r.ctx, &m->seg, feats, n, y);
    return run_end(&r, st);
}

samc_status samc_sam3_run_seg_head(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    const samc_sam3_model *m = ex->model;
    samc_status st = SAMC_OK;
    if (!st && !m->has_seg)
        st = samc_fail(err, SAMC_ERR_ARG, "segmentation head: the model has none");
    if (st)
        return st;
    run_begin(&r, ex, io, out, err);
    const samc_sam3_seg_head *s = &m->seg;
    samc_tensor feats[SAMC_SAM3_PIXDEC_MAX + 1];
    int n = 0;
    for (; n <= SAMC_SAM3_PIXDEC_MAX && !st; n++) {
        char name[32];
        snprintf(name, sizeof name, "backbone_feats.%d", n);
        if (!r.io->has(r.io->user, name))
            break;
        samc_tensor *t = in_t(&r, name, NULL, &st);
        if (t)
            feats[n] = *t;
    }
    samc_tensor *q = in_t(&r, "obj_queries", "1", &st);
    samc_tensor *ehs = in_t(&r, "encoder_hidden_states", NULL, &st);
    samc_tensor *prompt = in_t(&r, "prompt", NULL, &st);
    samc_tensor *pm = in_opt(&r, "prompt_mask", &st);
    const int64_t D = s->d_model;
    if (!st && (n < 1 || feats[n - 1].ndim != 4 || q->ndim != 4 || q->shape[3] != D ||
                ehs->ndim != 3 || ehs->shape[2] != D ||
                ehs->shape[0] < feats[n - 1].shape[2] * feats[n - 1].shape[3]))
        st = samc_fail(err, SAMC_ERR_SHAPE, "segmentation head: backbone_feats, obj_queries (L,B,Q,%lld) "
                                            "or encoder_hidden_states (S,B,%lld) do not fit", (long long)D, (long long)D);
    const int64_t S = st ? 0 : ehs->shape[0], B = st ? 0 : ehs->shape[1];
    const int64_t H = st ? 0 : feats[n - 1].shape[2], W = st ? 0 : feats[n - 1].shape[3];
    const int64_t Q = st ? 0 : q->shape[2], H0 = st ? 0 : feats[0].shape[2], W0 = st ? 0 : feats[0].shape[3];
    samc_tensor *masks = out_t(&r, "pred_masks", &st, 4, B, Q, H0, W0);
    samc_tensor *sem = out_t(&r, "semantic_seg", &st, 4, B, I64(1), H0, W0);
    samc_tensor *ca = tmp_t(&r, &st, 3, S, B, D), *vis = tmp_t(&r, &st, 4, B, D, H, W);
    samc_tensor *pix = tmp_t(&r, &st, 4, B, D, H0, W0);
    if (!st) /* encoder_hidden_states = tgt2 + encoder_hidden_states */
        st = body(&r, S3_SEG_CROSS, 0)->seg_cross_attend(r.ctx, s, ehs, prompt, pm, ca);
    if (!st) { /* encoder_hidden_states.permute(1, 2, 0)[..., :H*W].reshape(-1, C, H, W) */
        for (int64_t b = 0; b < B; b++)
            for (int64_t c = 0; c < D; c++)
                for (int64_t p = 0; p < H * W; p++)
                    vis->data[(b * D + c) * H * W + p] = ca->data[(p * B + b) * D + c];
        feats[n - 1] = *vis; /* backbone_visual_feats[-1] = encoder_visual_embed */
        st = body(&r, S3_PIXDEC, 0)->pixel_decoder(r.ctx, s, feats, n, pix);
        if (!st)
            emit1(&r, S3_PIXDEC, 0, pix);
    }
    if (!st) { /* mask_predictor(obj_queries[-1], instance_seg_head(pixel_embed)) */
        samc_tensor last = *q;
        last.ndim = 3, last.shape[0] = q->shape[1], last.shape[1] = Q, last.shape[2] = D;
        last.data = q->data + (q->shape[0] - 1) * B * Q * D;
        last.owns = false;
        st = body(&r, S3_SEG_HEADS, 0)->seg_heads(r.ctx, s, pix, &last, masks, sem);
    }
    return run_end(&r, st);
}

samc_status samc_sam3_run_postprocess(samc_exec *ex, const samc_layer *layer, const samc_layer_io *io, samc_layer_out *out,
                                 samc_error *err)
{
    const int index = layer->index;
    (void)index;
    run r;
    samc_status st = SAMC_OK;
    run_begin(&r, ex, io, out, err);
    samc_tensor *lg = in_t(&r, "pred_logits", NULL, &st);
    samc_tensor *bx = in_t(&r, "pred_boxes", NULL, &st);
    samc_tensor *mk = in_t(&r, "pred_masks", NULL, &st);
    samc_tensor *pr = in_t(&r, "presence_logit_dec", NULL, &st);
    const int H = (int)in_num(&r, "original_height", NULL, &st);
    const int W = (int)in_num(&r, "original_width", NULL, &st);
    const double thr = in_num(&r, "confidence_threshold", NULL, &st);
    if (!st && (lg->ndim != 3 || bx->ndim != 3 || bx->shape[2] != 4 || mk->ndim != 4 ||
                bx->shape[0] != lg->shape[0] || bx->shape[1] != lg->shape[1] ||
                mk->shape[0] != lg->shape[0] || mk->shape[1] != lg->shape[1]))
        st = samc_fail(err, SAMC_ERR_SHAPE, "@postprocess: pred_logits (B,Q,1), pred_boxes (B,Q,4), pred_masks (B,Q,h,w) expected");
    const int64_t B = st ? 0 : lg->shape[0], Q = st ? 0 : lg->shape[1];
    const int64_t h = st ? 0 : mk->shape[2], w = st ? 0 : mk->shape[3];
    samc_tensor *probs = tmp_t(&r, &st, 2, B, Q);
    if (!st)
        st = body(&r, S3_POST_SCORES, 0)->post_scores(r.ctx, lg, pr, probs);
    /* keep = out_probs > confidence_threshold (float32 compare) */
    const float t32 = (float)thr;
    int64_t M = 0;
    for (int64_t i = 0; i < B * Q && !st; i++)
        M += probs->data[i] > t32;
    samc_tensor *scores = out_t(&r, "scores", &st, 1, M);
    samc_tensor *boxes = out_t(&r, "boxes", &st, 2, M, I64(4));
    samc_tensor *masks = out_t(&r, "masks", &st, 4, M, I64(1), I64(H), I64(W));
    samc_tensor *sel_b = tmp_t(&r, &st, 2, M, I64(4)), *sel_m = tmp_t(&r, &st, 4, M, I64(1), h, w);
    int64_t k = 0;
    for (int64_t i = 0; i < B * Q && !st; i++)
        if (probs->data[i] > t32) {
            scores->data[k] = probs->data[i];
            memcpy(sel_b->data + k * 4, bx->data + i * 4, 4 * sizeof *bx->data);
            memcpy(sel_m->data + k * h * w, mk->data + i * h * w, (size_t)(h * w) * sizeof *mk->data);
            k++;
        }
    if (!st)
        st = body(&r, S3_POST_BOXES, 0)->post_boxes(r.ctx, sel_b, H, W, boxes);
    if (!st)
        st = body(&r, S3_POST_MASKS, 0)->post_masks(r.ctx, sel_m, H, W, masks);
    return run_end(&r, st);
}

/* ---- the registry -------------------------------------------------------------------- */

static int n_blocks(const void *m) { return ((const samc_sam3_model *)m)->n_blocks; }
static int n_neck(const void *m) { return ((const samc_sam3_model *)m)->neck.n_levels; }
static int n_sam2_neck(const void *m)
{
    const samc_sam3_model *s = m;
    return s->has_sam2_neck ? s->sam2_neck.n_levels : 0;
}
static int n_text(const void *m) { return ((const samc_sam3_model *)m)->text.n_layers; }
static int n_geo(const void *m) { return ((const samc_sam3_model *)m)->geo.n_layers; }
static int n_enc(const void *m) { return ((const samc_sam3_model *)m)->enc.n_layers; }
static int n_dec(const void *m) { return ((const samc_sam3_model *)m)->dec.n_layers; }

#define OP(kind) offsetof(samc_sam3_ops, kind)
#define T SAMC_OPS_SAM3
#define P SAMC_LAYER_PARITY
#define NO SAMC_NO_OP
/* Official module names (named_modules() of the image model), functions as
 * "@name"; rows that are not parity points are the sub-steps composite
 * points call, named for the module (or function) whose work they do. */
static const samc_layer_def defs[S3_N_ROWS] = {
    [S3_PREPROCESS] = {.pattern = "@preprocess", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, preprocess), .parity = true, .isolated = samc_sam3_run_preprocess},
    [S3_PATCH_EMBED] = {.pattern = "backbone.vision_backbone.trunk.patch_embed", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, vit_patch_embed), .parity = true, .isolated = samc_sam3_run_patch_embed},
    [S3_LN_PRE] = {.pattern = "backbone.vision_backbone.trunk.ln_pre", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, vit_pos_ln_pre)},
    [S3_BLOCK] = {.pattern = "backbone.vision_backbone.trunk.blocks.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, vit_block), .parity = true, .count = n_blocks, .isolated = samc_sam3_run_vit_block},
    [S3_TRUNK] = {.pattern = "backbone.vision_backbone.trunk", .table = SAMC_OPS_SAM3, .parity = true, .isolated = samc_sam3_run_trunk},
    [S3_NECK] = {.pattern = "backbone.vision_backbone.convs.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, neck_level), .parity = true, .count = n_neck, .isolated = samc_sam3_run_neck_level},
    [S3_SAM2_NECK] = {.pattern = "backbone.vision_backbone.sam2_convs.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, neck_level), .count = n_sam2_neck, .isolated = samc_sam3_run_sam2_neck_level},
    [S3_VISION] = {.pattern = "backbone.vision_backbone", .table = SAMC_OPS_SAM3, .parity = true, .isolated = samc_sam3_run_vision_backbone},
    [S3_TOKENIZE] = {.pattern = "@tokenize", .table = SAMC_OPS_SAM3, .parity = true, .isolated = samc_sam3_run_tokenize},
    [S3_TEXT_EMBED] = {.pattern = "backbone.language_backbone.encoder.token_embedding", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, text_embed)},
    [S3_TEXT_BLOCK] = {.pattern = "backbone.language_backbone.encoder.transformer.resblocks.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, text_block), .parity = true, .count = n_text, .isolated = samc_sam3_run_text_block},
    [S3_TEXT_FINAL] = {.pattern = "backbone.language_backbone.encoder.ln_final", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, text_final)},
    [S3_TEXT_ENCODER] = {.pattern = "backbone.language_backbone.encoder", .table = SAMC_OPS_SAM3, .parity = true, .isolated = samc_sam3_run_text_encoder},
    [S3_TEXT_RESIZE] = {.pattern = "backbone.language_backbone.resizer", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, text_resize)},
    [S3_LANGUAGE] = {.pattern = "backbone.language_backbone", .table = SAMC_OPS_SAM3, .parity = true, .isolated = samc_sam3_run_language_backbone},
    [S3_GEO_PROMPT] = {.pattern = "geometry_encoder.@encode_prompt", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, geo_prompt)},
    [S3_GEO_LAYER] = {.pattern = "geometry_encoder.encode.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, enc_layer), .parity = true, .count = n_geo, .isolated = samc_sam3_run_geo_layer},
    [S3_GEO_NORM] = {.pattern = "geometry_encoder.encode_norm", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, layer_norm)},
    [S3_GEO] = {.pattern = "geometry_encoder", .table = SAMC_OPS_SAM3, .parity = true, .isolated = samc_sam3_run_geometry_encoder},
    [S3_ENC_LAYER] = {.pattern = "transformer.encoder.layers.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, enc_layer), .parity = true, .count = n_enc, .isolated = samc_sam3_run_enc_layer},
    [S3_ENC] = {.pattern = "transformer.encoder", .table = SAMC_OPS_SAM3, .parity = true, .isolated = samc_sam3_run_fusion_encoder},
    [S3_DEC_QPOS] = {.pattern = "transformer.decoder.ref_point_head", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, dec_query_pos)},
    [S3_DEC_RPB] = {.pattern = "transformer.decoder.@get_rpb_matrix", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, dec_boxrpb)},
    [S3_DEC_LAYER] = {.pattern = "transformer.decoder.layers.#", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, dec_layer), .parity = true, .count = n_dec, .isolated = samc_sam3_run_dec_layer},
    [S3_DEC_REFINE] = {.pattern = "transformer.decoder.bbox_embed", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, dec_refine)},
    [S3_DEC_PRESENCE] = {.pattern = "transformer.decoder.presence_token_head", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, dec_presence)},
    [S3_DEC] = {.pattern = "transformer.decoder", .table = SAMC_OPS_SAM3, .parity = true, .isolated = samc_sam3_run_decoder},
    [S3_SCORING] = {.pattern = "dot_prod_scoring", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, dot_scoring), .parity = true, .isolated = samc_sam3_run_dot_scoring},
    [S3_SEG_CROSS] = {.pattern = "segmentation_head.cross_attend_prompt", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, seg_cross_attend)},
    [S3_PIXDEC] = {.pattern = "segmentation_head.pixel_decoder", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, pixel_decoder), .parity = true, .isolated = samc_sam3_run_pixel_decoder},
    [S3_SEG_HEADS] = {.pattern = "segmentation_head.mask_predictor", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, seg_heads)},
    [S3_SEG] = {.pattern = "segmentation_head", .table = SAMC_OPS_SAM3, .parity = true, .isolated = samc_sam3_run_seg_head},
    [S3_POST_SCORES] = {.pattern = "@postprocess.scores", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, post_scores)},
    [S3_POST_BOXES] = {.pattern = "@postprocess.boxes", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, post_boxes)},
    [S3_POST_MASKS] = {.pattern = "@postprocess.masks", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, post_masks)},
    [S3_POST] = {.pattern = "@postprocess", .table = SAMC_OPS_SAM3, .parity = true, .isolated = samc_sam3_run_postprocess},
};
#undef OP
#undef T
#undef P
#undef NO

const samc_layer_def *samc__sam3_def(int row)
{
    return &defs[row];
}

/* One part for now, mounted at the top; its weights are bound by sam3_model.c. */
static const samc_part_def image_part = {"Sam3Image", defs, S3_N_ROWS, NULL};
static const samc_mount mounts[] = {{&image_part, "", 0, 0}};
const samc_layer_family samc_sam3_family = {"sam3", mounts, 1};

samc_status samc_sam3_exec_init(samc_exec *x, samc_sam3_model *m, const char *impl, samc_error *err)
{
    return samc_exec_init_impl(x, &samc_sam3_family, m, &m->base, impl, err);
}
