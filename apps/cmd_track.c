/* cmd_track.c - `samc track`: prompts on frames -> per-frame, per-object PNG
 * masks, overlay frames and a JSON summary of object scores. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "core/base/error.h"
#include "core/io/image_io.h"
#include "core/io/video_frames.h"
#include "samc.h"

#define MAX_PROMPTS 256
#define MAX_PTS 64

typedef struct track_prompt { /* all points/box/mask of one (frame, object) */
    int frame, obj, n;
    float pts[2 * MAX_PTS], box[4];
    int32_t labels[MAX_PTS];
    bool has_box;
    const char *mask;
} track_prompt;

typedef struct track_args {
    const char *model, *config, *frames, *out, *impl;
    track_prompt prompts[MAX_PROMPTS];
    int n_prompts, start, max_frames;
    bool reverse, allow_nonfinite;
} track_args;

static track_prompt *prompt_for(track_args *a, int frame, int obj, samc_error *err)
{
    for (int i = 0; i < a->n_prompts; i++)
        if (a->prompts[i].frame == frame && a->prompts[i].obj == obj)
            return &a->prompts[i];
    if (a->n_prompts == MAX_PROMPTS) {
        samc_fail(err, SAMC_ERR_ARG, "more than %d prompted (frame, object) pairs", MAX_PROMPTS);
        return NULL;
    }
    track_prompt *p = &a->prompts[a->n_prompts++];
    memset(p, 0, sizeof *p);
    p->frame = frame, p->obj = obj;
    return p;
}

/* FRAME:OBJ:point=X,Y[,L] | FRAME:OBJ:box=X0,Y0,X1,Y1 | FRAME:OBJ:mask=PNG */
static samc_status parse_prompt(track_args *a, const char *s, samc_error *err)
{
    int frame, obj, used = 0;
    if (sscanf(s, "%d:%d:%n", &frame, &obj, &used) != 2 || used == 0 || frame < 0)
        return samc_fail(err, SAMC_ERR_ARG, "--prompt '%s': expected FRAME:OBJ:point=X,Y[,L] | box=X0,Y0,X1,Y1 | mask=PNG", s);
    const char *kv = s + used;
    track_prompt *p = prompt_for(a, frame, obj, err);
    if (!p)
        return SAMC_ERR_ARG;
    if (!strncmp(kv, "point=", 6)) {
        if (p->mask || p->n == MAX_PTS)
            return samc_fail(err, SAMC_ERR_ARG, "--prompt '%s': too many points, or points with a mask", s);
        samc_status st = cli_parse_point(kv + 6, p->pts + 2 * p->n, p->labels + p->n, err);
        p->n += st == SAMC_OK;
        return st;
    }
    if (!strncmp(kv, "box=", 4)) {
        if (p->mask || p->has_box)
            return samc_fail(err, SAMC_ERR_ARG, "--prompt '%s': one box per frame and object, and not with a mask", s);
        p->has_box = true;
        return cli_parse_box(kv + 4, p->box, err);
    }
    if (!strncmp(kv, "mask=", 5) && kv[5]) {
        if (p->n || p->has_box)
            return samc_fail(err, SAMC_ERR_ARG, "--prompt '%s': a mask replaces points and boxes of that frame", s);
        p->mask = kv + 5;
        return SAMC_OK;
    }
    return samc_fail(err, SAMC_ERR_ARG, "--prompt '%s': expected point=, box= or mask= after FRAME:OBJ:", s);
}

