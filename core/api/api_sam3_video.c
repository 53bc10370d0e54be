/* SPDX-License-Identifier: Apache-2.0 */
/* api_sam3_video.c - include/samc_sam3.h's video session (samc_sam3_tracker)
 * on the detector-tracker loop (core/models/sam3/sam3_video.h): an exec of
 * the video family per session, the prompts checked against the frames in
 * pixels here and handed to the loop normalised, as the official predictor
 * takes them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api_internal.h"
#include "core/models/sam3/sam3_video.h"
#include "samc_sam3.h"

struct samc_sam3_tracker {
    const samc_model *model;
    samc_exec x;
    samc_sam3_video *v;
    const samc_frames *frames;  /* the session's (it owns them) */
    bool busy;                  /* inside a call that runs the callback */
};

samc_sam3_tracker_params samc_sam3_tracker_default_params(void)
{
    return (samc_sam3_tracker_params){.impl = NULL, .n_threads = 0};
}

/* The session on `frames` (taken, also on failure). */
static samc_status start(const samc_model *model, const samc_sam3_tracker_params *params, samc_frames *frames,
                         samc_sam3_tracker **out, samc_error *err)
{
    samc_status st = samc__api_need_family(model, SAMC_FAMILY_SAM3, "samc_sam3_tracker_new", err);
    samc_sam3_tracker *t = st ? NULL : calloc(1, sizeof *t);
    if (!st && !t)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st && (!model->sam3->has_tracker || !model->sam3->video.has_loop))
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "samc_sam3_tracker_new: this SAM 3 model has no tracker half "
                       "(tracker.* weights) or no video config: video needs the whole sam3.pt");
    if (st) {
        samc_frames_free(frames);
        free(t);
        return st;
    }
    const samc_sam3_tracker_params tp = params ? *params : samc_sam3_tracker_default_params();
    t->model = model, t->frames = frames;
    st = samc_sam3_video_exec_init(&t->x, model->sam3, NULL, err);
    if (!st)
        st = samc__api_setup_exec(&t->x, tp.impl, tp.n_threads, err);
    if (!st)
        st = samc_sam3_video_open(&t->x, frames, NULL, &t->v, err);
    else
        samc_frames_free(frames);
    if (st) {
        samc_exec_free(&t->x);
        free(t);
        return st;
    }
    samc__log(SAMC_LOG_INFO, "SAM 3 video session: %d frames, impl %s, %d thread(s)", samc_frames_count(frames),
              t->x.impl->name, samc__api_threads(&t->x));
    *out = t;
    return SAMC_OK;
}

samc_status samc_sam3_tracker_new(const samc_model *model, const samc_sam3_tracker_params *params,
                                  const char *frames_dir, samc_sam3_tracker **out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(model, err);
    SAMC_API_NEED(frames_dir, err);
    samc_frames *f = NULL;
    samc_status st = samc_frames_open_dir(frames_dir, &f, err);
    return st ? st : start(model, params, f, out, err);
}

samc_status samc_sam3_tracker_new_frames(const samc_model *model, const samc_sam3_tracker_params *params,
                                         const uint8_t *rgb, int n_frames, int h, int w, samc_sam3_tracker **out,
                                         samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(model, err);
    SAMC_API_NEED(rgb, err);
    if (n_frames < 1 || h < 1 || w < 1 || (int64_t)h * w > ((int64_t)1 << 28))
        return samc_fail(err, SAMC_ERR_ARG, "samc_sam3_tracker_new_frames: bad video (%d frames of %d x %d)", n_frames,
                         w, h);
    samc_frames *f = NULL;
    samc_status st = samc_frames_from_memory(rgb, n_frames, h, w, &f, err);
    return st ? st : start(model, params, f, out, err);
}

void samc_sam3_tracker_free(samc_sam3_tracker *t)
{
    if (!t)
        return;
    if (t->busy) {
        samc__log(SAMC_LOG_ERROR, "samc_sam3_tracker_free: ignored inside one of its callbacks");
        return;
    }
    samc_sam3_video_close(t->v);
    samc_exec_free(&t->x);
    free(t);
}

int samc_sam3_tracker_num_frames(const samc_sam3_tracker *t) { return t ? samc_frames_count(t->frames) : 0; }
int samc_sam3_tracker_height(const samc_sam3_tracker *t) { return t ? samc_frames_height(t->frames) : 0; }
int samc_sam3_tracker_width(const samc_sam3_tracker *t) { return t ? samc_frames_width(t->frames) : 0; }
const char *samc_sam3_tracker_frame_path(const samc_sam3_tracker *t, int frame)
{
    return t && frame >= 0 && frame < samc_frames_count(t->frames) ? samc_frames_path(t->frames, frame) : NULL;
}
const char *samc_sam3_tracker_impl(const samc_sam3_tracker *t) { return t ? t->x.impl->name : ""; }
int samc_sam3_tracker_threads(const samc_sam3_tracker *t) { return t ? samc__api_threads(&t->x) : 0; }

/* ---- calls that report frames ------------------------------------------------------------- */

typedef struct frame_cb {
    samc_sam3_frame_fn fn;
    void *user;
} frame_cb;

static samc_status deliver(void *user, const samc_sam3_outputs *o)
{
    const frame_cb *c = user;
    const samc_sam3_frame f = {.frame = o->frame_idx, .n = o->n, .h = o->H, .w = o->W, .obj_ids = o->obj_ids,
                               .probs = o->probs, .boxes = o->boxes_xywh, .masks = o->masks};
    return c->fn ? c->fn(c->user, &f) : SAMC_OK;
}

