/* SPDX-License-Identifier: Apache-2.0 */
/* serve_request.c - JSON request bodies to prompts (serve.h). Strict: the
 * body is one JSON object, every field is one the route takes (an unknown
 * or repeated field is refused: a typo must not be silently ignored),
 * numbers are finite and in range, arrays are bounded. Points and boxes get
 * the command line's checks and messages (apps/cli_prompt.c). Pure: fuzzed
 * (fuzz/fuzz_serve_request.c). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cli.h"
#include "core/base/error.h"
#include "serve.h"

/* ---- the JSON object and its fields ----------------------------------------- */

/* Parse `body` as one JSON object whose keys are all in `allowed` (a
 * NULL-terminated list) and appear once. An empty body is {}. */
static samc_status parse_object(const char *body, size_t n, const char *const *allowed, cJSON **out, samc_error *err)
{
    *out = NULL;
    if (n == 0) {
        *out = cJSON_CreateObject();
        return *out ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, n, &end, false);
    if (!root) {
        const size_t at = end && end >= body && end <= body + n ? (size_t)(end - body) : 0;
        return samc_fail(err, SAMC_ERR_ARG, "the body is not valid JSON (at byte %zu of %zu)", at, n);
    }
    for (const char *p = end; p < body + n; p++)
        if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
            cJSON_Delete(root);
            return samc_fail(err, SAMC_ERR_ARG, "the body has data after its JSON value (at byte %zu)",
                             (size_t)(p - body));
        }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return samc_fail(err, SAMC_ERR_ARG, "the body must be a JSON object");
    }
    for (const cJSON *c = root->child; c; c = c->next) {
        bool known = false;
        for (int i = 0; allowed[i] && !known; i++)
            known = !strcmp(c->string, allowed[i]);
        bool twice = false;
        for (const cJSON *d = root->child; d != c && !twice; d = d->next)
            twice = !strcmp(d->string, c->string);
        if (!known || twice) {
            char list[256] = "";
            for (int i = 0; allowed[i]; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", allowed[i]);
            samc_status st = samc_fail(err, SAMC_ERR_ARG, twice ? "field '%.64s' is given twice" :
                                       "unknown field '%.64s' (this request takes: %s)", c->string, list);
            cJSON_Delete(root);
            return st;
        }
    }
    *out = root;
    return SAMC_OK;
}

static samc_status get_number(const cJSON *root, const char *key, double lo, double hi, double *out, samc_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v)
        return SAMC_OK;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return samc_fail(err, SAMC_ERR_ARG, "%s: expected a number in [%g, %g]", key, lo, hi);
    *out = v->valuedouble;
    return SAMC_OK;
}

static samc_status get_int(const cJSON *root, const char *key, int lo, int hi, int *out, samc_error *err)
{
    double d = *out;
    samc_status st = get_number(root, key, lo, hi, &d, err);
    if (!st && d != floor(d))
        st = samc_fail(err, SAMC_ERR_ARG, "%s: expected an integer in [%d, %d]", key, lo, hi);
    if (!st)
        *out = (int)d;
    return st;
}

static samc_status get_bool(const cJSON *root, const char *key, bool *out, samc_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v)
        return SAMC_OK;
    if (!cJSON_IsBool(v))
        return samc_fail(err, SAMC_ERR_ARG, "%s: expected true or false", key);
    *out = cJSON_IsTrue(v);
    return SAMC_OK;
}

/* Element i of an array, a finite number. */
static samc_status number_at(const cJSON *c, const char *where, int i, float *out, samc_error *err)
{
    if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble) || fabs(c->valuedouble) > 1e9)
        return samc_fail(err, SAMC_ERR_ARG, "%s: element %d is not a finite number", where, i);
    *out = (float)c->valuedouble;
    return SAMC_OK;
}

/* The first `take` elements of a JSON array of n_min..n_max elements, as
 * finite numbers; *n: the array's length. */
