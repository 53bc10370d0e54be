/* sam3_predict.c - Sam3Processor's image path on the registry (sam3_predict.h).
 *
 * Each parity point runs through its registry runner (sam3_runners.c) on
 * inputs this file assembles the way Sam3Image.forward_grounding does
 * (_encode_prompt, _run_encoder, _run_decoder, _update_scores_and_boxes,
 * _run_segmentation_heads), and its outputs go to the trace under its
 * official name; the runners trace their sub-steps themselves. */
#include "core/models/sam3/sam3_predict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_runners.h"

static const samc_tensor *slot(const samc_layer_out *o, const char *name)
{
    for (int i = 0; i < o->n; i++)
        if (!strcmp(o->names[i], name))
            return &o->t[i];
    return NULL;
}

/* Parity point `row` on `in`; its outputs (except the wiring's own "@" slots)
 * to the trace. */
static samc_status point(samc_exec *x, int row, samc_layer_inputs *in, samc_layer_out *out, samc_error *err)
{
    const samc_layer_def *d = samc__sam3_def(row);
    const samc_layer *L = samc_part_layer(x, x->model, d, 0);
    const samc_layer_io io = samc_inputs_io(in);
    memset(out, 0, sizeof *out);
    samc_status st = d->isolated(x, L, &io, out, err);
    if (st) {
        samc_error_prefix(err, "%s", L->name);
        return st;
    }
    const char *names[SAMC_LAYER_OUT_MAX];
    const samc_tensor *t[SAMC_LAYER_OUT_MAX];
    int n = 0;
    for (int i = 0; i < out->n; i++)
        if (out->names[i][0] != '@')
            names[n] = out->names[i], t[n++] = &out->t[i];
    samc_layer_emit(x, L, &samc_no_scope, n, names, t);
    return samc_exec_check_abort(x, L->name, err);
}

/* A copy of `src` as input `name` (NULL src: a missing output, an internal error). */
static samc_status put(samc_layer_inputs *in, const char *name, const samc_tensor *src, samc_error *err)
{
    if (!src)
        return samc_fail(err, SAMC_ERR_INTERNAL, "sam3: input '%s' was not produced", name);
    samc_tensor *t = samc_inputs_tensor(in, name, src->ndim, src->shape, err);
    if (!t)
        return SAMC_ERR_NOMEM;
    memcpy(t->data, src->data, (size_t)samc_numel(src) * sizeof *t->data);
    return SAMC_OK;
}

/* (B,C,H,W) as input `name` in (H*W,B,C): x.flatten(2).permute(2, 0, 1). */
static samc_status put_seq_first(samc_layer_inputs *in, const char *name, const samc_tensor *nchw, samc_error *err)
{
    if (!nchw || nchw->ndim != 4)
        return samc_fail(err, SAMC_ERR_INTERNAL, "sam3: feature map for '%s' is not (B,C,H,W)", name);
    const int64_t B = nchw->shape[0], C = nchw->shape[1], HW = nchw->shape[2] * nchw->shape[3];
    samc_tensor *t = samc_inputs_tensor(in, name, 3, (const int64_t[]){HW, B, C}, err);
    if (!t)
        return SAMC_ERR_NOMEM;
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t p = 0; p < HW; p++)
                t->data[(p * B + b) * C + c] = nchw->data[(b * C + c) * HW + p];
    return SAMC_OK;
}

/* (L,N,B,D) as input `name` in (L,B,N,D): hs.transpose(1, 2). */
static samc_status put_batch_first(samc_layer_inputs *in, const char *name, const samc_tensor *hs, samc_error *err)
{
    if (!hs || hs->ndim != 4)
        return samc_fail(err, SAMC_ERR_INTERNAL, "sam3: decoder states for '%s' are not 4-D", name);
    const int64_t L = hs->shape[0], N = hs->shape[1], B = hs->shape[2], D = hs->shape[3];
    samc_tensor *t = samc_inputs_tensor(in, name, 4, (const int64_t[]){L, B, N, D}, err);
    if (!t)
        return SAMC_ERR_NOMEM;
    for (int64_t l = 0; l < L; l++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t b = 0; b < B; b++)
                memcpy(t->data + ((l * B + b) * N + n) * D, hs->data + ((l * N + n) * B + b) * D,
                       (size_t)D * sizeof *t->data);
    return SAMC_OK;
}

/* ---- set_image ---------------------------------------------------------------------- */

