/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_predict.c - Sam3Processor's image path on the parts' forwards
 * (sam3_predict.h): the inputs each forward takes are assembled the way
 * Sam3Image.forward_grounding does (_encode_prompt, _run_encoder,
 * _run_decoder, _update_scores_and_boxes, _run_segmentation_heads); the
 * forwards trace their parity points themselves. */
#include "core/models/sam3/sam3_predict.h"

#include <string.h>

#include "core/base/error.h"

/* (B,C,H,W) -> (H*W,B,C): x.flatten(2).permute(2, 0, 1). */
static samc_status seq_first(const samc_tensor *nchw, samc_tensor *out, samc_error *err)
{
    const int64_t B = nchw->shape[0], C = nchw->shape[1], HW = nchw->shape[2] * nchw->shape[3];
    samc_status st = samc_tensor_allocv(out, err, 3, HW, B, C);
    for (int64_t b = 0; b < B && !st; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t p = 0; p < HW; p++)
                out->data[(p * B + b) * C + c] = nchw->data[(b * C + c) * HW + p];
    return st;
}

/* (L,N,B,D) -> (L,B,N,D): hs.transpose(1, 2). */
static samc_status batch_first(const samc_tensor *hs, samc_tensor *out, samc_error *err)
{
    const int64_t L = hs->shape[0], N = hs->shape[1], B = hs->shape[2], D = hs->shape[3];
    samc_status st = samc_tensor_allocv(out, err, 4, L, B, N, D);
    for (int64_t l = 0; l < L && !st; l++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t b = 0; b < B; b++)
                memcpy(out->data + ((l * B + b) * N + n) * D, hs->data + ((l * N + n) * B + b) * D,
                       (size_t)D * sizeof *out->data);
    return st;
}

/* ---- set_image ---------------------------------------------------------------------- */

samc_status samc_sam3_encode_image(samc_exec *x, const samc_tensor *pre, bool sam2, int h, int w, samc_sam3_image *img,
                                   samc_error *err)
{
    const samc_sam3_model *m = x->model;
    memset(img, 0, sizeof *img);
    img->h = h, img->w = w;
    samc_status st = samc_sam3_vision_forward(x, &m->vision, pre, sam2, &img->f, err);
    const int lvl = img->f.n_levels - m->vision.scalp - 1; /* backbone_fpn[-1] after the scalp */
    if (!st && lvl < 0)
        st = samc_fail(err, SAMC_ERR_INTERNAL, "sam3: no image level after the scalp");
    if (!st)
        st = seq_first(&img->f.level[lvl], &img->src, err);
    if (!st)
        st = seq_first(&img->f.pos[lvl], &img->src_pos, err);
    if (!st)
        img->feat_h = (int)img->f.level[lvl].shape[2], img->feat_w = (int)img->f.level[lvl].shape[3];
    if (st)
        samc_sam3_image_release(img);
    return st;
}

samc_status samc_sam3_set_image(samc_exec *x, const uint8_t *rgb, int h, int w, samc_sam3_image *img,
                                samc_error *err)
{
    const samc_sam3_model *m = x->model;
    memset(img, 0, sizeof *img);
    if (!rgb || h < 1 || w < 1)
        return samc_fail(err, SAMC_ERR_ARG, "sam3: empty image (%d x %d)", w, h);
    samc_tensor pre = {0};
    samc_status st = samc_sam3_preprocess(x, &m->processor, rgb, h, w, &pre, err);
    if (!st) /* the tracker's neck too when predict_inst may follow */
        st = samc_sam3_encode_image(x, &pre, m->has_tracker, h, w, img, err);
    samc_tensor_release(&pre);
    return st;
}

void samc_sam3_image_release(samc_sam3_image *img)
{
    samc_sam3_features_release(&img->f);
    samc_tensor_release(&img->src), samc_tensor_release(&img->src_pos);
    memset(img, 0, sizeof *img);
}

/* ---- prompts -------------------------------------------------------------------------- */

