/* SPDX-License-Identifier: Apache-2.0 */
/* amg_api.c - include/samc_amg.h: batched prediction, a batch of images and
 * the automatic mask generator on a samc_predictor. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/amg/amg_box.h"
#include "core/amg/amg_coco_rle.h"
#include "core/amg/amg_rle.h"
#include "core/amg/amg_generate.h"
#include "core/api/api_internal.h"
#include "core/base/error.h"
#include "core/base/tmpfile.h"
#include "core/models/tracker/image_predict_batch.h"
#include "samc_amg.h"

enum { MAX_IMAGES = 4096 };

struct samc_image_batch {
    int n;
    samc_frame_features *f;
};

void samc_batch_masks_free(samc_batch_masks *m)
{
    if (!m)
        return;
    free(m->masks), free(m->iou), free(m->low_res);
    memset(m, 0, sizeof *m);
}

static samc_status run_batch(samc_predictor *p, const samc_frame_features *f, const samc_batch_request *rq,
                             samc_batch_masks *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    if (!rq)
        return samc_fail(err, SAMC_ERR_ARG, "predict_batch: no request");
    samc_sam_batch_prompt bp = {.B = rq->batch, .n_points = rq->n_points, .points = rq->point_coords,
                                 .labels = rq->point_labels, .boxes = rq->boxes, .mask_input = rq->mask_input,
                                 .multimask = rq->multimask_output != 0,
                                 .normalized_coords = rq->normalized_coords != 0};
    samc_sam_batch_prediction pr;
    samc_exec *x = samc__predictor_exec(p);
    samc_status st = samc_sam_predict_batch(x, &samc__predictor_sam2(p)->tracker, f, &bp, samc__predictor_opts(p), &pr, err);
    if (st)
        return st;
    *out = (samc_batch_masks){.batch = pr.B, .num_masks = pr.C, .height = f->orig_h, .width = f->orig_w,
                              .low_res_size = (int)pr.low_res.shape[2], .masks = pr.masks.data, .iou = pr.iou.data,
                              .low_res = pr.low_res.data};
    pr.masks.owns = pr.iou.owns = pr.low_res.owns = false; /* handed over */
    if (!rq->return_logits)
        for (int64_t i = 0; i < samc_numel(&pr.masks); i++)
            out->masks[i] = out->masks[i] > 0.0f ? 1.0f : 0.0f; /* mask_threshold 0, strict */
    return SAMC_OK;
}

samc_status samc_predictor_predict_batch(samc_predictor *p, const samc_batch_request *rq, samc_batch_masks *out,
                                         samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(rq, err);
    samc_status bs = samc__predictor_refuse_busy(p, __func__, err);
    if (bs)
        return bs;
    const samc_frame_features *f = samc__predictor_features(p);
    if (!f) {
        memset(out, 0, sizeof *out);
        return samc_fail(err, SAMC_ERR_ARG, "an image must be set with samc_predictor_set_image before predict_batch");
    }
    return run_batch(p, f, rq, out, err);
}

samc_status samc_image_batch_set(samc_predictor *p, int n, const uint8_t *const *rgb, const int *h, const int *w,
                                 samc_image_batch **out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(p, err);
    samc_status bs = samc__predictor_refuse_busy(p, __func__, err);
    if (bs)
        return bs;
    if (n < 1 || n > MAX_IMAGES)
        return samc_fail(err, SAMC_ERR_ARG, "image batch of %d images; expected 1 to %d", n, MAX_IMAGES);
    if (!rgb || !h || !w)
        return samc_fail(err, SAMC_ERR_ARG, "image batch: images or sizes missing");
    samc_image_batch *b = calloc(1, sizeof *b);
    if (!b || !(b->f = calloc((size_t)n, sizeof *b->f))) {
        free(b);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    b->n = n;
    samc_status st = SAMC_OK;
    for (int i = 0; !st && i < n; i++) {
        if (!rgb[i])
            st = samc_fail(err, SAMC_ERR_ARG, "image %d of the batch has no pixels", i);
        else if ((st = samc_sam2_encode_image(samc__predictor_exec(p), samc__predictor_sam2(p), rgb[i], h[i], w[i], &b->f[i], err)))
            samc_error_prefix(err, "image %d of the batch", i);
    }
    if (st)
        samc_image_batch_free(b);
    else
        *out = b;
    return st;
}

int samc_image_batch_count(const samc_image_batch *b) { return b ? b->n : 0; }

samc_status samc_image_batch_predict(samc_predictor *p, const samc_image_batch *b, int i, const samc_batch_request *rq,
                                     samc_batch_masks *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(b, err);
    SAMC_API_NEED(rq, err);
    samc_status bs = samc__predictor_refuse_busy(p, __func__, err);
    if (bs)
        return bs;
    if (i < 0 || i >= b->n)
        return samc_fail(err, SAMC_ERR_ARG, "image index %d is outside the batch of %d", i, b ? b->n : 0);
    return run_batch(p, &b->f[i], rq, out, err);
}

void samc_image_batch_free(samc_image_batch *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->n; i++)
        samc_frame_features_release(&b->f[i]);
    free(b->f);
    free(b);
}

void samc_amg_result_free(samc_amg_result *r)
{
    if (!r)
        return;
    for (int64_t i = 0; r->masks && i < r->n; i++)
        free(r->masks[i].counts), free(r->masks[i].coco_counts), free(r->masks[i].binary);
    free(r->masks);
    memset(r, 0, sizeof *r);
}

