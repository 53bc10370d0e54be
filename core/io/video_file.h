/* SPDX-License-Identifier: Apache-2.0 */
/* video_file.h - a video file (mp4, webm, mkv, mov, avi: whatever Debian's
 * libavformat demuxes and libavcodec decodes) read frame by frame, with
 * bounded memory, for the video predictor and the command line.
 *
 * Opening demuxes the whole file once (packets only, no decoding: fast) to
 * count the frames and learn their timestamps; frames are then decoded on
 * demand. Forward reads decode the next frames; any other read seeks to the
 * key frame before it and decodes forward, keeping the frames it passed in a
 * small cache, so a reverse walk does not decode a group of pictures per
 * frame. Memory: the demuxer and decoder, the timestamps (8 bytes a frame)
 * and the cache (SAMC_VIDEO_CACHE_BYTES, at least two frames).
 *
 * Pixels are those of SAM 3's official video-file loader (OpenCV's
 * cv2.VideoCapture: libswscale to BGR24 with SWS_BICUBIC at the coded size,
 * then RGB), and samc_video_file_resized gives its cv2.resize(INTER_CUBIC) to
 * the model's square input (core/nn/resize_cv2.h; docs/video.md).
 *
 * A damaged file: a truncated or corrupt tail found while demuxing leaves
 * the frames before it readable; samc_video_file_damage says what happened
 * and where. A frame that fails to decode later fails its read with a message
 * naming the frame. */
#ifndef SAMC_CORE_VIDEO_FILE_H
#define SAMC_CORE_VIDEO_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "samc_status.h"

#define SAMC_VIDEO_MAX_FRAMES 1000000
#define SAMC_VIDEO_CACHE_BYTES ((size_t)256 << 20)

typedef struct samc_video_file samc_video_file;

samc_status samc_video_file_open(const char *path, samc_video_file **out, samc_error *err);
/* The same on n bytes in memory, read in place: they must stay valid until
 * v is freed. `what` names them in messages. */
samc_status samc_video_file_open_memory(const void *data, size_t n, const char *what, samc_video_file **out,
                                        samc_error *err);
void samc_video_file_free(samc_video_file *v);

int samc_video_file_count(const samc_video_file *v);
int samc_video_file_width(const samc_video_file *v);
int samc_video_file_height(const samc_video_file *v);
/* Frames per second (the stream's average rate; 0 when unknown). */
double samc_video_file_fps(const samc_video_file *v);
/* "h264", "vp9", ... */
const char *samc_video_file_codec(const samc_video_file *v);
/* NULL for an intact file; else what is wrong after the last readable frame. */
const char *samc_video_file_damage(const samc_video_file *v);

/* The first frame read so far in which the decoder concealed errors (a
 * damaged but decodable file: the frame is what OpenCV would return too),
 * -1 when none. */
int samc_video_file_first_concealed(const samc_video_file *v);

/* Frame t as RGB (h*w*3), owned by v, valid until the next read. */
samc_status samc_video_file_frame(samc_video_file *v, int t, const uint8_t **rgb, samc_error *err);
/* Frame t resized to S x S as cv2.resize(INTER_CUBIC) does, owned by v,
 * valid until the next read. */
samc_status samc_video_file_resized(samc_video_file *v, int t, int S, const uint8_t **rgb, samc_error *err);

#endif