void samc_sam3_session_reset(samc_sam3_session *s)
{
    samc_sam3_text_release(&s->text);
    memset(s, 0, sizeof *s);
}

/* backbone.forward_text([text]): @tokenize, then the language backbone. */
static samc_status encode_text(samc_exec *x, samc_sam3_session *s, const char *text, samc_error *err)
{
    const samc_sam3_model *m = x->model;
    samc_tensor ids = {0};
    samc_sam3_text_release(&s->text);
    s->has_text = false;
    samc_status st = samc_sam3_tokenize(x, &m->language, text, m->language.text.context_length, &ids, err);
    if (!st)
        st = samc_sam3_language_forward(x, &m->language, &ids, &s->text, err);
    samc_tensor_release(&ids);
    s->has_text = st == SAMC_OK;
    return st;
}

/* ---- one grounding ------------------------------------------------------------------- */

typedef struct ground {
    const samc_sam3_image *img;
    const samc_tensor *text, *text_mask;     /* the prompt's text features (L,1,d), (1,L) */
    int n_boxes;
    const float (*boxes)[4];
    const int *labels;
    samc_tensor box, box_labels, box_mask;   /* the geometric prompt */
    samc_tensor geo, geo_mask;               /* geometry_encoder's outputs */
    samc_tensor prompt, prompt_mask;         /* cat([txt_feats, geo_feats]), cat([txt_masks, geo_masks], 1) */
    samc_tensor memory;                      /* transformer.encoder's */
    samc_sam3_decoded dec;
    samc_tensor hs;                          /* the decoder's states batch-first (L,B,Q,d) */
    samc_tensor logits, masks, semantic;
} ground;

static void ground_free(ground *g)
{
    samc_tensor *t[] = {&g->box, &g->box_labels, &g->box_mask, &g->geo, &g->geo_mask, &g->prompt, &g->prompt_mask,
                        &g->memory, &g->hs, &g->logits, &g->masks, &g->semantic};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        samc_tensor_release(t[i]);
    samc_sam3_decoded_release(&g->dec);
}

/* _encode_prompt: the prompt's boxes (no points) through the geometry encoder. */
static samc_status encode_geometry(samc_exec *x, ground *g, samc_error *err)
{
    const samc_sam3_model *m = x->model;
    const int64_t N = g->n_boxes;
    samc_status st = samc_tensor_allocv(&g->box, err, 3, N, (int64_t)1, (int64_t)4);
    if (!st)
        st = samc_tensor_allocv(&g->box_labels, err, 2, N, (int64_t)1);
    if (!st)
        st = samc_tensor_allocv(&g->box_mask, err, 2, (int64_t)1, N);
    for (int64_t i = 0; i < N && !st; i++) {
        memcpy(g->box.data + 4 * i, g->boxes[i], 4 * sizeof *g->box.data);
        g->box_labels.data[i] = (float)g->labels[i];
        g->box_mask.data[i] = 0.0f; /* no padding */
    }
    const samc_sam3_geometry_prompt p = {.boxes = &g->box, .box_mask = &g->box_mask, .box_labels = &g->box_labels};
    if (!st)
        st = samc_sam3_geometry_forward(x, &m->geo, &p, &g->img->src, &g->img->src_pos, g->img->feat_h,
                                        g->img->feat_w, &g->geo, &g->geo_mask, err);
    return st;
}

