/* SPDX-License-Identifier: Apache-2.0 */
/* image_predict_batch.c - SAM2ImagePredictor._predict on a batch of prompts
 * (sam2_image_predictor.py): box corners prepended to the points (labels 2,
 * 3), one prompt-encoder pass for the (B, N, 2) tensors, one mask-decoder
 * pass with repeat_image when B > 1 (the image embedding and high-res
 * features stay batch 1: the bodies broadcast them), postprocess_masks on the
 * (B, C, h, w) logits, and the clamped low-res copy. */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/image_predict_batch.h"
#include "core/models/tracker/sam_heads.h"
#include "core/nn/connected_components.h"

enum { MAX_BATCH = 65536 };

/* Each prompt through the single-prompt check (same messages), prefixed
 * with its index. */
static samc_status check_batch(const samc_tracker_model *tr, const samc_frame_features *f, const samc_sam_batch_prompt *p,
                               samc_error *err)
{
    if (p->B < 1 || p->B > MAX_BATCH)
        return samc_fail(err, SAMC_ERR_ARG, "prompt batch size %d is outside 1..%d", p->B, MAX_BATCH);
    if (p->n_points == 0 && !p->boxes && !p->mask_input)
        return samc_fail(err, SAMC_ERR_ARG, "a prompt batch needs points, boxes or mask inputs");
    const int64_t s = 4 * (int64_t)tr->emb, shape[3] = {1, s, s};
    for (int b = 0; b < p->B; b++) {
        samc_tensor mask = p->mask_input ? samc_tensor_view((float *)p->mask_input + b * s * s, 3, shape)
                                         : (samc_tensor){0};
        samc_sam_prompt one = {.n_points = p->n_points,
                                .points = p->points ? p->points + (int64_t)b * p->n_points * 2 : NULL,
                                .labels = p->labels ? p->labels + (int64_t)b * p->n_points : NULL,
                                .has_box = p->boxes != NULL,
                                .mask_input = p->mask_input ? &mask : NULL,
                                .allow_points_outside = p->allow_points_outside,
                                .normalized_coords = p->normalized_coords};
        if (p->boxes)
            memcpy(one.box, p->boxes + 4 * b, sizeof one.box);
        samc_status st = samc_sam_check_prompt(tr, f, &one, err);
        if (st) {
            samc_error_prefix(err, "prompt %d of the batch", b);
            return st;
        }
    }
    return SAMC_OK;
}

/* The (B, N, 2) coordinates in model pixels and (B, N) labels, boxes first,
 * through PromptEncoder.forward, get_dense_pe and MaskDecoder.forward (part
 * by part, or in the one body of an implementation that has it). */
static samc_status sam_heads(samc_exec *x, const samc_tracker_model *tr, const samc_frame_features *f,
                             const samc_sam_batch_prompt *p, samc_tensor dec[4], samc_error *err)
{
    const int nb = p->boxes ? 2 : 0, N = nb + p->n_points, S = tr->cfg.image_size;
    const int64_t B = p->B, cells = B * (N ? N : 1);
    float *coords = calloc((size_t)cells * 2, sizeof *coords);
    int32_t *labels = calloc((size_t)cells, sizeof *labels);
    samc_status st = (!coords || !labels) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
    for (int64_t b = 0; !st && b < B; b++) {
        float *c = coords + b * N * 2;
        int32_t *l = labels + b * N;
        if (p->boxes) {
            samc__sam_to_model_coords(p->boxes[4 * b], p->boxes[4 * b + 1], f, p->normalized_coords, S, c);
            samc__sam_to_model_coords(p->boxes[4 * b + 2], p->boxes[4 * b + 3], f, p->normalized_coords, S, c + 2);
            l[0] = 2, l[1] = 3;
        }
        for (int i = 0; i < p->n_points; i++) {
            const float *pt = p->points + (b * p->n_points + i) * 2;
            samc__sam_to_model_coords(pt[0], pt[1], f, p->normalized_coords, S, c + 2 * (nb + i));
            l[nb + i] = p->labels[b * p->n_points + i];
        }
    }
    const int64_t s = 4 * (int64_t)tr->emb, mshape[4] = {B, 1, s, s};
    samc_tensor mask = p->mask_input ? samc_tensor_view((float *)p->mask_input, 4, mshape) : (samc_tensor){0};
    samc_tensor sparse = {0}, dense = {0}, pe = {0};
    const bool hr = tr->cfg.use_high_res_features_in_sam, batched = N > 0 && p->B > 1;
    const samc_layer *W = samc_sam_heads_whole(x, &tr->prompt_encoder, &tr->mask_decoder);
    if (!st && W)
        st = samc_sam_heads_forward_whole(x, W, &tr->prompt_encoder, &samc_no_scope, coords, labels, p->B, N,
                                          p->mask_input ? &mask : NULL, f, p->multimask, dec, err);
    else if (!st && !(st = samc_prompt_encoder_forward(x, &tr->prompt_encoder, &samc_no_scope, coords, labels, p->B, N,
                                                        p->mask_input ? &mask : NULL, &sparse, &dense, err)) &&
             !(st = samc_prompt_encoder_dense_pe(x, &tr->prompt_encoder, &pe, err)))
        st = samc_mask_decoder_forward(x, &tr->mask_decoder, &samc_no_scope, &f->image_embed, &pe, &sparse, &dense,
                                       p->multimask, batched, hr ? &f->feat_s0 : NULL, hr ? &f->feat_s1 : NULL, dec,
                                       err);
    free(coords);
    free(labels);
    samc_tensor_release(&sparse), samc_tensor_release(&dense), samc_tensor_release(&pe);
    return st;
}

