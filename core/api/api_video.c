/* SPDX-License-Identifier: Apache-2.0 */
/* api_video.c - the tracker part of include/samc.h on core/models/tracker/video.h
 * (SAM 2's tracker, its frames through SAM 2's image encoder). */
#include <stdlib.h>
#include <string.h>

#include "core/api/api_internal.h"
#include "core/models/tracker/video.h"

struct samc_tracker {
    const samc_model *model;
    samc_model *owned;                /* samc_tracker_load's own model, else NULL */
    samc_exec x;
    samc_video *video;
    const samc_frames *frames;        /* owned by video */
    samc_video_options opt;
    samc_video_masks last;            /* backs the samc_frame_masks handed out */
    samc_frame_masks_cb cb;
    void *user;
    samc_progress_fn progress;
    void *progress_user;
    int done, total;                  /* progress of the current propagate */
    int busy;                         /* inside propagate (its callbacks run): mutating calls refused */
};

/* A call that would change or free the state a running propagate walks
 * (its callback or progress function calling back into the tracker) is
 * refused: opening other frames from the callback freed the video under
 * the loop (heap-use-after-free). */
#define NOT_BUSY(t, err)                                                                                          \
    do {                                                                                                           \
        if ((t) && (t)->busy)                                                                                      \
            return samc_fail((err), SAMC_ERR_ARG, "%s: not allowed from inside a samc_tracker_propagate "          \
                             "callback (it would change the video being propagated)", __func__);                \
    } while (0)

samc_tracker_params samc_tracker_default_params(void)
{
    return (samc_tracker_params){.impl = NULL, .n_threads = 0, .fill_hole_area = -1, .non_overlap_masks = -1};
}

samc_status samc_tracker_new(const samc_model *model, const samc_tracker_params *params, samc_tracker **out,
                             samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(model, err);
    samc_status fs = samc__api_need_family(model, SAMC_FAMILY_SAM2, "samc_tracker_new", err);
    if (fs)
        return fs;
    const samc_tracker_params tp = params ? *params : samc_tracker_default_params();
    samc_tracker *t = calloc(1, sizeof *t);
    if (!t)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    t->model = model;
    t->progress = tp.progress, t->progress_user = tp.progress_user;
    t->opt = samc_video_options_from_config(&model->sam2->tracker.cfg);
    samc_status st = samc_sam2_exec_init(&t->x, model->sam2, err);
    if (!st)
        st = samc__api_setup_exec(&t->x, tp.impl, tp.n_threads, err);
    samc_exec_set_abort(&t->x, tp.abort_callback, tp.abort_user);
    if (!st)
        st = samc_tracker_set_options(t, tp.fill_hole_area < 0 ? t->opt.fill_hole_area : tp.fill_hole_area,
                                      tp.non_overlap_masks < 0 ? t->opt.non_overlap_masks : tp.non_overlap_masks, err);
    if (st) {
        samc_tracker_free(t);
        return st;
    }
    samc__log(SAMC_LOG_INFO, "tracker: impl %s, %d thread(s)", t->x.impl->name, samc__api_threads(&t->x));
    *out = t;
    return SAMC_OK;
}

samc_status samc_tracker_load(const char *checkpoint, const char *config, samc_tracker **out, samc_error *err)
{
    return samc_tracker_load_ex(checkpoint, config, NULL, out, err);
}

samc_status samc_tracker_load_ex(const char *checkpoint, const char *config, const samc_load_options *opts,
                                 samc_tracker **out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    samc_model *m = NULL;
    samc_status st = samc__api_load_legacy(checkpoint, config, opts, &m, err);
    if (!st && (st = samc_tracker_new(m, NULL, out, err)))
        samc_model_free(m);
    if (!st)
        (*out)->owned = m;
    return st;
}

void samc_tracker_free(samc_tracker *t)
{
    if (!t)
        return;
    if (t->busy) { /* from a propagate callback: the loop still runs on it */
        samc__log(SAMC_LOG_ERROR, "samc_tracker_free: ignored inside a samc_tracker_propagate callback (free the "
                  "tracker after propagate returns)");
        return;
    }
    samc_video_masks_free(&t->last);
    samc_video_free(t->video);
    samc_exec_free(&t->x);
    samc_model_free(t->owned);
    free(t);
}

const char *samc_tracker_impl(const samc_tracker *t) { return t ? t->x.impl->name : ""; }

int samc_tracker_threads(const samc_tracker *t) { return t ? samc__api_threads(&t->x) : 0; }

samc_status samc_tracker_set_impl(samc_tracker *t, const char *impl, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    SAMC_API_NEED(t, err);
    return samc_exec_set_impl(&t->x, impl ? impl : samc_default_impl(), err);
}