static samc_status parse_args(int argc, char **argv, track_args *a, samc_error *err)
{
    memset(a, 0, sizeof *a);
    a->impl = "ref", a->start = -1, a->max_frames = -1;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        samc_status st = SAMC_OK;
        if (!strcmp(f, "--reverse")) {
            a->reverse = true;
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
        else if (!strcmp(f, "--frames")) a->frames = v;
        else if (!strcmp(f, "--out")) a->out = v;
        else if (!strcmp(f, "--impl")) a->impl = v;
        else if (!strcmp(f, "--prompt")) st = parse_prompt(a, v, err);
        else if (!strcmp(f, "--start")) st = cli_parse_int("--start", v, 0, 100000000, &a->start, err);
        else if (!strcmp(f, "--max-frames")) st = cli_parse_int("--max-frames", v, 0, 100000000, &a->max_frames, err);
        else return samc_fail(err, SAMC_ERR_ARG, "unknown option '%s'", f);
        if (st)
            return st;
    }
    if (!a->model || !a->frames || !a->out)
        return samc_fail(err, SAMC_ERR_ARG, "--model, --frames and --out are required");
    if (!a->n_prompts)
        return samc_fail(err, SAMC_ERR_ARG, "no --prompt given (FRAME:OBJ:point=X,Y[,L], box=..., or mask=PNG)");
    return SAMC_OK;
}

typedef struct track_run {
    const track_args *a;
    samc_frames *frames;           /* for the overlays */
    cJSON *json_frames;
    int done, total;
    samc_error *err;
    cli_outputs outs;              /* every file under a temporary name until the run completes */
} track_run;

static const uint8_t colors[6][3] = {{30, 144, 255}, {255, 64, 64}, {64, 200, 64}, {255, 200, 0}, {200, 0, 255}, {0, 220, 220}};

static samc_status on_frame(void *user, const samc_frame_masks *m)
{
    track_run *r = user;
    const int64_t hw = (int64_t)m->height * m->width;
    const uint8_t *rgb = NULL;
    samc_status st = samc_frames_get(r->frames, m->frame_idx, &rgb, r->err);
    uint8_t *gray = malloc((size_t)hw), *over = malloc((size_t)hw * 3);
    if (!st && (!gray || !over))
        st = samc_fail(r->err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        memcpy(over, rgb, (size_t)hw * 3);
    cJSON *fo = cJSON_CreateObject();
    cJSON_AddNumberToObject(fo, "frame", m->frame_idx);
    cJSON *objs = cJSON_AddArrayToObject(fo, "objects");
    char path[4200];
    for (int k = 0; !st && k < m->n_obj; k++) {
        int64_t area = 0;
        for (int64_t i = 0; i < hw; i++) {
            gray[i] = m->logits[k * hw + i] > 0.0f ? 255 : 0;
            area += gray[i] != 0;
            if (gray[i])
                for (int c = 0; c < 3; c++)
                    over[3 * i + c] = (uint8_t)((over[3 * i + c] + colors[k % 6][c]) / 2);
        }
        snprintf(path, sizeof path, "%s/masks/%05d_obj%d.png", r->a->out, m->frame_idx, m->obj_ids[k]);
        const char *tmp = cli_output_tmp(&r->outs, path, r->err);
        st = tmp ? samc_png_write(tmp, m->width, m->height, 1, gray, r->err) : SAMC_ERR_NOMEM;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "obj_id", m->obj_ids[k]);
        cJSON_AddNumberToObject(o, "object_score", m->object_scores[k]);
        cJSON_AddNumberToObject(o, "area", (double)area);
        cJSON_AddItemToArray(objs, o);
    }
    snprintf(path, sizeof path, "%s/overlay/%05d.png", r->a->out, m->frame_idx);
    const char *tmp = st ? NULL : cli_output_tmp(&r->outs, path, r->err);
    if (!st)
        st = tmp ? samc_png_write(tmp, m->width, m->height, 3, over, r->err) : SAMC_ERR_NOMEM;
    cJSON_AddItemToArray(r->json_frames, fo);
    free(gray), free(over);
    r->done++;
    fprintf(stderr, "\rtracking [%-30.*s] %d/%d frames", r->done * 30 / (r->total ? r->total : 1),
            "##############################", r->done, r->total);
    return st;
}

