/* SPDX-License-Identifier: Apache-2.0 */
/* amg_batch.c - SAM2AutomaticMaskGenerator._process_batch and
 * refine_with_m2m (automatic_mask_generator.py), on the batched decoder
 * (core/models/tracker/image_predict_batch.c). */
#include "core/amg/amg_batch.h"

#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_box.h"
#include "core/amg/amg_stability.h"
#include "core/base/error.h"
#include "core/models/tracker/image_predict_batch.h"

samc_status samc_amg_cands_push(samc_amg_cands *c, const samc_amg_record *r, samc_error *err)
{
    if (c->n == c->cap) {
        const int64_t cap = c->cap ? 2 * c->cap : 64;
        void *n = realloc(c->r, (size_t)cap * sizeof *c->r);
        if (!n)
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory (%lld mask candidates)", (long long)cap);
        c->r = n, c->cap = cap;
    }
    c->r[c->n++] = *r;
    return SAMC_OK;
}

void samc_amg_cands_free(samc_amg_cands *c)
{
    for (int64_t i = 0; c->r && i < c->n; i++)
        samc_amg_rle_free(&c->r[i].rle);
    free(c->r);
    memset(c, 0, sizeof *c);
}

/* Which masks a batch brings to the image size (samc_sam_batch_prompt's
 * upscale_keep). The first step of _process_batch's filters is the IoU
 * filter, which reads the IoU prediction alone: a mask it drops is never
 * read again, unless an observer wants every candidate's stability and box
 * (hooks.candidate: the parity runs), so only the survivors are upscaled.
 * With m2m the first pass's masks are all replaced by the refined ones:
 * none is upscaled there. */
static bool keep_by_iou(const void *thresh, float iou) { return samc_amg_keep_by_iou(iou, *(const double *)thresh); }
static bool keep_none(const void *unused, float iou) { return (void)unused, (void)iou, false; }

static void set_upscale(samc_sam_batch_prompt *bp, const samc_amg_params *p, const samc_amg_batch_env *env, bool final)
{
    if (!final)
        bp->upscale_keep = keep_none;
    else if (!env->hooks.candidate && p->pred_iou_thresh > 0.0)
        bp->upscale_keep = keep_by_iou, bp->keep_user = &p->pred_iou_thresh;
}

/* refine_with_m2m: every candidate again, in sub-batches of points_per_batch,
 * with its point (label 1) and its own clamped low-res logits as mask_input,
 * multimask_output False. The refined IoUs replace pr's in place (candidate
 * k's rows only depend on k), and pr's masks (of which the first pass
 * upscaled none) become the refined upscaled planes, in order: every one,
 * or those set_upscale keeps. */
static samc_status refine_m2m(samc_exec *x, const samc_sam2_model *m, const samc_frame_features *f, const samc_amg_params *p,
                              const samc_sam_image_opts *opts, const float *pts, const samc_amg_batch_env *env,
                              samc_sam_batch_prediction *pr, samc_error *err)
{
    const int64_t N = (int64_t)pr->B * pr->C, hw = (int64_t)f->orig_h * f->orig_w;
    const int64_t ls = pr->low_res.shape[2] * pr->low_res.shape[3];
    float *rep = malloc((size_t)N * 2 * sizeof *rep);
    int32_t *ones = malloc((size_t)N * sizeof *ones);
    samc_status st = (!rep || !ones) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
    for (int64_t k = 0; !st && k < N; k++) { /* points.repeat_interleave(C) */
        rep[2 * k] = pts[2 * (k / pr->C)], rep[2 * k + 1] = pts[2 * (k / pr->C) + 1];
        ones[k] = 1;
    }
    samc_tensor_release(&pr->masks);
    if (!st) /* paged in only as far as it is written */
        st = samc_tensor_alloc_uninit(&pr->masks, 4, (const int64_t[]){N, 1, f->orig_h, f->orig_w}, err);
    int64_t j = 0;
    for (int64_t s = 0; !st && s < N; s += p->points_per_batch) {
        const int nb = (int)(N - s < p->points_per_batch ? N - s : p->points_per_batch);
        samc_sam_batch_prompt bp = {.B = nb, .n_points = 1, .points = rep + 2 * s, .labels = ones + s,
                                     .mask_input = pr->low_res.data + s * ls, .multimask = false,
                                     .allow_points_outside = true};
        set_upscale(&bp, p, env, true);
        samc_sam_batch_prediction r = {0};
        if (!(st = samc_sam_predict_batch(x, &m->tracker, f, &bp, opts, &r, err))) {
            for (int i = 0, rj = 0; i < nb; i++) /* C = 1: a prompt per candidate */
                if (samc_sam_batch_upscaled(&bp, r.iou.data, 1, i))
                    memcpy(pr->masks.data + j++ * hw, r.masks.data + rj++ * hw, (size_t)hw * sizeof(float));
            memcpy(pr->iou.data + s, r.iou.data, (size_t)nb * sizeof(float));
        }
        samc_sam_batch_prediction_release(&r);
    }
    free(rep), free(ones);
    return st;
}

