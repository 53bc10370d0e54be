/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_segment.c - `samc segment`: prompts -> mask PNGs, an overlay and JSON.
 * The options of both families are parsed here; the model's family (SAM 2:
 * points, a box or batched boxes, a mask; SAM 3: a text and exemplar boxes,
 * or predict_inst's SAM 1 prompts) decides which apply, before anything
 * loads. SAM 3's concept run is cmd_segment_sam3.c; --mask-input is read by
 * cmd_segment_mask_input.c. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_segment.h"
#include "core/models/family.h"
#include "samc_sam3.h"
#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/image_io.h"
#include "samc.h"
#include "samc_amg.h"

/* "X0,Y0,X1,Y1" or "X0,Y0,X1,Y1,neg" (a negative exemplar, SAM 3). */
static samc_status parse_box(const char *v, float *box, bool *positive, samc_error *err)
{
    char buf[256];
    const size_t n = strlen(v);
    *positive = !(n > 4 && n < sizeof buf && !strcmp(v + n - 4, ",neg"));
    if (*positive)
        return cli_parse_box(v, box, err);
    memcpy(buf, v, n - 4);
    buf[n - 4] = '\0';
    return cli_parse_box(buf, box, err);
}

enum {
    O_MODEL, O_CONFIG, O_IMAGE, O_OUT, O_POINT, O_BOX, O_MASK_INPUT, O_MULTIMASK, O_HOLE, O_SPRINKLE, O_TEXT,
    O_VOCAB, O_THRESHOLD, O_IMPL, O_OVERRIDE, O_THREADS, O_NONFINITE, O_INST, O_MASK_INDEX, O_RLE
};
static const cli_option seg_options[] = {
    [O_MODEL] = {"model", 'm', "CKPT"},        [O_CONFIG] = {"config", 'c', "NAME|FILE"},
    [O_IMAGE] = {"image", 'i', "IMG"},         [O_OUT] = {"out", 'o', "DIR"},
    [O_POINT] = {"point", 'p', "X,Y[,LABEL]"}, [O_BOX] = {"box", 'b', "X0,Y0,X1,Y1"},
    [O_MASK_INPUT] = {"mask-input", 0, "FILE"}, [O_MULTIMASK] = {"multimask", 0, NULL},
    [O_HOLE] = {"max-hole-area", 0, "A"},      [O_SPRINKLE] = {"max-sprinkle-area", 0, "A"},
    [O_TEXT] = {"text", 0, "TEXT"},            [O_VOCAB] = {"vocab", 0, "FILE"},
    [O_THRESHOLD] = {"threshold", 0, "T"},     [O_IMPL] = {"impl", 0, "NAME"},
    [O_OVERRIDE] = {"impl-override", 0, "LAYER=IMPL"}, [O_THREADS] = {"threads", 't', "N"},
    [O_NONFINITE] = {"allow-nonfinite", 0, NULL}, [O_INST] = {"inst", 0, NULL},
    [O_MASK_INDEX] = {"mask-index", 0, "K"},   [O_RLE] = {"rle", 0, "coco|uncompressed"},
};

