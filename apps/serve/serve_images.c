/* SPDX-License-Identifier: Apache-2.0 */
/* serve_images.c - the image routes (serve.h): upload (the SAM 2 embedding
 * made at once, so the first click is fast), the image's record, SAM 2
 * prompts on the cached embedding, SAM 3 concepts, and the automatic mask
 * generator. Model work runs on the workers (serve_pool.c). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "core/base/error.h"
#include "serve_http.h"

static double ms_since(double t0) { return 1e3 * (serve_now() - t0); }

static cJSON *timing(double queue, double encode, double compute, double total)
{
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "queue", queue);
    cJSON_AddNumberToObject(t, "encode", encode);
    cJSON_AddNumberToObject(t, "compute", compute);
    cJSON_AddNumberToObject(t, "total", total);
    return t;
}

/* The image of the route's id, held (serve_store_put), or a 404 reply. */
static serve_image *route_image(serve_req *rq)
{
    serve_image *img = serve_store_get(rq->srv->store, rq->route.res_id);
    if (!img)
        serve_reply_error(rq, 404, "unknown image id %s (never uploaded, deleted, or evicted from the cache)",
                          rq->route.res_id);
    return img;
}

static bool need_model(serve_req *rq, const samc_model *m, const char *family, const char *what)
{
    if (!m)
        serve_reply_error(rq, 400, "%s needs a %s model; this server was started without one (--model)", what, family);
    return m != NULL;
}

static cJSON *image_json(serve_server *srv, serve_image *img)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", serve_image_id(img));
    cJSON_AddNumberToObject(o, "width", serve_image_width(img));
    cJSON_AddNumberToObject(o, "height", serve_image_height(img));
    cJSON *e = cJSON_AddObjectToObject(o, "embedded");
    cJSON_AddBoolToObject(e, "sam2", serve_image_has_embedding(srv->store, img, SAMC_FAMILY_SAM2));
    cJSON_AddBoolToObject(e, "sam3", serve_image_has_embedding(srv->store, img, SAMC_FAMILY_SAM3));
    return o;
}

/* ---- POST /v1/images ------------------------------------------------------------ */

void serve_on_upload_image(serve_req *rq)
{
    serve_server *srv = rq->srv;
    samc_error err = {0};
    if (!rq->body_n) {
        serve_reply_error(rq, 400, "no image: send the file as the body, or as the file part of a multipart form");
        return;
    }
    int h = 0, w = 0;
    samc_status st = samc_probe_image(rq->body, rq->body_n, "the uploaded image", &h, &w, &err);
    if (!st && (int64_t)h * w > srv->cfg.max_image_pixels) {
        serve_reply_error(rq, 413, "the image is %dx%d (%lld pixels); this server takes at most %lld", w, h,
                          (long long)h * w, (long long)srv->cfg.max_image_pixels);
        return;
    }
    uint8_t *rgb = NULL;
    if (!st)
        st = samc_decode_image(rq->body, rq->body_n, "the uploaded image", &rgb, &h, &w, &err);
    char id[SERVE_ID_LEN + 1];
    if (!st)
        st = serve_store_add(srv->store, rgb, h, w, id, &err);
    if (st) {
        serve_reply_failure(rq, st, &err);
        return;
    }
    serve_image *img = serve_store_get(srv->store, id);
    double encode_ms = 0;
    const char *embed = serve_query(rq, "embed");
    if (img && srv->sam2 && !(embed && !strcmp(embed, "0"))) {
        const samc_embedding *e = NULL;
        st = serve_image_embedding(srv->store, srv->pool, img, SAMC_FAMILY_SAM2, &e, &encode_ms, &err);
    }
    if (!img || st) {
        serve_store_put(srv->store, img);
        serve_store_remove(srv->store, id);
        if (!img)
            serve_reply_error(rq, 503, "the image was evicted at once: the cache budget is too small (--cache-mb)");
        else
            serve_reply_failure(rq, st, &err);
        return;
    }
    cJSON *o = image_json(srv, img);
    cJSON_AddItemToObject(o, "timing_ms", timing(0, encode_ms, 0, ms_since(rq->t0)));
    serve_store_put(srv->store, img);
    serve_reply_json(rq, 201, o);
}

