/* SPDX-License-Identifier: Apache-2.0 */
/* api.c - the image predictor of include/samc.h on the model wiring. */
#include <stdlib.h>
#include <string.h>

#include "core/api/api_internal.h"

struct samc_predictor {
    const samc_model *model;
    samc_model *owned;               /* samc_predictor_load's own model, else NULL */
    samc_exec x;
    samc_sam_image_opts opts;
    samc_frame_features features;
    bool has_image;
    samc_progress_fn progress;
    void *progress_user;
    int blocks_done;                 /* encoder progress of the current set_image */
    int busy;                        /* inside set_image (its progress function runs) */
};

void samc__predictor_set_busy(samc_predictor *p, int busy) { p->busy = busy; }

samc_status samc__predictor_refuse_busy(const samc_predictor *p, const char *func, samc_error *err)
{
    return p && p->busy ? samc_fail(err, SAMC_ERR_ARG, "%s: not allowed from inside a callback of a call running on "
                                    "this predictor (its progress function)", func)
                        : SAMC_OK;
}

samc_predictor_params samc_predictor_default_params(void)
{
    return (samc_predictor_params){.impl = NULL, .n_threads = 0};
}

samc_status samc_predictor_new(const samc_model *model, const samc_predictor_params *params, samc_predictor **out,
                               samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(model, err);
    samc_status fs = samc__api_need_family(model, SAMC_FAMILY_SAM2, "samc_predictor_new", err);
    if (fs)
        return fs;
    const samc_predictor_params pp = params ? *params : samc_predictor_default_params();
    samc_predictor *p = calloc(1, sizeof *p);
    if (!p)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    p->model = model;
    p->progress = pp.progress, p->progress_user = pp.progress_user;
    /* The exec only reads the model; preparing an implementation's packed
     * weights happens once, under the model's lock (core/runtime/exec.h). */
    samc_status st = samc_sam2_exec_init(&p->x, model->sam2, err);
    if (!st)
        st = samc__api_setup_exec(&p->x, pp.impl, pp.n_threads, err);
    if (!st)
        st = samc_predictor_set_postprocess(p, pp.max_hole_area, pp.max_sprinkle_area, err);
    samc_exec_set_abort(&p->x, pp.abort_callback, pp.abort_user);
    if (st) {
        samc_predictor_free(p);
        return st;
    }
    samc__log(SAMC_LOG_INFO, "predictor: impl %s, %d thread(s)", p->x.impl->name, samc__api_threads(&p->x));
    *out = p;
    return SAMC_OK;
}

samc_status samc_predictor_load(const char *checkpoint, const char *config, samc_predictor **out,
                                samc_error *err)
{
    return samc_predictor_load_ex(checkpoint, config, NULL, out, err);
}

samc_status samc_predictor_load_ex(const char *checkpoint, const char *config, const samc_load_options *opts,
                                   samc_predictor **out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    samc_model *m = NULL;
    samc_status st = samc__api_load_legacy(checkpoint, config, opts, &m, err);
    if (!st && (st = samc_predictor_new(m, NULL, out, err)))
        samc_model_free(m);
    if (!st)
        (*out)->owned = m;
    return st;
}

void samc_predictor_free(samc_predictor *p)
{
    if (!p)
        return;
    samc_frame_features_release(&p->features);
    samc_exec_free(&p->x);
    samc_model_free(p->owned);
    free(p);
}

const char *samc_predictor_impl(const samc_predictor *p) { return p ? p->x.impl->name : ""; }

int samc_predictor_threads(const samc_predictor *p) { return p ? samc__api_threads(&p->x) : 0; }

const samc_model *samc_predictor_model(const samc_predictor *p) { return p ? p->model : NULL; }

samc_status samc_predictor_set_impl(samc_predictor *p, const char *impl, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    return samc_exec_set_impl(&p->x, impl ? impl : samc_default_impl(), err);
}

samc_status samc_predictor_override(samc_predictor *p, const char *spec, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(spec, err);
    return samc_exec_add_override(&p->x, spec, err);
}