samc_status samc_sam3_set_image(samc_exec *x, const uint8_t *rgb, int h, int w, samc_sam3_image *img,
                                samc_error *err)
{
    memset(img, 0, sizeof *img);
    if (!rgb || h < 1 || w < 1)
        return samc_fail(err, SAMC_ERR_ARG, "sam3: empty image (%d x %d)", w, h);
    img->h = h, img->w = w;
    samc_layer_inputs in = {0};
    samc_layer_out pre = {0};
    samc_tensor *t = samc_inputs_tensor(&in, "0", 3, (const int64_t[]){h, w, 3}, err);
    samc_status st = t ? SAMC_OK : SAMC_ERR_NOMEM;
    for (int64_t i = 0; !st && i < (int64_t)h * w * 3; i++)
        t->data[i] = rgb[i];
    if (!st)
        st = point(x, S3_PREPROCESS, &in, &pre, err);
    samc_inputs_free(&in);
    if (!st)
        st = put(&in, "0", slot(&pre, "0"), err);
    samc_layer_out_free(&pre);
    if (!st)
        st = point(x, S3_VISION, &in, &img->vis, err);
    samc_inputs_free(&in);
    if (st)
        samc_sam3_image_release(img);
    return st;
}

void samc_sam3_image_release(samc_sam3_image *img)
{
    samc_layer_out_free(&img->vis);
    memset(img, 0, sizeof *img);
}

/* ---- prompts -------------------------------------------------------------------------- */

void samc_sam3_session_reset(samc_sam3_session *s)
{
    samc_layer_out_free(&s->text);
    memset(s, 0, sizeof *s);
}

/* backbone.forward_text([text]): @tokenize, then the language backbone. */
static samc_status encode_text(samc_exec *x, samc_sam3_session *s, const char *text, samc_error *err)
{
    const samc_sam3_model *m = x->model;
    samc_layer_inputs in = {0};
    samc_tensor ids = {0};
    samc_status st = samc_sam3_tokenize(x, text, m->text.context_length, &ids, err);
    if (!st)
        st = put(&in, "input_ids", &ids, err);
    samc_tensor_release(&ids);
    samc_layer_out_free(&s->text);
    s->has_text = false;
    if (!st)
        st = point(x, S3_LANGUAGE, &in, &s->text, err);
    samc_inputs_free(&in);
    s->has_text = st == SAMC_OK;
    return st;
}

/* The geometric prompt's box and (empty) point fields, as recorded. */
static samc_status put_geo_prompt(samc_layer_inputs *in, const samc_sam3_session *s, samc_error *err)
{
    const int64_t N = s->n_boxes;
    samc_tensor *be = samc_inputs_tensor(in, "geo_prompt.box_embeddings", 3, (const int64_t[]){N, 1, 4}, err);
    samc_tensor *bl = be ? samc_inputs_tensor(in, "geo_prompt.box_labels", 2, (const int64_t[]){N, 1}, err) : NULL;
    samc_tensor *bm = bl ? samc_inputs_tensor(in, "geo_prompt.box_mask", 2, (const int64_t[]){1, N}, err) : NULL;
    if (!bm || !samc_inputs_tensor(in, "geo_prompt.point_embeddings", 3, (const int64_t[]){0, 1, 2}, err) ||
        !samc_inputs_tensor(in, "geo_prompt.point_labels", 2, (const int64_t[]){0, 1}, err) ||
        !samc_inputs_tensor(in, "geo_prompt.point_mask", 2, (const int64_t[]){1, 0}, err))
        return SAMC_ERR_NOMEM;
    for (int64_t i = 0; i < N; i++) {
        memcpy(be->data + 4 * i, s->boxes[i], 4 * sizeof *be->data);
        bl->data[i] = (float)s->labels[i]; /* box_mask stays 0: no padding */
    }
    return SAMC_OK;
}

/* prompt = cat([txt_feats, geo_feats]) and prompt_mask = cat([txt_masks,
 * geo_masks], 1), as inputs `pname` and `mname`. */