/* postprocess_masks: hole / sprinkle fill on a copy of the low-res logits
 * (predictor threshold 0), then the bilinear resize of all B*C planes. */
static samc_status upscale_all(samc_exec *x, const samc_tracker_model *tr, const samc_frame_features *f,
                               const samc_tensor *low, const samc_sam_image_opts *o, samc_tensor *up, samc_error *err)
{
    samc_tensor filled = {0};
    const bool fill = o && (o->max_hole_area > 0 || o->max_sprinkle_area > 0);
    samc_status st = SAMC_OK;
    if (fill && !(st = samc_tensor_copy(&filled, low, err)) &&
        (st = samc_fill_holes_image_predictor(&filled, 0.0f, o->max_hole_area, o->max_sprinkle_area)))
        st = samc_fail(err, st, "hole filling failed");
    if (!st)
        st = samc_tracker_postprocess(x, tr, fill ? &filled : low, f->orig_h, f->orig_w, up, err);
    samc_tensor_release(&filled);
    return st;
}

/* Whether prompt b has a mask upscale_keep keeps (all do without it). */
bool samc_sam_batch_upscaled(const samc_sam_batch_prompt *p, const float *iou, int C, int64_t b)
{
    for (int c = 0; p->upscale_keep && c < C; c++)
        if (p->upscale_keep(p->keep_user, iou[b * C + c]))
            return true;
    return !p->upscale_keep;
}

/* ... of the prompts samc_sam_batch_upscaled keeps: their low-res planes
 * gathered into (K, C, h, w) and upscaled into up, which then holds only
 * them, in order (nothing when K = 0). Whole prompts, C planes each: the
 * resize's float steps depend on C as PyTorch's kernels do (core/nn/
 * resize_bilinear.c: C == 1 is its channels-last kernel). Gathering the
 * low-res planes (a 16th of the output at the defaults) costs less than a
 * full-size output written for the dropped prompts too. */
static samc_status upscale(samc_exec *x, const samc_tracker_model *tr, const samc_frame_features *f, const samc_tensor *low,
                           const samc_tensor *iou, const samc_sam_batch_prompt *p, const samc_sam_image_opts *o,
                           samc_tensor *up, samc_error *err)
{
    const int64_t B = low->shape[0], C = low->shape[1], pl = C * low->shape[2] * low->shape[3];
    int64_t k = 0;
    for (int64_t b = 0; b < B; b++)
        k += samc_sam_batch_upscaled(p, iou->data, (int)C, b);
    if (k == B)
        return upscale_all(x, tr, f, low, o, up, err);
    if (k == 0)
        return SAMC_OK;
    samc_tensor sub = {0};
    samc_status st = samc_tensor_alloc_uninit(&sub, 4, (const int64_t[]){k, C, low->shape[2], low->shape[3]}, err);
    for (int64_t b = 0, j = 0; !st && b < B; b++)
        if (samc_sam_batch_upscaled(p, iou->data, (int)C, b))
            memcpy(sub.data + j++ * pl, low->data + b * pl, (size_t)pl * sizeof(float));
    if (!st)
        st = upscale_all(x, tr, f, &sub, o, up, err);
    samc_tensor_release(&sub);
    return st;
}

samc_status samc_sam_predict_batch(samc_exec *x, const samc_tracker_model *tr, const samc_frame_features *f,
                                   const samc_sam_batch_prompt *p, const samc_sam_image_opts *opts,
                                   samc_sam_batch_prediction *out, samc_error *err)
{
        memset(out, 0, sizeof *out);
    samc_status st = check_batch(tr, f, p, err);
    if (st)
        return st;
    samc_tensor dec[4] = {{0}};
    st = sam_heads(x, tr, f, p, dec, err);
    if (!st)
        st = upscale(x, tr, f, &dec[0], &dec[1], p, opts, &out->masks, err);
    if (!st) {
        out->B = p->B, out->C = (int)dec[0].shape[1];
        out->iou = dec[1], dec[1] = (samc_tensor){0};
        out->low_res = dec[0], dec[0] = (samc_tensor){0};
        /* the returned copy only (_predict) */
        samc__sam2_clamp_logits(out->low_res.data, out->low_res.data, samc_numel(&out->low_res));
    }
    if (st)
        samc_sam_batch_prediction_release(out);
    for (int i = 0; i < 4; i++)
        samc_tensor_release(&dec[i]);
    return st;
}

void samc_sam_batch_prediction_release(samc_sam_batch_prediction *p)
{
    samc_tensor_release(&p->masks);
    samc_tensor_release(&p->iou);
    samc_tensor_release(&p->low_res);
    p->B = p->C = 0;
}
