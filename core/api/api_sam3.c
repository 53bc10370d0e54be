/* SPDX-License-Identifier: Apache-2.0 */
/* api_sam3.c - include/samc_sam3.h on the SAM 3 wiring (sam3_predict.h): a
 * samc_model of the SAM 3 family loaded once, processors that each own an
 * exec (implementation choice, workspace), the image features and the
 * prompt session. */
#include "samc_sam3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api_internal.h"
#include "core/models/sam3/sam3_inst.h"
#include "core/models/sam3/sam3_predict.h"
#include "core/text/clip_tokenizer.h"

struct samc_sam3_processor {
    const samc_model *model;
    samc_exec x;
    samc_sam3_image img;       /* set_image's own features */
    const samc_sam3_image *cur; /* what prompts run on: &img, an embedding's, or NULL (no image) */
    samc_sam3_session s;
    samc_sam3_result res;
    bool has_result;
    float threshold;
    samc_progress_fn progress;
    void *progress_user;
    int blocks_done;           /* encoder progress of the current set_image */
    bool has_inst;             /* a model with its tracker: predict_inst's exec and features */
    samc_exec xi;              /* the inst family (the tracker's SAM heads mounted) */
    samc_frame_features inst_f; /* the tracker features of inst_of */
    const samc_sam3_image *inst_of;
};

samc_sam3_processor_params samc_sam3_processor_default_params(void)
{
    return (samc_sam3_processor_params){.impl = NULL, .n_threads = 0, .threshold = 0.5f};
}

samc_status samc_sam3_processor_new(const samc_model *model, const samc_sam3_processor_params *params,
                                    samc_sam3_processor **out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(model, err);
    samc_status st = samc__api_need_family(model, SAMC_FAMILY_SAM3, "samc_sam3_processor_new", err);
    if (st)
        return st;
    const samc_sam3_processor_params pp = params ? *params : samc_sam3_processor_default_params();
    if (!(pp.threshold >= 0.0f && pp.threshold <= 1.0f))
        return samc_fail(err, SAMC_ERR_ARG, "samc_sam3_processor_new: threshold %g is not in [0, 1]",
                         (double)pp.threshold);
    samc_sam3_processor *p = calloc(1, sizeof *p);
    if (!p)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    p->model = model, p->threshold = pp.threshold;
    p->progress = pp.progress, p->progress_user = pp.progress_user;
    st = samc_sam3_exec_init(&p->x, model->sam3, NULL, err);
    if (!st)
        st = samc__api_setup_exec(&p->x, pp.impl, pp.n_threads, err);
    samc_exec_set_abort(&p->x, pp.abort_callback, pp.abort_user);
    if (!st && model->sam3->has_tracker) { /* predict_inst runs the tracker's heads */
        p->has_inst = true;
        st = samc_sam3_inst_exec_init(&p->xi, model->sam3, NULL, err);
        if (!st)
            st = samc__api_setup_exec(&p->xi, pp.impl, pp.n_threads, err);
        samc_exec_set_abort(&p->xi, pp.abort_callback, pp.abort_user);
    }
    if (st) {
        samc_sam3_processor_free(p);
        return st;
    }
    samc__log(SAMC_LOG_INFO, "SAM 3 processor: impl %s, %d thread(s)", p->x.impl->name, samc__api_threads(&p->x));
    *out = p;
    return SAMC_OK;
}

static void drop_result(samc_sam3_processor *p)
{
    samc_sam3_result_release(&p->res);
    p->has_result = false;
}

void samc_sam3_processor_reset(samc_sam3_processor *p)
{
    if (!p)
        return;
    samc_sam3_session_reset(&p->s);
    drop_result(p);
}

void samc_sam3_processor_free(samc_sam3_processor *p)
{
    if (!p)
        return;
    samc_sam3_processor_reset(p);
    samc_sam3_image_release(&p->img);
    samc_frame_features_release(&p->inst_f);
    samc_exec_free(&p->x);
    if (p->has_inst)
        samc_exec_free(&p->xi);
    free(p);
}

const char *samc_sam3_processor_impl(const samc_sam3_processor *p) { return p ? p->x.impl->name : ""; }

int samc_sam3_processor_threads(const samc_sam3_processor *p) { return p ? samc__api_threads(&p->x) : 0; }