/* ---- GET, DELETE /v1/images/{id} ------------------------------------------------ */

void serve_on_image(serve_req *rq)
{
    if (!strcmp(rq->method, "DELETE")) {
        if (serve_store_remove(rq->srv->store, rq->route.res_id))
            serve_reply_bytes(rq, 204, "application/json", "", 0, NULL);
        else
            serve_reply_error(rq, 404, "unknown image id %s", rq->route.res_id);
        return;
    }
    serve_image *img = route_image(rq);
    if (!img)
        return;
    cJSON *o = image_json(rq->srv, img);
    serve_store_put(rq->srv->store, img);
    serve_reply_json(rq, 200, o);
}

/* ---- POST /v1/images/{id}/predict ------------------------------------------------ */

typedef struct predict_job {
    const samc_embedding *e;
    samc_predict_request rq;
    samc_masks m;
    serve_mask_rec rec[3];         /* the masks' records, encoded on the worker */
    double predict_ms;             /* the predictor's own time (the in-process time) */
} predict_job;

/* Predict, then encode the candidates at once on the worker's threads (the
 * RLE of a 1024 x 768 mask is about a millisecond). */
static samc_status run_predict(serve_worker *w, void *arg, samc_error *err)
{
    predict_job *j = arg;
    const double t0 = serve_now();
    samc_status st = samc_predictor_predict_on(w->pred, j->e, &j->rq, &j->m, err);
    j->predict_ms = 1e3 * (serve_now() - t0);
    if (st)
        return st;
    const int n = j->m.num_masks < 3 ? j->m.num_masks : 3;
    const int64_t hw = (int64_t)j->m.height * j->m.width;
    samc_status sts[3] = {SAMC_OK, SAMC_OK, SAMC_OK};
    samc_error errs[3] = {{0}};
#pragma omp parallel for num_threads(w->threads < n ? w->threads : n) schedule(static, 1)
    for (int k = 0; k < n; k++)
        sts[k] = serve_mask_encode(j->m.masks + k * hw, j->m.height, j->m.width, &j->rec[k], &errs[k]);
    for (int k = 0; k < n; k++)
        if (sts[k]) {
            *err = errs[k];
            return sts[k];
        }
    return SAMC_OK;
}

static cJSON *predict_json(serve_image *img, const serve_predict_req *p, const samc_masks *m, serve_mask_rec *rec,
                           int pred, samc_error *err)
{
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "masks");
    cJSON_AddStringToObject(o, "image", serve_image_id(img));
    cJSON_AddNumberToObject(o, "prediction", pred);
    int best = 0;
    for (int k = 0; k < m->num_masks; k++)
        best = m->iou[k] > m->iou[best] ? k : best;
    cJSON_AddNumberToObject(o, "best", best);
    const int64_t hw = (int64_t)m->height * m->width;
    for (int k = 0; k < m->num_masks; k++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, e);
        cJSON_AddNumberToObject(e, "index", k);
        cJSON_AddNumberToObject(e, "score", m->iou[k]);
        serve_mask_rec_json(e, &rec[k]);
        if (p->png && serve_mask_png(e, m->masks + k * hw, NULL, m->height, m->width, err)) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