samc_status samc_tracker_override(samc_tracker *t, const char *spec, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    SAMC_API_NEED(t, err);
    SAMC_API_NEED(spec, err);
    return samc_exec_add_override(&t->x, spec, err);
}

void samc_tracker_set_threads(samc_tracker *t, int n)
{
    if (t && !t->busy)
        samc_exec_set_threads(&t->x, n > 0 ? n : 0);
}

void samc_tracker_set_abort_callback(samc_tracker *t, samc_abort_fn fn, void *user)
{
    if (t)
        samc_exec_set_abort(&t->x, fn, user);
}

samc_status samc_tracker_set_options(samc_tracker *t, double fill_hole_area, int non_overlap_masks, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    SAMC_API_NEED(t, err);
    if (!(fill_hole_area >= 0))
        return samc_fail(err, SAMC_ERR_ARG, "fill_hole_area must be >= 0 (got %g)", fill_hole_area);
    t->opt.fill_hole_area = (float)fill_hole_area;
    t->opt.non_overlap_masks = non_overlap_masks != 0;
    return SAMC_OK;
}

static samc_status open_frames(samc_tracker *t, samc_frames *f, samc_error *err)
{
    samc_video_free(t->video);
    t->video = NULL, t->frames = NULL;
    const samc_feature_source src = samc_sam2_feature_source(t->model->sam2);
    samc_status st = samc_video_init(&t->x, &t->model->sam2->tracker, &src, f, &t->opt, &t->video, err); /* takes f */
    if (!st)
        t->frames = f;
    return st;
}

/* A damaged video file opens with the frames before the damage: say so. */
static void warn_damage(const samc_frames *f)
{
    samc_video_info vi;
    samc__video_info(f, &vi);
    if (vi.damage)
        samc__log(SAMC_LOG_WARN, "%s: %s; the %d frames before it are used", samc_frames_kind(f), vi.damage,
                  vi.frames);
}

samc_status samc_tracker_open_frames_dir(samc_tracker *t, const char *dir, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    SAMC_API_NEED(t, err);
    SAMC_API_NEED(dir, err);
    samc_frames *f = NULL;
    samc_status st = samc_frames_open_dir(dir, &f, err);
    return st ? st : open_frames(t, f, err);
}

samc_status samc_tracker_open_video(samc_tracker *t, const char *path, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(t, err);
    SAMC_API_NEED(path, err);
    samc_frames *f = NULL;
    samc_status st = samc_frames_open_path(path, &f, err);
    if (!st && (st = open_frames(t, f, err)) == SAMC_OK)
        warn_damage(f);
    return st;
}

samc_status samc_tracker_open_video_memory(samc_tracker *t, const void *data, size_t n, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(t, err);
    SAMC_API_NEED(data, err);
    samc_frames *f = NULL;
    samc_status st = samc_frames_open_video_memory(data, n, "video", &f, err);
    if (!st && (st = open_frames(t, f, err)) == SAMC_OK)
        warn_damage(f);
    return st;
}

samc_status samc_tracker_video_info(const samc_tracker *t, samc_video_info *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    SAMC_API_NEED(t, err);
    if (!t->frames)
        return samc_fail(err, SAMC_ERR_ARG, "no video: open frames first");
    samc__video_info(t->frames, out);
    return SAMC_OK;
}

samc_status samc_tracker_open_frames(samc_tracker *t, const uint8_t *rgb, int T, int h, int w, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    SAMC_API_NEED(t, err);
    SAMC_API_NEED(rgb, err);
    samc_frames *f = NULL;
    samc_status st = samc_frames_from_memory(rgb, T, h, w, &f, err);
    return st ? st : open_frames(t, f, err);
}

samc_status samc_tracker_open_stream(samc_tracker *t, const uint8_t *rgb, int h, int w, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    SAMC_API_NEED(t, err);
    SAMC_API_NEED(rgb, err);
    samc_frames *f = NULL;
    samc_status st = samc_frames_new_stream(&f, err);
    if (!st && (st = samc_frames_push(f, rgb, h, w, err))) {
        samc_frames_free(f);
        return st;
    }
    if (st)
        return st;
    samc_video_options saved = t->opt;
    t->opt.streaming = true;
    st = open_frames(t, f, err);
    t->opt = saved;
    return st;
}

static samc_status need_video(const samc_tracker *t, samc_error *err)
{
    if (!t)
        return samc_fail(err, SAMC_ERR_ARG, "the tracker is NULL");
    return t->video ? SAMC_OK : samc_fail(err, SAMC_ERR_ARG, "no video: open frames first");
}