static samc_status put_prompt(samc_layer_inputs *in, const samc_layer_out *text, const samc_layer_out *geo,
                              const char *pname, const char *mname, samc_error *err)
{
    const samc_tensor *tf = slot(text, "1"), *tm = slot(text, "0"), *gf = slot(geo, "0"), *gm = slot(geo, "1");
    if (!tf || !tm || !gf || !gm || tf->ndim != 3 || gf->ndim != 3 || tf->shape[1] != 1 || gf->shape[1] != 1 ||
        tf->shape[2] != gf->shape[2])
        return samc_fail(err, SAMC_ERR_INTERNAL, "sam3: text or geometry features do not concatenate");
    const int64_t Lt = tf->shape[0], Lg = gf->shape[0], D = tf->shape[2];
    samc_tensor *p = samc_inputs_tensor(in, pname, 3, (const int64_t[]){Lt + Lg, 1, D}, err);
    samc_tensor *pm = p ? samc_inputs_tensor(in, mname, 2, (const int64_t[]){1, Lt + Lg}, err) : NULL;
    if (!pm)
        return SAMC_ERR_NOMEM;
    memcpy(p->data, tf->data, (size_t)(Lt * D) * sizeof *p->data);
    memcpy(p->data + Lt * D, gf->data, (size_t)(Lg * D) * sizeof *p->data);
    memcpy(pm->data, tm->data, (size_t)Lt * sizeof *pm->data);
    memcpy(pm->data + Lt, gm->data, (size_t)Lg * sizeof *pm->data);
    return SAMC_OK;
}

/* The last entry of a (L, ...) stack as a tensor of the given shape. */
static samc_status last_of(const samc_tensor *stack, int ndim, const int64_t *shape, samc_tensor *out,
                           samc_error *err)
{
    if (!stack)
        return samc_fail(err, SAMC_ERR_INTERNAL, "sam3: a decoder output is missing");
    samc_status st = samc_tensor_alloc(out, ndim, shape, err);
    const int64_t n = samc_numel(out);
    if (!st && n * stack->shape[0] != samc_numel(stack))
        st = samc_fail(err, SAMC_ERR_INTERNAL, "sam3: decoder output of unexpected size");
    if (!st)
        memcpy(out->data, stack->data + (stack->shape[0] - 1) * n, (size_t)n * sizeof *out->data);
    return st;
}

/* ---- one grounding ------------------------------------------------------------------- */

typedef struct ground {
    const samc_sam3_image *img;
    const samc_sam3_session *s;
    samc_layer_out geo, enc, dec, score, seg;
    samc_layer_inputs in;
} ground;

static void ground_free(ground *g)
{
    samc_layer_out_free(&g->geo), samc_layer_out_free(&g->enc), samc_layer_out_free(&g->dec);
    samc_layer_out_free(&g->score), samc_layer_out_free(&g->seg);
    samc_inputs_free(&g->in);
}

/* _encode_prompt (the geometry encoder on backbone_fpn[-1]) and _run_encoder. */
static samc_status encode(samc_exec *x, ground *g, samc_error *err)
{
    const samc_sam3_model *m = x->model;
    const int lvl = m->neck.n_levels - m->neck.scalp - 1; /* backbone_fpn[-1] after the scalp */
    char f[16], p[16];
    snprintf(f, sizeof f, "0.%d", lvl), snprintf(p, sizeof p, "1.%d", lvl);
    const samc_tensor *feat = slot(&g->img->vis, f), *pos = slot(&g->img->vis, p);
    if (lvl < 0 || !feat || !pos)
        return samc_fail(err, SAMC_ERR_INTERNAL, "sam3: no image features (set_image first)");
    samc_status st = put_geo_prompt(&g->in, g->s, err);
    if (!st)
        st = put_seq_first(&g->in, "img_feats.0", feat, err);
    if (!st)
        st = put_seq_first(&g->in, "img_pos_embeds.0", pos, err);
    if (!st)
        st = samc_inputs_scalar(&g->in, "img_sizes.0.0", (double)feat->shape[2], err);
    if (!st)
        st = samc_inputs_scalar(&g->in, "img_sizes.0.1", (double)feat->shape[3], err);
    if (!st)
        st = point(x, S3_GEO, &g->in, &g->geo, err);
    samc_inputs_free(&g->in);
    if (!st) /* src, src_pos, prompt (pos zeros: unused), prompt_key_padding_mask, feat_sizes */
        st = put_prompt(&g->in, &g->s->text, &g->geo, "prompt", "prompt_key_padding_mask", err);
    if (!st)
        st = put_seq_first(&g->in, "src.0", feat, err);
    if (!st)
        st = put_seq_first(&g->in, "src_pos.0", pos, err);
    if (!st)
        st = samc_inputs_scalar(&g->in, "feat_sizes.0.0", (double)feat->shape[2], err);
    if (!st)
        st = samc_inputs_scalar(&g->in, "feat_sizes.0.1", (double)feat->shape[3], err);
    if (!st)
        st = point(x, S3_ENC, &g->in, &g->enc, err);
    samc_inputs_free(&g->in);
    return st;
}

