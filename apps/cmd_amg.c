/* SPDX-License-Identifier: Apache-2.0 */
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
    bool allow_nonfinite, quiet;
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

/* The options; the generator's numeric parameters first, in params_at's order. */
enum {
    O_POINTS_PER_SIDE, O_POINTS_PER_BATCH, O_CROP_N_LAYERS, O_CROP_DOWNSCALE, O_PRED_IOU, O_STAB_THRESH,
    O_STAB_OFFSET, O_MASK_THRESH, O_BOX_NMS, O_CROP_NMS, O_CROP_OVERLAP, N_NUMERIC,
    O_MIN_AREA = N_NUMERIC, O_OUTPUT_MODE, O_USE_M2M, O_NO_MULTIMASK, O_MODEL, O_CONFIG, O_IMAGE, O_OUT, O_IMPL,
    O_THREADS, O_NONFINITE, O_QUIET
};
static const cli_option amg_options[] = {
    [O_POINTS_PER_SIDE] = {"points-per-side", 0, "N"}, [O_POINTS_PER_BATCH] = {"points-per-batch", 0, "N"},
    [O_CROP_N_LAYERS] = {"crop-n-layers", 0, "N"},
    [O_CROP_DOWNSCALE] = {"crop-n-points-downscale-factor", 0, "N"},
    [O_PRED_IOU] = {"pred-iou-thresh", 0, "X"},        [O_STAB_THRESH] = {"stability-score-thresh", 0, "X"},
    [O_STAB_OFFSET] = {"stability-score-offset", 0, "X"}, [O_MASK_THRESH] = {"mask-threshold", 0, "X"},
    [O_BOX_NMS] = {"box-nms-thresh", 0, "X"},          [O_CROP_NMS] = {"crop-nms-thresh", 0, "X"},
    [O_CROP_OVERLAP] = {"crop-overlap-ratio", 0, "X"}, [O_MIN_AREA] = {"min-mask-region-area", 0, "N"},
    [O_OUTPUT_MODE] = {"output-mode", 0, "MODE"},      [O_USE_M2M] = {"use-m2m", 0, NULL},
    [O_NO_MULTIMASK] = {"no-multimask", 0, NULL},      [O_MODEL] = {"model", 'm', "CKPT"},
    [O_CONFIG] = {"config", 'c', "NAME|FILE"},         [O_IMAGE] = {"image", 'i', "IMG"},
    [O_OUT] = {"out", 'o', "DIR"},                     [O_IMPL] = {"impl", 0, "NAME"},
    [O_THREADS] = {"threads", 't', "N"},               [O_NONFINITE] = {"allow-nonfinite", 0, NULL},
    [O_QUIET] = {"quiet", 0, NULL},
};

/* Where numeric option o (< N_NUMERIC) goes, and whether it is an int. */
static void *param_at(samc_amg_params *p, int o, bool *is_int)
{
    static const size_t off[N_NUMERIC] = {
        offsetof(samc_amg_params, points_per_side), offsetof(samc_amg_params, points_per_batch),
        offsetof(samc_amg_params, crop_n_layers), offsetof(samc_amg_params, crop_n_points_downscale_factor),
        offsetof(samc_amg_params, pred_iou_thresh), offsetof(samc_amg_params, stability_score_thresh),
        offsetof(samc_amg_params, stability_score_offset), offsetof(samc_amg_params, mask_threshold),
        offsetof(samc_amg_params, box_nms_thresh), offsetof(samc_amg_params, crop_nms_thresh),
        offsetof(samc_amg_params, crop_overlap_ratio)};
    *is_int = o <= O_CROP_DOWNSCALE;
    return (char *)p + off[o];
}

static samc_status parse_args(int argc, char **argv, amg_args *a, samc_error *err)
{
    memset(a, 0, sizeof *a);
    a->impl = samc_default_impl();
    a->p = samc_amg_default_params();
    a->p.output_mode = SAMC_AMG_COCO_RLE;
    cli_parser cp;
    cli_parser_init(&cp, "amg", argc, argv, amg_options, sizeof amg_options / sizeof amg_options[0]);
    const char *v;
    for (int o; (o = cli_next(&cp, &v, err)) != -1;) {
        samc_status st = SAMC_OK;
        char flag[64];
        snprintf(flag, sizeof flag, "--%s", o >= 0 ? amg_options[o].name : "");
        if (o >= 0 && o < N_NUMERIC) {
            bool is_int;
            void *dst = param_at(&a->p, o, &is_int);
            st = is_int ? cli_parse_int(flag, v, -1000000000, 1000000000, dst, err) : parse_double(flag, v, dst, err);
        } else {
            switch (o) {
            case -2: return SAMC_ERR_ARG;
            case O_MIN_AREA: {
                int area = 0;
                st = cli_parse_int(flag, v, 0, 2147483647, &area, err);
                a->p.min_mask_region_area = area;
                break;
            }
            case O_OUTPUT_MODE: st = samc_amg_output_mode_parse(v, &a->p.output_mode, err); break;
            case O_USE_M2M: a->p.use_m2m = true; break;
            case O_NO_MULTIMASK: a->p.multimask_output = false; break;
            case O_NONFINITE: a->allow_nonfinite = true; break;
            case O_QUIET: a->quiet = true; break;
            case O_MODEL: a->model = v; break;
            case O_CONFIG: a->config = v; break;
            case O_IMAGE: a->image = v; break;
            case O_OUT: a->out = v; break;
            case O_IMPL: a->impl = v; break;
            case O_THREADS: st = cli_parse_int("--threads", v, 1, SAMC_MAX_THREADS, &a->threads, err); break;
            default: break;
            }
        }
        if (st)
            return st;
    }
    if (cp.first_positional < argc)
        return samc_fail(err, SAMC_ERR_ARG, "unexpected argument '%s' (samc amg takes options only)",
                         argv[cp.first_positional]);
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

/* overlay.png (every mask blended in its own colour, cli_mask_color of its
 * record index, with its contour; larger masks first so small ones stay
 * visible: records come in NMS order) and, for binary_mask, one PNG per
 * record. */
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
        uint8_t col[3];
        cli_mask_color(order[k], col);
        cli_blend_bits(over, img->w, img->h, mask, col);
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
    if (!st) /* Ctrl-C stops at the next layer; nothing is written then */
        samc_predictor_set_abort_callback(p, cli_abort_requested, NULL);
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
    if (st == SAMC_ERR_ABORTED && cli_interrupted())
        return cli_interrupt_exit("amg", "no output written");
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
    if (cli_verbosity == 0)
        a.quiet = true; /* samc -q amg ... */
    cli_catch_interrupts();
    const int rc = run(&a, &err);
    if (rc && !(err.status == SAMC_ERR_ABORTED && cli_interrupted()))
        fprintf(stderr, "samc amg: %s\n", err.msg);
    return rc;
}
