/* SPDX-License-Identifier: Apache-2.0 */
/* video_frames.c - frame sources for the video predictor. */
#include "core/io/video_frames.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/base/error.h"
#include "core/io/image_io.h"
#include "core/io/jpeg_decode.h"

struct samc_frames {
    int count, h, w;
    char **paths;          /* directory source, else NULL */
    uint8_t **mem;         /* memory / stream source: count entries, NULL when forgotten */
    int cap;
    samc_video_file *vf;   /* video file source, else NULL */
    uint8_t *decoded;      /* the last decoded file (RGB) */
    int decoded_idx;
};

int samc_frames_count(const samc_frames *f) { return f->count; }
int samc_frames_height(const samc_frames *f) { return f->h; }
int samc_frames_width(const samc_frames *f) { return f->w; }
const char *samc_frames_path(const samc_frames *f, int t)
{
    return f->paths && t >= 0 && t < f->count ? f->paths[t] : NULL;
}

static samc_frames *frames_alloc(void)
{
    samc_frames *f = calloc(1, sizeof *f);
    if (f)
        f->decoded_idx = -1;
    return f;
}

void samc_frames_free(samc_frames *f)
{
    if (!f)
        return;
    for (int i = 0; f->paths && i < f->count; i++)
        free(f->paths[i]);
    for (int i = 0; f->mem && i < f->count; i++)
        free(f->mem[i]);
    free(f->paths), free(f->mem);
    samc_video_file_free(f->vf);
    free(f->decoded);
    free(f);
}

typedef struct named { long num; char *path; } named;

static int cmp_named(const void *a, const void *b)
{
    const named *x = a, *y = b;
    return x->num < y->num ? -1 : x->num > y->num;
}

/* "123.jpg" -> 123; -1 for names the official loader would not accept. */
static long frame_number(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot || (strcasecmp(dot, ".jpg") && strcasecmp(dot, ".jpeg")))
        return -2; /* not a frame file: skipped */
    if (dot == name)
        return -1;
    long v = 0;
    for (const char *p = name; p < dot; p++) {
        if (!isdigit((unsigned char)*p) || v > 100000000)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

static samc_status list_dir(const char *dir, named **out, int *n, samc_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open frames directory: %s", dir, strerror(errno));
    int cap = 0;
    *out = NULL, *n = 0;
    samc_status st = SAMC_OK;
    for (struct dirent *e; !st && (e = readdir(d));) {
        const long num = frame_number(e->d_name);
        if (num == -2)
            continue;
        if (num < 0) {
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: frame file '%s' is not named by a number (e.g. 00012.jpg)", dir, e->d_name);
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            named *nn = realloc(*out, (size_t)cap * sizeof *nn);
            if (!nn) {
                st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
                break;
            }
            *out = nn;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p) {
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
            break;
        }
        snprintf(p, len, "%s/%s", dir, e->d_name);
        (*out)[(*n)++] = (named){num, p};
    }
    closedir(d);
    return st;
}

samc_status samc_frames_open_dir(const char *dir, samc_frames **out, samc_error *err)
{
    *out = NULL;
    named *list = NULL;
    int n = 0;
    samc_status st = list_dir(dir, &list, &n, err);
    if (!st && n == 0)
        st = samc_fail(err, SAMC_ERR_ARG, "%s: no JPEG frames (.jpg/.jpeg) in the directory", dir);
    if (!st)
        qsort(list, (size_t)n, sizeof *list, cmp_named);
    for (int i = 1; !st && i < n; i++)
        if (list[i].num == list[i - 1].num)
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: two frames have the number %ld", dir, list[i].num);
    samc_frames *f = st ? NULL : frames_alloc();
    if (!st && (!f || !(f->paths = calloc((size_t)n, sizeof *f->paths))))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < n; i++) { /* check every header before any work */
        int w = 0, h = 0;
        samc_error je = {0};
        if (samc_jpeg_size(list[i].path, &w, &h, &je))
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image (%s)", list[i].path, je.msg);
        else if (i && (w != f->w || h != f->h))
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: frame is %dx%d but the first frame is %dx%d", list[i].path, w, h, f->w, f->h);
        f->w = w, f->h = h;
        f->paths[i] = list[i].path;
        list[i].path = NULL;
        f->count = i + 1;
    }
    for (int i = 0; i < n; i++)
        free(list[i].path);
    free(list);
    if (st) {
        samc_frames_free(f);
        return st;
    }
    *out = f;
    return SAMC_OK;
}