void samc_sam3_processor_set_abort_callback(samc_sam3_processor *p, samc_abort_fn fn, void *user)
{
    if (p)
        samc_exec_set_abort(&p->x, fn, user);
}

samc_status samc_sam3_processor_override(samc_sam3_processor *p, const char *spec, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(spec, err);
    return samc_exec_add_override(&p->x, spec, err);
}

/* The trace reports each completed parity point: the ViT's blocks give the
 * progress of set_image. */
static void encode_progress(void *user, const char *module, const samc_scope *sc, int nslots,
                            const char *const *slots, const samc_tensor *const *t)
{
    (void)sc, (void)nslots, (void)slots, (void)t;
    samc_sam3_processor *p = user;
    static const char blocks[] = "backbone.vision_backbone.trunk.blocks.";
    if (strncmp(module, blocks, sizeof blocks - 1) || strchr(module + sizeof blocks - 1, '.'))
        return;
    p->progress(p->progress_user, "encode", ++p->blocks_done, p->model->sam3->vision.last_block + 1);
}

/* set_image's encoder run into `img`, with progress. */
static samc_status encode(samc_sam3_processor *p, const uint8_t *rgb, int h, int w, samc_sam3_image *img,
                          samc_error *err)
{
    if (!rgb || h < 1 || w < 1 || (int64_t)h * w > ((int64_t)1 << 28))
        return samc_fail(err, SAMC_ERR_ARG, "set_image: bad image (%d x %d)", w, h);
    p->blocks_done = 0;
    if (p->progress)
        samc_exec_set_trace(&p->x, encode_progress, p);
    samc_status st = samc_sam3_set_image(&p->x, rgb, h, w, img, err);
    if (p->progress)
        samc_exec_set_trace(&p->x, NULL, NULL);
    return st;
}

samc_status samc_sam3_processor_set_image(samc_sam3_processor *p, const uint8_t *rgb, int h, int w,
                                          samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    samc_sam3_processor_reset(p);
    samc_sam3_image_release(&p->img);
    p->cur = p->inst_of = NULL; /* predict_inst's features are of the old image */
    samc_status st = encode(p, rgb, h, w, &p->img, err);
    if (!st)
        p->cur = &p->img;
    return st;
}

samc_status samc_sam3_processor_embed(samc_sam3_processor *p, const uint8_t *rgb, int h, int w, samc_embedding **out,
                                      samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(p, err);
    samc_embedding *e = NULL;
    samc_status st = samc__embedding_alloc(p->model, &e, err);
    if (!st)
        st = encode(p, rgb, h, w, &e->sam3, err);
    if (st) {
        samc_embedding_free(e);
        return st;
    }
    e->h = h, e->w = w;
    *out = e;
    return SAMC_OK;
}

samc_status samc_sam3_processor_use_embedding(samc_sam3_processor *p, const samc_embedding *e, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(e, err);
    samc_status st = samc__embedding_check(e, p->model, "samc_sam3_processor_use_embedding", err);
    if (st)
        return st;
    samc_sam3_processor_reset(p);
    samc_sam3_image_release(&p->img);
    p->inst_of = NULL;
    p->cur = &e->sam3;
    return SAMC_OK;
}

static samc_status need_image(const samc_sam3_processor *p, const char *what, samc_error *err)
{
    return p->cur ? SAMC_OK : samc_fail(err, SAMC_ERR_ARG, "%s: set an image first", what);
}

/* The official tokenizer cuts a text longer than the context silently
 * (the end token forced into the last slot); samc says so. */
static samc_status warn_if_truncated(const samc_sam3_processor *p, const char *text, samc_error *err)
{
    const samc_sam3_model *m = p->model->sam3;
    const int ctx = m->language.text.context_length;
    int64_t *ids = malloc((size_t)ctx * sizeof *ids);
    if (!ids)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    bool truncated = false;
    samc_status st = samc_clip_tokenizer_encode(m->language.tok, text, ctx, ids, NULL, &truncated, err);
    free(ids);
    if (!st && truncated)
        samc__log(SAMC_LOG_WARN, "the text is longer than the context of %d tokens (start and end included): "
                  "truncated as the official tokenizer does", ctx);
    return st;
}

