/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_segment_sam3.c - `samc segment` on a SAM 3 model: a text and/or
 * exemplar boxes -> every instance found (Sam3Processor), one mask PNG per
 * instance, result.json (box, score, COCO RLE, bbox, area per instance) and
 * an overlay with each instance in its own colour and its box drawn. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_segment.h"
#include "core/base/error.h"
#include "samc_sam3.h"

typedef struct sam3_timing {
    double load, set_image, prompt;
} sam3_timing;

/* The boxes as Sam3Processor takes them (cx, cy, w, h normalised), after
 * the checks of every --box: finite, ordered, inside the image, not empty. */
static samc_status check_boxes(const seg_args *a, const samc_image *img, samc_error *err)
{
    for (int i = 0; i < a->n_boxes; i++) {
        const float *b = a->boxes + 4 * i;
        char where[32];
        snprintf(where, sizeof where, "--box %d", i + 1);
        samc_status st = cli_check_exemplar_box(where, b, img->w, img->h, err);
        if (st)
            return st;
    }
    return SAMC_OK;
}

/* The prompt, as the official processor runs it: the text (one grounding),
 * then each box (one grounding each; without a text the text is "visual"). */
static samc_status run_prompt(samc_sam3_processor *p, const seg_args *a, const samc_image *img, samc_error *err)
{
    samc_status st = a->text ? samc_sam3_processor_set_text(p, a->text, err) : SAMC_OK;
    for (int i = 0; !st && i < a->n_boxes; i++) {
        float cb[4];
        cli_box_cxcywh(a->boxes + 4 * i, img->w, img->h, cb);
        st = samc_sam3_processor_add_box(p, cb, a->box_positive[i], err);
    }
    return st;
}

/* Masks are sigmoid(upsampled logits): the logits back (clamped where the
 * probability saturated), so the mask records (RLE at > 0, stability score)
 * and the overlay are those of the SAM 2 masks. */
static float *mask_logits(const samc_sam3_results *r, samc_error *err)
{
    const int64_t n = (int64_t)r->n * r->h * r->w;
    float *lg = malloc((size_t)(n > 0 ? n : 1) * sizeof *lg);
    if (!lg) {
        samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        const float q = r->masks[i];
        lg[i] = q >= 1.0f ? 40.0f : q <= 0.0f ? -40.0f : logf(q / (1.0f - q));
    }
    return lg;
}

/* A box clipped to one pixel beyond the image, for drawing (boxes are
 * unclipped, as the official processor returns them). */
static void draw_box_clipped(uint8_t *rgb, int w, int h, const float *b, const uint8_t color[3])
{
    const float c[4] = {fmaxf(b[0], -1.0f), fmaxf(b[1], -1.0f), fminf(b[2], (float)w), fminf(b[3], (float)h)};
    cli_draw_box(rgb, w, h, c, color);
}

static samc_status write_images(const seg_args *a, const samc_image *img, const samc_sam3_results *r,
                                const float *lg, cli_outputs *outs, samc_error *err)
{
    const int64_t hw = (int64_t)r->h * r->w;
    uint8_t *gray = malloc((size_t)hw), *over = malloc((size_t)hw * 3);
    samc_status st = (!gray || !over) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
    char path[4200];
    if (!st)
        memcpy(over, img->rgb, (size_t)hw * 3);
    for (int k = 0; !st && k < r->n; k++) {
        for (int64_t i = 0; i < hw; i++)
            gray[i] = lg[k * hw + i] > 0.0f ? 255 : 0;
        snprintf(path, sizeof path, "%s/mask_%d.png", a->out, k);
        st = cli_outputs_png(outs, path, r->w, r->h, 1, gray, err);
        uint8_t col[3];
        cli_mask_color(k, col);
        cli_blend_mask(over, r->w, r->h, lg + k * hw, col);
    }
    static const uint8_t pos[3] = {255, 255, 255}, neg[3] = {255, 0, 0};
    for (int k = 0; !st && k < r->n; k++) {
        uint8_t col[3];
        cli_mask_color(k, col);
        draw_box_clipped(over, r->w, r->h, r->boxes + 4 * k, col);
    }
    for (int i = 0; !st && i < a->n_boxes; i++) /* the prompt: white positive, red negative exemplars */
        cli_draw_box(over, r->w, r->h, a->boxes + 4 * i, a->box_positive[i] ? pos : neg);
    if (!st) {
        snprintf(path, sizeof path, "%s/overlay.png", a->out);
        st = cli_outputs_png(outs, path, r->w, r->h, 3, over, err);
    }
    free(gray);
    free(over);
    return st;
}