static samc_status numbers(const cJSON *a, const char *where, int n_min, int n_max, int take, float *out, int *n,
                           samc_error *err)
{
    const int k = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    if (k < n_min || k > n_max) {
        if (n_min == n_max)
            return samc_fail(err, SAMC_ERR_ARG, "%s: expected an array of %d numbers", where, n_min);
        return samc_fail(err, SAMC_ERR_ARG, "%s: expected an array of %d to %d elements", where, n_min, n_max);
    }
    int i = 0;
    for (const cJSON *c = a->child; c && i < take; c = c->next, i++) {
        samc_status st = number_at(c, where, i, &out[i], err);
        if (st)
            return st;
    }
    *n = k;
    return SAMC_OK;
}

/* "points": [[x, y], [x, y, label], ...] (label 1 when left out, -1..3 as
 * --point takes), checked inside the w x h image as `samc segment` checks. */
static samc_status get_points(const cJSON *root, int h, int w, float *xy, int32_t *labels, int *n, samc_error *err)
{
    *n = 0;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "points");
    if (!a)
        return SAMC_OK;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > SERVE_MAX_POINTS)
        return samc_fail(err, SAMC_ERR_ARG, "points: expected an array of at most %d [x, y] or [x, y, label]",
                         SERVE_MAX_POINTS);
    int i = 0;
    for (const cJSON *p = a->child; p; p = p->next, i++) {
        char where[32];
        snprintf(where, sizeof where, "points[%d]", i);
        float v[3];
        int k = 0;
        samc_status st = numbers(p, where, 2, 3, 3, v, &k, err);
        if (st)
            return st;
        if (k == 3 && (v[2] != floorf(v[2]) || v[2] < -1 || v[2] > 3))
            return samc_fail(err, SAMC_ERR_ARG, "%s: label %g outside -1..3 (1 foreground, 0 background)", where,
                             (double)v[2]);
        xy[2 * i] = v[0], xy[2 * i + 1] = v[1];
        labels[i] = k == 3 ? (int32_t)v[2] : 1;
    }
    *n = i;
    return cli_check_points("points", xy, i, w, h, err);
}

static samc_status get_box(const cJSON *root, int h, int w, float box[4], bool *has, samc_error *err)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "box");
    *has = b != NULL;
    int k = 0;
    samc_status st = b ? numbers(b, "box", 4, 4, 4, box, &k, err) : SAMC_OK;
    return st || !b ? st : cli_check_box("box", box, w, h, err);
}

/* ---- the routes' bodies ------------------------------------------------------- */

static samc_status get_mask_input(const cJSON *root, serve_predict_req *out, samc_error *err)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "mask_input");
    if (!m)
        return SAMC_OK;
    if (!cJSON_IsObject(m))
        return samc_fail(err, SAMC_ERR_ARG, "mask_input: expected {\"prediction\": N, \"index\": K}");
    for (const cJSON *c = m->child; c; c = c->next)
        if (strcmp(c->string, "prediction") && strcmp(c->string, "index"))
            return samc_fail(err, SAMC_ERR_ARG, "mask_input: unknown field '%.64s' (takes: prediction, index)",
                             c->string);
    out->mask_pred = -1, out->mask_index = 0;
    samc_status st = get_int(m, "prediction", 0, 1 << 30, &out->mask_pred, err);
    if (!st)
        st = get_int(m, "index", 0, 2, &out->mask_index, err);
    if (!st && out->mask_pred < 0)
        st = samc_fail(err, SAMC_ERR_ARG, "mask_input: 'prediction' (the number a previous predict returned) is required");
    return st;
}

