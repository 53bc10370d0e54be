/* SPDX-License-Identifier: Apache-2.0 */
/* video_frames.h - where a video's frames come from: a directory of JPEG
 * frames named by number (as the official loader requires: "00000.jpg",
 * "12.jpeg", ...), a video file (video_file.h), frames in memory, or frames
 * pushed one at a time (streaming). Frames are decoded on demand, so memory
 * does not grow with the video's length. JPEG frames are decoded with
 * libjpeg(-turbo), which gives the same pixels as Pillow in the official
 * loader; video files as OpenCV in SAM 3's official video-file loader. */
#ifndef SAMC_CORE_VIDEO_FRAMES_H
#define SAMC_CORE_VIDEO_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "core/io/video_file.h"
#include "samc_status.h"

typedef struct samc_frames samc_frames;

/* JPEG files (.jpg/.jpeg, any case) of `dir`, sorted by their numeric stem.
 * Fails on an empty directory, a non-numeric or duplicate name, a file that
 * is not an image, or frames of different sizes (checked from headers). */
samc_status samc_frames_open_dir(const char *dir, samc_frames **out, samc_error *err);
/* A video file (a path, or n bytes in memory read in place, valid until
 * the source is freed; `what` names them). */
samc_status samc_frames_open_video(const char *path, samc_frames **out, samc_error *err);
samc_status samc_frames_open_video_memory(const void *data, size_t n, const char *what, samc_frames **out,
                                          samc_error *err);
/* T frames of h x w RGB, copied. */
samc_status samc_frames_from_memory(const uint8_t *rgb, int T, int h, int w, samc_frames **out, samc_error *err);
/* An empty source to push frames into (all of one size). */
samc_status samc_frames_new_stream(samc_frames **out, samc_error *err);
/* Append one frame (copied). Frames older than `keep` pushes are forgotten. */
samc_status samc_frames_push(samc_frames *f, const uint8_t *rgb, int h, int w, samc_error *err);
/* Forget frames before `frame_idx` (streaming; their indices stay valid as numbers). */
void samc_frames_forget_before(samc_frames *f, int frame_idx);
void samc_frames_free(samc_frames *f);

int samc_frames_count(const samc_frames *f);
int samc_frames_height(const samc_frames *f);
int samc_frames_width(const samc_frames *f);
/* The file frame t comes from (a directory source), else NULL. */
const char *samc_frames_path(const samc_frames *f, int t);
/* Frame t as RGB (h*w*3), owned by the source and valid until the next get. */
samc_status samc_frames_get(samc_frames *f, int t, const uint8_t **rgb, samc_error *err);
/* Frame t as the official loader of this kind of source hands it to the
 * model's preprocessing: a video file's frame already resized to S x S as
 * its loader does (cv2.resize, INTER_CUBIC), any other source's frame at its
 * own size (the preprocessing resizes it as PIL does). Valid until the next
 * get. */
samc_status samc_frames_get_input(samc_frames *f, int t, int S, const uint8_t **rgb, int *h, int *w, samc_error *err);
/* The video file behind a source, else NULL. */
samc_video_file *samc_frames_video_file(const samc_frames *f);
/* "video file", "frames directory" or "frames in memory". */
const char *samc_frames_kind(const samc_frames *f);
/* A directory (its JPEG frames) or a video file, told apart by what the path is. */
samc_status samc_frames_open_path(const char *path, samc_frames **out, samc_error *err);

#endif
