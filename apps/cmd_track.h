/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_track.h - the outputs of `samc track` beyond the per-object PNGs and
 * JSON (cmd_track_out.c): the overlay as a video file (--out-video) and the
 * frame's objects as a DAVIS-style palettised PNG (--palette-png). */
#ifndef SAMC_APPS_CMD_TRACK_H
#define SAMC_APPS_CMD_TRACK_H

#include "samc.h"
#include "samc_video.h"

/* Largest object id a palettised PNG holds (one byte a pixel). */
#define TRACK_PALETTE_MAX_ID 255

/* DIR/<stem>.png: each pixel the id of the object there, 0 background;
 * where objects overlap the smaller id wins (vos_inference.py's
 * put_per_obj_mask writes ids in decreasing order). */
samc_status track_palette_png(const char *dir, const char *stem, const samc_frame_masks *m, samc_error *err);

/* The overlay video: opened before the model loads (a bad file name fails
 * at once), one frame added per tracked frame in the order they are tracked. */
typedef struct track_video {
    samc_video_writer *w;      /* NULL: not asked for */
    int frames;
} track_video;

samc_status track_video_open(track_video *v, const char *path, int h, int w, double fps, samc_error *err);
samc_status track_video_add(track_video *v, const uint8_t *rgb, samc_error *err);
/* Finish the file with the frames added (a run that stopped early keeps
 * them); nothing is left on disk when no frame was added. */
samc_status track_video_close(track_video *v, samc_error *err);

#endif
