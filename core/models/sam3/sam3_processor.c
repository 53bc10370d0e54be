/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_processor.c - Sam3Processor's transforms as two parts mounted at the
 * top (sam3/model/sam3_image_processor.py): @preprocess (the image to the
 * model's input) and @postprocess (_forward_grounding's thresholding, box
 * scaling and mask upsampling): rows, forwards, isolated runners and
 * op-test inputs. No weights. */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_io.h"
#include "core/models/sam3/sam3_parts.h"

enum { PREPROCESS, N_PRE_ROWS };
enum { SCORES, BOXES, MASKS, POSTPROCESS, N_POST_ROWS };

static samc_isolated_body iso_preprocess, iso_scores, iso_boxes, iso_masks, iso_postprocess;
static samc_status ex_preprocess(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_scores(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_boxes(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_masks(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_postprocess(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);

static const samc_layer_def pre_rows[N_PRE_ROWS] = {
    [PREPROCESS] = {.pattern = "@preprocess", .table = SAMC_OPS_SAM3,
                    .body = SAMC_BODY(samc_sam3_ops, sam3_preprocess), .parity = true, .isolated = iso_preprocess,
                    .example = ex_preprocess},
};
const samc_part_def samc_sam3_preprocess_part = {"Sam3Processor.transform", pre_rows, N_PRE_ROWS, NULL};

/* The sub-steps of @postprocess are named for the work they do. */
static const samc_layer_def post_rows[N_POST_ROWS] = {
    [SCORES] = {.pattern = "@postprocess.scores", .table = SAMC_OPS_SAM3,
                .body = SAMC_BODY(samc_sam3_ops, sam3_post_scores), .isolated = iso_scores, .example = ex_scores},
    [BOXES] = {.pattern = "@postprocess.boxes", .table = SAMC_OPS_SAM3,
               .body = SAMC_BODY(samc_sam3_ops, sam3_post_boxes), .isolated = iso_boxes, .example = ex_boxes},
    [MASKS] = {.pattern = "@postprocess.masks", .table = SAMC_OPS_SAM3,
               .body = SAMC_BODY(samc_sam3_ops, sam3_post_masks), .isolated = iso_masks, .example = ex_masks},
    [POSTPROCESS] = {.pattern = "@postprocess", .parity = true, .isolated = iso_postprocess,
                     .example = ex_postprocess},
};
const samc_part_def samc_sam3_postprocess_part = {"Sam3Processor._forward_grounding", post_rows, N_POST_ROWS, NULL};

static const char *const slot0[] = {"0"};

/* ---- forwards ------------------------------------------------------------------- */

samc_status samc_sam3_preprocess(samc_exec *x, const samc_sam3_transforms *t, const uint8_t *rgb, int h, int w,
                                 samc_tensor *out, samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, t, &pre_rows[PREPROCESS], 0);
    const samc_sam3_ops *ops = L->ops;
    memset(out, 0, sizeof *out);
    const samc_tensor *outs[] = {out};
    samc_status st = samc_tensor_allocv(out, err, 4, (int64_t)1, (int64_t)3, (int64_t)t->resolution,
                                        (int64_t)t->resolution);
    if (!st)
        st = samc_layer_done(x, L, NULL, ops->sam3_preprocess(samc_layer_ctx(x, L), rgb, h, w, t->resolution, out),
                             err, 1, slot0, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

void samc_sam3_detections_release(samc_sam3_detections *d)
{
    samc_tensor_release(&d->scores), samc_tensor_release(&d->boxes), samc_tensor_release(&d->masks);
}

/* probs = sigmoid(logits) * sigmoid(presence), (B, Q). */
static samc_status probabilities(samc_exec *x, const samc_sam3_transforms *t, const samc_tensor *logits,
                                 const samc_tensor *presence, samc_tensor *probs, samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, t, &post_rows[SCORES], 0);
    const samc_sam3_ops *ops = L->ops;
    samc_status st = samc_tensor_allocv(probs, err, 2, logits->shape[0], logits->shape[1]);
    return st ? st
              : samc_layer_done(x, L, NULL, ops->sam3_post_scores(samc_layer_ctx(x, L), logits, presence, probs), err,
                                0, NULL, NULL);
}

/* keep = out_probs > confidence_threshold (a float32 compare), then the
 * kept boxes in pixels and masks upsampled. */
static samc_status keep(samc_exec *x, const samc_sam3_transforms *t, const samc_tensor *probs, float threshold,
                        const samc_tensor *boxes, const samc_tensor *masks, int H, int W, samc_sam3_detections *out,
                        samc_error *err)
{
    const int64_t n = samc_numel(probs), h = masks->shape[2], w = masks->shape[3];
    int64_t M = 0;
    for (int64_t i = 0; i < n; i++)
        M += probs->data[i] > threshold;
    samc_tensor sel_b = {0}, sel_m = {0};
    samc_status st = samc_tensor_allocv(&out->scores, err, 1, M);
    if (!st)
        st = samc_tensor_allocv(&out->boxes, err, 2, M, (int64_t)4);
    if (!st)
        st = samc_tensor_allocv(&out->masks, err, 4, M, (int64_t)1, (int64_t)H, (int64_t)W);
    if (!st)
        st = samc_tensor_allocv(&sel_b, err, 2, M, (int64_t)4);
    if (!st)
        st = samc_tensor_allocv(&sel_m, err, 4, M, (int64_t)1, h, w);
    for (int64_t i = 0, k = 0; i < n && !st; i++)
        if (probs->data[i] > threshold) {
            out->scores.data[k] = probs->data[i];
            memcpy(sel_b.data + k * 4, boxes->data + i * 4, 4 * sizeof *boxes->data);
            memcpy(sel_m.data + k * h * w, masks->data + i * h * w, (size_t)(h * w) * sizeof *masks->data);
            k++;
        }
    const samc_layer *Lb = samc_part_layer(x, t, &post_rows[BOXES], 0), *Lm = samc_part_layer(x, t, &post_rows[MASKS], 0);
    if (!st)
        st = samc_layer_done(x, Lb, NULL,
                             ((const samc_sam3_ops *)Lb->ops)->sam3_post_boxes(samc_layer_ctx(x, Lb), &sel_b, H, W,
                                                                               &out->boxes),
                             err, 0, NULL, NULL);
    if (!st)
        st = samc_layer_done(x, Lm, NULL,
                             ((const samc_sam3_ops *)Lm->ops)->sam3_post_masks(samc_layer_ctx(x, Lm), &sel_m, H, W,
                                                                               &out->masks),
                             err, 0, NULL, NULL);
    samc_tensor_release(&sel_b), samc_tensor_release(&sel_m);
    return st;
}

samc_status samc_sam3_postprocess(samc_exec *x, const samc_sam3_transforms *t, const samc_tensor *logits,
                                  const samc_tensor *boxes, const samc_tensor *masks, const samc_tensor *presence,
                                  int H, int W, float threshold, samc_sam3_detections *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    if (logits->ndim != 3 || boxes->ndim != 3 || boxes->shape[2] != 4 || masks->ndim != 4 ||
        boxes->shape[0] != logits->shape[0] || boxes->shape[1] != logits->shape[1] ||
        masks->shape[0] != logits->shape[0] || masks->shape[1] != logits->shape[1] || H < 1 || W < 1)
        return samc_fail(err, SAMC_ERR_SHAPE, "@postprocess: pred_logits (B,Q,1), pred_boxes (B,Q,4), pred_masks "
                         "(B,Q,h,w) and a positive image size expected");
    samc_tensor probs = {0};
    samc_status st = probabilities(x, t, logits, presence, &probs, err);
    if (!st)
        st = keep(x, t, &probs, threshold, boxes, masks, H, W, out, err);
    samc_tensor_release(&probs);
    if (st) {
        samc_sam3_detections_release(out);
        return st;
    }
    static const char *const names[] = {"scores", "boxes", "masks"};
    const samc_tensor *outs[] = {&out->scores, &out->boxes, &out->masks};
    samc_layer_emit(x, samc_part_layer(x, t, &post_rows[POSTPROCESS], 0), NULL, 3, names, outs);
    return SAMC_OK;
}

/* ---- isolated runners --------------------------------------------------------------- */

/* The recorded image (H, W, 3), any numeric dtype, as the uint8 it was. */
static samc_status iso_preprocess(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                  samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *img = samc__sam3_in(&r, "0", NULL);
    if (img && (img->ndim != 3 || img->shape[2] != 3))
        samc__sam3_io_shape(&r, "@preprocess: image is not (H,W,3)");
    uint8_t *u8 = NULL;
    if (!r.st) {
        const int64_t n = samc_numel(img);
        if (!(u8 = malloc((size_t)(n ? n : 1))))
            r.st = samc_fail(err, SAMC_ERR_NOMEM, "@preprocess: image copy");
        for (int64_t i = 0; i < n && u8; i++) {
            const float v = img->data[i];
            u8[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    samc_tensor y = {0};
    samc_capture cap;
    samc_capture_begin(x, &cap, L->name, out);
    if (!r.st)
        r.st = samc_sam3_preprocess(x, L->self, u8, (int)img->shape[0], (int)img->shape[1], &y, err);
    samc_capture_end(x, &cap);
    free(u8);
    samc_tensor_release(&y);
    return samc__sam3_io_end(&r);
}

static samc_status iso_scores(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                              samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *lg = samc__sam3_in(&r, "pred_logits", NULL), *pr = samc__sam3_in(&r, "presence_logit_dec", NULL);
    if (lg && lg->ndim != 3)
        samc__sam3_io_shape(&r, "@postprocess.scores: pred_logits is not (B,Q,1)");
    samc_tensor *y = r.st ? NULL : samc__sam3_out_v(&r, "0", 2, lg->shape[0], lg->shape[1]);
    if (y)
        r.st = samc_layer_done(x, L, NULL, ((const samc_sam3_ops *)L->ops)->sam3_post_scores(samc_layer_ctx(x, L), lg, pr, y),
                               err, 0, NULL, NULL);
    return samc__sam3_io_end(&r);
}

static samc_status iso_boxes(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *b = samc__sam3_in(&r, "boxes", "0");
    const int H = (int)samc__sam3_in_num(&r, "original_height", NULL), W = (int)samc__sam3_in_num(&r, "original_width", NULL);
    samc_tensor *y = r.st ? NULL : samc__sam3_out(&r, "0", b->ndim, b->shape);
    if (y)
        r.st = samc_layer_done(x, L, NULL, ((const samc_sam3_ops *)L->ops)->sam3_post_boxes(samc_layer_ctx(x, L), b, H, W, y),
                               err, 0, NULL, NULL);
    return samc__sam3_io_end(&r);
}

static samc_status iso_masks(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                             samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *m = samc__sam3_in(&r, "masks", "0");
    const int H = (int)samc__sam3_in_num(&r, "original_height", NULL), W = (int)samc__sam3_in_num(&r, "original_width", NULL);
    if (m && (m->ndim != 4 || H < 1 || W < 1))
        samc__sam3_io_shape(&r, "@postprocess.masks: masks (M,1,h,w) and a positive size expected");
    samc_tensor *y = r.st ? NULL : samc__sam3_out_v(&r, "0", 4, m->shape[0], m->shape[1], (int64_t)H, (int64_t)W);
    if (y)
        r.st = samc_layer_done(x, L, NULL, ((const samc_sam3_ops *)L->ops)->sam3_post_masks(samc_layer_ctx(x, L), m, H, W, y),
                               err, 0, NULL, NULL);
    return samc__sam3_io_end(&r);
}

static samc_status iso_postprocess(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                   samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *lg = samc__sam3_in(&r, "pred_logits", NULL), *bx = samc__sam3_in(&r, "pred_boxes", NULL);
    const samc_tensor *mk = samc__sam3_in(&r, "pred_masks", NULL), *pr = samc__sam3_in(&r, "presence_logit_dec", NULL);
    const int H = (int)samc__sam3_in_num(&r, "original_height", NULL);
    const int W = (int)samc__sam3_in_num(&r, "original_width", NULL);
    const double thr = samc__sam3_in_num(&r, "confidence_threshold", NULL);
    samc_sam3_detections d = {0};
    samc_capture cap;
    samc_capture_begin(x, &cap, L->name, out);
    if (!r.st)
        r.st = samc_sam3_postprocess(x, L->self, lg, bx, mk, pr, H, W, (float)thr, &d, err);
    samc_capture_end(x, &cap);
    samc_sam3_detections_release(&d);
    return samc__sam3_io_end(&r);
}

/* ---- op-test inputs ------------------------------------------------------------------ */

static samc_status ex_preprocess(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                 samc_error *err)
{
    (void)self, (void)index;
    SAMC_INPUT_RANDOM("0", 0, 256, 3, (int64_t)(full ? 768 : 90), (int64_t)(full ? 1024 : 120), (int64_t)3);
    return SAMC_OK;
}

/* Q queries of B = 1 image, masks at a quarter of the model's side. */
static samc_status ex_scores(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                             samc_error *err)
{
    (void)self, (void)index, (void)full;
    SAMC_INPUT_RANDOM("pred_logits", -6, 6, 3, (int64_t)1, (int64_t)200, (int64_t)1);
    SAMC_INPUT_RANDOM("presence_logit_dec", -3, 3, 2, (int64_t)1, (int64_t)1);
    return SAMC_OK;
}

static samc_status ex_boxes(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)self, (void)index;
    SAMC_INPUT_RANDOM("boxes", 0, 1, 2, (int64_t)17, (int64_t)4);
    samc_status st = samc_inputs_scalar(in, "original_height", full ? 768 : 90, err);
    return st ? st : samc_inputs_scalar(in, "original_width", full ? 1024 : 120, err);
}

static samc_status ex_masks(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                            samc_error *err)
{
    (void)index;
    const int64_t s = ((const samc_sam3_transforms *)self)->resolution / (full ? 4 : 16);
    SAMC_INPUT_RANDOM("masks", -20, 20, 4, (int64_t)(full ? 17 : 3), (int64_t)1, s, s);
    samc_status st = samc_inputs_scalar(in, "original_height", full ? 768 : 90, err);
    return st ? st : samc_inputs_scalar(in, "original_width", full ? 1024 : 120, err);
}

static samc_status ex_postprocess(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                  samc_error *err)
{
    (void)index;
    const int64_t s = ((const samc_sam3_transforms *)self)->resolution / (full ? 4 : 16), Q = full ? 200 : 20;
    SAMC_INPUT_RANDOM("pred_logits", -4, 4, 3, (int64_t)1, Q, (int64_t)1);
    SAMC_INPUT_RANDOM("pred_boxes", 0, 1, 3, (int64_t)1, Q, (int64_t)4);
    SAMC_INPUT_RANDOM("pred_masks", -20, 20, 4, (int64_t)1, Q, s, s);
    SAMC_INPUT_RANDOM("presence_logit_dec", 1, 3, 2, (int64_t)1, (int64_t)1);
    samc_status st = samc_inputs_scalar(in, "original_height", full ? 768 : 90, err);
    if (!st)
        st = samc_inputs_scalar(in, "original_width", full ? 1024 : 120, err);
    return st ? st : samc_inputs_scalar(in, "confidence_threshold", 0.5, err);
}
