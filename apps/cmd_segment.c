/* cmd_segment.c - `samc segment`: prompts -> mask PNGs, an overlay and JSON. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/image_io.h"
#include "samc.h"

#ifndef SAMC_DATA_DIR
#define SAMC_DATA_DIR "fixtures/demo"
#endif
#define MAX_POINTS 256

typedef struct seg_args {
    const char *model, *config, *image, *mask_input, *out, *impl;
    const char *overrides[64];
    int n_overrides, n_points, threads;
    double max_hole_area, max_sprinkle_area;
    float points[2 * MAX_POINTS], box[4];
    int32_t labels[MAX_POINTS];
    bool has_box, multimask, allow_nonfinite;
} seg_args;

static samc_status parse_args(int argc, char **argv, seg_args *a, samc_error *err)
{
    memset(a, 0, sizeof *a);
    a->impl = "ref";
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        samc_status st = SAMC_OK;
        if (!strcmp(f, "--multimask")) {
            a->multimask = true;
            continue;
        }
        if (!strcmp(f, "--allow-nonfinite")) {
            a->allow_nonfinite = true;
            continue;
        }
        if (!v)
            return samc_fail(err, SAMC_ERR_ARG, "unexpected argument '%s' (or missing value)", f);
        i++;
        if (!strcmp(f, "--model")) a->model = v;
        else if (!strcmp(f, "--config")) a->config = v;
        else if (!strcmp(f, "--image")) a->image = v;
        else if (!strcmp(f, "--mask-input")) a->mask_input = v;
        else if (!strcmp(f, "--out")) a->out = v;
        else if (!strcmp(f, "--impl")) a->impl = v;
        else if (!strcmp(f, "--threads")) st = cli_parse_int("--threads", v, 1, 1024, &a->threads, err);
        else if (!strcmp(f, "--max-hole-area") || !strcmp(f, "--max-sprinkle-area")) {
            float x;
            if (!cli_parse_floats(v, &x, 1) || x < 0)
                return samc_fail(err, SAMC_ERR_ARG, "%s '%s': expected a number >= 0", f, v);
            *(f[6] == 'h' ? &a->max_hole_area : &a->max_sprinkle_area) = x;
        }
        else if (!strcmp(f, "--impl-override")) {
            if (a->n_overrides == 64)
                return samc_fail(err, SAMC_ERR_ARG, "too many --impl-override");
            a->overrides[a->n_overrides++] = v;
        } else if (!strcmp(f, "--point")) {
            if (a->n_points == MAX_POINTS)
                return samc_fail(err, SAMC_ERR_ARG, "more than %d --point", MAX_POINTS);
            st = cli_parse_point(v, a->points + 2 * a->n_points, a->labels + a->n_points, err);
            a->n_points++;
        } else if (!strcmp(f, "--box")) {
            st = cli_parse_box(v, a->box, err);
            a->has_box = true;
        } else
            return samc_fail(err, SAMC_ERR_ARG, "unknown option '%s'", f);
        if (st)
            return st;
    }
    if (!a->out)
        return samc_fail(err, SAMC_ERR_ARG, "--out DIR is required");
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
        return samc_fail(err, SAMC_ERR_SHAPE, "--mask-input %s: image is %dx%d, expected %dx%d (the low-res mask size)",
                         path, img.w, img.h, s, s);
    }
    for (int i = 0; i < s * s; i++)
        (*out)[i] = img.rgb[3 * i] > 127 ? 10.0f : -10.0f;
    samc_image_free(&img);
    return SAMC_OK;
}

static const uint8_t palette[6][3] = {{30, 144, 255}, {255, 64, 64}, {64, 200, 64},
                                      {255, 200, 0},  {200, 0, 255}, {0, 220, 220}};

static samc_status write_masks(const char *dir, const samc_image *img, const samc_masks *m, cli_outputs *outs,
                               samc_error *err)
{
    const int64_t hw = (int64_t)m->width * m->height;
    uint8_t *gray = malloc((size_t)hw), *over = malloc((size_t)hw * 3);
    samc_status st = (!gray || !over) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
    if (over)
        memcpy(over, img->rgb, (size_t)hw * 3);
    char path[4200];
    for (int k = 0; !st && k < m->num_masks; k++) {
        const float *mk = m->masks + k * hw;
        for (int64_t i = 0; i < hw; i++) {
            gray[i] = mk[i] > 0.0f ? 255 : 0;
            if (gray[i])
                for (int c = 0; c < 3; c++)
                    over[3 * i + c] = (uint8_t)((over[3 * i + c] + palette[k % 6][c]) / 2);
        }
        snprintf(path, sizeof path, "%s/mask_%d.png", dir, k);
        const char *tmp = cli_output_tmp(outs, path, err);
        st = tmp ? samc_png_write(tmp, m->width, m->height, 1, gray, err) : SAMC_ERR_NOMEM;
    }
    snprintf(path, sizeof path, "%s/overlay.png", dir);
    const char *tmp = st ? NULL : cli_output_tmp(outs, path, err);
    if (!st)
        st = tmp ? samc_png_write(tmp, m->width, m->height, 3, over, err) : SAMC_ERR_NOMEM;
    free(gray);
    free(over);
    return st;
}

static samc_status write_json(const char *dir, const seg_args *a, const samc_predictor *p, const samc_masks *m,
                              double secs_embed, double secs_predict, cli_outputs *outs, samc_error *err)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "model", a->model ? a->model : "bundled demo");
    cJSON_AddStringToObject(r, "config", samc_predictor_config_name(p));
    cJSON_AddStringToObject(r, "impl", a->impl);
    cJSON_AddNumberToObject(r, "width", m->width);
    cJSON_AddNumberToObject(r, "height", m->height);
    cJSON_AddNumberToObject(r, "object_score", m->object_score);
    cJSON_AddNumberToObject(r, "seconds_set_image", secs_embed);
    cJSON_AddNumberToObject(r, "seconds_predict", secs_predict);
    cJSON *arr = cJSON_AddArrayToObject(r, "masks");
    const int64_t hw = (int64_t)m->width * m->height;
    for (int k = 0; k < m->num_masks; k++) {
        int64_t area = 0;
        for (int64_t i = 0; i < hw; i++)
            area += m->masks[k * hw + i] > 0.0f;
        char file[32];
        snprintf(file, sizeof file, "mask_%d.png", k);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", k);
        cJSON_AddStringToObject(o, "file", file);
        cJSON_AddNumberToObject(o, "iou_prediction", m->iou[k]);
        cJSON_AddNumberToObject(o, "area", (double)area);
        cJSON_AddItemToArray(arr, o);
    }
    char *text = cJSON_Print(r);
    cJSON_Delete(r);
    char path[4200];
    snprintf(path, sizeof path, "%s/result.json", dir);
    const char *tmp = text ? cli_output_tmp(outs, path, err) : NULL;
    samc_status st = !text ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : !tmp ? SAMC_ERR_NOMEM : SAMC_OK;
    if (!st)
        st = cli_write_bytes(tmp, text, strlen(text), err);
    cJSON_free(text);
    snprintf(path, sizeof path, "%s/low_res_masks.f32", dir);
    const size_t n = (size_t)m->num_masks * m->low_res_size * m->low_res_size;
    if (!st && !(tmp = cli_output_tmp(outs, path, err)))
        st = SAMC_ERR_NOMEM;
    if (!st)
        st = cli_write_bytes(tmp, m->low_res, n * sizeof(float), err);
    return st;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static samc_status run(seg_args *a, samc_error *err)
{
    char model[4096], image[4096], config[4096];
    if (!a->model) { /* the bundled demo: a tiny random-weight model and an image */
        const char *dir = getenv("SAMC_DATA_DIR") ? getenv("SAMC_DATA_DIR") : SAMC_DATA_DIR;
        snprintf(model, sizeof model, "%s/tiny_d_demo.pt", dir);
        snprintf(config, sizeof config, "%s/tiny_d_demo.config.json", dir);
        snprintf(image, sizeof image, "%s/demo.png", dir);
        a->model = model, a->image = image;
        a->config = a->config ? a->config : config;
        if (!a->n_points && !a->has_box && !a->mask_input) {
            a->points[0] = 160, a->points[1] = 120, a->labels[0] = 1, a->n_points = 1;
            a->multimask = true;
        }
    }
    if (!a->image)
        return samc_fail(err, SAMC_ERR_ARG, "--image is required");
    if (!a->n_points && !a->has_box && !a->mask_input)
        return samc_fail(err, SAMC_ERR_ARG, "no prompt: give --point, --box or --mask-input");
    samc_image img = {0};
    samc_predictor *p = NULL;
    samc_masks m = {0};
    float *mask = NULL;
    samc_status st = samc_image_load(a->image, &img, err);
    if (!st)
        st = samc_predictor_load_ex(a->model, a->config, &(samc_load_options){.allow_nonfinite = a->allow_nonfinite},
                                    &p, err);
    if (!st)
        st = samc_predictor_set_impl(p, a->impl, err);
    for (int i = 0; !st && i < a->n_overrides; i++)
        st = samc_predictor_override(p, a->overrides[i], err);
    if (!st && a->threads)
        samc_predictor_set_threads(p, a->threads);
    if (!st)
        st = samc_predictor_set_postprocess(p, a->max_hole_area, a->max_sprinkle_area, err);
    if (!st && a->mask_input)
        st = load_mask_input(a->mask_input, samc_predictor_low_res_size(p), &mask, err);
    double t0 = now(), t1 = t0, t2 = t0;
    if (!st)
        st = samc_predictor_set_image(p, img.rgb, img.h, img.w, err), t1 = now();
    samc_predict_request rq = {a->n_points ? a->points : NULL, a->n_points ? a->labels : NULL, a->n_points,
                               a->has_box ? a->box : NULL, mask, a->multimask, 1};
    if (!st)
        st = samc_predictor_predict(p, &rq, &m, err), t2 = now();
    if (!st)
        st = cli_mkdirs(a->out, err);
    /* Every output goes to a temporary name; all are renamed at the end, or
     * none (cli_outputs). */
    cli_outputs outs = {0};
    if (!st)
        st = write_masks(a->out, &img, &m, &outs, err);
    if (!st)
        st = write_json(a->out, a, p, &m, t1 - t0, t2 - t1, &outs, err);
    if (!st)
        st = cli_outputs_commit(&outs, err);
    else
        cli_outputs_discard(&outs);
    if (!st) {
        printf("samc: %d mask(s) written to %s (config %s, impl %s)\n", m.num_masks, a->out,
               samc_predictor_config_name(p), a->impl);
        for (int k = 0; k < m.num_masks; k++)
            printf("  mask_%d.png  iou %.4f\n", k, m.iou[k]);
    }
    free(mask);
    samc_masks_free(&m);
    samc_predictor_free(p);
    samc_image_free(&img);
    return st;
}

int cmd_segment(int argc, char **argv)
{
    seg_args a;
    samc_error err = {0};
    samc_status st = parse_args(argc, argv, &a, &err);
    if (!st)
        st = run(&a, &err);
    if (st) {
        fprintf(stderr, "samc segment: %s\n", err.msg);
        return st == SAMC_ERR_ARG ? 2 : 1;
    }
    return 0;
}
