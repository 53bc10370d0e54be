/* cmd_amg.c - `samc amg`: SAM2AutomaticMaskGenerator on one image -> the
 * official records as JSON (masks.json), a colour overlay (overlay.png) and,
 * with --output-mode binary_mask, one PNG per mask. Progress on stderr. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/amg/amg_params.h"
#include "core/amg/amg_rle.h"
#include "core/base/error.h"
#include "core/io/image_io.h"
#include "samc.h"
#include "samc_amg.h"


typedef struct amg_args {
    const char *model, *config, *image, *out, *impl;
    int threads;
    bool allow_nonfinite, quiet, help;
    samc_amg_params p;
} amg_args;


static samc_status parse_double(const char *flag, const char *s, double *out, samc_error *err)
{
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return samc_fail(err, SAMC_ERR_ARG, "%s '%s': expected a finite number", flag, s);
    *out = v;
    return SAMC_OK;
}

/* The numeric options: name, and where the value goes. */
static samc_status parse_param(const char *f, const char *v, samc_amg_params *p, bool *known, samc_error *err)
{
    static const struct { const char *name; size_t off; bool is_int; } opts[] = {
        {"--points-per-side", offsetof(samc_amg_params, points_per_side), true},
        {"--points-per-batch", offsetof(samc_amg_params, points_per_batch), true},
        {"--crop-n-layers", offsetof(samc_amg_params, crop_n_layers), true},
        {"--crop-n-points-downscale-factor", offsetof(samc_amg_params, crop_n_points_downscale_factor), true},
        {"--pred-iou-thresh", offsetof(samc_amg_params, pred_iou_thresh), false},
        {"--stability-score-thresh", offsetof(samc_amg_params, stability_score_thresh), false},
        {"--stability-score-offset", offsetof(samc_amg_params, stability_score_offset), false},
        {"--mask-threshold", offsetof(samc_amg_params, mask_threshold), false},
        {"--box-nms-thresh", offsetof(samc_amg_params, box_nms_thresh), false},
        {"--crop-nms-thresh", offsetof(samc_amg_params, crop_nms_thresh), false},
        {"--crop-overlap-ratio", offsetof(samc_amg_params, crop_overlap_ratio), false},
    };
    *known = true;
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (!strcmp(f, opts[i].name))
            return opts[i].is_int ? cli_parse_int(f, v, -1000000000, 1000000000, (int *)((char *)p + opts[i].off), err)
                                  : parse_double(f, v, (double *)((char *)p + opts[i].off), err);
    if (!strcmp(f, "--min-mask-region-area")) {
        int a = 0;
        samc_status st = cli_parse_int(f, v, 0, 2147483647, &a, err);
        p->min_mask_region_area = a;
        return st;
    }
    if (!strcmp(f, "--output-mode"))
        return samc_amg_output_mode_parse(v, &p->output_mode, err);
    *known = false;
    return SAMC_OK;
}

static samc_status parse_args(int argc, char **argv, amg_args *a, samc_error *err)
{
    memset(a, 0, sizeof *a);
    a->impl = samc_default_impl();
    a->p = samc_amg_default_params();
    a->p.output_mode = SAMC_AMG_COCO_RLE;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            a->help = true;
            return SAMC_OK;
        }
        bool *flag = !strcmp(f, "--use-m2m") ? &a->p.use_m2m : !strcmp(f, "--allow-nonfinite") ? &a->allow_nonfinite
                     : !strcmp(f, "--quiet")  ? &a->quiet : NULL;
        if (flag) {
            *flag = true;
            continue;
        }
        if (!strcmp(f, "--no-multimask")) {
            a->p.multimask_output = false;
            continue;
        }
        if (!v)
            return samc_fail(err, SAMC_ERR_ARG, "unexpected argument '%s' (or missing value)", f);
        i++;
        bool known = false;
        samc_status st = parse_param(f, v, &a->p, &known, err);
        if (st)
            return st;
        if (known) continue;
        else if (!strcmp(f, "--model")) a->model = v;
        else if (!strcmp(f, "--config")) a->config = v;
        else if (!strcmp(f, "--image")) a->image = v;
        else if (!strcmp(f, "--out")) a->out = v;
        else if (!strcmp(f, "--impl")) a->impl = v;
        else if (!strcmp(f, "--threads")) {
            if ((st = cli_parse_int("--threads", v, 1, SAMC_MAX_THREADS, &a->threads, err)))
                return st;
        } else
            return samc_fail(err, SAMC_ERR_ARG, "unknown option '%s'", f);
    }
    if (!a->out)
        return samc_fail(err, SAMC_ERR_ARG, "--out DIR is required");
    if (!a->model != !a->image)
        return samc_fail(err, SAMC_ERR_ARG, "give --model and --image together (neither: the bundled demo)");
    return SAMC_OK;
}