static samc_status parse_args(int argc, char **argv, seg_args *a, samc_error *err)
{
    memset(a, 0, sizeof *a);
    a->impl = NULL; /* the library's default: fast */
    a->threshold = -1.0f;
    a->mask_index = -1;
    cli_parser cp;
    cli_parser_init(&cp, "segment", argc, argv, seg_options, sizeof seg_options / sizeof seg_options[0]);
    const char *v;
    for (int o; (o = cli_next(&cp, &v, err)) != -1;) {
        samc_status st = SAMC_OK;
        switch (o) {
        case -2: return SAMC_ERR_ARG;
        case O_MULTIMASK: a->multimask = true; break;
        case O_INST: a->inst = true; break;
        case O_NONFINITE: a->allow_nonfinite = true; break;
        case O_MODEL: a->model = v; break;
        case O_CONFIG: a->config = v; break;
        case O_IMAGE: a->image = v; break;
        case O_MASK_INPUT: a->mask_input = v; break;
        case O_OUT: a->out = v; break;
        case O_IMPL: a->impl = v; break;
        case O_THREADS: st = cli_parse_int("--threads", v, 1, SAMC_MAX_THREADS, &a->threads, err); break;
        case O_MASK_INDEX: st = cli_parse_int("--mask-index", v, 0, 1 << 20, &a->mask_index, err); break;
        case O_RLE: st = cli_parse_rle(v, &a->rle, err); break;
        case O_HOLE:
        case O_SPRINKLE: {
            float x;
            if (!cli_parse_floats(v, &x, 1) || x < 0)
                return samc_fail(err, SAMC_ERR_ARG, "--%s '%s': expected a number >= 0", seg_options[o].name, v);
            *(o == O_HOLE ? &a->max_hole_area : &a->max_sprinkle_area) = x;
            a->has_hole_opts = true;
            break;
        }
        case O_TEXT:
            if (!*v)
                return samc_fail(err, SAMC_ERR_ARG, "--text: empty text (give the concept, e.g. --text \"a dog\")");
            a->text = v;
            break;
        case O_VOCAB: a->vocab = v; break;
        case O_THRESHOLD:
            if (!cli_parse_floats(v, &a->threshold, 1) || a->threshold < 0 || a->threshold > 1)
                return samc_fail(err, SAMC_ERR_ARG, "--threshold '%s': expected a number in [0, 1]", v);
            break;
        case O_OVERRIDE:
            if (a->n_overrides == 64)
                return samc_fail(err, SAMC_ERR_ARG, "too many --impl-override");
            a->overrides[a->n_overrides++] = v;
            break;
        case O_POINT:
            if (a->n_points == SEG_MAX_POINTS)
                return samc_fail(err, SAMC_ERR_ARG, "more than %d --point", SEG_MAX_POINTS);
            st = cli_parse_point(v, a->points + 2 * a->n_points, a->labels + a->n_points, err);
            a->n_points++;
            break;
        case O_BOX:
            if (a->n_boxes == SEG_MAX_BOXES)
                return samc_fail(err, SAMC_ERR_ARG, "more than %d --box", SEG_MAX_BOXES);
            st = parse_box(v, a->boxes + 4 * a->n_boxes, &a->box_positive[a->n_boxes], err);
            a->n_boxes++;
            break;
        default: break;
        }
        if (st)
            return st;
    }
    if (cp.first_positional < argc)
        return samc_fail(err, SAMC_ERR_ARG, "unexpected argument '%s' (samc segment takes options only)",
                         argv[cp.first_positional]);
    if (!a->out)
        return samc_fail(err, SAMC_ERR_ARG, "--out DIR is required (samc segment --help)");
    if (!a->model && a->image)
        return samc_fail(err, SAMC_ERR_ARG, "--image needs --model (without --model the bundled demo model and image are used)");
    if (a->mask_index >= 0 && !a->mask_input)
        return samc_fail(err, SAMC_ERR_ARG, "--mask-index picks a mask of --mask-input FILE, which is not given");
    return SAMC_OK;
}

/* What one run predicted: one prompt (C masks, the official squeezed
 * shapes) or B batched boxes (B x C), as the library's buffers. */
typedef struct seg_result {
    bool batched;
    int B, C, h, w, S;
    const float *masks, *iou, *low_res;
    float object_score; /* one prompt only */
} seg_result;

/* The best mask of prompt b (highest predicted IoU), as the official demo shows it. */
static int best_mask(const seg_result *r, int b)
{
    const float *iou = r->iou + (int64_t)b * r->C;
    int best = 0;
    for (int k = 1; k < r->C; k++)
        if (iou[k] > iou[best])
            best = k;
    return best;
}

static void mask_name(char *buf, size_t n, const seg_result *r, int b, int k)
{
    if (r->batched)
        snprintf(buf, n, "mask_%d_%d.png", b, k);
    else
        snprintf(buf, n, "mask_%d.png", k);
}

/* overlay.png (its best mask in its colour with the prompt markers; with
 * batched boxes every box's best mask and box in the box's colour) and,
 * for one prompt with several candidates, overlay_K.png: each candidate
 * alone (the candidates overlap: blended together they would hide each
 * other). k < 0: overlay.png. */