/* A source around an opened video file (taken, freed on failure). */
static samc_status frames_of_video(samc_video_file *vf, samc_frames **out, samc_error *err)
{
    samc_frames *f = frames_alloc();
    if (!f) {
        samc_video_file_free(vf);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    f->vf = vf;
    f->count = samc_video_file_count(vf);
    f->h = samc_video_file_height(vf), f->w = samc_video_file_width(vf);
    *out = f;
    return SAMC_OK;
}

samc_status samc_frames_open_video(const char *path, samc_frames **out, samc_error *err)
{
    *out = NULL;
    samc_video_file *vf = NULL;
    samc_status st = samc_video_file_open(path, &vf, err);
    return st ? st : frames_of_video(vf, out, err);
}

samc_status samc_frames_open_video_memory(const void *data, size_t n, const char *what, samc_frames **out,
                                          samc_error *err)
{
    *out = NULL;
    samc_video_file *vf = NULL;
    samc_status st = samc_video_file_open_memory(data, n, what, &vf, err);
    return st ? st : frames_of_video(vf, out, err);
}

samc_video_file *samc_frames_video_file(const samc_frames *f) { return f->vf; }

const char *samc_frames_kind(const samc_frames *f)
{
    return f->vf ? "video file" : f->paths ? "frames directory" : "frames in memory";
}

samc_status samc_frames_open_path(const char *path, samc_frames **out, samc_error *err)
{
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb))
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open frames directory or video file: %s", path, strerror(errno));
    return S_ISDIR(sb.st_mode) ? samc_frames_open_dir(path, out, err) : samc_frames_open_video(path, out, err);
}

samc_status samc_frames_get_input(samc_frames *f, int t, int S, const uint8_t **rgb, int *h, int *w, samc_error *err)
{
    if (f->vf) {
        *h = *w = S;
        return samc_video_file_resized(f->vf, t, S, rgb, err);
    }
    *h = f->h, *w = f->w;
    return samc_frames_get(f, t, rgb, err);
}

samc_status samc_frames_new_stream(samc_frames **out, samc_error *err)
{
    *out = frames_alloc();
    return *out ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
}

samc_status samc_frames_push(samc_frames *f, const uint8_t *rgb, int h, int w, samc_error *err)
{
    if (f->paths || f->vf)
        return samc_fail(err, SAMC_ERR_ARG, "cannot push frames into a directory or video file source");
    if (!rgb || h <= 0 || w <= 0 || (long long)w * h > SAMC_IMAGE_MAX_PIXELS)
        return samc_fail(err, SAMC_ERR_ARG, "pushed frame %d has an unusable size %dx%d", f->count, w, h);
    if (f->count && (h != f->h || w != f->w))
        return samc_fail(err, SAMC_ERR_ARG, "pushed frame %d is %dx%d but the video is %dx%d", f->count, w, h, f->w, f->h);
    if (f->count == f->cap) {
        int cap = f->cap ? 2 * f->cap : 64;
        uint8_t **n = realloc(f->mem, (size_t)cap * sizeof *n);
        if (!n)
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        f->mem = n, f->cap = cap;
    }
    const size_t bytes = (size_t)h * w * 3;
    if (!(f->mem[f->count] = malloc(bytes)))
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    memcpy(f->mem[f->count], rgb, bytes);
    f->h = h, f->w = w;
    f->count++;
    return SAMC_OK;
}

samc_status samc_frames_from_memory(const uint8_t *rgb, int T, int h, int w, samc_frames **out, samc_error *err)
{
    samc_status st = samc_frames_new_stream(out, err);
    if (!st && T <= 0)
        st = samc_fail(err, SAMC_ERR_ARG, "a video needs at least one frame");
    for (int t = 0; !st && t < T; t++)
        st = samc_frames_push(*out, rgb + (size_t)t * h * w * 3, h, w, err);
    if (st) {
        samc_frames_free(*out);
        *out = NULL;
    }
    return st;
}

void samc_frames_forget_before(samc_frames *f, int frame_idx)
{
    for (int i = 0; f->mem && i < frame_idx && i < f->count; i++)
        free(f->mem[i]), f->mem[i] = NULL;
}

samc_status samc_frames_get(samc_frames *f, int t, const uint8_t **rgb, samc_error *err)
{
    *rgb = NULL;
    if (t < 0 || t >= f->count)
        return samc_fail(err, SAMC_ERR_ARG, "frame index %d is outside 0..%d", t, f->count - 1);
    if (f->vf)
        return samc_video_file_frame(f->vf, t, rgb, err);
    if (f->mem) {
        if (!f->mem[t])
            return samc_fail(err, SAMC_ERR_ARG, "frame %d was already released by the stream", t);
        *rgb = f->mem[t];
        return SAMC_OK;
    }
    if (f->decoded_idx != t) { /* libjpeg, as Pillow decodes for the official loader */
        free(f->decoded);
        f->decoded = NULL, f->decoded_idx = -1;
        int w = 0, h = 0;
        samc_status st = samc_jpeg_decode(f->paths[t], &f->decoded, &w, &h, err);
        if (st)
            return st;
        if (w != f->w || h != f->h)
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: frame changed size since the directory was opened", f->paths[t]);
        f->decoded_idx = t;
    }
    *rgb = f->decoded;
    return SAMC_OK;
}
