/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_track.c - `samc track`: prompts on frames -> per-frame, per-object PNG
 * masks, overlay frames and JSON, each frame's files written (atomically) as
 * soon as that frame is done, so an interrupted run keeps what it finished. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_track.h"
#include "core/base/error.h"
#include "core/io/image_io.h"
#include "core/io/video_frames.h"
#include "samc.h"

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
    if (sscanf(s, "%d:%d:%n", &frame, &obj, &used) != 2 || used == 0 || frame < 0 || frame > 100000000)
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

enum {
    O_MODEL, O_CONFIG, O_FRAMES, O_OUT, O_PROMPT, O_START, O_MAX_FRAMES, O_REVERSE, O_IMPL, O_THREADS, O_NONFINITE,
    O_OUT_VIDEO, O_PALETTE, O_TEXT, O_VOCAB, O_RLE
};
static const cli_option track_options[] = {
    [O_MODEL] = {"model", 'm', "CKPT"},   [O_CONFIG] = {"config", 'c', "NAME|FILE"},
    [O_FRAMES] = {"frames", 'f', "DIR|VIDEO"}, [O_OUT] = {"out", 'o', "DIR"},
    [O_PROMPT] = {"prompt", 'p', "FRAME:OBJ:point=X,Y[,L]|box=X0,Y0,X1,Y1|mask=PNG"},
    [O_START] = {"start", 0, "N"},        [O_MAX_FRAMES] = {"max-frames", 0, "N"},
    [O_REVERSE] = {"reverse", 0, NULL},   [O_IMPL] = {"impl", 0, "NAME"},
    [O_THREADS] = {"threads", 't', "N"},  [O_NONFINITE] = {"allow-nonfinite", 0, NULL},
    [O_OUT_VIDEO] = {"out-video", 0, "FILE"}, [O_PALETTE] = {"palette-png", 0, NULL},
    [O_RLE] = {"rle", 0, "coco|uncompressed"},
    [O_TEXT] = {"text", 0, "TEXT"},       [O_VOCAB] = {"vocab", 0, "FILE"},
};

static samc_status parse_args(int argc, char **argv, track_args *a, samc_error *err)
{
    memset(a, 0, sizeof *a);
    a->impl = NULL, a->start = -1, a->max_frames = -1; /* impl NULL: the library's default, fast */
    cli_parser cp;
    cli_parser_init(&cp, "track", argc, argv, track_options, sizeof track_options / sizeof track_options[0]);
    const char *v;
    for (int o; (o = cli_next(&cp, &v, err)) != -1;) {
        samc_status st = SAMC_OK;
        switch (o) {
        case -2: return SAMC_ERR_ARG;
        case O_REVERSE: a->reverse = true; break;
        case O_NONFINITE: a->allow_nonfinite = true; break;
        case O_MODEL: a->model = v; break;
        case O_CONFIG: a->config = v; break;
        case O_FRAMES: a->frames = v; break;
        case O_OUT: a->out = v; break;
        case O_IMPL: a->impl = v; break;
        case O_PROMPT: st = parse_prompt(a, v, err); break;
        case O_THREADS: st = cli_parse_int("--threads", v, 1, SAMC_MAX_THREADS, &a->threads, err); break;
        case O_OUT_VIDEO: a->out_video = v; break;
        case O_PALETTE: a->palette_png = true; break;
        case O_RLE: st = cli_parse_rle(v, &a->rle, err); break;
        case O_TEXT: a->text = v; break;
        case O_VOCAB: a->vocab = v; break;
        case O_START: st = cli_parse_int("--start", v, 0, 100000000, &a->start, err); break;
        case O_MAX_FRAMES: st = cli_parse_int("--max-frames", v, 0, 100000000, &a->max_frames, err); break;
        default: break;
        }
        if (st)
            return st;
    }
    if (cp.first_positional < argc)
        return samc_fail(err, SAMC_ERR_ARG, "unexpected argument '%s' (samc track takes options only)",
                         argv[cp.first_positional]);
    if (!a->model || !a->frames || !a->out)
        return samc_fail(err, SAMC_ERR_ARG, "--model, --frames and --out are required (samc track --help)");
    if (a->text && !a->text[0])
        return samc_fail(err, SAMC_ERR_ARG, "--text: the text is empty");
    if (!a->n_prompts && !a->text)
        return samc_fail(err, SAMC_ERR_ARG, "no --prompt or --text given (FRAME:OBJ:point=X,Y[,L], box=..., mask=PNG; "
                         "a SAM 3 model: --text \"a dog\")");
    return SAMC_OK;
}

