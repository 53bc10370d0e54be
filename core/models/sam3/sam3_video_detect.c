/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_detect.c - run_backbone_and_detection (docs/sam3_video.md
 * 4.1): the text features (cached per prompt), the detector's buffer of
 * frames computed ahead (forward_video_grounding_multigpu on one device:
 * the next frame is computed while this one is processed, with this
 * frame's geometric prompt), the frame's detections, and the tracker's
 * features of the frame (the tracker neck rounded to bfloat16, conv_s0/s1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_video_internal.h"
#include "core/nn/bf16.h"

#define TEXT_PLACEHOLDER "<text placeholder>"

void samc__s3_detections_free(s3_detections *d)
{
    samc_tensor_release(&d->bbox), samc_tensor_release(&d->mask), samc_tensor_release(&d->scores);
    memset(d, 0, sizeof *d);
}

static void buffer_release(s3_det_buffer *b)
{
    samc_tensor_release(&b->logits), samc_tensor_release(&b->boxes), samc_tensor_release(&b->masks);
    for (int i = 0; i < 3; i++)
        samc_tensor_release(&b->levels[i]), samc_tensor_release(&b->pos[i]);
}

static s3_det_buffer *buffer_get(samc_sam3_video *v, int frame)
{
    for (int i = 0; i < v->n_buf; i++)
        if (v->buf[i].frame == frame)
            return &v->buf[i];
    return NULL;
}

static void buffer_pop(samc_sam3_video *v, int frame)
{
    s3_det_buffer *b = buffer_get(v, frame);
    if (!b)
        return;
    buffer_release(b);
    *b = v->buf[--v->n_buf];
}

void samc__s3v_clear_caches(samc_sam3_video *v)
{
    while (v->n_buf)
        buffer_pop(v, v->buf[0].frame);
    free(v->text_key), v->text_key = NULL;
    samc_sam3_text_release(&v->text_feats);
    samc_frame_features_release(&v->feat);
    v->feat_frame = -1;
}

/* backbone.forward_text([text or placeholder, "visual"]) when the cached key
 * differs; its records name frame t (the frame being processed). */
static samc_status text_features(samc_sam3_video *v, int t, samc_error *err)
{
    const char *key = v->text ? v->text : TEXT_PLACEHOLDER;
    if (v->text_key && !strcmp(v->text_key, key))
        return SAMC_OK;
    free(v->text_key), v->text_key = NULL;
    samc_sam3_text_release(&v->text_feats);
    const samc_sam3_model *m = v->m;
    const char *texts[2] = {key, "visual"};
    samc_tensor ids = {0};
    const samc_scope sc = {t, -1}, *saved = v->x->scope;
    v->x->scope = &sc;
    samc_status st = samc_sam3_tokenize_batch(v->x, &m->language, texts, 2, m->language.text.context_length, &ids, err);
    if (!st)
        st = samc_sam3_language_forward(v->x, &m->language, &ids, &v->text_feats, err);
    v->x->scope = saved;
    samc_tensor_release(&ids);
    if (!st && !(v->text_key = strdup(key)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    return st;
}

/* The frame's text (text_ids: 0 with a text prompt, 1 for "visual"): (L,1,d) and (1,L). */
static samc_status select_text(const samc_sam3_video *v, samc_tensor *feat, samc_tensor *mask, samc_error *err)
{
    const samc_tensor *mem = &v->text_feats.memory, *msk = &v->text_feats.mask;
    const int64_t L = mem->shape[0], B = mem->shape[1], d = mem->shape[2], b = v->has_text ? 0 : 1;
    samc_status st = samc_tensor_allocv(feat, err, 3, L, (int64_t)1, d);
    if (!st)
        st = samc_tensor_allocv(mask, err, 2, (int64_t)1, L);
    for (int64_t l = 0; !st && l < L; l++) {
        memcpy(feat->data + l * d, mem->data + (l * B + b) * d, (size_t)d * sizeof(float));
        mask->data[l] = msk->data[b * L + l];
    }
    return st;
}

/* Sam3Image._update_scores_and_boxes with supervise_joint_box_scores:
 * clamp(inverse_sigmoid(sigmoid(class) * sigmoid(presence)), -10, 10). */
static void joint_logits(float *logits, int64_t Q, float presence)
{
    const float eps = (float)SAMC_S3_INVERSE_SIGMOID_EPS, clamp = (float)SAMC_S3_JOINT_LOGIT_CLAMP;
    const float pp = 1.0f / (1.0f + expf(-presence));
    for (int64_t q = 0; q < Q; q++) {
        float x = 1.0f / (1.0f + expf(-logits[q])) * pp;
        x = fminf(fmaxf(x, 0.0f), 1.0f);
        const float v = logf(fmaxf(x, eps) / fmaxf(1.0f - x, eps));
        logits[q] = fminf(fmaxf(v, -clamp), clamp);
    }
}

/* The tracker neck's levels 0-2 rounded to bfloat16 (a decision per value)
 * and their position encodings, into the buffer entry. */
static samc_status keep_levels(samc_sam3_video *v, const samc_sam3_image *img, s3_det_buffer *b, samc_error *err)
{
    if (img->f.n_sam2 < 3)
        return samc_fail(err, SAMC_ERR_INTERNAL, "sam3: the detector computed no tracker neck");
    /* the records that hold each level's recorded rounding (the next to read it) */
    static const char *const readers[3] = {"tracker.sam_mask_decoder.conv_s0", "tracker.sam_mask_decoder.conv_s1",
                                           "@tracker_backbone"};
    samc_status st = SAMC_OK;
    for (int i = 0; !st && i < 3; i++) {
        if (!(st = samc_tensor_copy(&b->levels[i], &img->f.sam2_level[i], err)))
            st = samc_tensor_copy(&b->pos[i], &img->f.sam2_pos[i], err);
        if (!st) {
            samc_decision d = {.kind = SAMC_DECISION_BF16, .module = readers[i], .values = b->levels[i].data,
                               .n = samc_numel(&b->levels[i])};
            samc_exec_decide(v->x, NULL, &d);
            samc_round_bf16(b->levels[i].data, samc_numel(&b->levels[i]));
        }
    }
    return st;
}

/* _build_multigpu_buffer_next_chunk for frame f with `geo` (the geometric
 * prompt of the frame being processed). */
static samc_status compute(samc_sam3_video *v, int f, int geo, samc_error *err)
{
    const samc_scope sc = {f, -1};
    const samc_scope *saved = v->x->scope;
    v->x->scope = &sc; /* the detector's records name the frame they process */
    s3_det_buffer b = {.frame = f};
    samc_tensor img_t = {0}, text = {0}, mask = {0};
    samc_sam3_image img = {0};
    samc_sam3_result res = {0};
    samc_status st = samc__s3v_frame_image(v, f, &img_t, err);
    if (!st)
        st = samc_sam3_encode_image(v->x, &img_t, true, v->H, v->W, &img, err);
    if (!st)
        st = select_text(v, &text, &mask, err);
    const bool box = geo >= 0 && v->geo_label[geo] >= 0;
    if (!st)
        st = samc_sam3_forward_grounding(v->x, &img, &text, &mask, box ? 1 : 0, box ? &v->geo_box[geo] : NULL,
                                         box ? &v->geo_label[geo] : NULL, &res, err);
    if (!st) {
        const int64_t Q = res.pred_logits.shape[0];
        if (v->m->video.detector.joint_box_scores)
            joint_logits(res.pred_logits.data, Q, res.presence_logit.data[0]);
        b.logits = res.pred_logits, b.masks = res.pred_masks, memset(&res.pred_logits, 0, sizeof res.pred_logits);
        memset(&res.pred_masks, 0, sizeof res.pred_masks);
        if (!(st = samc_tensor_allocv(&b.boxes, err, 2, Q, (int64_t)4)))
            for (int64_t q = 0; q < Q; q++) { /* box_cxcywh_to_xyxy */
                const float *c = res.pred_boxes.data + 4 * q;
                float *o = b.boxes.data + 4 * q;
                o[0] = c[0] - 0.5f * c[2], o[1] = c[1] - 0.5f * c[3], o[2] = c[0] + 0.5f * c[2], o[3] = c[1] + 0.5f * c[3];
            }
    }
    if (!st && v->m->video.loop.det_nms_thresh > 0.0)
        st = samc__s3v_nms(v, f, &b.logits, &b.masks, err);
    if (!st)
        st = keep_levels(v, &img, &b, err);
    if (!st && v->n_buf == v->cap_buf) {
        int cap = v->cap_buf ? 2 * v->cap_buf : 4;
        s3_det_buffer *n = realloc(v->buf, (size_t)cap * sizeof *n);
        if (!n)
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        else
            v->buf = n, v->cap_buf = cap;
    }
    if (!st)
        v->buf[v->n_buf++] = b;
    else
        buffer_release(&b);
    samc_sam3_result_release(&res);
    samc_sam3_image_release(&img);
    samc_tensor_release(&img_t), samc_tensor_release(&text), samc_tensor_release(&mask);
    v->x->scope = saved;
    return st;
}

/* det_out: probabilities (lowered by 1e8 when new detections are not
 * allowed) above the threshold, in query order; traced as @detections. */
static samc_status detections(samc_sam3_video *v, int t, const s3_det_buffer *b, bool allow_new, s3_detections *det,
                              samc_error *err)
{
    const int64_t Q = b->logits.shape[0], s = b->masks.shape[1], hw = s * b->masks.shape[2];
    const float thr = (float)v->m->video.loop.score_threshold_detection;
    float *p = malloc((size_t)Q * sizeof *p);
    int n = 0;
    for (int64_t q = 0; p && q < Q; q++) {
        p[q] = 1.0f / (1.0f + expf(-b->logits.data[q]));
        if (!allow_new)
            p[q] = p[q] - (float)SAMC_S3_NO_NEW_DET_OFFSET;
        n += p[q] > thr;
    }
    samc_status st = p ? samc_tensor_allocv(&det->bbox, err, 2, (int64_t)n, (int64_t)4)
                       : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        st = samc_tensor_allocv(&det->mask, err, 3, (int64_t)n, s, b->masks.shape[2]);
    if (!st)
        st = samc_tensor_allocv(&det->scores, err, 1, (int64_t)n);
    for (int64_t q = 0, k = 0; !st && q < Q; q++) {
        if (!(p[q] > thr))
            continue;
        memcpy(det->bbox.data + 4 * k, b->boxes.data + 4 * q, 4 * sizeof(float));
        memcpy(det->mask.data + k * hw, b->masks.data + q * hw, (size_t)hw * sizeof(float));
        det->scores.data[k++] = p[q];
    }
    det->n = n;
    free(p);
    if (!st && v->x->trace) {
        s3_rec r = {0};
        samc__s3_rec_floats(&r, "in/pred_logits", 3, (const int64_t[]){1, Q, 1}, b->logits.data);
        samc__s3_rec_floats(&r, "in/pred_boxes_xyxy", 3, (const int64_t[]){1, Q, 4}, b->boxes.data);
        samc__s3_rec_floats(&r, "bbox", 2, det->bbox.shape, det->bbox.data);
        samc__s3_rec_floats(&r, "mask", 3, det->mask.shape, det->mask.data);
        samc__s3_rec_floats(&r, "scores", 1, det->scores.shape, det->scores.data);
        samc__s3_rec_emit(v, &r, S3R_DETECTIONS, t, -1);
    }
    return st;
}

/* The tracker's features of frame t from its buffered levels: conv_s0 and
 * conv_s1 (traced on every visit), no_mem_embed; @tracker_backbone. */
static samc_status tracker_features(samc_sam3_video *v, int t, const s3_det_buffer *b, samc_error *err)
{
    samc_frame_features_release(&v->feat);
    v->feat_frame = -1;
    const samc_scope sc = {t, -1};
    samc_status st = samc_tracker_features(v->x, &v->m->tracker, &sc, b->levels, b->pos, 3, &v->feat, err);
    if (st)
        return st;
    v->feat.orig_h = v->H, v->feat.orig_w = v->W;
    v->feat_frame = t;
    if (v->x->trace) {
        s3_rec r = {0};
        const samc_tensor *fpn[3] = {&v->feat.feat_s0, &v->feat.feat_s1, &v->feat.vision_features};
        for (int i = 0; i < 3; i++) {
            char a[32], c[32];
            snprintf(a, sizeof a, "backbone_fpn.%d", i), snprintf(c, sizeof c, "vision_pos_enc.%d", i);
            samc__s3_rec_floats(&r, a, fpn[i]->ndim, fpn[i]->shape, fpn[i]->data);
            samc__s3_rec_floats(&r, c, b->pos[i].ndim, b->pos[i].shape, b->pos[i].data);
        }
        samc__s3_rec_emit(v, &r, S3R_TRACKER_BACKBONE, t, -1);
    }
    return SAMC_OK;
}

samc_status samc__s3v_detect(samc_sam3_video *v, int t, bool reverse, bool allow_new, s3_detections *det,
                             samc_error *err)
{
    memset(det, 0, sizeof *det);
    samc_status st = text_features(v, t, err);
    if (!st && !buffer_get(v, t))
        st = compute(v, t, t, err);
    if (st)
        return st;
    buffer_pop(v, reverse ? t + 1 : t - 1); /* the previous frame's entry */
    const int next = reverse ? t - 1 : t + 1;
    if (next >= 0 && next < v->T && !buffer_get(v, next) && (st = compute(v, next, t, err)))
        return st;
    const s3_det_buffer *b = buffer_get(v, t);
    if (!(st = detections(v, t, b, allow_new, det, err)))
        st = tracker_features(v, t, b, err);
    if (st)
        samc__s3_detections_free(det);
    return st;
}