void samc_predictor_set_threads(samc_predictor *p, int n)
{
    if (p)
        samc_exec_set_threads(&p->x, n > 0 ? n : 0);
}

void samc_predictor_set_abort_callback(samc_predictor *p, samc_abort_fn fn, void *user)
{
    if (p)
        samc_exec_set_abort(&p->x, fn, user);
}

samc_status samc_predictor_set_postprocess(samc_predictor *p, double max_hole_area, double max_sprinkle_area,
                                           samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    if (!(max_hole_area >= 0) || !(max_sprinkle_area >= 0))
        return samc_fail(err, SAMC_ERR_ARG, "max_hole_area and max_sprinkle_area must be >= 0 (got %g, %g)",
                         max_hole_area, max_sprinkle_area);
    p->opts.max_hole_area = max_hole_area;
    p->opts.max_sprinkle_area = max_sprinkle_area;
    return SAMC_OK;
}

/* The trace reports each completed parity point: the encoder's blocks give
 * the progress of set_image. */
static void encode_progress(void *user, const char *module, const samc_scope *sc, int nslots,
                            const char *const *slots, const samc_tensor *const *t)
{
    samc_predictor *p = user;
    static const char blocks[] = "image_encoder.trunk.blocks.";
    if (strncmp(module, blocks, sizeof blocks - 1) || strchr(module + sizeof blocks - 1, '.'))
        return;
    p->progress(p->progress_user, "encode", ++p->blocks_done, p->model->sam2->image_encoder.depth);
}

samc_status samc_predictor_set_image(samc_predictor *p, const uint8_t *rgb, int h, int w, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(rgb, err);
    samc_status bs = samc__predictor_refuse_busy(p, __func__, err); /* the encoder runs on p's features */
    if (bs)
        return bs;
    samc_frame_features_release(&p->features);
    p->has_image = false;
    p->blocks_done = 0;
    if (p->progress)
        samc_exec_set_trace(&p->x, encode_progress, p);
    p->busy = 1;
    samc_status st = samc_sam2_encode_image(&p->x, p->model->sam2, rgb, h, w, &p->features, err);
    p->busy = 0;
    if (p->progress)
        samc_exec_set_trace(&p->x, NULL, NULL);
    p->has_image = st == SAMC_OK;
    return st;
}

int samc_predictor_low_res_size(const samc_predictor *p) { return p ? 4 * p->model->sam2->tracker.emb : 0; }

const char *samc_predictor_config_name(const samc_predictor *p) { return p ? p->model->sam2->cfg.name : ""; }

samc_status samc__api_prompt(const samc_predict_request *rq, int s, samc_tensor *mask, samc_sam_prompt *pr,
                             samc_error *err)
{
    if (rq->n_points < 0 || (rq->n_points > 0 && (!rq->point_coords || !rq->point_labels)))
        return samc_fail(err, SAMC_ERR_ARG, "n_points is %d but point_coords or point_labels is NULL", rq->n_points);
    const int64_t mshape[3] = {1, s, s};
    *mask = rq->mask_input ? samc_tensor_view((float *)rq->mask_input, 3, mshape) : (samc_tensor){0};
    *pr = (samc_sam_prompt){.n_points = rq->n_points, .points = rq->point_coords, .labels = rq->point_labels,
                            .has_box = rq->box != NULL, .mask_input = rq->mask_input ? mask : NULL,
                            .multimask = rq->multimask_output != 0, .normalized_coords = rq->normalized_coords != 0};
    if (rq->box)
        memcpy(pr->box, rq->box, sizeof pr->box);
    return SAMC_OK;
}

void samc__api_masks(samc_sam_prediction *res, int h, int w, int s, bool logits, samc_masks *out)
{
    const int64_t hw = (int64_t)h * w;
    out->num_masks = res->num_masks;
    out->height = h, out->width = w;
    out->low_res_size = s;
    out->masks = res->masks.data, res->masks.owns = false; /* hand the buffers over */
    out->iou = res->iou.data, res->iou.owns = false;
    out->low_res = res->low_res.data, res->low_res.owns = false;
    out->object_score = res->object_score;
    if (!logits)
        for (int64_t i = 0; i < hw * out->num_masks; i++)
            out->masks[i] = out->masks[i] > 0.0f ? 1.0f : 0.0f; /* mask_threshold 0, strict */
}

