/* sam3_api.c - include/samc_sam3.h on the SAM 3 wiring (sam3_predict.h): a
 * model loaded once, processors that each own an exec (implementation
 * choice, workspace), the image features and the prompt session. */
#include "samc_sam3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_predict.h"

struct samc_sam3_processor {
    samc_sam3_model *m;
    samc_exec x;
    samc_sam3_image img;
    bool has_image;
    samc_sam3_session s;
    samc_sam3_result res;
    bool has_result;
    float threshold;
};

samc_status samc_sam3_load(const char *checkpoint, const char *config, const char *vocab, samc_sam3_model **out,
                           samc_error *err)
{
    *out = NULL;
    if (!vocab)
        return samc_fail(err, SAMC_ERR_ARG, "no tokenizer vocabulary given (bpe_simple_vocab_16e6.txt.gz)");
    samc_status st = samc_sam3_model_load(checkpoint, config, out, err);
    if (!st && (st = samc_sam3_model_set_vocab(*out, NULL, 0, vocab, err))) {
        samc_sam3_model_free(*out);
        *out = NULL;
    }
    return st;
}

void samc_sam3_free(samc_sam3_model *m) { samc_sam3_model_free(m); }

samc_status samc_sam3_processor_new(samc_sam3_model *m, const char *impl, samc_sam3_processor **out,
                                    samc_error *err)
{
    *out = NULL;
    if (!m)
        return samc_fail(err, SAMC_ERR_ARG, "no SAM 3 model given");
    samc_sam3_processor *p = calloc(1, sizeof *p);
    if (!p)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    p->m = m, p->threshold = 0.5f; /* Sam3Processor's confidence_threshold */
    samc_status st = samc_sam3_exec_init(&p->x, m, impl, err);
    if (st) {
        free(p);
        return st;
    }
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
    samc_sam3_session_reset(&p->s);
    drop_result(p);
}

void samc_sam3_processor_free(samc_sam3_processor *p)
{
    if (!p)
        return;
    samc_sam3_processor_reset(p);
    samc_sam3_image_release(&p->img);
    samc_exec_free(&p->x);
    free(p);
}

void samc_sam3_processor_set_threads(samc_sam3_processor *p, int n) { samc_exec_set_threads(&p->x, n); }

samc_status samc_sam3_processor_set_image(samc_sam3_processor *p, const uint8_t *rgb, int h, int w,
                                          samc_error *err)
{
    samc_sam3_processor_reset(p);
    samc_sam3_image_release(&p->img);
    p->has_image = false;
    if (!rgb || h < 1 || w < 1 || (int64_t)h * w > ((int64_t)1 << 28))
        return samc_fail(err, SAMC_ERR_ARG, "set_image: bad image (%d x %d)", w, h);
    samc_status st = samc_sam3_set_image(&p->x, rgb, h, w, &p->img, err);
    p->has_image = st == SAMC_OK;
    return st;
}

static samc_status need_image(const samc_sam3_processor *p, const char *what, samc_error *err)
{
    return p->has_image ? SAMC_OK : samc_fail(err, SAMC_ERR_ARG, "%s: set an image first", what);
}

samc_status samc_sam3_processor_set_text(samc_sam3_processor *p, const char *text, samc_error *err)
{
    samc_status st = need_image(p, "set_text", err);
    if (!st && (!text || !*text))
        st = samc_fail(err, SAMC_ERR_ARG, "set_text: empty text");
    if (st)
        return st;
    drop_result(p);
    st = samc_sam3_set_text(&p->x, &p->img, &p->s, text, p->threshold, &p->res, err);
    p->has_result = st == SAMC_OK;
    return st;
}

samc_status samc_sam3_processor_add_box(samc_sam3_processor *p, const float box[4], bool positive,
                                        samc_error *err)
{
    samc_status st = need_image(p, "add_box", err);
    if (st)
        return st;
    if (!box || !isfinite(box[0]) || !isfinite(box[1]) || !isfinite(box[2]) || !isfinite(box[3]) ||
        box[0] < 0 || box[0] > 1 || box[1] < 0 || box[1] > 1 || !(box[2] > 0) || !(box[3] > 0) || box[2] > 1 ||
        box[3] > 1)
        return samc_fail(err, SAMC_ERR_ARG,
                         "add_box: (%g, %g, %g, %g) is not a normalised cx, cy, w, h box with its centre in the image "
                         "and a positive size", box ? (double)box[0] : 0.0, box ? (double)box[1] : 0.0,
                         box ? (double)box[2] : 0.0, box ? (double)box[3] : 0.0);
    drop_result(p);
    st = samc_sam3_add_box(&p->x, &p->img, &p->s, box, positive, p->threshold, &p->res, err);
    p->has_result = st == SAMC_OK;
    return st;
}

samc_status samc_sam3_processor_set_threshold(samc_sam3_processor *p, float threshold, samc_error *err)
{
    if (!(threshold >= 0.0f && threshold <= 1.0f))
        return samc_fail(err, SAMC_ERR_ARG, "set_threshold: %g is not in [0, 1]", (double)threshold);
    p->threshold = threshold;
    if (!p->has_result) /* the official processor re-runs only a state with results */
        return SAMC_OK;
    drop_result(p);
    samc_status st = samc_sam3_ground(&p->x, &p->img, &p->s, threshold, &p->res, err);
    p->has_result = st == SAMC_OK;
    return st;
}

samc_status samc_sam3_processor_results(const samc_sam3_processor *p, samc_sam3_results *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    if (!p->has_result)
        return samc_fail(err, SAMC_ERR_ARG, "results: no prompt has been run (set a text or add a box)");
    for (int i = 0; i < p->res.post.n; i++) {
        const samc_tensor *t = &p->res.post.t[i];
        if (!strcmp(p->res.post.names[i], "scores"))
            out->scores = t->data, out->n = (int)t->shape[0];
        else if (!strcmp(p->res.post.names[i], "boxes"))
            out->boxes = t->data;
        else if (!strcmp(p->res.post.names[i], "masks"))
            out->masks = t->data;
    }
    out->h = p->img.h, out->w = p->img.w;
    return SAMC_OK;
}
