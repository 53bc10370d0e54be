/* SPDX-License-Identifier: Apache-2.0 */
/* video_write.h - RGB frames to a video file with FFmpeg's libraries: the
 * container from the file's extension (.mp4, .mkv, .mov, .webm, .avi), its
 * usual codec (H.264 through libx264 where Debian's libavcodec has it, VP9
 * for WebM, MPEG-4 part 2 otherwise), 4:2:0 chroma. An odd width or height
 * is padded by one replicated column or row (4:2:0 needs even sizes). The
 * file is written under a temporary name and renamed when closed, so a
 * failed or interrupted run leaves no half-written video. */
#ifndef SAMC_CORE_VIDEO_WRITE_H
#define SAMC_CORE_VIDEO_WRITE_H

#include <stdint.h>

#include "samc_status.h"

typedef struct samc_video_out samc_video_out;

/* fps <= 0: 25. */
samc_status samc_video_out_open(const char *path, int h, int w, double fps, samc_video_out **out, samc_error *err);
/* One frame, h*w*3 RGB. */
samc_status samc_video_out_add(samc_video_out *o, const uint8_t *rgb, samc_error *err);
/* Flush, finish the file and rename it to its name; frees o (also on failure). */
samc_status samc_video_out_close(samc_video_out *o, samc_error *err);
/* Drop an unfinished file (its temporary is removed) and free o. NULL: no-op. */
void samc_video_out_abort(samc_video_out *o);
/* Frames added so far. */
int samc_video_out_count(const samc_video_out *o);

#endif