/* _run_decoder: tgt = query_embed repeated over the batch; the boxes of
 * _update_scores_and_boxes come back as the runner's "@pred_boxes". */
static samc_status decode(samc_exec *x, ground *g, samc_error *err)
{
    const samc_sam3_decoder *dec = &((const samc_sam3_model *)x->model)->dec;
    samc_tensor *tgt = samc_inputs_tensor(&g->in, "tgt", 3, (const int64_t[]){dec->num_queries, 1, dec->d_model}, err);
    samc_status st = tgt ? SAMC_OK : SAMC_ERR_NOMEM;
    if (!st)
        memcpy(tgt->data, dec->query_embed, (size_t)samc_numel(tgt) * sizeof *tgt->data);
    if (!st)
        st = put(&g->in, "memory", slot(&g->enc, "memory"), err);
    if (!st)
        st = put(&g->in, "pos", slot(&g->enc, "pos_embed"), err);
    if (!st)
        st = put(&g->in, "spatial_shapes", slot(&g->enc, "spatial_shapes"), err);
    if (!st)
        st = put_prompt(&g->in, &g->s->text, &g->geo, "memory_text", "text_attention_mask", err);
    if (!st)
        st = samc_inputs_scalar(&g->in, "@pred_boxes", 1, err);
    if (!st)
        st = point(x, S3_DEC, &g->in, &g->dec, err);
    samc_inputs_free(&g->in);
    if (!st && !slot(&g->dec, "2"))
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "sam3: the decoder has no presence token (Sam3Processor needs it)");
    /* dot_prod_scoring(hs, prompt, prompt_mask) */
    if (!st)
        st = put_batch_first(&g->in, "hs", slot(&g->dec, "0"), err);
    if (!st)
        st = put_prompt(&g->in, &g->s->text, &g->geo, "prompt", "prompt_mask", err);
    if (!st)
        st = point(x, S3_SCORING, &g->in, &g->score, err);
    samc_inputs_free(&g->in);
    return st;
}

/* _run_segmentation_heads on backbone_fpn (after the scalp). */
static samc_status segment(samc_exec *x, ground *g, samc_error *err)
{
    const samc_sam3_model *m = x->model;
    samc_status st = SAMC_OK;
    for (int i = 0; i < m->neck.n_levels - m->neck.scalp && !st; i++) {
        char name[32], lv[16];
        snprintf(name, sizeof name, "backbone_feats.%d", i), snprintf(lv, sizeof lv, "0.%d", i);
        st = put(&g->in, name, slot(&g->img->vis, lv), err);
    }
    if (!st)
        st = put_batch_first(&g->in, "obj_queries", slot(&g->dec, "0"), err);
    if (!st)
        st = put(&g->in, "encoder_hidden_states", slot(&g->enc, "memory"), err);
    if (!st)
        st = put_prompt(&g->in, &g->s->text, &g->geo, "prompt", "prompt_mask", err);
    if (!st)
        st = point(x, S3_SEG, &g->in, &g->seg, err);
    samc_inputs_free(&g->in);
    return st;
}

