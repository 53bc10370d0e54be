/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_track.h - the outputs of `samc track` beyond the per-object PNGs and
 * JSON (cmd_track_out.c): the overlay as a video file (--out-video) and the
 * frame's objects as a DAVIS-style palettised PNG (--palette-png). */
#ifndef SAMC_APPS_CMD_TRACK_H
#define SAMC_APPS_CMD_TRACK_H

#include <cjson/cJSON.h>

#include "cli.h"
#include "core/io/video_frames.h"
#include "samc.h"
#include "samc_video.h"

/* ---- the run (cmd_track.c) ---- */

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
    const char *model, *config, *frames, *out, *impl, *out_video;
    const char *text, *vocab;          /* SAM 3: the concept prompt, the tokenizer's vocabulary */
    track_prompt prompts[MAX_PROMPTS];
    int n_prompts, start, max_frames, threads;
    bool reverse, allow_nonfinite, palette_png;
    cli_rle_format rle;               /* --rle */
} track_args;


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

/* A run's outputs as its frames finish. */
typedef struct track_run {
    const track_args *a;
    const samc_tracker *t;          /* SAM 2 */
    const char *impl;              /* the implementation and threads that ran (the summary) */
    int threads;
    samc_frames *frames;           /* for the overlays */
    track_video video;             /* --out-video */
    int jsonl;                     /* track.jsonl (fd, -1: not open): one whole line per finished frame */
    long long jsonl_len;           /* its length after the last whole line */
    cJSON *json_frames;            /* the same, for track.json at the end */
    int done, total;
    double t_last, t_start;
    samc_error *err;
} track_run;

/* A frame's record (frame, its file) and its stem ("DIR/00012.jpg" ->
 * "00012"; in memory: the index). */
cJSON *track_frame(const char *src, int frame, char *stem, size_t n);
/* An object's record in `objs` (obj_id, file <stem>_obj<ID>.png) and the
 * path of its mask PNG; then the mask (logits > 0) into both: its records
 * (area, bbox, RLE: cli_mask_json) and the PNG (`gray`: h x w scratch). */
cJSON *track_object(const track_run *r, cJSON *objs, const char *stem, int obj_id, char *path, size_t n);
samc_status track_mask_out(track_run *r, cJSON *o, const float *logits, uint8_t *gray, int h, int w,
                           const char *path);
/* A frame's record `fo` (its objects written, status st) finished: its
 * time, its track.jsonl line, its place in track.json, the progress. */
samc_status track_frame_done(track_run *r, const char *stem, cJSON *fo, samc_status st);

/* SAM 3 (cmd_track_sam3.c): --text on frame --start (default 0), then
 * propagation forward (--reverse: backward), each frame's objects written
 * as they come. */
samc_status track_sam3(track_run *r, const samc_model *m, samc_error *err);

#endif
