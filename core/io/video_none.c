/* SPDX-License-Identifier: Apache-2.0 */
/* video_none.c - video files in a build without FFmpeg (cmake
 * -DSAMC_WITH_FFMPEG=OFF): every open refuses with a message that says why
 * and what works instead (a folder of frames), so callers reach their normal
 * error path; the accessors are never reached without an open handle. */
#include <stddef.h>

#include "core/base/error.h"
#include "core/io/video_file.h"
#include "core/io/video_write.h"

static samc_status no_ffmpeg(const char *what, samc_error *err)
{
    return samc_fail(err, SAMC_ERR_UNSUPPORTED,
                     "%s: this samc was built without FFmpeg (cmake -DSAMC_WITH_FFMPEG=OFF), so it reads and writes "
                     "no video files; give a folder of JPEG/PNG frames instead",
                     what ? what : "video");
}

samc_status samc_video_file_open(const char *path, samc_video_file **out, samc_error *err)
{
    if (out)
        *out = NULL;
    return no_ffmpeg(path, err);
}

samc_status samc_video_file_open_memory(const void *data, size_t n, const char *what, samc_video_file **out,
                                        samc_error *err)
{
    if (out)
        *out = NULL;
    return no_ffmpeg(what, err);
}

void samc_video_file_free(samc_video_file *v) {}
int samc_video_file_count(const samc_video_file *v) { return 0; }
int samc_video_file_width(const samc_video_file *v) { return 0; }
int samc_video_file_height(const samc_video_file *v) { return 0; }
double samc_video_file_fps(const samc_video_file *v) { return 0; }
const char *samc_video_file_codec(const samc_video_file *v) { return ""; }
const char *samc_video_file_damage(const samc_video_file *v) { return NULL; }
int samc_video_file_first_concealed(const samc_video_file *v) { return -1; }

samc_status samc_video_file_frame(samc_video_file *v, int t, const uint8_t **rgb, samc_error *err)
{
    return no_ffmpeg(NULL, err);
}

samc_status samc_video_file_resized(samc_video_file *v, int t, int S, const uint8_t **rgb, samc_error *err)
{
    return no_ffmpeg(NULL, err);
}

samc_status samc_video_out_open(const char *path, int h, int w, double fps, samc_video_out **out, samc_error *err)
{
    if (out)
        *out = NULL;
    return no_ffmpeg(path, err);
}

samc_status samc_video_out_add(samc_video_out *o, const uint8_t *rgb, samc_error *err) { return no_ffmpeg(NULL, err); }
samc_status samc_video_out_close(samc_video_out *o, samc_error *err) { return no_ffmpeg(NULL, err); }
void samc_video_out_abort(samc_video_out *o) {}
int samc_video_out_count(const samc_video_out *o) { return 0; }