static samc_status add_prompts(samc_tracker *t, const track_args *a, samc_error *err)
{
    for (int i = 0; i < a->n_prompts; i++) {
        const track_prompt *p = &a->prompts[i];
        samc_status st;
        if (p->mask) {
            samc_image img;
            if ((st = samc_image_load(p->mask, &img, err)))
                return st;
            float *mk = malloc((size_t)img.w * img.h * sizeof *mk);
            for (int64_t k = 0; mk && k < (int64_t)img.w * img.h; k++)
                mk[k] = img.rgb[3 * k] > 127 ? 1.0f : 0.0f;
            st = mk ? samc_tracker_add_mask(t, p->frame, p->obj, mk, img.h, img.w, NULL, err)
                    : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
            free(mk);
            samc_image_free(&img);
        } else {
            st = samc_tracker_add_points(t, p->frame, p->obj, p->n ? p->pts : NULL, p->n ? p->labels : NULL, p->n,
                                         p->has_box ? p->box : NULL, 1, NULL, err);
        }
        if (st)
            return samc_fail(err, st, "prompt on frame %d object %d failed", p->frame, p->obj), st;
    }
    return SAMC_OK;
}

static samc_status write_summary(const track_args *a, cJSON *frames, cli_outputs *outs, samc_error *err)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", a->model);
    cJSON_AddStringToObject(root, "frames", a->frames);
    cJSON_AddStringToObject(root, "impl", a->impl);
    cJSON_AddItemToObject(root, "per_frame", frames);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    char path[4200];
    snprintf(path, sizeof path, "%s/track.json", a->out);
    const char *tmp = text ? cli_output_tmp(outs, path, err) : NULL;
    samc_status st = !text ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : !tmp ? SAMC_ERR_NOMEM : SAMC_OK;
    if (!st)
        st = cli_write_bytes(tmp, text, strlen(text), err);
    cJSON_free(text);
    return st;
}

int cmd_track(int argc, char **argv)
{
    static track_args a;
    samc_error err = {0};
    samc_tracker *t = NULL;
    track_run r = {.a = &a, .err = &err};
    samc_status st = parse_args(argc, argv, &a, &err);
    if (!st)
        st = samc_frames_open_dir(a.frames, &r.frames, &err); /* validates the directory before the model loads */
    if (!st)
        st = samc_tracker_load_ex(a.model, a.config, &(samc_load_options){.allow_nonfinite = a.allow_nonfinite}, &t,
                                  &err);
    if (!st)
        st = samc_tracker_set_impl(t, a.impl, &err);
    if (!st)
        st = samc_tracker_open_frames_dir(t, a.frames, &err);
    if (!st)
        st = add_prompts(t, &a, &err);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/masks", a.out);
    if (!st)
        st = cli_mkdirs(dir, &err);
    snprintf(dir, sizeof dir, "%s/overlay", a.out);
    if (!st)
        st = cli_mkdirs(dir, &err);
    r.json_frames = cJSON_CreateArray();
    if (!st) {
        const int n = samc_tracker_num_frames(t);
        r.total = a.max_frames >= 0 && a.max_frames + 1 < n ? a.max_frames + 1 : n;
        st = samc_tracker_propagate(t, a.start, a.max_frames, a.reverse, on_frame, &r, &err);
        fprintf(stderr, "\n");
    }
    if (!st) {
        st = write_summary(&a, r.json_frames, &r.outs, &err);
        r.json_frames = NULL;
    }
    /* Masks, overlays and track.json were written under temporary names:
     * all are renamed now, or all removed after a failure. */
    if (!st)
        st = cli_outputs_commit(&r.outs, &err);
    else
        cli_outputs_discard(&r.outs);
    cJSON_Delete(r.json_frames);
    samc_frames_free(r.frames);
    samc_tracker_free(t);
    if (st) {
        fprintf(stderr, "samc track: %s\n", err.msg);
        return st == SAMC_ERR_ARG ? 2 : 1;
    }
    printf("samc: %d frame(s) tracked; masks in %s/masks, overlays in %s/overlay, summary %s/track.json\n", r.done,
           a.out, a.out, a.out);
    return 0;
}