static samc_status enter(samc_sam3_tracker *t, const char *what, int frame, samc_error *err)
{
    if (t->busy)
        return samc_fail(err, SAMC_ERR_ARG, "%s: called from inside one of the session's callbacks", what);
    const int n = samc_frames_count(t->frames);
    if (frame < 0 || frame >= n)
        return samc_fail(err, SAMC_ERR_ARG, "%s: frame %d is outside the video (frames 0..%d)", what, frame, n - 1);
    return SAMC_OK;
}

/* A point (x, y) in pixels inside the frame [0, w] x [0, h]. */
static bool inside(const samc_sam3_tracker *t, float x, float y)
{
    return isfinite(x) && isfinite(y) && x >= 0.0f && y >= 0.0f && x <= (float)samc_frames_width(t->frames) &&
           y <= (float)samc_frames_height(t->frames);
}

samc_status samc_sam3_tracker_add_prompt(samc_sam3_tracker *t, int frame, const char *text, const float *box,
                                         int positive, samc_sam3_frame_fn cb, void *user, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(t, err);
    samc_status st = enter(t, "samc_sam3_tracker_add_prompt", frame, err);
    if (st)
        return st;
    if (!text && !box)
        return samc_fail(err, SAMC_ERR_ARG, "samc_sam3_tracker_add_prompt: give a text and/or a box");
    if (text && !text[0])
        return samc_fail(err, SAMC_ERR_ARG, "samc_sam3_tracker_add_prompt: the text is empty");
    const float W = (float)samc_frames_width(t->frames), H = (float)samc_frames_height(t->frames);
    float xywh[4];
    if (box) {
        if (!inside(t, box[0], box[1]) || !inside(t, box[2], box[3]) || !(box[2] > box[0]) || !(box[3] > box[1]))
            return samc_fail(err, SAMC_ERR_ARG, "samc_sam3_tracker_add_prompt: the box (%g, %g, %g, %g) must be x0 < x1, "
                             "y0 < y1 inside the %g x %g frame", box[0], box[1], box[2], box[3], W, H);
        xywh[0] = box[0] / W, xywh[1] = box[1] / H, xywh[2] = (box[2] - box[0]) / W, xywh[3] = (box[3] - box[1]) / H;
    }
    samc_sam3_outputs o = {0};
    t->busy = true;
    st = samc_sam3_video_add_prompt(t->v, frame, text, box ? xywh : NULL, positive != 0, &o, err);
    const frame_cb c = {cb, user};
    if (!st)
        st = deliver((void *)&c, &o);
    t->busy = false;
    samc_sam3_outputs_free(&o);
    return st;
}

samc_status samc_sam3_tracker_add_points(samc_sam3_tracker *t, int frame, int obj_id, const float *points,
                                         const int32_t *labels, int n, samc_sam3_frame_fn cb, void *user,
                                         samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(t, err);
    SAMC_API_NEED(points, err);
    SAMC_API_NEED(labels, err);
    samc_status st = enter(t, "samc_sam3_tracker_add_points", frame, err);
    if (st)
        return st;
    if (n < 1 || n > 1024 || obj_id < 0)
        return samc_fail(err, SAMC_ERR_ARG, "samc_sam3_tracker_add_points: %d point(s) on object %d (1..1024 points, "
                         "an id >= 0)", n, obj_id);
    const float W = (float)samc_frames_width(t->frames), H = (float)samc_frames_height(t->frames);
    float *norm = malloc((size_t)(2 * n) * sizeof *norm);
    if (!norm)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < n; i++) {
        if (!inside(t, points[2 * i], points[2 * i + 1]) || (labels[i] != 0 && labels[i] != 1))
            st = samc_fail(err, SAMC_ERR_ARG, "samc_sam3_tracker_add_points: point %d (%g, %g, label %d) must lie in the "
                           "%g x %g frame with label 1 (positive) or 0 (negative)", i, points[2 * i],
                           points[2 * i + 1], labels[i], W, H);
        norm[2 * i] = points[2 * i] / W, norm[2 * i + 1] = points[2 * i + 1] / H;
    }
    samc_sam3_outputs o = {0};
    t->busy = true;
    if (!st)
        st = samc_sam3_video_add_points(t->v, frame, obj_id, norm, labels, n, &o, err);
    const frame_cb c = {cb, user};
    if (!st)
        st = deliver((void *)&c, &o);
    t->busy = false;
    samc_sam3_outputs_free(&o);
    free(norm);
    return st;
}

samc_status samc_sam3_tracker_propagate(samc_sam3_tracker *t, samc_sam3_direction direction, int start,
                                        int max_frames, samc_sam3_frame_fn cb, void *user, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(t, err);
    samc_status st = enter(t, "samc_sam3_tracker_propagate", start < 0 ? 0 : start, err);
    if (st)
        return st;
    if (direction != SAMC_SAM3_FORWARD && direction != SAMC_SAM3_BACKWARD && direction != SAMC_SAM3_BOTH)
        return samc_fail(err, SAMC_ERR_ARG, "samc_sam3_tracker_propagate: unknown direction %d", (int)direction);
    const frame_cb c = {cb, user};
    t->busy = true;
    st = samc_sam3_video_propagate(t->v, direction, start, max_frames, deliver, (void *)&c, err);
    t->busy = false;
    return st;
}

samc_status samc_sam3_tracker_remove_object(samc_sam3_tracker *t, int obj_id, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(t, err);
    samc_status st = enter(t, "samc_sam3_tracker_remove_object", 0, err);
    return st ? st : samc_sam3_video_remove_object(t->v, obj_id, err);
}

void samc_sam3_tracker_reset(samc_sam3_tracker *t)
{
    if (t && !t->busy)
        samc_sam3_video_reset(t->v);
}
