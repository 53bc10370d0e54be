/* SPDX-License-Identifier: Apache-2.0 */
/* image_predict.c - SAM2ImagePredictor.predict on computed features. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/connected_components.h"
#include "core/models/tracker/image_predict.h"
#include "core/models/tracker/sam_heads.h"
#include "core/models/tracker/image_predict_batch.h"

static bool finite2(float a, float b) { return isfinite(a) && isfinite(b); }

samc_status samc_sam_check_prompt(const samc_tracker_model *tr, const samc_frame_features *f,
                                   const samc_sam_prompt *p, samc_error *err)
{
    const float W = p->normalized_coords ? 1.0f : (float)f->orig_w, H = p->normalized_coords ? 1.0f : (float)f->orig_h;
    if (p->n_points < 0 || p->n_points > 4096)
        return samc_fail(err, SAMC_ERR_ARG, "point count %d is outside 0..4096", p->n_points);
    if (p->n_points && (!p->points || !p->labels))
        return samc_fail(err, SAMC_ERR_ARG, "points given without coordinates or labels");
    for (int i = 0; i < p->n_points; i++) {
        const float x = p->points[2 * i], y = p->points[2 * i + 1];
        if (!finite2(x, y))
            return samc_fail(err, SAMC_ERR_ARG, "point %d (%g,%g) is not finite", i, x, y);
        if (!p->allow_points_outside && (x < 0 || y < 0 || x > W || y > H))
            return p->normalized_coords
                       ? samc_fail(err, SAMC_ERR_ARG, "point %d (%g,%g) is outside [0, 1] (normalized coordinates)",
                                   i, x, y)
                       : samc_fail(err, SAMC_ERR_ARG, "point %d (%g,%g) is outside the %dx%d image", i, x, y,
                                   f->orig_w, f->orig_h);
        if (p->labels[i] < -1 || p->labels[i] > 3)
            return samc_fail(err, SAMC_ERR_ARG, "point %d has label %d; labels must be in -1..3", i, p->labels[i]);
    }
    if (p->has_box) {
        const float *b = p->box;
        if (!finite2(b[0], b[1]) || !finite2(b[2], b[3]))
            return samc_fail(err, SAMC_ERR_ARG, "box (%g,%g,%g,%g) is not finite", b[0], b[1], b[2], b[3]);
        if (b[2] < b[0] || b[3] < b[1])
            return samc_fail(err, SAMC_ERR_ARG, "box (%g,%g,%g,%g) has x1 < x0 or y1 < y0", b[0], b[1], b[2], b[3]);
    }
    if (p->mask_input) {
        const samc_tensor *t = p->mask_input;
        const int64_t s = 4 * (int64_t)tr->emb;
        const bool ok3 = t->ndim == 3 && t->shape[0] == 1 && t->shape[1] == s && t->shape[2] == s;
        const bool ok4 = t->ndim == 4 && t->shape[0] == 1 && t->shape[1] == 1 && t->shape[2] == s && t->shape[3] == s;
        char got[96];
        if (!ok3 && !ok4)
            return samc_fail(err, SAMC_ERR_SHAPE, "mask input must be (1,%lld,%lld) low-res logits, got %s", (long long)s,
                             (long long)s, samc_shape_str(t->ndim, t->shape, got, sizeof got));
        for (int64_t i = 0; i < samc_numel(t); i++)
            if (!isfinite(t->data[i]))
                return samc_fail(err, SAMC_ERR_ARG, "mask input has a non-finite value at index %lld", (long long)i);
    }
    return SAMC_OK;
}

/* torch.clamp(x, -32, 32) (NaN stays NaN); compares, not fminf/fmaxf,
 * which were library calls per element here (~0.4 ms a predict). */
void samc__sam2_clamp_logits(float *dst, const float *src, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        const float v = src[i];
        dst[i] = v < -32.0f ? -32.0f : v > 32.0f ? 32.0f : v;
    }
}

/* transform_coords: with normalize (pixel input) x / w then * resolution,
 * two float32 roundings; without, x * resolution alone. */
void samc__sam_to_model_coords(float x, float y, const samc_frame_features *f, bool normalized, int S, float *out)
{
    const float nx = normalized ? x : x / (float)f->orig_w, ny = normalized ? y : y / (float)f->orig_h;
    out[0] = nx * (float)S;
    out[1] = ny * (float)S;
}

/* The prompt as PromptEncoder.forward takes it: box corners first (labels 2
 * and 3, as _predict prepends them), then the points, in model pixels. */
static samc_status prompt_points(const samc_tracker_model *tr, const samc_frame_features *f, const samc_sam_prompt *p,
                                 float **coords, int32_t **labels, int *n, samc_error *err)
{
    const int nb = p->has_box ? 2 : 0, N = nb + p->n_points;
    *coords = calloc((size_t)(N ? N : 1) * 2, sizeof **coords);
    *labels = calloc((size_t)(N ? N : 1), sizeof **labels);
    *n = N;
    if (!*coords || !*labels)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (p->has_box) {
        samc__sam_to_model_coords(p->box[0], p->box[1], f, p->normalized_coords, tr->cfg.image_size, *coords);
        samc__sam_to_model_coords(p->box[2], p->box[3], f, p->normalized_coords, tr->cfg.image_size, *coords + 2);
        (*labels)[0] = 2, (*labels)[1] = 3;
    }
    for (int i = 0; i < p->n_points; i++) {
        samc__sam_to_model_coords(p->points[2 * i], p->points[2 * i + 1], f, p->normalized_coords, tr->cfg.image_size, *coords + 2 * (nb + i));
        (*labels)[nb + i] = p->labels[i];
    }
    return SAMC_OK;
}