/* Each --prompt against the video: frame index in range, points and box
 * inside the frame (the check segment makes too). */
static samc_status check_prompts(const track_args *a, const samc_frames *f, samc_error *err)
{
    const int n = samc_frames_count(f), w = samc_frames_width(f), h = samc_frames_height(f);
    for (int i = 0; i < a->n_prompts; i++) {
        const track_prompt *p = &a->prompts[i];
        char where[64];
        snprintf(where, sizeof where, "--prompt on frame %d object %d", p->frame, p->obj);
        if (p->frame >= n)
            return samc_fail(err, SAMC_ERR_ARG, "%s: frame %d is outside the video (frames 0..%d)", where, p->frame, n - 1);
        if (a->palette_png && (p->obj < 1 || p->obj > TRACK_PALETTE_MAX_ID))
            return samc_fail(err, SAMC_ERR_ARG, "%s: --palette-png holds object ids 1..%d", where, TRACK_PALETTE_MAX_ID);
        samc_status st = cli_check_points(where, p->pts, p->n, w, h, err);
        if (!st && p->has_box)
            st = cli_check_box(where, p->box, w, h, err);
        if (st)
            return st;
    }
    if (a->start >= n)
        return samc_fail(err, SAMC_ERR_ARG, "--start %d: outside the video (frames 0..%d)", a->start, n - 1);
    return SAMC_OK;
}

/* Decode every frame once before the model loads: a truncated or corrupt
 * JPEG is reported at once, not after the frames before it were tracked
 * (decoding is milliseconds a frame, tracking seconds). */
static samc_status check_frames_decode(samc_frames *f, samc_error *err)
{
    const uint8_t *rgb;
    samc_status st = SAMC_OK;
    for (int t = 0; !st && t < samc_frames_count(f); t++)
        st = samc_frames_get(f, t, &rgb, err);
    return st;
}