/* generate()'s record m from samc's internal one (the RLE moves). */
static samc_status to_mask(samc_amg_record *rec, samc_amg_output_mode mode, samc_amg_mask *m, samc_error *err)
{
    const int64_t crop[4] = {rec->crop.x0, rec->crop.y0, rec->crop.x1, rec->crop.y1};
    *m = (samc_amg_mask){.height = rec->rle.h, .width = rec->rle.w, .area = samc_amg_rle_area(&rec->rle),
                         .predicted_iou = rec->predicted_iou, .stability_score = rec->stability_score,
                         .point_coords = {rec->point[0], rec->point[1]}};
    samc_amg_box_xywh(rec->box, m->bbox);
    samc_amg_box_xywh(crop, m->crop_box);
    samc_status st = SAMC_OK;
    if (mode == SAMC_AMG_COCO_RLE)
        st = samc_amg_rle_to_coco_string(&rec->rle, &m->coco_counts, err);
    if (!st && mode == SAMC_AMG_BINARY_MASK) {
        if (!(m->binary = malloc((size_t)rec->rle.h * rec->rle.w)))
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory (binary mask)");
        st = samc_amg_rle_to_mask(&rec->rle, m->binary, err);
    }
    m->n_counts = rec->rle.n, m->counts = rec->rle.counts;
    rec->rle.counts = NULL;
    return st;
}

samc_status samc_mask_to_coco_rle(const uint8_t *mask, int h, int w, char **out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(mask, err);
    samc_amg_rle rle = {0};
    samc_status st = samc_amg_mask_to_rle(mask, h, w, &rle, err);
    if (!st)
        st = samc_amg_rle_to_coco_string(&rle, out, err);
    samc_amg_rle_free(&rle);
    return st;
}

samc_status samc_amg_generate_masks(samc_predictor *p, const uint8_t *rgb, int h, int w, const samc_amg_params *params,
                                    samc_amg_progress_fn progress, void *user, samc_amg_result *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(rgb, err);
    SAMC_API_NEED(params, err);
    samc_status bs = samc__predictor_refuse_busy(p, __func__, err);
    if (bs)
        return bs;
    samc_amg_output o = {0};
    const samc_amg_hooks hooks = {.progress = progress, .user = user};
    samc__predictor_set_busy(p, 1); /* the progress callback may not change p under the generator */
    samc_status st = samc_amg_generate(samc__predictor_exec(p), samc__predictor_sam2(p), rgb, h, w, params, &hooks, &o, err);
    samc__predictor_set_busy(p, 0);
    if (!st && o.n && !(out->masks = calloc((size_t)o.n, sizeof *out->masks)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; !st && i < o.n; i++) {
        st = to_mask(&o.records[i], params->output_mode, &out->masks[i], err);
        out->n = i + 1;
    }
    samc_amg_output_free(&o);
    if (st)
        samc_amg_result_free(out);
    return st;
}

samc_status samc_amg_to_json(const samc_amg_result *r, char **out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(r, err);
    if (r->n < 0 || (r->n && !r->masks))
        return samc_fail(err, SAMC_ERR_ARG, "%s: the result holds %lld masks and no mask array", __func__,
                         (long long)r->n);
    cJSON *arr = cJSON_CreateArray();
    samc_status st = arr ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; !st && i < r->n; i++) {
        const samc_amg_mask *m = &r->masks[i];
        /* the record as the internal type; boxes are integers, exact in float32 */
        samc_amg_record rec = {.rle = {m->height, m->width, m->n_counts, m->counts},
                               .box = {(int64_t)m->bbox[0], (int64_t)m->bbox[1], (int64_t)(m->bbox[0] + m->bbox[2]),
                                       (int64_t)(m->bbox[1] + m->bbox[3])},
                               .predicted_iou = m->predicted_iou, .stability_score = m->stability_score,
                               .point = {m->point_coords[0], m->point_coords[1]},
                               .crop = {(int)m->crop_box[0], (int)m->crop_box[1], (int)(m->crop_box[0] + m->crop_box[2]),
                                        (int)(m->crop_box[1] + m->crop_box[3]), 0}};
        cJSON *o = NULL;
        if (!(st = samc_amg_record_json(&rec, m->coco_counts != NULL, &o, err)) && !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        }
    }
    if (!st && !(*out = cJSON_PrintUnformatted(arr)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory (JSON text)");
    cJSON_Delete(arr);
    return st;
}

samc_status samc_amg_write_json(const samc_amg_result *r, const char *path, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(r, err);
    SAMC_API_NEED(path, err);
    char *text = NULL, *tmp = NULL;
    samc_status st = samc_amg_to_json(r, &text, err);
    if (!st)
        st = samc__tmp_create(path, &tmp, err);
    FILE *f = NULL;
    if (!st)
        st = samc__tmp_reopen(tmp, path, &f, err);
    if (!st) {
        const size_t n = strlen(text);
        if ((fwrite(text, 1, n, f) != n) | (fclose(f) != 0))
            st = samc_fail(err, SAMC_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    if (!st)
        st = samc__tmp_commit(&tmp, path, err);
    samc__tmp_discard(tmp);
    free(text);
    return st;
}