static samc_status write_overlay(const char *dir, const seg_args *a, const samc_image *img, const seg_result *r, int k,
                                 uint8_t *over, cli_outputs *outs, samc_error *err)
{
    static const uint8_t white[3] = {255, 255, 255};
    const int64_t hw = (int64_t)r->w * r->h;
    memcpy(over, img->rgb, (size_t)hw * 3);
    for (int b = 0; b < r->B; b++) {
        const int mk = k < 0 ? best_mask(r, b) : k;
        uint8_t col[3];
        cli_mask_color(r->batched ? b : mk, col);
        cli_blend_mask(over, r->w, r->h, r->masks + ((int64_t)b * r->C + mk) * hw, col);
        if (r->batched)
            cli_draw_box(over, r->w, r->h, a->boxes + 4 * b, col);
    }
    if (a->has_box && !r->batched)
        cli_draw_box(over, r->w, r->h, a->box, white);
    cli_draw_points(over, r->w, r->h, a->points, a->labels, a->n_points);
    char path[4200];
    if (k < 0)
        snprintf(path, sizeof path, "%s/overlay.png", dir);
    else
        snprintf(path, sizeof path, "%s/overlay_%d.png", dir, k);
    return cli_outputs_png(outs, path, r->w, r->h, 3, over, err);
}

/* mask_K.png (mask_B_K.png with batched boxes) per mask, and the overlays. */
static samc_status write_masks(const char *dir, const seg_args *a, const samc_image *img, const seg_result *r,
                               cli_outputs *outs, samc_error *err)
{
    const int64_t hw = (int64_t)r->w * r->h;
    uint8_t *gray = malloc((size_t)hw), *over = malloc((size_t)hw * 3);
    samc_status st = (!gray || !over) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
    char path[4200], name[64];
    for (int b = 0; !st && b < r->B; b++)
        for (int k = 0; !st && k < r->C; k++) {
            const float *logits = r->masks + ((int64_t)b * r->C + k) * hw;
            for (int64_t i = 0; i < hw; i++)
                gray[i] = logits[i] > 0.0f ? 255 : 0;
            mask_name(name, sizeof name, r, b, k);
            snprintf(path, sizeof path, "%s/%s", dir, name);
            st = cli_outputs_png(outs, path, r->w, r->h, 1, gray, err);
        }
    for (int k = -1; !st && k < (r->batched || r->C == 1 ? 0 : r->C); k++)
        st = write_overlay(dir, a, img, r, k, over, outs, err);
    free(gray);
    free(over);
    return st;
}

typedef struct seg_timing {
    double load, set_image, predict;
} seg_timing;

/* The SAM 1 task on either family: SAM 2's image predictor, or SAM 3's
 * predict_inst (the tracker's heads of sam3.pt) through its processor. */
typedef struct sam1 {
    samc_model *model;
    samc_predictor *p;          /* SAM 2 */
    samc_sam3_processor *p3;    /* SAM 3 */
} sam1;

static const char *sam1_config(const sam1 *s)
{
    return s->p ? samc_predictor_config_name(s->p) : samc_model_config_name(s->model);
}
static const char *sam1_impl(const sam1 *s) { return s->p ? samc_predictor_impl(s->p) : samc_sam3_processor_impl(s->p3); }
static int sam1_threads(const sam1 *s)
{
    return s->p ? samc_predictor_threads(s->p) : samc_sam3_processor_threads(s->p3);
}

static cJSON *int_array(const int *v, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(v[i]));
    return arr;
}

/* The masks of prompt b: index, file, predicted_iou and the mask record. */
static samc_status masks_json(cJSON *parent, const seg_args *a, const seg_result *r, int b, samc_error *err)
{
    cJSON *arr = cJSON_AddArrayToObject(parent, "masks");
    const int64_t hw = (int64_t)r->w * r->h;
    char name[64];
    samc_status st = SAMC_OK;
    for (int k = 0; !st && k < r->C; k++) {
        cJSON *o = cli_mask_entry(arr, k);
        mask_name(name, sizeof name, r, b, k);
        cJSON_ReplaceItemInObject(o, "file", cJSON_CreateString(name));
        cJSON_AddNumberToObject(o, "predicted_iou", r->iou[(int64_t)b * r->C + k]);
        st = cli_mask_json(o, r->masks + ((int64_t)b * r->C + k) * hw, r->h, r->w, a->rle, err);
    }
    return st;
}