/* "DIR/00012.jpg" -> "00012" (path NULL: the index, "00012"). */
static void track_stem(const char *path, int idx, char *out, size_t n)
{
    if (!path) {
        snprintf(out, n, "%05d", idx);
        return;
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *dot = strrchr(base, '.');
    snprintf(out, n, "%.*s", (int)(dot ? dot - base : (ptrdiff_t)strlen(base)), base);
}

static void draw_prompts(const track_args *a, int frame, const samc_frame_masks *m, uint8_t *over)
{
    for (int i = 0; i < a->n_prompts; i++) {
        const track_prompt *p = &a->prompts[i];
        if (p->frame != frame)
            continue;
        int k = 0;
        while (k < m->n_obj && m->obj_ids[k] != p->obj)
            k++;
        uint8_t col[3];
        cli_mask_color(k, col);
        if (p->has_box)
            cli_draw_box(over, m->width, m->height, p->box, col);
        cli_draw_points(over, m->width, m->height, p->pts, p->labels, p->n);
    }
}

cJSON *track_object(const track_run *r, cJSON *objs, const char *stem, int obj_id, char *path, size_t n)
{
    char file[512];
    snprintf(file, sizeof file, "%s_obj%d.png", stem, obj_id);
    snprintf(path, n, "%s/masks/%s", r->a->out, file);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(objs, o);
    cJSON_AddNumberToObject(o, "obj_id", obj_id);
    cJSON_AddStringToObject(o, "file", file);
    return o;
}

samc_status track_mask_out(track_run *r, cJSON *o, const float *logits, uint8_t *gray, int h, int w,
                           const char *path)
{
    for (int64_t i = 0; i < (int64_t)h * w; i++)
        gray[i] = logits[i] > 0.0f ? 255 : 0;
    samc_status st = cli_mask_json(o, logits, h, w, r->a->rle, r->err);
    return st ? st : cli_write_png_atomic(path, w, h, 1, gray, r->err);
}

/* One object's mask PNG and its JSON record. */
static samc_status write_object(track_run *r, const samc_frame_masks *m, int k, const char *stem, uint8_t *gray,
                                cJSON *objs)
{
    const float *logits = m->logits + k * (int64_t)m->height * m->width;
    char path[4200];
    cJSON *o = track_object(r, objs, stem, m->obj_ids[k], path, sizeof path);
    cJSON_AddNumberToObject(o, "object_score", m->object_scores[k]);
    cJSON_AddBoolToObject(o, "present", m->object_scores[k] > 0.0f);
    return track_mask_out(r, o, logits, gray, m->height, m->width, path);
}

static samc_status write_frame(track_run *r, const samc_frame_masks *m, const char *stem, cJSON *fo)
{
    const int64_t hw = (int64_t)m->height * m->width;
    const uint8_t *rgb = NULL;
    samc_status st = samc_frames_get(r->frames, m->frame_idx, &rgb, r->err);
    uint8_t *gray = malloc((size_t)hw), *over = malloc((size_t)hw * 3);
    if (!st && (!gray || !over))
        st = samc_fail(r->err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        memcpy(over, rgb, (size_t)hw * 3);
    cJSON *objs = cJSON_AddArrayToObject(fo, "objects");
    for (int k = 0; !st && k < m->n_obj; k++) {
        st = write_object(r, m, k, stem, gray, objs);
        uint8_t col[3];
        cli_mask_color(k, col);
        cli_blend_mask(over, m->width, m->height, m->logits + k * hw, col);
    }
    if (!st)
        draw_prompts(r->a, m->frame_idx, m, over);
    char path[4200];
    snprintf(path, sizeof path, "%s/overlay/%s.png", r->a->out, stem);
    if (!st)
        st = cli_write_png_atomic(path, m->width, m->height, 3, over, r->err);
    if (!st)
        st = track_video_add(&r->video, over, r->err);
    snprintf(path, sizeof path, "%s/palette", r->a->out);
    if (!st && r->a->palette_png)
        st = track_palette_png(path, stem, m, r->err);
    free(gray), free(over);
    return st;
}

samc_status track_frame_done(track_run *r, const char *stem, cJSON *fo, samc_status st)
{
    const double now = cli_now(), secs = now - r->t_last;
    r->t_last = now;
    cJSON_AddNumberToObject(fo, "seconds", secs);
    char path[4200];
    snprintf(path, sizeof path, "%s/track.jsonl", r->a->out);
    /* opened with the first finished frame; never through a planted link */
    if (!st && r->jsonl < 0 &&
        (r->jsonl = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666)) < 0)
        st = samc_fail(r->err, SAMC_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    char *line = st ? NULL : cJSON_PrintUnformatted(fo);
    if (!st && !line)
        st = samc_fail(r->err, SAMC_ERR_NOMEM, "out of memory");
    /* One whole line per frame (a failed write is cut back): an interrupted
     * run keeps the lines of the frames whose files are in place. */
    if (!st)
        st = cli_append_line(r->jsonl, path, line, &r->jsonl_len, r->err);
    cJSON_free(line);
    cJSON_AddItemToArray(r->json_frames, fo);
    r->done++;
    char detail[320], shown[256];
    cli_escape(stem, shown, sizeof shown);
    snprintf(detail, sizeof detail, "(%s) %.3f s", shown, secs);
    if (!st)
        cli_progress("tracking", r->done, r->total, detail);
    return st;
}

cJSON *track_frame(const char *src, int frame, char *stem, size_t n)
{
    track_stem(src, frame, stem, n);
    cJSON *fo = cJSON_CreateObject();
    cJSON_AddNumberToObject(fo, "frame", frame);
    if (src)
        cJSON_AddStringToObject(fo, "file", src);
    return fo;
}

static samc_status on_frame(void *user, const samc_frame_masks *m)
{
    track_run *r = user;
    char stem[256];
    cJSON *fo = track_frame(samc_tracker_frame_path(r->t, m->frame_idx), m->frame_idx, stem, sizeof stem);
    return track_frame_done(r, stem, fo, write_frame(r, m, stem, fo));
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

static samc_status write_summary(const track_run *r, const samc_tracker *t, cJSON *frames, samc_error *err)
{
    const track_args *a = r->a;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "samc_version", samc_version());
    cJSON_AddStringToObject(root, "model", a->model);
    cJSON_AddStringToObject(root, "frames", a->frames);
    if (a->text)
        cJSON_AddStringToObject(root, "text", a->text);
    samc_video_info vi;
    if (t && !samc_tracker_video_info(t, &vi, err)) {
        cJSON *v = cJSON_AddObjectToObject(root, "video");
        cJSON_AddStringToObject(v, "source", vi.source);
        cJSON_AddNumberToObject(v, "frames", vi.frames);
        cJSON_AddNumberToObject(v, "height", vi.height);
        cJSON_AddNumberToObject(v, "width", vi.width);
        if (vi.fps > 0)
            cJSON_AddNumberToObject(v, "fps", vi.fps);
        if (vi.codec[0])
            cJSON_AddStringToObject(v, "codec", vi.codec);
        if (vi.damage)
            cJSON_AddStringToObject(v, "damage", vi.damage);
    }
    if (a->out_video)
        cJSON_AddStringToObject(root, "out_video", a->out_video);
    cJSON_AddStringToObject(root, "impl", r->impl ? r->impl : "");
    cJSON_AddNumberToObject(root, "threads", r->threads);
    cJSON *ps = cJSON_AddArrayToObject(root, "prompts");
    for (int i = 0; i < a->n_prompts; i++) {
        const track_prompt *p = &a->prompts[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(ps, o);
        cJSON_AddNumberToObject(o, "frame", p->frame);
        cJSON_AddNumberToObject(o, "obj_id", p->obj);
        cli_prompt_json(o, p->pts, p->labels, p->n, p->has_box ? p->box : NULL);
        if (p->mask)
            cJSON_AddStringToObject(o, "mask", p->mask);
    }
    cJSON_AddNumberToObject(root, "frames_tracked", r->done);
    cJSON_AddBoolToObject(root, "interrupted", cli_interrupted() != 0); /* per_frame: the frames done */
    cJSON_AddNumberToObject(root, "seconds_total", cli_now() - r->t_start);
    cJSON_AddItemToObject(root, "per_frame", frames);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    char path[4200];
    snprintf(path, sizeof path, "%s/track.json", a->out);
    samc_status st = !text ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory")
                           : cli_write_file_atomic(path, text, strlen(text), err);
    cJSON_free(text);
    return st;
}

/* An earlier run's outputs in --out, removed before this run writes any:
 * its summary and JSON lines would otherwise sit beside the new ones (an
 * interrupted re-run left the old track.json next to the new track.jsonl),
 * and its masks of frames or objects this run does not produce. */
static void clear_previous_run(const char *out)
{
    static const char *const top[] = {"track.json", "track.jsonl", NULL}, *const masks[] = {"*_obj*.png", NULL},
                             *const overlays[] = {"*.png", NULL};
    char dir[4200];
    cli_remove_stale(out, top, NULL, 0);
    snprintf(dir, sizeof dir, "%s/masks", out);
    cli_remove_stale(dir, masks, NULL, 0);
    snprintf(dir, sizeof dir, "%s/overlay", out);
    cli_remove_stale(dir, overlays, NULL, 0);
}

/* masks/, overlay/ and track.jsonl, before the model loads. */
static samc_status prepare_outputs(track_run *r, samc_error *err)
{
    char dir[4200];
    samc_status st = cli_prepare_out_dir(r->a->out, err);
    snprintf(dir, sizeof dir, "%s/masks", r->a->out);
    if (!st)
        st = cli_prepare_out_dir(dir, err);
    snprintf(dir, sizeof dir, "%s/overlay", r->a->out);
    if (!st)
        st = cli_prepare_out_dir(dir, err);
    snprintf(dir, sizeof dir, "%s/palette", r->a->out);
    if (!st && r->a->palette_png)
        st = cli_prepare_out_dir(dir, err);
    snprintf(dir, sizeof dir, "%s/track.jsonl", r->a->out);
    if (!st && access(dir, F_OK) == 0 && access(dir, W_OK))
        st = samc_fail(err, SAMC_ERR_IO, "%s: cannot write: %s", dir, strerror(errno));
    if (!st)
        clear_previous_run(r->a->out);
    return st;
}

/* The frames propagate visits: from --start (else the first prompted frame). */
static int frames_to_track(const track_args *a, int n)
{
    int start = a->start;
    for (int i = 0; start < 0 && i < a->n_prompts; i++)
        start = a->prompts[i].frame;
    for (int i = 0; a->start < 0 && i < a->n_prompts; i++)
        start = a->prompts[i].frame < start ? a->prompts[i].frame : start;
    if (a->reverse && start == 0)
        return 0;
    const int span = a->reverse ? start + 1 : n - start;
    return a->max_frames >= 0 && a->max_frames + 1 < span ? a->max_frames + 1 : span;
}

static samc_status load_model(const track_args *a, samc_model **mdl, samc_error *err)
{
    samc_model_params mp = samc_model_default_params();
    mp.config = a->config, mp.allow_nonfinite = a->allow_nonfinite, mp.vocab = a->vocab;
    return samc_model_load(a->model, &mp, mdl, err);
}

/* SAM 2: the prompts on their frames, then the propagation. */
static samc_status track_sam2(track_run *r, const samc_model *mdl, samc_tracker **t, samc_error *err)
{
    const track_args *a = r->a;
    if (a->text)
        return samc_fail(err, SAMC_ERR_ARG, "--text: %s is a SAM 2 model, which takes no text (SAM 3's sam3.pt does; "
                         "SAM 2 tracks --prompt points, boxes and masks)", a->model);
    samc_tracker_params tp = samc_tracker_default_params();
    tp.impl = a->impl, tp.n_threads = a->threads;
    tp.abort_callback = cli_abort_requested; /* Ctrl-C stops at the next frame (or layer) boundary */
    samc_status st = samc_tracker_new(mdl, &tp, t, err);
    r->t = *t;
    if (!st)
        st = samc_tracker_open_video(*t, a->frames, err);
    if (!st)
        st = add_prompts(*t, a, err);
    if (!st) {
        r->impl = samc_tracker_impl(*t), r->threads = samc_tracker_threads(*t);
        r->total = frames_to_track(a, samc_tracker_num_frames(*t));
        r->t_last = cli_now();
        st = samc_tracker_propagate(*t, a->start, a->max_frames, a->reverse, on_frame, r, err);
        cli_progress_end();
    }
    return st;
}

/* After the frames were tracked: a damaged video file is a failure (the
 * frames before the damage are done and kept); frames the decoder repaired
 * are a warning, as OpenCV returns them too. */
static samc_status video_damage(const track_args *a, const samc_tracker *t, samc_error *err)
{
    samc_video_info vi;
    samc_status st = samc_tracker_video_info(t, &vi, err);
    if (!st && vi.first_concealed >= 0 && cli_verbosity >= 1)
        fprintf(stderr, "samc track: warning: %s: the decoder concealed errors in frame %d (and maybe later ones): "
                "the file is damaged\n", a->frames, vi.first_concealed);
    if (!st && vi.damage)
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: %s: only frames 0..%d were tracked (their outputs are written)",
                       a->frames, vi.damage, vi.frames - 1);
    return st;
}

int cmd_track(int argc, char **argv)
{
    static track_args a;
    samc_error err = {0};
    samc_model *mdl = NULL;
    samc_tracker *t = NULL;
    track_run r = {.a = &a, .err = &err, .t_start = cli_now(), .jsonl = -1};
    cli_catch_interrupts();
    samc_status st = parse_args(argc, argv, &a, &err);
    if (!st) /* a directory or a video file, checked before the model loads */
        st = samc_frames_open_path(a.frames, &r.frames, &err);
    if (!st)
        st = check_prompts(&a, r.frames, &err);
    if (!st && !samc_frames_video_file(r.frames)) /* a video file's frames are read as it is tracked */
        st = check_frames_decode(r.frames, &err);
    if (!st)
        st = prepare_outputs(&r, &err);
    if (!st) /* a bad --out-video name fails before the model loads */
        st = track_video_open(&r.video, a.out_video, samc_frames_height(r.frames), samc_frames_width(r.frames),
                              samc_frames_video_file(r.frames) ? samc_video_file_fps(samc_frames_video_file(r.frames)) : 0,
                              &err);
    if (!st)
        st = load_model(&a, &mdl, &err);
    r.json_frames = cJSON_CreateArray();
    if (!st && samc_model_family(mdl) == SAMC_FAMILY_SAM3)
        st = track_sam3(&r, mdl, &err);
    else if (!st)
        st = track_sam2(&r, mdl, &t, &err);
    samc_error verr = {0}; /* the video keeps the frames done, also after a failure */
    const samc_status vst = track_video_close(&r.video, &verr);
    if (!st && vst)
        st = vst, err = verr;
    const bool interrupted = st == SAMC_ERR_ABORTED && cli_interrupted();
    if (!st || (interrupted && r.impl)) { /* interrupted: the summary of the frames done */
        const samc_status ws = write_summary(&r, t, r.json_frames, &err);
        st = ws ? ws : st;
        r.json_frames = NULL;
    }
    if (!st && t)
        st = video_damage(&a, t, &err);
    if (r.jsonl >= 0)
        close(r.jsonl);
    if (st && r.done == 0) { /* nothing finished: leave no empty directories behind */
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/masks", a.out);
        rmdir(dir);
        snprintf(dir, sizeof dir, "%s/overlay", a.out);
        rmdir(dir);
        snprintf(dir, sizeof dir, "%s/palette", a.out);
        rmdir(dir);
    }
    cJSON_Delete(r.json_frames);
    samc_frames_free(r.frames);
    samc_tracker_free(t);
    samc_model_free(mdl);
    if (st == SAMC_ERR_ABORTED && interrupted) {
        char kept[4400];
        snprintf(kept, sizeof kept, "%d frame(s) done, their files and %s/track.json (\"interrupted\": true) kept",
                 r.done, a.out);
        return cli_interrupt_exit("track", kept);
    }
    if (st) {
        fprintf(stderr, "samc track: %s\n", err.msg);
        return cli_exit_code(st);
    }
    if (cli_verbosity >= 1)
        printf("samc: %d frame(s) tracked in %.3f s (impl %s); masks in %s/masks, overlays in %s/overlay, "
               "per-frame JSON lines %s/track.jsonl, summary %s/track.json\n",
               r.done, cli_now() - r.t_start, a.impl ? a.impl : samc_default_impl(), a.out, a.out, a.out, a.out);
    return 0;
}