void serve_on_predict(serve_req *rq)
{
    serve_server *srv = rq->srv;
    if (!need_model(rq, srv->sam2, "SAM 2", "predict"))
        return;
    serve_image *img = route_image(rq);
    if (!img)
        return;
    samc_error err = {0};
    serve_predict_req p;
    samc_status st = serve_parse_predict((const char *)rq->body, rq->body_n, serve_image_height(img),
                                         serve_image_width(img), &p, &err);
    const int side = samc_model_image_size(srv->sam2) / 4;
    float *mask_in = NULL;
    if (!st && p.mask_pred >= 0) {
        if (!(mask_in = malloc((size_t)side * side * sizeof *mask_in)))
            st = samc_fail(&err, SAMC_ERR_NOMEM, "out of memory");
        else if (!serve_image_lowres(srv->store, img, p.mask_pred, p.mask_index, mask_in, side)) {
            serve_reply_error(rq, 404, "mask_input: mask %d of prediction %d is not kept for this image (the last %d "
                              "predictions are)", p.mask_index, p.mask_pred, SERVE_KEEP_LOWRES);
            free(mask_in);
            serve_store_put(srv->store, img);
            return;
        }
    }
    predict_job j = {.rq = {.point_coords = p.n_points ? p.points : NULL, .point_labels = p.n_points ? p.labels : NULL,
                            .n_points = p.n_points, .box = p.has_box ? p.box : NULL, .mask_input = mask_in,
                            .multimask_output = p.multimask, .return_logits = 1}};
    double encode_ms = 0, queue_ms = 0, t_compute = 0;
    if (!st)
        st = serve_image_embedding(srv->store, srv->pool, img, SAMC_FAMILY_SAM2, &j.e, &encode_ms, &err);
    if (!st) {
        st = serve_pool_run(srv->pool, run_predict, &j, &queue_ms, &err);
        t_compute = j.predict_ms;
    }
    int pred = -1;
    if (!st)
        st = serve_image_keep_lowres(srv->store, img, j.m.low_res, j.m.num_masks, j.m.low_res_size, &pred, &err);
    cJSON *o = st ? NULL : predict_json(img, &p, &j.m, j.rec, pred, &err);
    if (o) {
        cJSON_AddStringToObject(o, "cache", encode_ms > 0 ? "miss" : "hit");
        cJSON_AddItemToObject(o, "timing_ms", timing(queue_ms, encode_ms, t_compute, ms_since(rq->t0)));
        serve_reply_json(rq, 200, o);
    } else {
        serve_reply_failure(rq, st ? st : SAMC_ERR_NOMEM, &err);
    }
    for (int k = 0; k < 3; k++)
        samc_mask_rle_free(&j.rec[k].rle);
    samc_masks_free(&j.m);
    free(mask_in);
    serve_store_put(srv->store, img);
}

/* ---- POST /v1/images/{id}/concepts (SAM 3) --------------------------------------- */

typedef struct text_job {
    const samc_embedding *e;
    const serve_text_req *p;
    int h, w;
    cJSON *out;                    /* instances, built on the worker while the results are valid */
} text_job;

static samc_status text_results(samc_sam3_processor *proc, text_job *j, samc_error *err)
{
    samc_sam3_results r;
    samc_status st = samc_sam3_processor_results(proc, &r, err);
    const int64_t hw = (int64_t)r.h * r.w;
    uint8_t *bin = st ? NULL : malloc((size_t)hw);
    if (!st && !bin)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    j->out = cJSON_CreateArray();
    for (int i = 0; !st && i < r.n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(j->out, o);
        cJSON_AddNumberToObject(o, "index", i);
        cJSON_AddNumberToObject(o, "score", r.scores[i]);
        cJSON *b = cJSON_AddArrayToObject(o, "box");
        for (int k = 0; k < 4; k++)
            cJSON_AddItemToArray(b, cJSON_CreateNumber(r.boxes[4 * i + k]));
        for (int64_t q = 0; q < hw; q++)
            bin[q] = r.masks[i * hw + q] > 0.5f; /* probabilities: > 0.5 is the mask */
        st = serve_mask_json(o, NULL, bin, r.h, r.w, j->p->png, err);
    }
    free(bin);
    return st;
}

static samc_status run_text(serve_worker *w, void *arg, samc_error *err)
{
    text_job *j = arg;
    samc_sam3_processor *proc = w->sam3;
    samc_status st = samc_sam3_processor_use_embedding(proc, j->e, err);
    if (!st)
        st = samc_sam3_processor_set_threshold(proc, j->p->threshold, err);
    if (!st && j->p->text[0])
        st = samc_sam3_processor_set_text(proc, j->p->text, err);
    for (int i = 0; !st && i < j->p->n_boxes; i++) { /* as the official processor: one grounding per box */
        float cb[4];
        cli_box_cxcywh(j->p->boxes + 4 * i, j->w, j->h, cb);
        st = samc_sam3_processor_add_box(proc, cb, j->p->positive[i], err);
    }
    return st ? st : text_results(proc, j, err);
}