static cJSON *result_json(const seg_args *a, const sam1 *s, const seg_result *res, int mask_used,
                          const seg_timing *t, samc_error *err)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "samc_version", samc_version());
    cJSON_AddStringToObject(r, "model", a->model);
    if (s->p3) /* SAM 3's predict_inst */
        cJSON_AddStringToObject(r, "task", "predict_inst");
    cJSON_AddStringToObject(r, "config", sam1_config(s));
    cJSON_AddStringToObject(r, "impl", sam1_impl(s));
    cJSON_AddNumberToObject(r, "threads", sam1_threads(s));
    cJSON_AddStringToObject(r, "image", a->image);
    cJSON_AddNumberToObject(r, "width", res->w);
    cJSON_AddNumberToObject(r, "height", res->h);
    cJSON *pr = cJSON_AddObjectToObject(r, "prompt");
    cli_prompt_json(pr, a->points, a->labels, a->n_points, a->has_box ? a->box : NULL);
    if (res->batched) {
        cJSON *bx = cJSON_AddArrayToObject(pr, "boxes");
        for (int b = 0; b < res->B; b++) {
            cJSON *one = cJSON_CreateArray();
            for (int i = 0; i < 4; i++)
                cJSON_AddItemToArray(one, cJSON_CreateNumber(a->boxes[4 * b + i]));
            cJSON_AddItemToArray(bx, one);
        }
    }
    if (a->mask_input) {
        cJSON_AddStringToObject(pr, "mask_input", a->mask_input);
        if (mask_used >= 0)
            cJSON_AddNumberToObject(pr, "mask_index", mask_used);
    }
    cJSON_AddBoolToObject(pr, "multimask", a->multimask);
    cJSON *lr = cJSON_AddObjectToObject(r, "low_res_masks"); /* what --mask-input reads back */
    const int shape[4] = {res->B, res->C, res->S, res->S};
    cJSON_AddStringToObject(lr, "file", "low_res_masks.f32");
    cJSON_AddStringToObject(lr, "dtype", "float32");
    cJSON_AddItemToObject(lr, "shape", res->batched ? int_array(shape, 4) : int_array(shape + 1, 3));
    cJSON *tm = cJSON_AddObjectToObject(r, "seconds");
    cJSON_AddNumberToObject(tm, "load", t->load);
    cJSON_AddNumberToObject(tm, "set_image", t->set_image);
    cJSON_AddNumberToObject(tm, "predict", t->predict);
    samc_status st = SAMC_OK;
    if (!res->batched) {
        cJSON_AddNumberToObject(r, "object_score", res->object_score);
        cJSON_AddNumberToObject(r, "best_mask", best_mask(res, 0));
        st = masks_json(r, a, res, 0, err);
    } else { /* one entry per box, as the official (B, C, H, W) outputs */
        cJSON *arr = cJSON_AddArrayToObject(r, "prompts");
        for (int b = 0; !st && b < res->B; b++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(arr, o);
            cJSON_AddNumberToObject(o, "index", b);
            cJSON *bx = cJSON_AddArrayToObject(o, "box");
            for (int i = 0; i < 4; i++)
                cJSON_AddItemToArray(bx, cJSON_CreateNumber(a->boxes[4 * b + i]));
            cJSON_AddNumberToObject(o, "best_mask", best_mask(res, b));
            st = masks_json(o, a, res, b, err);
        }
    }
    if (st) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

static samc_status write_json(const char *dir, const seg_args *a, const sam1 *s, const seg_result *res,
                              int mask_used, const seg_timing *t, cli_outputs *outs, samc_error *err)
{
    cJSON *r = result_json(a, s, res, mask_used, t, err);
    if (!r)
        return err->status ? err->status : SAMC_ERR_NOMEM;
    char *text = cJSON_Print(r);
    cJSON_Delete(r);
    char path[4200];
    snprintf(path, sizeof path, "%s/result.json", dir);
    samc_status st = !text ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory")
                           : cli_outputs_bytes(outs, path, text, strlen(text), err);
    cJSON_free(text);
    snprintf(path, sizeof path, "%s/low_res_masks.f32", dir);
    const size_t n = (size_t)res->B * res->C * res->S * res->S;
    if (!st)
        st = cli_outputs_bytes(outs, path, res->low_res, n * sizeof(float), err);
    return st;
}

void cmd_segment_progress(void *user, const char *what, int done, int total)
{
    (void)user, (void)what;
    cli_progress("encoding", done, total, NULL);
}

/* The bundled demo: a tiny random-weight model and an image. */
static void use_demo(seg_args *a, char *model, char *config, char *image, size_t n)
{
    cli_demo_paths(model, config, image, n);
    a->model = model, a->image = image;
    a->config = a->config ? a->config : config;
    if (!a->n_points && !a->n_boxes && !a->mask_input) {
        a->points[0] = 160, a->points[1] = 120, a->labels[0] = 1, a->n_points = 1;
        a->multimask = true;
    }
}