static cJSON *num_array(const float *v, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(v[i]));
    return arr;
}

static void prompt_json(cJSON *r, const seg_args *a, float threshold)
{
    cJSON *pr = cJSON_AddObjectToObject(r, "prompt");
    if (a->text)
        cJSON_AddStringToObject(pr, "text", a->text);
    else
        cJSON_AddNullToObject(pr, "text");
    cJSON *bx = cJSON_AddArrayToObject(pr, "boxes");
    for (int i = 0; i < a->n_boxes; i++) {
        cJSON *b = cJSON_CreateObject();
        cJSON_AddItemToObject(b, "box", num_array(a->boxes + 4 * i, 4));
        cJSON_AddBoolToObject(b, "positive", a->box_positive[i]);
        cJSON_AddItemToArray(bx, b);
    }
    cJSON_AddNumberToObject(pr, "threshold", threshold);
}

static cJSON *result_json(const seg_args *a, const samc_model *m, const samc_sam3_processor *p, float threshold,
                          const samc_sam3_results *res, const float *lg, const sam3_timing *t, samc_error *err)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "samc_version", samc_version());
    cJSON_AddStringToObject(r, "model", a->model);
    cJSON_AddStringToObject(r, "family", samc_family_name(samc_model_family(m)));
    cJSON_AddStringToObject(r, "config", samc_model_config_name(m));
    cJSON_AddStringToObject(r, "impl", samc_sam3_processor_impl(p));
    cJSON_AddNumberToObject(r, "threads", samc_sam3_processor_threads(p));
    cJSON_AddStringToObject(r, "image", a->image);
    cJSON_AddNumberToObject(r, "width", res->w);
    cJSON_AddNumberToObject(r, "height", res->h);
    prompt_json(r, a, threshold);
    cJSON *tm = cJSON_AddObjectToObject(r, "seconds");
    cJSON_AddNumberToObject(tm, "load", t->load);
    cJSON_AddNumberToObject(tm, "set_image", t->set_image);
    cJSON_AddNumberToObject(tm, "prompt", t->prompt);
    cJSON *arr = cJSON_AddArrayToObject(r, "instances");
    const int64_t hw = (int64_t)res->h * res->w;
    for (int k = 0; k < res->n; k++) {
        cJSON *o = cli_mask_entry(arr, k);
        cJSON_AddNumberToObject(o, "score", res->scores[k]);
        cJSON_AddItemToObject(o, "box", num_array(res->boxes + 4 * k, 4)); /* xyxy pixels, unclipped */
        if (cli_mask_json(o, lg + k * hw, res->h, res->w, a->rle, err)) {
            cJSON_Delete(r);
            return NULL;
        }
    }
    return r;
}

static samc_status write_json(const seg_args *a, cJSON *r, cli_outputs *outs, samc_error *err)
{
    char *text = r ? cJSON_Print(r) : NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/result.json", a->out);
    samc_status st = !text ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory")
                           : cli_outputs_bytes(outs, path, text, strlen(text), err);
    cJSON_free(text);
    return st;
}

