/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_track_sam3.c - `samc track` on a SAM 3 model (cmd_track.h): a
 * concept (--text) detected on frame --start (0) and tracked through the video
 * by the official detector-tracker loop (include/samc_sam3.h's
 * samc_sam3_tracker), objects appearing and vanishing on the way; each
 * frame's objects written as the frame comes out: a PNG per object
 * (<FRAME>_obj<ID>.png), the overlay, its track.jsonl line (id, score,
 * box, area, RLE) and its place in track.json (cmd_track.c). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_track.h"
#include "core/base/error.h"
#include "samc_sam3.h"

typedef struct sam3_run {
    track_run *r;
    const samc_sam3_tracker *t;
} sam3_run;

/* Object k of frame f: its mask PNG and its record in `objs`. */
static samc_status write_object(track_run *r, const samc_sam3_frame *f, int k, const char *stem, float *logits,
                                uint8_t *gray, cJSON *objs)
{
    const int64_t hw = (int64_t)f->h * f->w;
    for (int64_t i = 0; i < hw; i++)
        logits[i] = f->masks[k * hw + i] ? 1.0f : -1.0f;
    char path[4200];
    cJSON *o = track_object(r, objs, stem, f->obj_ids[k], path, sizeof path);
    cJSON_AddNumberToObject(o, "score", f->probs[k]); /* the detection score at birth (1 after a click) */
    cJSON *b = cJSON_AddArrayToObject(o, "box_xywh_normalized"); /* as the official outputs */
    for (int c = 0; c < 4; c++)
        cJSON_AddItemToArray(b, cJSON_CreateNumber(f->boxes[4 * k + c]));
    samc_status st = track_mask_out(r, o, logits, gray, f->h, f->w, path); /* area, bbox in pixels, RLE */
    cJSON_DeleteItemFromObjectCaseSensitive(o, "stability_score"); /* binary masks: no logits to measure it on */
    return st;
}

/* The frame's masks, overlay (each object in its id's colour) and palette PNG. */
static samc_status write_frame(track_run *r, const samc_sam3_frame *f, const char *stem, cJSON *fo)
{
    const int64_t hw = (int64_t)f->h * f->w;
    const uint8_t *rgb = NULL;
    samc_status st = samc_frames_get(r->frames, f->frame, &rgb, r->err);
    uint8_t *gray = malloc((size_t)hw), *over = malloc((size_t)hw * 3), *idx = calloc((size_t)hw, 1);
    float *logits = malloc((size_t)hw * sizeof *logits);
    if (!st && (!gray || !over || !idx || !logits))
        st = samc_fail(r->err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        memcpy(over, rgb, (size_t)hw * 3);
    cJSON *objs = cJSON_AddArrayToObject(fo, "objects");
    for (int k = 0; !st && k < f->n; k++) {
        st = write_object(r, f, k, stem, logits, gray, objs);
        uint8_t col[3];
        cli_mask_color(f->obj_ids[k], col);
        cli_blend_mask(over, f->w, f->h, logits, col);
        for (int64_t i = 0; i < hw; i++) /* ids ascending: the smaller id wins an overlap, as SAM 2's */
            if (f->masks[k * hw + i] && !idx[i])
                idx[i] = (uint8_t)(f->obj_ids[k] < TRACK_PALETTE_MAX_ID ? f->obj_ids[k] + 1 : TRACK_PALETTE_MAX_ID);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/overlay/%s.png", r->a->out, stem);
    if (!st)
        st = cli_write_png_atomic(path, f->w, f->h, 3, over, r->err);
    if (!st)
        st = track_video_add(&r->video, over, r->err);
    snprintf(path, sizeof path, "%s/palette/%s.png", r->a->out, stem);
    if (!st && r->a->palette_png) /* index = id + 1 (SAM 3's ids start at 0; 0 is the background) */
        st = samc_write_palette_png(path, idx, f->h, f->w, NULL, 0, r->err);
    free(gray), free(over), free(idx), free(logits);
    return st;
}

static samc_status on_frame(void *user, const samc_sam3_frame *f)
{
    sam3_run *s = user;
    track_run *r = s->r;
    if (cli_abort_requested(NULL)) /* Ctrl-C: stop at this frame boundary */
        return samc_fail(r->err, SAMC_ERR_ABORTED, "interrupted");
    char stem[256];
    cJSON *fo = track_frame(samc_sam3_tracker_frame_path(s->t, f->frame), f->frame, stem, sizeof stem);
    return track_frame_done(r, stem, fo, write_frame(r, f, stem, fo));
}

/* What SAM 3 tracking takes of the command line: a frames directory and a
 * text. (Clicks after a text make the official propagation partial: only
 * the clicked objects are tracked on; the API offers that, the command
 * refuses it rather than surprise.) */
static samc_status check_args(const track_args *a, const samc_frames *f, samc_error *err)
{
    if (samc_frames_video_file(f))
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "--frames %s: SAM 3 tracking reads a directory of numbered JPEG "
                         "frames (decode the video into one first)", a->frames);
    if (!a->text)
        return samc_fail(err, SAMC_ERR_ARG, "%s is a SAM 3 model: give the concept to track with --text \"...\"",
                         a->model);
    if (a->n_prompts)
        return samc_fail(err, SAMC_ERR_ARG, "--prompt: SAM 3 tracking takes a --text concept here (points, boxes and "
                         "masks are SAM 2's --prompt; SAM 3 clicks are in the C API, samc_sam3_tracker_add_points)");
    return SAMC_OK;
}

samc_status track_sam3(track_run *r, const samc_model *m, samc_error *err)
{
    const track_args *a = r->a;
    const int frame = a->start >= 0 ? a->start : 0;
    samc_status st = check_args(a, r->frames, err);
    samc_sam3_tracker_params tp = samc_sam3_tracker_default_params();
    tp.impl = a->impl, tp.n_threads = a->threads;
    samc_sam3_tracker *t = NULL;
    if (!st)
        st = samc_sam3_tracker_new(m, &tp, a->frames, &t, err);
    sam3_run s = {r, t};
    if (!st) {
        r->impl = samc_sam3_tracker_impl(t), r->threads = samc_sam3_tracker_threads(t);
        const int n = samc_sam3_tracker_num_frames(t), span = a->reverse ? frame + 1 : n - frame;
        r->total = a->max_frames >= 0 && a->max_frames + 1 < span ? a->max_frames + 1 : span;
        r->t_last = cli_now();
        /* the prompt frame's objects: written from the prompt going backward
         * (propagate_in_video does not revisit its start frame backward);
         * going forward the propagation's first frame is that one */
        st = samc_sam3_tracker_add_prompt(t, frame, a->text, NULL, 1, a->reverse ? on_frame : NULL, &s, err);
    }
    if (!st)
        st = samc_sam3_tracker_propagate(t, a->reverse ? SAMC_SAM3_BACKWARD : SAMC_SAM3_FORWARD, frame,
                                         a->max_frames, on_frame, &s, err);
    cli_progress_end();
    samc_sam3_tracker_free(t);
    return st;
}