/* The options of the other family are usage errors, found before anything
 * loads; SAM 2 takes positive boxes: one with points, or several alone
 * (batched boxes, one mask set per box, as predict(box=(B, 4))). */
static samc_status check_family(seg_args *a, samc_family fam, samc_error *err)
{
    const char *fname = samc_family_name(fam);
    if (fam == SAMC_FAMILY_SAM3) {
        /* --point, --mask-input, --multimask or --inst: the SAM 1 task
         * (predict_inst, a --box joins it as its box); else the concept
         * detector (a --box alone is its exemplar unless --inst) */
        const char *inst = a->n_points ? "--point" : a->mask_input ? "--mask-input" : a->multimask ? "--multimask"
                         : a->inst ? "--inst" : NULL;
        if (inst && (a->text || a->threshold >= 0))
            return samc_fail(err, SAMC_ERR_ARG, "%s with %s: on a SAM 3 model --point, --box, --mask-input and "
                             "--multimask run predict_inst (the SAM 1 task), --text, --box and --threshold the "
                             "concept detector: one or the other per run", inst, a->text ? "--text" : "--threshold");
        if (a->has_hole_opts)
            return samc_fail(err, SAMC_ERR_ARG, "--max-hole-area/--max-sprinkle-area are SAM 2's image predictor "
                             "options; %s is a %s model (predict_inst fills holes as its config says)", a->model,
                             fname);
        if (!inst && !a->text && !a->n_boxes)
            return samc_fail(err, SAMC_ERR_ARG, "no prompt: a SAM 3 model takes --text and/or --box (the concept), "
                             "or --point (predict_inst)");
        if (!inst)
            return SAMC_OK;
        a->sam3_inst = true;
    } else {
        const char *bad = a->text ? "--text" : a->vocab ? "--vocab" : a->threshold >= 0 ? "--threshold"
                        : a->inst ? "--inst" : NULL;
        if (bad)
            return samc_fail(err, SAMC_ERR_ARG, "%s is a SAM 3 option; %s is a %s model, which takes --point, --box "
                             "and --mask-input prompts", bad, a->model, fname);
    }
    for (int i = 0; i < a->n_boxes; i++)
        if (!a->box_positive[i])
            return samc_fail(err, SAMC_ERR_ARG, "--box ...,neg: negative boxes are SAM 3's concept exemplars (with "
                             "--text); the %s takes positive boxes", a->sam3_inst ? "SAM 1 task (predict_inst)" :
                             "SAM 2 image predictor");
    if (a->n_boxes > 1 && a->sam3_inst)
        return samc_fail(err, SAMC_ERR_ARG, "--box given %d times: SAM 3's predict_inst takes one box per run "
                         "(batched boxes are SAM 2's image predictor's)", a->n_boxes);
    if (a->n_boxes > 1 && a->n_points)
        return samc_fail(err, SAMC_ERR_ARG, "--point with %d --box: batched boxes take no points (the official "
                         "predictor pairs each box with its own (B, N, 2) points); give points with one box, or "
                         "the boxes alone", a->n_boxes);
    a->has_box = a->n_boxes == 1;
    memcpy(a->box, a->boxes, sizeof a->box);
    return SAMC_OK;
}

/* Everything the command line can get wrong, checked before the model loads. */
static samc_status check_inputs(const seg_args *a, const samc_image *img, samc_error *err)
{
    if (!a->n_points && !a->n_boxes && !a->mask_input)
        return samc_fail(err, SAMC_ERR_ARG, "no prompt: give --point, --box or --mask-input");
    samc_status st = cli_check_points("--point", a->points, a->n_points, img->w, img->h, err);
    for (int i = 0; !st && i < a->n_boxes; i++)
        st = cli_check_box("--box", a->boxes + 4 * i, img->w, img->h, err);
    return st;
}

static samc_predictor_params predictor_params(const seg_args *a)
{
    samc_predictor_params pp = samc_predictor_default_params();
    pp.impl = a->impl;
    pp.n_threads = a->threads;
    pp.max_hole_area = a->max_hole_area, pp.max_sprinkle_area = a->max_sprinkle_area;
    if (cli_verbosity >= 2 || (cli_verbosity >= 1 && isatty(2)))
        pp.progress = cmd_segment_progress;
    pp.abort_callback = cli_abort_requested; /* Ctrl-C stops at the next layer */
    return pp;
}