/* Sam3Processor._forward_grounding's tail, and the unthresholded outputs. */
static samc_status postprocess(samc_exec *x, ground *g, float threshold, samc_sam3_result *res, samc_error *err)
{
    const samc_tensor *lg = slot(&g->score, "0"), *pb = slot(&g->dec, "@pred_boxes");
    const samc_tensor *pr = slot(&g->dec, "2"), *pm = slot(&g->seg, "pred_masks");
    if (!lg || !pb || !pr || !pm || pm->ndim != 4 || pm->shape[0] != 1)
        return samc_fail(err, SAMC_ERR_INTERNAL, "sam3: a model output is missing");
    const int64_t Q = pm->shape[1], h = pm->shape[2], w = pm->shape[3];
    samc_status st = last_of(lg, 1, (const int64_t[]){Q}, &res->pred_logits, err);
    if (!st)
        st = last_of(pr, 1, (const int64_t[]){1}, &res->presence_logit, err);
    if (!st)
        st = samc_tensor_alloc(&res->pred_boxes, 2, (const int64_t[]){Q, 4}, err);
    if (!st && samc_numel(pb) != 4 * Q)
        st = samc_fail(err, SAMC_ERR_INTERNAL, "sam3: pred_boxes of unexpected size");
    if (!st)
        memcpy(res->pred_boxes.data, pb->data, (size_t)(4 * Q) * sizeof *pb->data);
    if (!st)
        st = samc_tensor_copy(&res->pred_masks, pm, err);
    if (!st)
        res->pred_masks.ndim = 3, memmove(res->pred_masks.shape, (const int64_t[]){Q, h, w}, 3 * sizeof(int64_t));
    /* the model's output dict in PyTorch's shapes */
    samc_tensor *t = st ? NULL : samc_inputs_tensor(&g->in, "pred_logits", 3, (const int64_t[]){1, Q, 1}, err);
    if (t)
        memcpy(t->data, res->pred_logits.data, (size_t)Q * sizeof *t->data);
    t = t ? samc_inputs_tensor(&g->in, "pred_boxes", 3, (const int64_t[]){1, Q, 4}, err) : NULL;
    if (t)
        memcpy(t->data, res->pred_boxes.data, (size_t)(4 * Q) * sizeof *t->data);
    t = t ? samc_inputs_tensor(&g->in, "presence_logit_dec", 2, (const int64_t[]){1, 1}, err) : NULL;
    if (t)
        t->data[0] = res->presence_logit.data[0];
    if (!st && !t)
        st = SAMC_ERR_NOMEM;
    if (!st)
        st = put(&g->in, "pred_masks", pm, err);
    if (!st)
        st = samc_inputs_scalar(&g->in, "original_height", g->img->h, err);
    if (!st)
        st = samc_inputs_scalar(&g->in, "original_width", g->img->w, err);
    if (!st)
        st = samc_inputs_scalar(&g->in, "confidence_threshold", threshold, err);
    if (!st)
        st = point(x, S3_POST, &g->in, &res->post, err);
    samc_inputs_free(&g->in);
    return st;
}

samc_status samc_sam3_ground(samc_exec *x, const samc_sam3_image *img, const samc_sam3_session *s, float threshold,
                             samc_sam3_result *res, samc_error *err)
{
    memset(res, 0, sizeof *res);
    if (!s->has_text)
        return samc_fail(err, SAMC_ERR_ARG, "sam3: no text encoded (set a text or add a box first)");
    ground g = {.img = img, .s = s};
    samc_status st = encode(x, &g, err);
    if (!st)
        st = decode(x, &g, err);
    if (!st)
        st = segment(x, &g, err);
    if (!st)
        st = postprocess(x, &g, threshold, res, err);
    ground_free(&g);
    if (st)
        samc_sam3_result_release(res);
    return st;
}

samc_status samc_sam3_set_text(samc_exec *x, const samc_sam3_image *img, samc_sam3_session *s, const char *text,
                               float threshold, samc_sam3_result *res, samc_error *err)
{
    memset(res, 0, sizeof *res);
    samc_status st = text ? encode_text(x, s, text, err) : samc_fail(err, SAMC_ERR_ARG, "sam3: no text given");
    return st ? st : samc_sam3_ground(x, img, s, threshold, res, err);
}

samc_status samc_sam3_add_box(samc_exec *x, const samc_sam3_image *img, samc_sam3_session *s, const float box[4],
                              bool positive, float threshold, samc_sam3_result *res, samc_error *err)
{
    memset(res, 0, sizeof *res);
    if (s->n_boxes == SAMC_SAM3_MAX_BOXES)
        return samc_fail(err, SAMC_ERR_ARG, "sam3: more than %d boxes in one prompt", SAMC_SAM3_MAX_BOXES);
    samc_status st = s->has_text ? SAMC_OK : encode_text(x, s, "visual", err); /* the processor's dummy text */
    if (st)
        return st;
    memcpy(s->boxes[s->n_boxes], box, 4 * sizeof *box);
    s->labels[s->n_boxes++] = positive ? 1 : 0;
    return samc_sam3_ground(x, img, s, threshold, res, err);
}

void samc_sam3_result_release(samc_sam3_result *res)
{
    samc_layer_out_free(&res->post);
    samc_tensor_release(&res->pred_logits), samc_tensor_release(&res->pred_boxes);
    samc_tensor_release(&res->presence_logit), samc_tensor_release(&res->pred_masks);
    memset(res, 0, sizeof *res);
}