/* PromptEncoder.forward, get_dense_pe and MaskDecoder.forward: part by
 * part, or in the one body of an implementation that has it. */
static samc_status sam_heads(samc_exec *x, const samc_tracker_model *tr, const samc_frame_features *f,
                             const samc_sam_prompt *p, samc_tensor dec[4], samc_error *err)
{
    float *coords = NULL;
    int32_t *labels = NULL;
    int N = 0;
    samc_tensor sparse = {0}, dense = {0}, pe = {0}, mask = {0};
    samc_status st = prompt_points(tr, f, p, &coords, &labels, &N, err);
    if (!st && p->mask_input) {
        const int64_t sz = 4 * (int64_t)tr->emb, shape[4] = {1, 1, sz, sz};
        mask = samc_tensor_view(p->mask_input->data, 4, shape);
    }
    const bool hr = tr->cfg.use_high_res_features_in_sam;
    const samc_layer *W = samc_sam_heads_whole(x, &tr->prompt_encoder, &tr->mask_decoder);
    if (!st && W)
        st = samc_sam_heads_forward_whole(x, W, &tr->prompt_encoder, &samc_no_scope, coords, labels, 1, N,
                                          p->mask_input ? &mask : NULL, f, p->multimask, dec, err);
    else if (!st && !(st = samc_prompt_encoder_forward(x, &tr->prompt_encoder, &samc_no_scope, coords, labels, 1, N,
                                                        p->mask_input ? &mask : NULL, &sparse, &dense, err)) &&
             !(st = samc_prompt_encoder_dense_pe(x, &tr->prompt_encoder, &pe, err)))
        st = samc_mask_decoder_forward(x, &tr->mask_decoder, &samc_no_scope, &f->image_embed, &pe, &sparse, &dense,
                                       p->multimask, false, hr ? &f->feat_s0 : NULL, hr ? &f->feat_s1 : NULL, dec, err);
    free(coords);
    free(labels);
    samc_tensor_release(&sparse), samc_tensor_release(&dense), samc_tensor_release(&pe);
    return st;
}

/* SAM2Transforms.postprocess_masks: optional hole / sprinkle filling on the
 * low-res logits (a copy: the returned low-res masks stay unfilled), then
 * the bilinear resize to the original size (@postprocess). */
static samc_status postprocess(samc_exec *x, const samc_tracker_model *tr, const samc_frame_features *f, const samc_tensor *low,
                               const samc_sam_image_opts *o, samc_sam_prediction *out, samc_error *err)
{
    samc_tensor up = {0}, filled = {0};
    const bool fill = o && (o->max_hole_area > 0 || o->max_sprinkle_area > 0);
    samc_status st = SAMC_OK;
    if (fill && !(st = samc_tensor_copy(&filled, low, err)) &&
        (st = samc_fill_holes_image_predictor(&filled, 0.0f, o->max_hole_area, o->max_sprinkle_area)))
        st = samc_fail(err, st, "hole filling failed");
    if (!st)
        st = samc_tracker_postprocess(x, tr, fill ? &filled : low, f->orig_h, f->orig_w, &up, err);
    samc_tensor_release(&filled);
    if (st)
        return st;
    out->masks = up; /* (1,C,H,W) -> (C,H,W): same data */
    out->masks.ndim = 3;
    memmove(out->masks.shape, up.shape + 1, 3 * sizeof(int64_t));
    return SAMC_OK;
}

samc_status samc_sam_predict(samc_exec *x, const samc_tracker_model *tr, const samc_frame_features *f,
                             const samc_sam_prompt *p, const samc_sam_image_opts *opts, samc_sam_prediction *out,
                             samc_error *err)
{
        memset(out, 0, sizeof *out);
    samc_status st = samc_sam_check_prompt(tr, f, p, err);
    if (st)
        return st;
    samc_tensor dec[4] = {{0}};
    st = sam_heads(x, tr, f, p, dec, err);
    if (!st)
        st = postprocess(x, tr, f, &dec[0], opts, out, err);
    if (!st) {
        const int64_t C = dec[0].shape[1], s = dec[0].shape[2];
        out->num_masks = (int)C;
        if (!(st = samc_tensor_allocv(&out->iou, err, 1, C)) && !(st = samc_tensor_alloc_uninit(&out->low_res, 3, (const int64_t[]){C, s, s}, err))) {
            memcpy(out->iou.data, dec[1].data, (size_t)C * sizeof(float));
            samc__sam2_clamp_logits(out->low_res.data, dec[0].data, C * s * s); /* the returned copy only (_predict) */
            out->object_score = dec[3].data[0];
        }
    }
    if (st)
        samc_sam_prediction_release(out);
    for (int i = 0; i < 4; i++)
        samc_tensor_release(&dec[i]);
    return st;
}

void samc_sam_prediction_release(samc_sam_prediction *p)
{
    samc_tensor_release(&p->masks);
    samc_tensor_release(&p->iou);
    samc_tensor_release(&p->low_res);
    p->num_masks = 0;
}