samc_status serve_parse_predict(const char *body, size_t n, int h, int w, serve_predict_req *out, samc_error *err)
{
    static const char *const keys[] = {"points", "box", "multimask", "mask_input", "png", NULL};
    memset(out, 0, sizeof *out);
    out->mask_pred = -1;
    cJSON *root = NULL;
    samc_status st = parse_object(body, n, keys, &root, err);
    if (!st)
        st = get_points(root, h, w, out->points, out->labels, &out->n_points, err);
    if (!st)
        st = get_box(root, h, w, out->box, &out->has_box, err);
    if (!st)
        st = get_mask_input(root, out, err);
    /* The official demo asks for three candidates when one click is all
     * there is (an ambiguous prompt), one mask otherwise. */
    out->multimask = out->n_points == 1 && !out->has_box && out->mask_pred < 0;
    if (!st)
        st = get_bool(root, "multimask", &out->multimask, err);
    if (!st)
        st = get_bool(root, "png", &out->png, err);
    if (!st && !out->n_points && !out->has_box && out->mask_pred < 0)
        st = samc_fail(err, SAMC_ERR_ARG, "no prompt: give points, a box or a mask_input");
    cJSON_Delete(root);
    return st;
}

/* "boxes": [[x0, y0, x1, y1], [x0, y0, x1, y1, "neg"], ...]: SAM 3 exemplars. */
static samc_status get_exemplars(const cJSON *root, int h, int w, serve_text_req *out, samc_error *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "boxes");
    if (!a)
        return SAMC_OK;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > SERVE_MAX_BOXES)
        return samc_fail(err, SAMC_ERR_ARG, "boxes: expected an array of at most %d [x0, y0, x1, y1(, \"neg\")]",
                         SERVE_MAX_BOXES);
    int i = 0;
    for (const cJSON *b = a->child; b; b = b->next, i++) {
        char where[32];
        snprintf(where, sizeof where, "boxes[%d]", i);
        int k = 0;
        samc_status st = numbers(b, where, 4, 5, 4, out->boxes + 4 * i, &k, err);
        const cJSON *tag = !st && k == 5 ? cJSON_GetArrayItem(b, 4) : NULL;
        if (tag && (!cJSON_IsString(tag) || (strcmp(tag->valuestring, "neg") && strcmp(tag->valuestring, "pos"))))
            st = samc_fail(err, SAMC_ERR_ARG, "%s: the fifth element must be \"pos\" or \"neg\"", where);
        if (!st)
            st = cli_check_exemplar_box(where, out->boxes + 4 * i, w, h, err);
        if (st)
            return st;
        out->positive[i] = !tag || !strcmp(tag->valuestring, "pos");
    }
    out->n_boxes = i;
    return SAMC_OK;
}

samc_status serve_parse_text(const char *body, size_t n, int h, int w, serve_text_req *out, samc_error *err)
{
    static const char *const keys[] = {"text", "boxes", "threshold", "png", NULL};
    memset(out, 0, sizeof *out);
    out->threshold = 0.5f;
    cJSON *root = NULL;
    samc_status st = parse_object(body, n, keys, &root, err);
    const cJSON *t = st ? NULL : cJSON_GetObjectItemCaseSensitive(root, "text");
    if (t && (!cJSON_IsString(t) || strlen(t->valuestring) >= sizeof out->text))
        st = samc_fail(err, SAMC_ERR_ARG, "text: expected a string of at most %zu bytes", sizeof out->text - 1);
    if (!st && t)
        snprintf(out->text, sizeof out->text, "%s", t->valuestring);
    if (!st)
        st = get_exemplars(root, h, w, out, err);
    double thr = out->threshold;
    if (!st)
        st = get_number(root, "threshold", 0, 1, &thr, err);
    out->threshold = (float)thr;
    if (!st)
        st = get_bool(root, "png", &out->png, err);
    if (!st && !out->text[0] && !out->n_boxes)
        st = samc_fail(err, SAMC_ERR_ARG, "no prompt: a SAM 3 model takes a text and/or boxes");
    cJSON_Delete(root);
    return st;
}