typedef struct progress_state {
    bool tty;
    int last_crop;
} progress_state;

/* One line per crop (a line rewritten per batch on a terminal). */
static void on_progress(void *user, const samc_amg_progress *p)
{
    progress_state *s = user;
    const bool crop_done = p->points_done == p->points_total || p->crop != s->last_crop;
    if (s->tty || crop_done)
        fprintf(stderr, "%ssamc amg: crop %d/%d, %lld/%lld points, %lld masks kept before NMS%s", s->tty ? "\r" : "",
                p->crop + 1, p->n_crops, (long long)p->points_done, (long long)p->points_total,
                (long long)p->masks_kept, s->tty ? "" : "\n");
    s->last_crop = p->crop;
}

static const uint8_t palette[8][3] = {{30, 144, 255}, {255, 64, 64}, {64, 200, 64}, {255, 200, 0},
                                      {200, 0, 255},  {0, 220, 220}, {255, 128, 0}, {128, 255, 128}};

/* overlay.png (every mask blended in its colour, larger masks first so small
 * ones stay visible: records come in NMS order) and, for binary_mask, one PNG
 * per record. */
static samc_status write_images(const char *dir, const samc_image *img, const samc_amg_result *r, cli_outputs *outs,
                                samc_error *err)
{
    const int64_t hw = (int64_t)img->w * img->h;
    uint8_t *over = malloc((size_t)hw * 3), *mask = malloc((size_t)hw);
    int64_t *order = malloc((size_t)(r->n ? r->n : 1) * sizeof *order);
    samc_status st = (!over || !mask || !order) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : SAMC_OK;
    for (int64_t i = 0; !st && i < r->n; i++) { /* insertion sort by area, descending (stable) */
        int64_t j = i;
        while (j > 0 && r->masks[order[j - 1]].area < r->masks[i].area)
            order[j] = order[j - 1], j--;
        order[j] = i;
    }
    if (!st)
        memcpy(over, img->rgb, (size_t)hw * 3);
    char path[4200];
    for (int64_t k = 0; !st && k < r->n; k++) {
        const samc_amg_mask *m = &r->masks[order[k]];
        samc_amg_rle rle = {m->height, m->width, m->n_counts, m->counts};
        if ((st = samc_amg_rle_to_mask(&rle, mask, err)))
            break;
        for (int64_t i = 0; i < hw; i++)
            for (int c = 0; mask[i] && c < 3; c++)
                over[3 * i + c] = (uint8_t)((over[3 * i + c] + palette[order[k] % 8][c]) / 2);
        if (m->binary) {
            for (int64_t i = 0; i < hw; i++)
                mask[i] = m->binary[i] ? 255 : 0;
            snprintf(path, sizeof path, "%s/mask_%04lld.png", dir, (long long)order[k]);
            const char *tmp = cli_output_tmp(outs, path, err);
            st = tmp ? samc__png_write_into(tmp, path, img->w, img->h, 1, mask, err) : err->status;
        }
    }
    snprintf(path, sizeof path, "%s/overlay.png", dir);
    const char *tmp = st ? NULL : cli_output_tmp(outs, path, err);
    if (!st)
        st = tmp ? samc__png_write_into(tmp, path, img->w, img->h, 3, over, err) : err->status;
    free(over), free(mask), free(order);
    return st;
}