/* predict on features f (the predictor's current image or an embedding). */
static samc_status predict_features(samc_predictor *p, const samc_frame_features *f, const samc_predict_request *rq,
                                    samc_masks *out, samc_error *err)
{
    const int s = samc_predictor_low_res_size(p);
    samc_tensor mask;
    samc_sam_prompt pr;
    samc_status st = samc__api_prompt(rq, s, &mask, &pr, err);
    samc_sam_prediction res;
    if (!st)
        st = samc_sam_predict(&p->x, &p->model->sam2->tracker, f, &pr, &p->opts, &res, err);
    if (!st)
        samc__api_masks(&res, f->orig_h, f->orig_w, s, rq->return_logits != 0, out);
    return st;
}

samc_status samc_predictor_predict(samc_predictor *p, const samc_predict_request *rq, samc_masks *out,
                                   samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    if (p && p->busy)
        return samc__predictor_refuse_busy(p, __func__, err);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(rq, err);
    if (!p->has_image)
        return samc_fail(err, SAMC_ERR_ARG, "an image must be set with samc_predictor_set_image before predict");
    return predict_features(p, &p->features, rq, out, err);
}

samc_status samc_predictor_embed(samc_predictor *p, const uint8_t *rgb, int h, int w, samc_embedding **out,
                                 samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    if (p && p->busy)
        return samc__predictor_refuse_busy(p, __func__, err);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(rgb, err);
    samc_embedding *e = NULL;
    samc_status st = samc__embedding_alloc(p->model, &e, err);
    if (!st)
        st = samc_sam2_encode_image(&p->x, p->model->sam2, rgb, h, w, &e->sam2, err);
    if (st) {
        samc_embedding_free(e);
        return st;
    }
    /* predict reads image_embed and the high-res levels only; the rest
     * (the video path's) would be a third of the cached bytes. */
    samc_tensor_release(&e->sam2.vision_features);
    samc_tensor_release(&e->sam2.vision_pos);
    e->h = h, e->w = w;
    *out = e;
    return SAMC_OK;
}

samc_status samc_predictor_predict_on(samc_predictor *p, const samc_embedding *e, const samc_predict_request *rq,
                                      samc_masks *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    if (p && p->busy)
        return samc__predictor_refuse_busy(p, __func__, err);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(e, err);
    SAMC_API_NEED(rq, err);
    samc_status st = samc__embedding_check(e, p->model, "samc_predictor_predict_on", err);
    return st ? st : predict_features(p, &e->sam2, rq, out, err);
}

void samc_masks_free(samc_masks *m)
{
    if (!m)
        return;
    free(m->masks);
    free(m->iou);
    free(m->low_res);
    memset(m, 0, sizeof *m);
}

samc_status samc_predictor_get_embedding(const samc_predictor *p, const float **data, int *c, int *h, int *w,
                                         samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(data, err);
    SAMC_API_NEED(c, err);
    SAMC_API_NEED(h, err);
    SAMC_API_NEED(w, err);
    if (!p->has_image)
        return samc_fail(err, SAMC_ERR_ARG, "no image set");
    const samc_tensor *t = &p->features.image_embed;
    *data = t->data;
    *c = (int)t->shape[1], *h = (int)t->shape[2], *w = (int)t->shape[3];
    return SAMC_OK;
}

/* core/api/api_internal.h */
samc_exec *samc__predictor_exec(samc_predictor *p) { return &p->x; }

const samc_sam2_model *samc__predictor_sam2(const samc_predictor *p) { return p->model->sam2; }

const samc_frame_features *samc__predictor_features(const samc_predictor *p)
{
    return p->has_image ? &p->features : NULL;
}

const samc_sam_image_opts *samc__predictor_opts(const samc_predictor *p) { return &p->opts; }
