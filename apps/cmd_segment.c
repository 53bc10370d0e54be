/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_segment.c - `samc segment`: prompts -> mask PNGs, an overlay and JSON.
 * The options of both families are parsed here; the model's family (SAM 2:
 * points, one box, a mask; SAM 3: a text and exemplar boxes) decides which
 * apply, before anything loads. SAM 3's run is cmd_segment_sam3.c. */
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
#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/image_io.h"
#include "samc.h"

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
    O_VOCAB, O_THRESHOLD, O_IMPL, O_OVERRIDE, O_THREADS, O_NONFINITE
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
    [O_NONFINITE] = {"allow-nonfinite", 0, NULL},
};

static samc_status parse_args(int argc, char **argv, seg_args *a, samc_error *err)
{
    memset(a, 0, sizeof *a);
    a->impl = NULL; /* the library's default: fast */
    a->threshold = -1.0f;
    cli_parser cp;
    cli_parser_init(&cp, "segment", argc, argv, seg_options, sizeof seg_options / sizeof seg_options[0]);
    const char *v;
    for (int o; (o = cli_next(&cp, &v, err)) != -1;) {
        samc_status st = SAMC_OK;
        switch (o) {
        case -2: return SAMC_ERR_ARG;
        case O_MULTIMASK: a->multimask = true; break;
        case O_NONFINITE: a->allow_nonfinite = true; break;
        case O_MODEL: a->model = v; break;
        case O_CONFIG: a->config = v; break;
        case O_IMAGE: a->image = v; break;
        case O_MASK_INPUT: a->mask_input = v; break;
        case O_OUT: a->out = v; break;
        case O_IMPL: a->impl = v; break;
        case O_THREADS: st = cli_parse_int("--threads", v, 1, SAMC_MAX_THREADS, &a->threads, err); break;
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
    return SAMC_OK;
}

/* --mask-input: raw little-endian float32 logits (s*s values, e.g. the
 * low_res_masks.f32 samc writes, first mask) or an image of s x s pixels
 * (> 127 -> +10, else -10: the logit scale of SAM's mask-as-input). */
static samc_status load_mask_input(const char *path, int s, float **out, samc_error *err)
{
    *out = malloc((size_t)s * s * sizeof(float));
    if (!*out)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    samc_error re = {0};
    if (samc_check_regular(path, &re)) /* a FIFO or device would block or never end */
        return samc_fail(err, SAMC_ERR_IO, "--mask-input %s", re.msg);
    FILE *f = fopen(path, "rb");
    if (!f)
        return samc_fail(err, SAMC_ERR_IO, "--mask-input %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n >= (long)s * s * 4 && n % ((long)s * s * 4) == 0) {
        size_t got = fread(*out, sizeof(float), (size_t)s * s, f);
        fclose(f);
        return got == (size_t)s * s ? SAMC_OK : samc_fail(err, SAMC_ERR_IO, "--mask-input %s: short read", path);
    }
    fclose(f);
    samc_image img;
    samc_error ie = {0};
    if (samc_image_load(path, &img, &ie))
        return samc_fail(err, SAMC_ERR_ARG, "--mask-input %s: neither %dx%d float32 logits (%ld bytes given) nor an image (%s)",
                         path, s, s, n, ie.msg);
    if (img.w != s || img.h != s) {
        samc_image_free(&img);
        return samc_fail(err, SAMC_ERR_ARG,
                         "--mask-input %s: image is %dx%d, expected %dx%d (the model's low-res mask size: the "
                         "official SAM2ImagePredictor passes mask_input to the prompt encoder unresized)",
                         path, img.w, img.h, s, s);
    }
    for (int i = 0; i < s * s; i++)
        (*out)[i] = img.rgb[3 * i] > 127 ? 10.0f : -10.0f;
    samc_image_free(&img);
    return SAMC_OK;
}

/* The best mask (highest predicted IoU), as the official demo shows it. */
static int best_mask(const samc_masks *m)
{
    int best = 0;
    for (int k = 1; k < m->num_masks; k++)
        if (m->iou[k] > m->iou[best])
            best = k;
    return best;
}

/* mask_K.png per mask; overlay.png: the best mask in its colour (the
 * multimask candidates overlap: blended together they would hide each
 * other) with the prompt markers; overlay_K.png: each candidate in its own
 * colour when there are several. */
static samc_status write_masks(const char *dir, const seg_args *a, const samc_image *img, const samc_masks *m,
                               cli_outputs *outs, samc_error *err)
{
    const int64_t hw = (int64_t)m->width * m->height;
    uint8_t *gray = malloc((size_t)hw), *over = malloc((size_t)hw * 3);
    samc_status st = (!gray || !over) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
    char path[4200];
    static const uint8_t box_color[3] = {255, 255, 255};
    for (int k = -1; !st && k < m->num_masks; k++) { /* -1: overlay.png with the best mask */
        const int mk = k < 0 ? best_mask(m) : k;
        const float *logits = m->masks + mk * hw;
        if (k >= 0) {
            for (int64_t i = 0; i < hw; i++)
                gray[i] = logits[i] > 0.0f ? 255 : 0;
            snprintf(path, sizeof path, "%s/mask_%d.png", dir, k);
            st = cli_outputs_png(outs, path, m->width, m->height, 1, gray, err);
            if (st || m->num_masks == 1)
                continue;
        }
        memcpy(over, img->rgb, (size_t)hw * 3);
        cli_blend_mask(over, m->width, m->height, logits, cli_palette[mk % 8]);
        if (a->has_box)
            cli_draw_box(over, m->width, m->height, a->box, box_color);
        cli_draw_points(over, m->width, m->height, a->points, a->labels, a->n_points);
        if (k < 0)
            snprintf(path, sizeof path, "%s/overlay.png", dir);
        else
            snprintf(path, sizeof path, "%s/overlay_%d.png", dir, k);
        st = cli_outputs_png(outs, path, m->width, m->height, 3, over, err);
    }
    free(gray);
    free(over);
    return st;
}

typedef struct seg_timing {
    double load, set_image, predict;
} seg_timing;

static cJSON *result_json(const seg_args *a, const samc_predictor *p, const samc_masks *m, const seg_timing *t,
                          samc_error *err)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "samc_version", samc_version());
    cJSON_AddStringToObject(r, "model", a->model);
    cJSON_AddStringToObject(r, "config", samc_predictor_config_name(p));
    cJSON_AddStringToObject(r, "impl", samc_predictor_impl(p));
    cJSON_AddNumberToObject(r, "threads", samc_predictor_threads(p));
    cJSON_AddStringToObject(r, "image", a->image);
    cJSON_AddNumberToObject(r, "width", m->width);
    cJSON_AddNumberToObject(r, "height", m->height);
    cJSON *pr = cJSON_AddObjectToObject(r, "prompt");
    cli_prompt_json(pr, a->points, a->labels, a->n_points, a->has_box ? a->box : NULL);
    if (a->mask_input)
        cJSON_AddStringToObject(pr, "mask_input", a->mask_input);
    cJSON_AddBoolToObject(pr, "multimask", a->multimask);
    cJSON_AddNumberToObject(r, "object_score", m->object_score);
    cJSON_AddNumberToObject(r, "best_mask", best_mask(m));
    cJSON *tm = cJSON_AddObjectToObject(r, "seconds");
    cJSON_AddNumberToObject(tm, "load", t->load);
    cJSON_AddNumberToObject(tm, "set_image", t->set_image);
    cJSON_AddNumberToObject(tm, "predict", t->predict);
    cJSON *arr = cJSON_AddArrayToObject(r, "masks");
    const int64_t hw = (int64_t)m->width * m->height;
    for (int k = 0; k < m->num_masks; k++) {
        cJSON *o = cli_mask_entry(arr, k);
        cJSON_AddNumberToObject(o, "predicted_iou", m->iou[k]);
        cJSON_AddNumberToObject(o, "iou_prediction", m->iou[k]); /* the name of samc <= 0.1 */
        if (cli_mask_json(o, m->masks + k * hw, m->height, m->width, err)) {
            cJSON_Delete(r);
            return NULL;
        }
    }
    return r;
}