/* prompt = cat([txt_feats, geo_feats]), prompt_mask = cat([txt_masks, geo_masks], 1). */
static samc_status concat_prompt(ground *g, samc_error *err)
{
    const samc_tensor *tf = g->text, *tm = g->text_mask, *gf = &g->geo, *gm = &g->geo_mask;
    if (tf->ndim != 3 || gf->ndim != 3 || tf->shape[1] != 1 || gf->shape[1] != 1 || tf->shape[2] != gf->shape[2])
        return samc_fail(err, SAMC_ERR_INTERNAL, "sam3: text or geometry features do not concatenate");
    const int64_t Lt = tf->shape[0], Lg = gf->shape[0], D = tf->shape[2];
    samc_status st = samc_tensor_allocv(&g->prompt, err, 3, Lt + Lg, (int64_t)1, D);
    if (!st)
        st = samc_tensor_allocv(&g->prompt_mask, err, 2, (int64_t)1, Lt + Lg);
    if (st)
        return st;
    memcpy(g->prompt.data, tf->data, (size_t)(Lt * D) * sizeof *tf->data);
    memcpy(g->prompt.data + Lt * D, gf->data, (size_t)(Lg * D) * sizeof *gf->data);
    memcpy(g->prompt_mask.data, tm->data, (size_t)Lt * sizeof *tm->data);
    memcpy(g->prompt_mask.data + Lt, gm->data, (size_t)Lg * sizeof *gm->data);
    return SAMC_OK;
}

/* _run_decoder: tgt = query_embed repeated over the batch; then the scores. */
static samc_status decode(samc_exec *x, ground *g, samc_error *err)
{
    const samc_sam3_model *m = x->model;
    const samc_sam3_decoder *dec = &m->dec;
    samc_tensor tgt = {0};
    samc_status st = samc_tensor_allocv(&tgt, err, 3, (int64_t)dec->num_queries, (int64_t)1, (int64_t)dec->d_model);
    if (!st)
        memcpy(tgt.data, dec->query_embed, (size_t)samc_numel(&tgt) * sizeof *tgt.data);
    if (!st)
        st = samc_sam3_decoder_forward(x, dec, &tgt, &g->memory, &g->img->src_pos, &g->prompt, &g->prompt_mask,
                                       g->img->feat_h, g->img->feat_w, &g->dec, err);
    samc_tensor_release(&tgt);
    if (!st && !dec->has_presence)
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "sam3: the decoder has no presence token (Sam3Processor needs it)");
    if (!st)
        st = batch_first(&g->dec.hs, &g->hs, err);
    if (!st) /* dot_prod_scoring(hs, prompt, prompt_mask) */
        st = samc_sam3_scoring_forward(x, &m->scoring, &g->hs, &g->prompt, &g->prompt_mask, &g->logits, err);
    return st;
}

/* _run_segmentation_heads on backbone_fpn (after the scalp). */
static samc_status segment(samc_exec *x, ground *g, samc_error *err)
{
    const samc_sam3_model *m = x->model;
    return samc_sam3_segmentation_forward(x, &m->seg, g->img->f.level, g->img->f.n_levels - m->vision.scalp, &g->hs,
                                          &g->memory, &g->prompt, &g->prompt_mask, &g->masks, &g->semantic, err);
}

/* The last layer's entry of a (layers, ...) stack as a new tensor. */
static samc_status last_of(const samc_tensor *stack, int ndim, const int64_t *shape, samc_tensor *out, samc_error *err)
{
    samc_status st = samc_tensor_alloc(out, ndim, shape, err);
    const int64_t n = samc_numel(out);
    if (!st && n * stack->shape[0] != samc_numel(stack))
        st = samc_fail(err, SAMC_ERR_INTERNAL, "sam3: decoder output of unexpected size");
    if (!st)
        memcpy(out->data, stack->data + (stack->shape[0] - 1) * n, (size_t)n * sizeof *out->data);
    return st;
}

/* The model's outputs of the grounding (the last layer's). */
static samc_status outputs(ground *g, samc_sam3_result *res, samc_error *err)
{
    const samc_tensor *pm = &g->masks;
    const int64_t Q = pm->shape[1], h = pm->shape[2], w = pm->shape[3];
    if (pm->shape[0] != 1 || samc_numel(&g->dec.boxes) != 4 * Q)
        return samc_fail(err, SAMC_ERR_INTERNAL, "sam3: the model's outputs do not match (%lld queries)", (long long)Q);
    samc_status st = last_of(&g->logits, 1, (const int64_t[]){Q}, &res->pred_logits, err);
    if (!st)
        st = last_of(&g->dec.presence_logits, 1, (const int64_t[]){1}, &res->presence_logit, err);
    if (!st)
        st = samc_tensor_copy(&res->pred_boxes, &g->dec.boxes, err);
    if (!st)
        st = samc_tensor_copy(&res->pred_masks, pm, err);
    if (st)
        return st;
    res->pred_boxes.ndim = 2, res->pred_boxes.shape[0] = Q, res->pred_boxes.shape[1] = 4;
    res->pred_masks.ndim = 3, res->pred_masks.shape[0] = Q, res->pred_masks.shape[1] = h, res->pred_masks.shape[2] = w;
    return SAMC_OK;
}

