/* SPDX-License-Identifier: Apache-2.0 */
/* samc_video.h - video files in and out, for programs that track with
 * samc_tracker (samc.h): read a video's frames (a file or a directory of
 * JPEG frames) as the tracker sees them, write frames to a video file, and
 * write per-frame masks as DAVIS-style palettised PNGs.
 *
 *   samc_video_reader *r;
 *   samc_video_reader_open("clip.mp4", &r, &err);       // or a frames directory
 *   samc_video_info info;  samc_video_reader_info(r, &info, &err);
 *   const uint8_t *rgb;    samc_video_reader_frame(r, 12, &rgb, &err);
 *
 *   samc_video_writer *w;
 *   samc_video_writer_open("out.mp4", h, wd, info.fps, &w, &err);
 *   samc_video_writer_add(w, rgb, &err);                  // per frame
 *   samc_video_writer_close(w, &err);                     // renamed into place
 *
 * Every call returns SAMC_OK or a status with a message naming the file and
 * frame. docs/video.md describes the pixels (OpenCV's, as SAM 3's official
 * video-file loader) and the bounded memory. */
#ifndef SAMC_VIDEO_H
#define SAMC_VIDEO_H

#include <stddef.h>
#include <stdint.h>

#include "samc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading ----------------------------------------------------------- */

typedef struct samc_video_reader samc_video_reader;

/* A video file, or a directory of numbered JPEG frames. */
SAMC_API samc_status samc_video_reader_open(const char *path, samc_video_reader **out, samc_error *err);
/* A video file's n bytes in memory, read in place (valid until the reader
 * is freed); `what` names them in messages (NULL: "video"). */
SAMC_API samc_status samc_video_reader_open_memory(const void *data, size_t n, const char *what, samc_video_reader **out,
                                          samc_error *err);
/* T frames of h x w RGB in memory (copied). */
SAMC_API samc_status samc_video_reader_open_frames(const uint8_t *rgb, int T, int h, int w, samc_video_reader **out,
                                          samc_error *err);
/* Valid while the reader lives. */
SAMC_API samc_status samc_video_reader_info(const samc_video_reader *r, samc_video_info *out, samc_error *err);
/* Frame t, RGB (height*width*3), owned by the reader, valid until its next call. */
SAMC_API samc_status samc_video_reader_frame(samc_video_reader *r, int t, const uint8_t **rgb, samc_error *err);
SAMC_API void samc_video_reader_free(samc_video_reader *r);

/* ---- writing ----------------------------------------------------------- */

typedef struct samc_video_writer samc_video_writer;

/* A video file named `path`: the container from its extension (.mp4, .mkv,
 * .mov, .webm, .avi), H.264 (VP9 for .webm; MPEG-4 part 2 where the encoder
 * is missing), 4:2:0 (an odd side gets one replicated row or column);
 * fps <= 0: 25. Written under a temporary name, renamed by close. */
SAMC_API samc_status samc_video_writer_open(const char *path, int height, int width, double fps, samc_video_writer **out,
                                   samc_error *err);
/* One frame, height*width*3 RGB. */
SAMC_API samc_status samc_video_writer_add(samc_video_writer *w, const uint8_t *rgb, samc_error *err);
/* Finish the file and rename it into place; frees w, also on failure. */
SAMC_API samc_status samc_video_writer_close(samc_video_writer *w, samc_error *err);
/* Give up: the temporary is removed and w freed. NULL is a no-op. */
SAMC_API void samc_video_writer_abort(samc_video_writer *w);

/* ---- masks as palettised PNGs ------------------------------------------ */

/* A palettised PNG, as DAVIS annotations and the official
 * tools/vos_inference.py write them: `index` holds height*width entries of
 * `palette` (n_colors RGB triples, 1..256; NULL: the DAVIS palette, 256
 * colours, entry k the colour of object id k). Written under a temporary
 * name and renamed. */
SAMC_API samc_status samc_write_palette_png(const char *path, const uint8_t *index, int height, int width,
                                   const uint8_t *palette, int n_colors, samc_error *err);

#ifdef __cplusplus
}
#endif
#endif