static samc_status write_json(const char *dir, const seg_args *a, const samc_predictor *p, const samc_masks *m,
                              const seg_timing *t, cli_outputs *outs, samc_error *err)
{
    cJSON *r = result_json(a, p, m, t, err);
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
    const size_t n = (size_t)m->num_masks * m->low_res_size * m->low_res_size;
    if (!st)
        st = cli_outputs_bytes(outs, path, m->low_res, n * sizeof(float), err);
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
 * loads; SAM 2 takes one positive box (the predictor's one box per prompt). */
static samc_status check_family(seg_args *a, samc_family fam, samc_error *err)
{
    const char *fname = samc_family_name(fam);
    if (fam == SAMC_FAMILY_SAM3) {
        const char *bad = a->n_points ? "--point" : a->mask_input ? "--mask-input" : a->multimask ? "--multimask"
                        : a->has_hole_opts ? "--max-hole-area/--max-sprinkle-area" : NULL;
        if (bad)
            return samc_fail(err, SAMC_ERR_ARG, "%s is a SAM 2 option; %s is a %s model, which takes --text and "
                             "--box X0,Y0,X1,Y1[,neg] prompts", bad, a->model, fname);
        if (!a->text && !a->n_boxes)
            return samc_fail(err, SAMC_ERR_ARG, "no prompt: a SAM 3 model takes --text and/or --box");
        return SAMC_OK;
    }
    const char *bad = a->text ? "--text" : a->vocab ? "--vocab" : a->threshold >= 0 ? "--threshold" : NULL;
    if (bad)
        return samc_fail(err, SAMC_ERR_ARG, "%s is a SAM 3 option; %s is a %s model, which takes --point, --box "
                         "and --mask-input prompts", bad, a->model, fname);
    if (a->n_boxes > 1)
        return samc_fail(err, SAMC_ERR_ARG, "--box given twice: the image predictor takes one box per prompt; run "
                         "once per box (or `samc amg` for every object)");
    if (a->n_boxes && !a->box_positive[0])
        return samc_fail(err, SAMC_ERR_ARG, "--box ...,neg: negative boxes are SAM 3 exemplars; %s is a %s model",
                         a->model, fname);
    a->has_box = a->n_boxes == 1;
    memcpy(a->box, a->boxes, sizeof a->box);
    return SAMC_OK;
}

/* Everything the command line can get wrong, checked before the model loads. */
static samc_status check_inputs(const seg_args *a, const samc_image *img, samc_error *err)
{
    if (!a->n_points && !a->has_box && !a->mask_input)
        return samc_fail(err, SAMC_ERR_ARG, "no prompt: give --point, --box or --mask-input");
    samc_status st = cli_check_points("--point", a->points, a->n_points, img->w, img->h, err);
    if (!st && a->has_box)
        st = cli_check_box("--box", a->box, img->w, img->h, err);
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

static void print_summary(const seg_args *a, const samc_predictor *p, const samc_masks *m, const seg_timing *t)
{
    if (cli_verbosity < 1)
        return;
    printf("samc: %d mask(s) written to %s (config %s, impl %s, %d thread(s))\n", m->num_masks, a->out,
           samc_predictor_config_name(p), samc_predictor_impl(p), samc_predictor_threads(p));
    for (int k = 0; k < m->num_masks; k++)
        printf("  mask_%d.png  iou %.4f%s\n", k, m->iou[k], k == best_mask(m) && m->num_masks > 1 ? "  (best)" : "");
    printf("time: load %.3f s, set_image %.3f s, predict %.3f s, total %.3f s\n", t->load, t->set_image, t->predict,
           t->load + t->set_image + t->predict);
}

static samc_status run_sam2(const seg_args *a, const samc_image *im, samc_error *err)
{
    const samc_image img = *im;
    samc_model *mdl = NULL;
    samc_predictor *p = NULL;
    samc_masks m = {0};
    float *mask = NULL;
    seg_timing tm = {0};
    samc_status st = check_inputs(a, &img, err);

    double t0 = cli_now();
    samc_model_params mp = samc_model_default_params();
    mp.config = a->config, mp.allow_nonfinite = a->allow_nonfinite;
    mp.family = SAMC_FAMILY_SAM2; /* told by run(): the loader does not look again */
    if (!st)
        st = samc_model_load(a->model, &mp, &mdl, err);
    const samc_predictor_params pp = predictor_params(a);
    if (!st)
        st = samc_predictor_new(mdl, &pp, &p, err);
    for (int i = 0; !st && i < a->n_overrides; i++)
        st = samc_predictor_override(p, a->overrides[i], err);
    if (!st && a->mask_input)
        st = load_mask_input(a->mask_input, samc_predictor_low_res_size(p), &mask, err);
    if (!st)
        st = cli_prepare_out_dir(a->out, err); /* before any inference */
    double t1 = cli_now();
    if (!st)
        st = samc_predictor_set_image(p, img.rgb, img.h, img.w, err);
    cli_progress_end();
    double t2 = cli_now();
    samc_predict_request rq = {a->n_points ? a->points : NULL, a->n_points ? a->labels : NULL, a->n_points,
                               a->has_box ? a->box : NULL, mask, a->multimask, 1};
    if (!st)
        st = samc_predictor_predict(p, &rq, &m, err);
    tm = (seg_timing){t1 - t0, t2 - t1, cli_now() - t2};
    /* Every output goes to a temporary name; all are renamed at the end, or
     * none (cli_outputs). */
    cli_outputs outs = {.stale_dir = a->out, .stale = cli_segment_outputs};
    if (!st)
        st = write_masks(a->out, a, &img, &m, &outs, err);
    if (!st)
        st = write_json(a->out, a, p, &m, &tm, &outs, err);
    if (!st)
        st = cli_outputs_commit(&outs, err);
    else
        cli_outputs_discard(&outs);
    if (!st)
        print_summary(a, p, &m, &tm);
    free(mask);
    samc_masks_free(&m);
    samc_predictor_free(p);
    samc_model_free(mdl);
    return st;
}

static samc_status run(seg_args *a, samc_error *err)
{
    char model[4096], image[4096], config[4096];
    if (!a->model && (a->text || a->vocab || a->threshold >= 0))
        return samc_fail(err, SAMC_ERR_ARG, "--text, --vocab and --threshold need --model (a SAM 3 checkpoint)");
    if (!a->model && a->n_boxes > 1)
        return samc_fail(err, SAMC_ERR_ARG, "--box given twice: the image predictor takes one box per prompt; run "
                         "once per box (or `samc amg` for every object)");
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
        st = fam == SAMC_FAMILY_SAM3 ? cmd_segment_sam3(a, &img, err) : run_sam2(a, &img, err);
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