static void print_summary(const seg_args *a, const sam1 *s, const seg_result *r, const seg_timing *t)
{
    if (cli_verbosity < 1)
        return;
    printf("samc: %d mask(s) written to %s (%sconfig %s, impl %s, %d thread(s))\n", r->B * r->C, a->out,
           s->p3 ? "SAM 3 predict_inst, " : "", sam1_config(s), sam1_impl(s), sam1_threads(s));
    char name[64];
    for (int b = 0; b < r->B; b++)
        for (int k = 0; k < r->C; k++) {
            mask_name(name, sizeof name, r, b, k);
            printf("  %s  iou %.4f%s\n", name, r->iou[b * r->C + k], k == best_mask(r, b) && r->C > 1 ? "  (best)" : "");
        }
    printf("time: load %.3f s, set_image %.3f s, predict %.3f s, total %.3f s\n", t->load, t->set_image, t->predict,
           t->load + t->set_image + t->predict);
}

/* The model and its predictor (SAM 3: a processor, for predict_inst). */
static samc_status sam1_load(const seg_args *a, samc_family fam, sam1 *s, samc_error *err)
{
    samc_model_params mp = samc_model_default_params();
    mp.config = a->config, mp.allow_nonfinite = a->allow_nonfinite;
    mp.family = fam; /* told by run(): the loader does not look again */
    mp.vocab = a->vocab;
    samc_status st = samc_model_load(a->model, &mp, &s->model, err);
    if (!st && fam == SAMC_FAMILY_SAM2) {
        const samc_predictor_params pp = predictor_params(a);
        st = samc_predictor_new(s->model, &pp, &s->p, err);
    } else if (!st) {
        samc_sam3_processor_params pp = samc_sam3_processor_default_params();
        pp.impl = a->impl, pp.n_threads = a->threads;
        if (cli_verbosity >= 2 || (cli_verbosity >= 1 && isatty(2)))
            pp.progress = cmd_segment_progress;
        pp.abort_callback = cli_abort_requested;
        st = samc_sam3_processor_new(s->model, &pp, &s->p3, err);
        if (!st && !samc_sam3_processor_low_res_size(s->p3))
            st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: this SAM 3 model has no tracker half (tracker.* weights): "
                           "--point, --mask-input and --multimask run predict_inst on the tracker's heads (load "
                           "the whole sam3.pt); its detector takes --text and --box", a->model);
    }
    for (int i = 0; !st && i < a->n_overrides; i++)
        st = s->p ? samc_predictor_override(s->p, a->overrides[i], err)
                  : samc_sam3_processor_override(s->p3, a->overrides[i], err);
    return st;
}

/* One prompt through samc_predictor_predict (SAM 3: predict_inst), or the batched boxes (each
 * with the one --mask-input, as torch broadcasts a (1, 1, S, S) mask)
 * through samc_predictor_predict_batch. */
static samc_status predict(const sam1 *s, const seg_args *a, const float *mask, samc_masks *m,
                           samc_batch_masks *bm, float **masks_b, seg_result *r, samc_error *err)
{
    if (a->n_boxes <= 1) {
        samc_predict_request rq = {.point_coords = a->n_points ? a->points : NULL,
                                   .point_labels = a->n_points ? a->labels : NULL, .n_points = a->n_points,
                                   .box = a->has_box ? a->box : NULL, .mask_input = mask,
                                   .multimask_output = a->multimask, .return_logits = 1};
        samc_status st = s->p ? samc_predictor_predict(s->p, &rq, m, err)
                              : samc_sam3_processor_predict_inst(s->p3, &rq, m, err);
        if (!st)
            *r = (seg_result){false, 1, m->num_masks, m->height, m->width, m->low_res_size, m->masks, m->iou,
                              m->low_res, m->object_score};
        return st;
    }
    const int B = a->n_boxes, S = samc_predictor_low_res_size(s->p); /* SAM 2 (check_family) */
    if (mask) {
        *masks_b = malloc((size_t)B * S * S * sizeof(float));
        if (!*masks_b)
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        for (int b = 0; b < B; b++)
            memcpy(*masks_b + (size_t)b * S * S, mask, (size_t)S * S * sizeof(float));
    }
    samc_batch_request rq = {.batch = B, .boxes = a->boxes, .mask_input = *masks_b,
                             .multimask_output = a->multimask, .return_logits = 1};
    samc_status st = samc_predictor_predict_batch(s->p, &rq, bm, err);
    if (!st)
        *r = (seg_result){true, B, bm->num_masks, bm->height, bm->width, bm->low_res_size, bm->masks, bm->iou,
                          bm->low_res, 0.0f};
    return st;
}