static void print_summary(const seg_args *a, const samc_model *m, const samc_sam3_processor *p,
                          const samc_sam3_results *r, const sam3_timing *t)
{
    if (cli_verbosity < 1)
        return;
    printf("samc: %d instance(s) written to %s (SAM 3, config %s, impl %s, %d thread(s))\n", r->n, a->out,
           samc_model_config_name(m), samc_sam3_processor_impl(p), samc_sam3_processor_threads(p));
    for (int k = 0; k < r->n; k++)
        printf("  mask_%d.png  score %.4f  box %.1f,%.1f,%.1f,%.1f\n", k, r->scores[k], r->boxes[4 * k],
               r->boxes[4 * k + 1], r->boxes[4 * k + 2], r->boxes[4 * k + 3]);
    printf("time: load %.3f s, set_image %.3f s, prompt %.3f s, total %.3f s\n", t->load, t->set_image, t->prompt,
           t->load + t->set_image + t->prompt);
}

static samc_status load(const seg_args *a, samc_model **m, samc_sam3_processor **p, samc_error *err)
{
    samc_model_params mp = samc_model_default_params();
    mp.config = a->config, mp.vocab = a->vocab, mp.allow_nonfinite = a->allow_nonfinite;
    mp.family = SAMC_FAMILY_SAM3; /* told by cmd_segment's run(): the loader does not look again */
    samc_status st = samc_model_load(a->model, &mp, m, err);
    samc_sam3_processor_params pp = samc_sam3_processor_default_params();
    pp.impl = a->impl, pp.n_threads = a->threads;
    if (a->threshold >= 0)
        pp.threshold = a->threshold;
    if (cli_verbosity >= 2 || (cli_verbosity >= 1 && isatty(2)))
        pp.progress = cmd_segment_progress;
    pp.abort_callback = cli_abort_requested; /* Ctrl-C stops at the next ViT block or detector stage */
    if (!st)
        st = samc_sam3_processor_new(*m, &pp, p, err);
    for (int i = 0; !st && i < a->n_overrides; i++)
        st = samc_sam3_processor_override(*p, a->overrides[i], err);
    return st;
}

samc_status cmd_segment_sam3(const seg_args *a, const samc_image *img, samc_error *err)
{
    samc_model *m = NULL;
    samc_sam3_processor *p = NULL;
    samc_sam3_results res = {0};
    float *lg = NULL;
    sam3_timing tm = {0};
    samc_status st = check_boxes(a, img, err);
    double t0 = cli_now();
    if (!st)
        st = load(a, &m, &p, err);
    if (!st)
        st = cli_prepare_out_dir(a->out, err); /* before any inference */
    double t1 = cli_now();
    if (!st)
        st = samc_sam3_processor_set_image(p, img->rgb, img->h, img->w, err);
    cli_progress_end();
    double t2 = cli_now();
    if (!st)
        st = run_prompt(p, a, img, err);
    if (!st)
        st = samc_sam3_processor_results(p, &res, err);
    tm = (sam3_timing){t1 - t0, t2 - t1, cli_now() - t2};
    if (!st && !(lg = mask_logits(&res, err)))
        st = err->status;
    /* every output under a temporary name, all renamed at the end or none */
    cli_outputs outs = {.stale_dir = a->out, .stale = cli_segment_outputs};
    if (!st)
        st = write_images(a, img, &res, lg, &outs, err);
    if (!st) {
        const float thr = a->threshold >= 0 ? a->threshold : samc_sam3_processor_default_params().threshold;
        cJSON *r = result_json(a, m, p, thr, &res, lg, &tm, err);
        st = r ? write_json(a, r, &outs, err) : (err->status ? err->status : SAMC_ERR_NOMEM);
        cJSON_Delete(r);
    }
    if (!st)
        st = cli_outputs_commit(&outs, err);
    else
        cli_outputs_discard(&outs);
    if (!st)
        print_summary(a, m, p, &res, &tm);
    free(lg);
    samc_sam3_processor_free(p);
    samc_model_free(m);
    return st;
}