/* The official decisions on every candidate, for an observer. */
static void observe(const float *logits, float iou, const float *pt, const samc_frame_features *f,
                    const samc_amg_params *p, const samc_amg_crop *crop, int orig_h, int orig_w, uint8_t *mask,
                    samc_amg_batch_env *env)
{
    const int h = f->orig_h, w = f->orig_w;
    samc_amg_candidate c = {.crop = env->prog.crop, .batch = env->batch, .point = {pt[0], pt[1]}, .iou = iou};
    c.stability = samc_amg_stability_score(logits, h, w, p->mask_threshold, p->stability_score_offset);
    c.keep_iou = !(p->pred_iou_thresh > 0.0) || samc_amg_keep_by_iou(iou, p->pred_iou_thresh);
    c.keep_stability = c.keep_iou && (!(p->stability_score_thresh > 0.0) ||
                                      samc_amg_keep_by_stability(c.stability, p->stability_score_thresh));
    for (int64_t i = 0; i < (int64_t)h * w; i++)
        mask[i] = samc_amg_logit_in_mask(logits[i], p->mask_threshold);
    samc_amg_mask_box(mask, h, w, c.box);
    c.near_edge = samc_amg_box_near_crop_edge(c.box, crop, orig_w, orig_h);
    env->hooks.candidate(env->hooks.user, &c);
}

/* The filters of _process_batch for one candidate, then its record (or
 * nothing: filtered out, counted in env). */
static samc_status one_candidate(const float *logits, float iou, const float *pt, const samc_frame_features *f,
                                 const samc_amg_params *p, const samc_amg_crop *crop, int orig_h, int orig_w,
                                 uint8_t *mask, samc_amg_batch_env *env, samc_amg_cands *out, samc_error *err)
{
    const int h = f->orig_h, w = f->orig_w;
    if (env->hooks.candidate)
        observe(logits, iou, pt, f, p, crop, orig_h, orig_w, mask, env);
    if (p->pred_iou_thresh > 0.0 && !samc_amg_keep_by_iou(iou, p->pred_iou_thresh))
        return SAMC_OK;
    env->counts.iou++;
    const float stab = samc_amg_stability_score(logits, h, w, p->mask_threshold, p->stability_score_offset);
    if (p->stability_score_thresh > 0.0 && !samc_amg_keep_by_stability(stab, p->stability_score_thresh))
        return SAMC_OK;
    env->counts.stability++;
    for (int64_t i = 0; i < (int64_t)h * w; i++)
        mask[i] = samc_amg_logit_in_mask(logits[i], p->mask_threshold);
    samc_amg_record r = {.predicted_iou = iou, .stability_score = stab, .point = {pt[0], pt[1]}, .crop = *crop};
    samc_amg_mask_box(mask, h, w, r.box);
    if (samc_amg_box_near_crop_edge(r.box, crop, orig_w, orig_h))
        return SAMC_OK;
    env->counts.edge++;
    samc_status st = samc_amg_mask_to_rle_uncrop(mask, crop, orig_h, orig_w, &r.rle, err);
    if (!st && (st = samc_amg_cands_push(out, &r, err)))
        samc_amg_rle_free(&r.rle);
    return st;
}

samc_status samc_amg_process_batch(samc_exec *x, const samc_sam2_model *m, const samc_frame_features *f, const samc_amg_params *p,
                                   const samc_amg_crop *crop, int orig_h, int orig_w, const float *pts, int nb,
                                   samc_amg_batch_env *env, samc_amg_cands *out, samc_error *err)
{
    /* SAM2ImagePredictor(max_hole_area = max_sprinkle_area = min_mask_region_area) */
    const samc_sam_image_opts opts = env->hooks.fill ? *env->hooks.fill
                                                      : (samc_sam_image_opts){(double)p->min_mask_region_area,
                                                                               (double)p->min_mask_region_area};
    int32_t *ones = malloc((size_t)nb * sizeof *ones);
    uint8_t *mask = malloc((size_t)f->orig_h * f->orig_w);
    samc_sam_batch_prediction pr = {0};
    samc_status st = (!ones || !mask) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
    for (int i = 0; !st && i < nb; i++)
        ones[i] = 1;
    samc_sam_batch_prompt bp = {.B = nb, .n_points = 1, .points = pts, .labels = ones,
                                 .multimask = p->multimask_output, .allow_points_outside = true};
    set_upscale(&bp, p, env, !p->use_m2m);
    if (!st)
        st = samc_sam_predict_batch(x, &m->tracker, f, &bp, &opts, &pr, err);
    if (!st && p->use_m2m)
        st = refine_m2m(x, m, f, p, &opts, pts, env, &pr, err);
    const int64_t N = (int64_t)pr.B * pr.C, hw = (int64_t)f->orig_h * f->orig_w;
    if (!st)
        env->counts.candidates += N;
    /* which candidates have planes in pr.masks: set_upscale's final choice,
     * per prompt of the pass that made them (with m2m: one per candidate) */
    samc_sam_batch_prompt fin = {0};
    set_upscale(&fin, p, env, true);
    const int unit = p->use_m2m ? 1 : pr.C;
    const float *plane = pr.masks.data;
    for (int64_t k = 0; !st && k < N; k++) { /* masks.flatten(0, 1): prompt-major */
        const bool has = samc_sam_batch_upscaled(&fin, pr.iou.data, unit, k / unit);
        /* NULL: dropped by the IoU filter, which one_candidate applies before it reads the logits */
        st = one_candidate(has ? plane : NULL, pr.iou.data[k], pts + 2 * (k / pr.C), f, p, crop, orig_h, orig_w,
                           mask, env, out, err);
        plane += has ? hw : 0;
    }
    env->batch++;
    if (!st && env->hooks.progress) {
        env->prog.points_done += nb;
        env->prog.masks_kept = env->counts.edge;
        env->hooks.progress(env->hooks.user, &env->prog);
    }
    samc_sam_batch_prediction_release(&pr);
    free(ones), free(mask);
    return st;
}