samc_status samc_sam3_processor_set_text(samc_sam3_processor *p, const char *text, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    samc_status st = need_image(p, "set_text", err);
    if (!st && (!text || !*text))
        st = samc_fail(err, SAMC_ERR_ARG, "set_text: empty text");
    if (!st)
        st = warn_if_truncated(p, text, err);
    if (st)
        return st;
    drop_result(p);
    st = samc_sam3_set_text(&p->x, p->cur, &p->s, text, p->threshold, &p->res, err);
    p->has_result = st == SAMC_OK;
    return st;
}

samc_status samc_sam3_processor_add_box(samc_sam3_processor *p, const float box[4], bool positive,
                                        samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(box, err);
    samc_status st = need_image(p, "add_box", err);
    if (st)
        return st;
    if (!isfinite(box[0]) || !isfinite(box[1]) || !isfinite(box[2]) || !isfinite(box[3]) || box[0] < 0 ||
        box[0] > 1 || box[1] < 0 || box[1] > 1 || !(box[2] > 0) || !(box[3] > 0) || box[2] > 1 || box[3] > 1)
        return samc_fail(err, SAMC_ERR_ARG,
                         "add_box: (%g, %g, %g, %g) is not a normalised cx, cy, w, h box with its centre in the image "
                         "and a positive size", (double)box[0], (double)box[1], (double)box[2], (double)box[3]);
    drop_result(p);
    st = samc_sam3_add_box(&p->x, p->cur, &p->s, box, positive, p->threshold, &p->res, err);
    p->has_result = st == SAMC_OK;
    return st;
}

samc_status samc_sam3_processor_set_threshold(samc_sam3_processor *p, float threshold, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(p, err);
    if (!(threshold >= 0.0f && threshold <= 1.0f))
        return samc_fail(err, SAMC_ERR_ARG, "set_threshold: %g is not in [0, 1]", (double)threshold);
    p->threshold = threshold;
    if (!p->has_result) /* the official processor re-runs only a state with results */
        return SAMC_OK;
    drop_result(p);
    samc_status st = samc_sam3_ground(&p->x, p->cur, &p->s, threshold, &p->res, err);
    p->has_result = st == SAMC_OK;
    return st;
}

samc_status samc_sam3_processor_results(const samc_sam3_processor *p, samc_sam3_results *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    SAMC_API_NEED(p, err);
    if (!p->has_result)
        return samc_fail(err, SAMC_ERR_ARG, "results: no prompt has been run (set a text or add a box)");
    const samc_sam3_detections *d = &p->res.post;
    out->scores = d->scores.data, out->n = (int)d->scores.shape[0];
    out->boxes = d->boxes.data, out->masks = d->masks.data;
    out->h = p->cur->h, out->w = p->cur->w;
    return SAMC_OK;
}

int samc_sam3_processor_low_res_size(const samc_sam3_processor *p)
{
    return p && p->has_inst ? 4 * samc_tracker_emb(&p->model->sam3->tracker.cfg) : 0;
}

samc_status samc_sam3_processor_predict_inst(samc_sam3_processor *p, const samc_predict_request *rq, samc_masks *out,
                                            samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    SAMC_API_NEED(p, err);
    SAMC_API_NEED(rq, err);
    if (!p->has_inst)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "samc_sam3_processor_predict_inst: this SAM 3 model has no tracker "
                         "half (tracker.* weights): points and boxes need it (load sam3.pt whole)");
    samc_status st = need_image(p, "samc_sam3_processor_predict_inst", err);
    if (!st && p->inst_of != p->cur) { /* Sam3Processor.set_image's tracker features, once per image */
        samc_frame_features_release(&p->inst_f);
        p->inst_of = NULL;
        if (!(st = samc_sam3_inst_features(&p->xi, p->cur, &p->inst_f, err)))
            p->inst_of = p->cur;
    }
    const int s = samc_sam3_processor_low_res_size(p);
    samc_tensor mask;
    samc_sam_prompt pr;
    if (!st)
        st = samc__api_prompt(rq, s, &mask, &pr, err);
    samc_sam_prediction res;
    if (!st)
        st = samc_sam3_predict_inst(&p->xi, &p->inst_f, &pr, &res, err);
    if (!st)
        samc__api_masks(&res, p->inst_f.orig_h, p->inst_f.orig_w, s, rq->return_logits != 0, out);
    return st;
}