static void to_public(const samc_video_masks *m, samc_frame_masks *p)
{
    *p = (samc_frame_masks){m->frame_idx, m->n_obj, m->height, m->width, m->obj_ids, m->logits, m->object_scores};
}

static samc_status add_points(samc_tracker *t, int frame, int obj_id, const float *points, const int32_t *labels, int n,
                              const float *box, int clear_old_points, bool normalized, samc_frame_masks *out,
                              samc_error *err)
{
    NOT_BUSY(t, err);
    samc_status st = need_video(t, err);
    if (st)
        return st;
    if (n < 0 || (n > 0 && (!points || !labels)))
        return samc_fail(err, SAMC_ERR_ARG, "n is %d but points or labels is NULL", n);
    samc_video_masks_free(&t->last);
    st = samc_video_add_points(t->video, frame, obj_id, points, labels, n, box, clear_old_points != 0, normalized,
                               &t->last, err);
    if (!st && out)
        to_public(&t->last, out);
    return st;
}

samc_status samc_tracker_add_points(samc_tracker *t, int frame, int obj_id, const float *points, const int32_t *labels,
                                    int n, const float *box, int clear_old_points, samc_frame_masks *out,
                                    samc_error *err)
{
    SAMC_API_ENTER(err);
    return add_points(t, frame, obj_id, points, labels, n, box, clear_old_points, false, out, err);
}

samc_status samc_tracker_add_points_normalized(samc_tracker *t, int frame, int obj_id, const float *points,
                                               const int32_t *labels, int n, const float *box, int clear_old_points,
                                               samc_frame_masks *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    return add_points(t, frame, obj_id, points, labels, n, box, clear_old_points, true, out, err);
}

samc_status samc_tracker_add_mask(samc_tracker *t, int frame, int obj_id, const float *mask, int h, int w,
                                  samc_frame_masks *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    samc_status st = need_video(t, err);
    if (st)
        return st;
    SAMC_API_NEED(mask, err);
    samc_video_masks_free(&t->last);
    st = samc_video_add_mask(t->video, frame, obj_id, mask, h, w, &t->last, err);
    if (!st && out)
        to_public(&t->last, out);
    return st;
}

static samc_status forward_cb(void *user, const samc_video_masks *m)
{
    samc_tracker *t = user;
    samc_frame_masks p;
    to_public(m, &p);
    samc_status st = t->cb ? t->cb(t->user, &p) : SAMC_OK;
    if (t->done == 0) /* the range propagate settled on */
        t->total = samc_video_propagate_total(t->video);
    if (t->progress)
        t->progress(t->progress_user, "propagate", ++t->done, t->total);
    return st;
}

samc_status samc_tracker_propagate(samc_tracker *t, int start, int max_frames, int reverse, samc_frame_masks_cb cb,
                                   void *user, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    samc_status st = need_video(t, err);
    if (st)
        return st;
    t->cb = cb, t->user = user;
    t->done = 0;
    t->busy = 1;
    st = samc_video_propagate(t->video, start, max_frames, reverse != 0, forward_cb, t, err);
    t->busy = 0;
    return st;
}

samc_status samc_tracker_push_frame(samc_tracker *t, const uint8_t *rgb, int h, int w, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    samc_status st = need_video(t, err);
    if (st)
        return st;
    SAMC_API_NEED(rgb, err);
    return samc_video_push_frame(t->video, rgb, h, w, err);
}

samc_status samc_tracker_clear_frame(samc_tracker *t, int frame, int obj_id, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    samc_status st = need_video(t, err);
    return st ? st : samc_video_clear_frame(t->video, frame, obj_id, err);
}

samc_status samc_tracker_remove_object(samc_tracker *t, int obj_id, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    samc_status st = need_video(t, err);
    return st ? st : samc_video_remove_object(t->video, obj_id, err);
}

samc_status samc_tracker_reset(samc_tracker *t, samc_error *err)
{
    SAMC_API_ENTER(err);
    NOT_BUSY(t, err);
    SAMC_API_NEED(t, err);
    if (t->video)
        samc_video_reset(t->video);
    return SAMC_OK;
}

int samc_tracker_num_frames(const samc_tracker *t) { return t && t->video ? samc_video_num_frames(t->video) : 0; }

const char *samc_tracker_frame_path(const samc_tracker *t, int frame)
{
    return t && t->frames ? samc_frames_path(t->frames, frame) : NULL;
}

int samc_tracker_stored_outputs(const samc_tracker *t)
{
    return t && t->video ? samc_video_stored_outputs(t->video) : 0;
}