static samc_status run_sam1(const seg_args *a, const samc_image *im, samc_family fam, samc_error *err)
{
    const samc_image img = *im;
    sam1 s = {0};
    samc_masks m = {0};
    samc_batch_masks bm = {0};
    seg_result res = {0};
    float *mask = NULL, *masks_b = NULL;
    int mask_used = -1;
    seg_timing tm = {0};
    samc_status st = check_inputs(a, &img, err);

    double t0 = cli_now();
    if (!st)
        st = sam1_load(a, fam, &s, err);
    if (!st && a->mask_input)
        st = cmd_segment_mask_input(a->mask_input, a->mask_index,
                                    s.p ? samc_predictor_low_res_size(s.p) : samc_sam3_processor_low_res_size(s.p3),
                                    &mask, &mask_used, err);
    if (!st)
        st = cli_prepare_out_dir(a->out, err); /* before any inference */
    double t1 = cli_now();
    if (!st)
        st = s.p ? samc_predictor_set_image(s.p, img.rgb, img.h, img.w, err)
                 : samc_sam3_processor_set_image(s.p3, img.rgb, img.h, img.w, err);
    cli_progress_end();
    double t2 = cli_now();
    if (!st)
        st = predict(&s, a, mask, &m, &bm, &masks_b, &res, err);
    tm = (seg_timing){t1 - t0, t2 - t1, cli_now() - t2};
    /* Every output goes to a temporary name; all are renamed at the end, or
     * none (cli_outputs). */
    cli_outputs outs = {.stale_dir = a->out, .stale = cli_segment_outputs};
    if (!st)
        st = write_masks(a->out, a, &img, &res, &outs, err);
    if (!st)
        st = write_json(a->out, a, &s, &res, mask_used, &tm, &outs, err);
    if (!st)
        st = cli_outputs_commit(&outs, err);
    else
        cli_outputs_discard(&outs);
    if (!st)
        print_summary(a, &s, &res, &tm);
    free(mask), free(masks_b);
    samc_masks_free(&m);
    samc_batch_masks_free(&bm);
    samc_predictor_free(s.p);
    samc_sam3_processor_free(s.p3);
    samc_model_free(s.model);
    return st;
}

static samc_status run(seg_args *a, samc_error *err)
{
    char model[4096], image[4096], config[4096];
    if (!a->model && (a->text || a->vocab || a->threshold >= 0))
        return samc_fail(err, SAMC_ERR_ARG, "--text, --vocab and --threshold need --model (a SAM 3 checkpoint)");
    if (!a->model)
        use_demo(a, model, config, image, sizeof model);
    if (!a->image)
        return samc_fail(err, SAMC_ERR_ARG, "--image is required");
    samc_image img = {0};
    samc_family fam = SAMC_FAMILY_SAM2;
    samc_status st = samc_image_load(a->image, &img, err);
    if (!st) /* the one look at the file for its family: the loaders are told it (samc_model_params.family) */
        st = samc_detect_family(a->model, &fam, err);
    if (!st)
        st = check_family(a, fam, err);
    if (!st)
        st = fam == SAMC_FAMILY_SAM3 && !a->sam3_inst ? cmd_segment_sam3(a, &img, err) : run_sam1(a, &img, fam, err);
    samc_image_free(&img);
    return st;
}

int cmd_segment(int argc, char **argv)
{
    seg_args a;
    samc_error err = {0};
    cli_catch_interrupts();
    samc_status st = parse_args(argc, argv, &a, &err);
    if (!st)
        st = run(&a, &err);
    if (st == SAMC_ERR_ABORTED && cli_interrupted()) /* nothing was written: outputs commit at the end */
        return cli_interrupt_exit("segment", "no output written");
    if (st) {
        fprintf(stderr, "samc segment: %s\n", err.msg);
        return cli_exit_code(st);
    }
    return 0;
}
