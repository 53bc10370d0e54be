/* SPDX-License-Identifier: Apache-2.0 */
/* api_video_io.c - include/samc_video.h: video readers (a file or a frames
 * directory), writers, and palettised mask PNGs; the video description the
 * tracker shares (samc_video_info). */
#include <stdlib.h>
#include <string.h>

#include "core/api/api_internal.h"
#include "core/io/image_io.h"
#include "core/io/video_frames.h"
#include "core/io/video_write.h"
#include "samc_video.h"

void samc__video_info(const samc_frames *f, samc_video_info *out)
{
    const samc_video_file *vf = samc_frames_video_file(f);
    *out = (samc_video_info){.frames = samc_frames_count(f), .height = samc_frames_height(f),
                             .width = samc_frames_width(f), .source = samc_frames_kind(f), .codec = "",
                             .first_concealed = -1};
    if (vf) {
        out->fps = samc_video_file_fps(vf);
        out->codec = samc_video_file_codec(vf);
        out->damage = samc_video_file_damage(vf);
        out->first_concealed = samc_video_file_first_concealed(vf);
    }
}

struct samc_video_reader {
    samc_frames *f;
};

static samc_status reader_of(samc_status st, samc_frames *f, samc_video_reader **out, samc_error *err)
{
    if (!st && !(*out = malloc(sizeof **out)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (st) {
        samc_frames_free(f);
        return st;
    }
    (*out)->f = f;
    return SAMC_OK;
}

samc_status samc_video_reader_open(const char *path, samc_video_reader **out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(path, err);
    samc_frames *f = NULL;
    samc_status st = samc_frames_open_path(path, &f, err);
    return reader_of(st, f, out, err);
}

samc_status samc_video_reader_open_memory(const void *data, size_t n, const char *what, samc_video_reader **out,
                                          samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(data, err);
    samc_frames *f = NULL;
    samc_status st = samc_frames_open_video_memory(data, n, what ? what : "video", &f, err);
    return reader_of(st, f, out, err);
}

samc_status samc_video_reader_open_frames(const uint8_t *rgb, int T, int h, int w, samc_video_reader **out,
                                          samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(rgb, err);
    samc_frames *f = NULL;
    samc_status st = samc_frames_from_memory(rgb, T, h, w, &f, err);
    return reader_of(st, f, out, err);
}

samc_status samc_video_reader_info(const samc_video_reader *r, samc_video_info *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    SAMC_API_NEED(r, err);
    samc__video_info(r->f, out);
    return SAMC_OK;
}

samc_status samc_video_reader_frame(samc_video_reader *r, int t, const uint8_t **rgb, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(rgb, err);
    *rgb = NULL;
    SAMC_API_NEED(r, err);
    return samc_frames_get(r->f, t, rgb, err);
}

void samc_video_reader_free(samc_video_reader *r)
{
    if (!r)
        return;
    samc_frames_free(r->f);
    free(r);
}

struct samc_video_writer {
    samc_video_out *o;
};

samc_status samc_video_writer_open(const char *path, int height, int width, double fps, samc_video_writer **out,
                                   samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(path, err);
    samc_video_writer *w = malloc(sizeof *w);
    if (!w)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    samc_status st = samc_video_out_open(path, height, width, fps, &w->o, err);
    if (st) {
        free(w);
        return st;
    }
    *out = w;
    return SAMC_OK;
}

samc_status samc_video_writer_add(samc_video_writer *w, const uint8_t *rgb, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(w, err);
    SAMC_API_NEED(rgb, err);
    return samc_video_out_add(w->o, rgb, err);
}

samc_status samc_video_writer_close(samc_video_writer *w, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(w, err);
    samc_status st = samc_video_out_close(w->o, err);
    free(w);
    return st;
}

void samc_video_writer_abort(samc_video_writer *w)
{
    if (!w)
        return;
    samc_video_out_abort(w->o);
    free(w);
}

samc_status samc_write_palette_png(const char *path, const uint8_t *index, int height, int width,
                                   const uint8_t *palette, int n_colors, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(path, err);
    SAMC_API_NEED(index, err);
    uint8_t davis[768];
    if (!palette) {
        samc_davis_palette(davis);
        palette = davis, n_colors = 256;
    }
    if ((int64_t)height * width > SAMC_IMAGE_MAX_PIXELS)
        return samc_fail(err, SAMC_ERR_ARG, "%s: size %dx%d is too large", path, width, height);
    return samc_png_write_palette(path, width, height, index, palette, n_colors, err);
}