samc_status serve_parse_amg(const char *body, size_t n, samc_amg_params *out, samc_error *err)
{
    static const char *const keys[] = {"points_per_side", "points_per_batch", "pred_iou_thresh",
                                       "stability_score_thresh", "stability_score_offset", "box_nms_thresh",
                                       "crop_n_layers", "crop_nms_thresh", "min_mask_region_area", "use_m2m", NULL};
    *out = samc_amg_default_params();
    out->output_mode = SAMC_AMG_COCO_RLE;
    cJSON *root = NULL;
    samc_status st = parse_object(body, n, keys, &root, err);
    double d[6] = {out->pred_iou_thresh, out->stability_score_thresh, out->stability_score_offset,
                   out->box_nms_thresh, out->crop_nms_thresh, (double)out->min_mask_region_area};
    /* A server bounds the work of one request: at most 64 x 64 points over
     * at most two crop layers. */
    if (!st)
        st = get_int(root, "points_per_side", 1, 64, &out->points_per_side, err);
    if (!st)
        st = get_int(root, "points_per_batch", 1, 1024, &out->points_per_batch, err);
    if (!st)
        st = get_int(root, "crop_n_layers", 0, 2, &out->crop_n_layers, err);
    if (!st)
        st = get_number(root, "pred_iou_thresh", -1e3, 1e3, &d[0], err);
    if (!st)
        st = get_number(root, "stability_score_thresh", -1e3, 1e3, &d[1], err);
    if (!st)
        st = get_number(root, "stability_score_offset", 0, 1e3, &d[2], err);
    if (!st)
        st = get_number(root, "box_nms_thresh", 0, 1, &d[3], err);
    if (!st)
        st = get_number(root, "crop_nms_thresh", 0, 1, &d[4], err);
    if (!st)
        st = get_number(root, "min_mask_region_area", 0, 1e9, &d[5], err);
    if (!st)
        st = get_bool(root, "use_m2m", &out->use_m2m, err);
    out->pred_iou_thresh = d[0], out->stability_score_thresh = d[1], out->stability_score_offset = d[2];
    out->box_nms_thresh = d[3], out->crop_nms_thresh = d[4], out->min_mask_region_area = (int64_t)d[5];
    cJSON_Delete(root);
    return st;
}

samc_status serve_parse_video_prompt(const char *body, size_t n, int frames, int h, int w, serve_video_prompt_req *out,
                                     samc_error *err)
{
    static const char *const keys[] = {"frame", "obj_id", "points", "box", "clear", NULL};
    memset(out, 0, sizeof *out);
    out->frame = -1, out->obj_id = -1, out->clear = true;
    cJSON *root = NULL;
    samc_status st = parse_object(body, n, keys, &root, err);
    if (!st)
        st = get_int(root, "frame", 0, frames - 1, &out->frame, err);
    if (!st)
        st = get_int(root, "obj_id", 0, 1 << 20, &out->obj_id, err);
    if (!st && (out->frame < 0 || out->obj_id < 0))
        st = samc_fail(err, SAMC_ERR_ARG, "'frame' (0..%d) and 'obj_id' (>= 0) are required", frames - 1);
    if (!st)
        st = get_points(root, h, w, out->points, out->labels, &out->n_points, err);
    if (!st)
        st = get_box(root, h, w, out->box, &out->has_box, err);
    if (!st)
        st = get_bool(root, "clear", &out->clear, err);
    if (!st && !out->n_points && !out->has_box)
        st = samc_fail(err, SAMC_ERR_ARG, "no prompt: give points and/or a box");
    if (!st && out->has_box && !out->clear)
        st = samc_fail(err, SAMC_ERR_ARG, "box: a box replaces the object's prompt on that frame (clear must be true)");
    cJSON_Delete(root);
    return st;
}

samc_status serve_parse_propagate(const char *body, size_t n, int frames, serve_propagate_req *out, samc_error *err)
{
    static const char *const keys[] = {"start", "max_frames", "reverse", NULL};
    *out = (serve_propagate_req){.start = -1, .max_frames = -1};
    cJSON *root = NULL;
    samc_status st = parse_object(body, n, keys, &root, err);
    if (!st)
        st = get_int(root, "start", 0, frames - 1, &out->start, err);
    if (!st)
        st = get_int(root, "max_frames", 0, frames, &out->max_frames, err);
    if (!st)
        st = get_bool(root, "reverse", &out->reverse, err);
    cJSON_Delete(root);
    return st;
}