samc_status samc_sam3_forward_grounding(samc_exec *x, const samc_sam3_image *img, const samc_tensor *text,
                                        const samc_tensor *text_mask, int n_boxes, const float (*boxes)[4],
                                        const int *labels, samc_sam3_result *res, samc_error *err)
{
    const samc_sam3_model *m = x->model;
    memset(res, 0, sizeof *res);
    if (!img->src.data)
        return samc_fail(err, SAMC_ERR_ARG, "sam3: no image features (set_image first)");
    ground g = {.img = img, .text = text, .text_mask = text_mask, .n_boxes = n_boxes, .boxes = boxes,
                .labels = labels};
    samc_status st = encode_geometry(x, &g, err);
    if (!st)
        st = concat_prompt(&g, err);
    if (!st) /* _run_encoder: src, src_pos, the prompt and its padding mask */
        st = samc_sam3_fusion_forward(x, &m->enc, &img->src, &img->src_pos, &g.prompt, &g.prompt_mask, img->feat_h,
                                      img->feat_w, &g.memory, err);
    if (!st)
        st = decode(x, &g, err);
    if (!st)
        st = segment(x, &g, err);
    if (!st)
        st = outputs(&g, res, err);
    ground_free(&g);
    if (st)
        samc_sam3_result_release(res);
    return st;
}

samc_status samc_sam3_ground(samc_exec *x, const samc_sam3_image *img, const samc_sam3_session *s, float threshold,
                             samc_sam3_result *res, samc_error *err)
{
    const samc_sam3_model *m = x->model;
    memset(res, 0, sizeof *res);
    if (!s->has_text)
        return samc_fail(err, SAMC_ERR_ARG, "sam3: no text encoded (set a text or add a box first)");
    if (m->cfg.joint_box_scores) /* Sam3Processor reads the class scores, not the joint ones */
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "sam3: this detector scores jointly (supervise_joint_box_scores: "
                         "the video model's); the image processor takes an image model's config");
    samc_status st = samc_sam3_forward_grounding(x, img, &s->text.memory, &s->text.mask, s->n_boxes,
                                                 (const float(*)[4])s->boxes, s->labels, res, err);
    if (st)
        return st;
    /* Sam3Processor._forward_grounding's tail: the model's output dict in
     * PyTorch's shapes (views of the results) */
    const int64_t Q = res->pred_masks.shape[0], h = res->pred_masks.shape[1], w = res->pred_masks.shape[2];
    samc_tensor lg = samc_tensor_view(res->pred_logits.data, 3, (const int64_t[]){1, Q, 1});
    samc_tensor bx = samc_tensor_view(res->pred_boxes.data, 3, (const int64_t[]){1, Q, 4});
    samc_tensor mk = samc_tensor_view(res->pred_masks.data, 4, (const int64_t[]){1, Q, h, w});
    samc_tensor pr = samc_tensor_view(res->presence_logit.data, 2, (const int64_t[]){1, 1});
    st = samc_sam3_postprocess(x, &m->processor, &lg, &bx, &mk, &pr, img->h, img->w, threshold, &res->post, err);
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
    samc_sam3_detections_release(&res->post);
    samc_tensor_release(&res->pred_logits), samc_tensor_release(&res->pred_boxes);
    samc_tensor_release(&res->presence_logit), samc_tensor_release(&res->pred_masks);
    memset(res, 0, sizeof *res);
}