static samc_status write_outputs(const amg_args *a, const samc_image *img, const samc_amg_result *r, samc_error *err)
{
    cli_outputs outs = {.stale_dir = a->out, .stale = cli_amg_outputs};
    char path[4200], *text = NULL;
    snprintf(path, sizeof path, "%s/masks.json", a->out);
    samc_status st = cli_prepare_out_dir(a->out, err);
    const char *tmp = NULL;
    if (!st)
        st = samc_amg_to_json(r, &text, err);
    if (!st && !(tmp = cli_output_tmp(&outs, path, err)))
        st = err->status;
    if (!st)
        st = cli_write_bytes(tmp, text, strlen(text), err);
    free(text);
    if (!st)
        st = write_images(a->out, img, r, &outs, err);
    if (!st)
        return cli_outputs_commit(&outs, err);
    cli_outputs_discard(&outs);
    return st;
}

/* Returns the exit status: 2 usage / parameter errors, 1 runtime errors. */
static int run(amg_args *a, samc_error *err)
{
    char model[4096], image[4096], config[4096];
    if (!a->model) { /* the bundled demo: a tiny random-weight model and an image */
        cli_demo_paths(model, config, image, sizeof model);
        a->model = model, a->image = image;
        a->config = a->config ? a->config : config;
    }
    samc_image img = {0};
    samc_predictor *p = NULL;
    samc_amg_result r = {0};
    progress_state ps = {.tty = isatty(2) != 0, .last_crop = -1};
    samc_status st = samc_image_load(a->image, &img, err);
    if (!st && samc_amg_params_check(&a->p, img.h, img.w, err)) { /* before loading the model */
        samc_image_free(&img);
        return CLI_EXIT_USAGE;
    }
    if (!st)
        st = samc_predictor_load_ex(a->model, a->config, &(samc_load_options){.allow_nonfinite = a->allow_nonfinite},
                                    &p, err);
    if (!st && (st = samc_predictor_set_impl(p, a->impl, err))) {
        samc_predictor_free(p), samc_image_free(&img);
        return CLI_EXIT_USAGE;
    }
    if (!st && a->threads)
        samc_predictor_set_threads(p, a->threads);
    if (!st)
        st = samc_amg_generate_masks(p, img.rgb, img.h, img.w, &a->p, a->quiet ? NULL : on_progress, &ps, &r, err);
    if (ps.tty && !a->quiet && ps.last_crop >= 0)
        fputc('\n', stderr);
    if (!st)
        st = write_outputs(a, &img, &r, err);
    if (!st)
        printf("samc amg: %lld masks written to %s/masks.json (config %s, impl %s)\n", (long long)r.n, a->out,
               samc_predictor_config_name(p), a->impl);
    samc_amg_result_free(&r);
    samc_predictor_free(p);
    samc_image_free(&img);
    return st ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
}

int cmd_amg(int argc, char **argv)
{
    amg_args a;
    samc_error err = {0};
    if (parse_args(argc, argv, &a, &err)) {
        fprintf(stderr, "samc amg: %s\n", err.msg);
        cli_usage("amg", stderr);
        return CLI_EXIT_USAGE;
    }
    if (a.help) {
        cli_usage("amg", stdout);
        return CLI_EXIT_OK;
    }
    if (cli_verbosity == 0)
        a.quiet = true; /* samc -q amg ... */
    const int rc = run(&a, &err);
    if (rc)
        fprintf(stderr, "samc amg: %s\n", err.msg);
    return rc;
}