void serve_on_text(serve_req *rq)
{
    serve_server *srv = rq->srv;
    if (!need_model(rq, srv->sam3, "SAM 3", "concepts"))
        return;
    serve_image *img = route_image(rq);
    if (!img)
        return;
    samc_error err = {0};
    serve_text_req p;
    text_job j = {.p = &p, .h = serve_image_height(img), .w = serve_image_width(img)};
    samc_status st = serve_parse_text((const char *)rq->body, rq->body_n, j.h, j.w, &p, &err);
    double encode_ms = 0, queue_ms = 0, t_compute = 0;
    if (!st)
        st = serve_image_embedding(srv->store, srv->pool, img, SAMC_FAMILY_SAM3, &j.e, &encode_ms, &err);
    if (!st) {
        const double t0 = serve_now();
        st = serve_pool_run(srv->pool, run_text, &j, &queue_ms, &err);
        t_compute = ms_since(t0) - queue_ms;
    }
    if (st) {
        cJSON_Delete(j.out);
        serve_reply_failure(rq, st, &err);
    } else {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "image", serve_image_id(img));
        cJSON_AddItemToObject(o, "instances", j.out);
        cJSON_AddStringToObject(o, "cache", encode_ms > 0 ? "miss" : "hit");
        cJSON_AddItemToObject(o, "timing_ms", timing(queue_ms, encode_ms, t_compute, ms_since(rq->t0)));
        serve_reply_json(rq, 200, o);
    }
    serve_store_put(srv->store, img);
}

/* ---- POST /v1/images/{id}/everything (the automatic mask generator) ---------------- */

typedef struct amg_job {
    const serve_image *img;
    samc_amg_params params;
    char *json;                    /* the records, as samc amg writes masks.json */
    int64_t n;
} amg_job;

static samc_status run_amg(serve_worker *w, void *arg, samc_error *err)
{
    amg_job *j = arg;
    samc_amg_result r;
    samc_status st = samc_amg_generate_masks(w->pred, serve_image_rgb(j->img), serve_image_height(j->img),
                                             serve_image_width(j->img), &j->params, NULL, NULL, &r, err);
    if (st)
        return st;
    j->n = r.n;
    st = samc_amg_to_json(&r, &j->json, err);
    samc_amg_result_free(&r);
    return st;
}

void serve_on_amg(serve_req *rq)
{
    serve_server *srv = rq->srv;
    if (!need_model(rq, srv->sam2, "SAM 2", "everything"))
        return;
    serve_image *img = route_image(rq);
    if (!img)
        return;
    samc_error err = {0};
    amg_job j = {.img = img};
    samc_status st = serve_parse_amg((const char *)rq->body, rq->body_n, &j.params, &err);
    double queue_ms = 0;
    if (!st)
        st = serve_pool_run(srv->pool, run_amg, &j, &queue_ms, &err);
    if (st) {
        serve_reply_failure(rq, st, &err);
    } else { /* {"image": ..., "count": n, "timing_ms": {...}, "masks": [records]} */
        cJSON *head = cJSON_CreateObject();
        cJSON_AddStringToObject(head, "image", serve_image_id(img));
        cJSON_AddNumberToObject(head, "count", (double)j.n);
        const double total = ms_since(rq->t0);
        cJSON_AddItemToObject(head, "timing_ms", timing(queue_ms, 0, total - queue_ms, total));
        char *h = cJSON_PrintUnformatted(head);
        cJSON_Delete(head);
        const size_t hn = h ? strlen(h) : 0, jn = strlen(j.json), n = hn + jn + 16;
        char *body = h ? malloc(n) : NULL;
        if (body) {
            snprintf(body, n, "%.*s,\"masks\":%s}", (int)(hn - 1), h, j.json);
            serve_reply_bytes(rq, 200, "application/json", body, strlen(body), free);
        } else {
            serve_reply_error(rq, 503, "out of memory");
        }
        free(h);
    }
    free(j.json);
    serve_store_put(srv->store, img);
}
