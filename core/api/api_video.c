/* api_video.c - the tracker part of include/samc.h on core/sam2_video.h. */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/sam2_video.h"
#include "samc.h"

struct samc_tracker {
    samc_sam2_model *model;
    samc_exec x;
    samc_video *video;
    samc_video_options opt;
    samc_video_masks last;            /* backs the samc_frame_masks handed out */
    samc_frame_masks_cb cb;
    void *user;
};

samc_status samc_tracker_load(const char *checkpoint, const char *config, samc_tracker **out, samc_error *err)
{
    return samc_tracker_load_ex(checkpoint, config, NULL, out, err);
}

samc_status samc_tracker_load_ex(const char *checkpoint, const char *config, const samc_load_options *opts,
                                 samc_tracker **out, samc_error *err)
{
    *out = NULL;
    samc_tracker *t = calloc(1, sizeof *t);
    if (!t)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    samc_status st = samc_sam2_model_load(checkpoint, config, opts && opts->allow_nonfinite, &t->model, err);
    if (!st)
        st = samc_sam2_exec_init(&t->x, t->model, err);
    if (st) {
        samc_sam2_model_free(t->model);
        free(t);
        return st;
    }
    t->opt = samc_video_options_from_config(&t->model->cfg);
    *out = t;
    return SAMC_OK;
}

void samc_tracker_free(samc_tracker *t)
{
    if (!t)
        return;
    samc_video_masks_free(&t->last);
    samc_video_free(t->video);
    samc_exec_free(&t->x);
    samc_sam2_model_free(t->model);
    free(t);
}

samc_status samc_tracker_set_impl(samc_tracker *t, const char *impl, samc_error *err)
{
    return samc_exec_set_impl(&t->x, impl ? impl : "", err);
}

samc_status samc_tracker_override(samc_tracker *t, const char *spec, samc_error *err)
{
    return samc_exec_add_override(&t->x, spec ? spec : "", err);
}

samc_status samc_tracker_set_options(samc_tracker *t, double fill_hole_area, int non_overlap_masks, samc_error *err)
{
    if (!(fill_hole_area >= 0))
        return samc_fail(err, SAMC_ERR_ARG, "fill_hole_area must be >= 0 (got %g)", fill_hole_area);
    t->opt.fill_hole_area = (float)fill_hole_area;
    t->opt.non_overlap_masks = non_overlap_masks != 0;
    return SAMC_OK;
}

static samc_status open_frames(samc_tracker *t, samc_frames *f, samc_error *err)
{
    samc_video_free(t->video);
    t->video = NULL;
    return samc_video_init(&t->x, f, &t->opt, &t->video, err);
}

samc_status samc_tracker_open_frames_dir(samc_tracker *t, const char *dir, samc_error *err)
{
    samc_frames *f = NULL;
    samc_status st = samc_frames_open_dir(dir ? dir : "", &f, err);
    return st ? st : open_frames(t, f, err);
}

samc_status samc_tracker_open_frames(samc_tracker *t, const uint8_t *rgb, int T, int h, int w, samc_error *err)
{
    samc_frames *f = NULL;
    samc_status st = samc_frames_from_memory(rgb, T, h, w, &f, err);
    return st ? st : open_frames(t, f, err);
}

samc_status samc_tracker_open_stream(samc_tracker *t, const uint8_t *rgb, int h, int w, samc_error *err)
{
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
    return t->video ? SAMC_OK : samc_fail(err, SAMC_ERR_ARG, "no video: open frames first");
}

static void to_public(const samc_video_masks *m, samc_frame_masks *p)
{
    *p = (samc_frame_masks){m->frame_idx, m->n_obj, m->height, m->width, m->obj_ids, m->logits, m->object_scores};
}

samc_status samc_tracker_add_points(samc_tracker *t, int frame, int obj_id, const float *points, const int32_t *labels,
                                    int n, const float *box, int clear_old_points, samc_frame_masks *out,
                                    samc_error *err)
{
    samc_status st = need_video(t, err);
    samc_video_masks_free(&t->last);
    if (!st)
        st = samc_video_add_points(t->video, frame, obj_id, points, labels, n, box, clear_old_points != 0, &t->last, err);
    if (!st && out)
        to_public(&t->last, out);
    return st;
}

samc_status samc_tracker_add_mask(samc_tracker *t, int frame, int obj_id, const float *mask, int h, int w,
                                  samc_frame_masks *out, samc_error *err)
{
    samc_status st = need_video(t, err);
    samc_video_masks_free(&t->last);
    if (!st)
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
    return t->cb ? t->cb(t->user, &p) : SAMC_OK;
}

samc_status samc_tracker_propagate(samc_tracker *t, int start, int max_frames, int reverse, samc_frame_masks_cb cb,
                                   void *user, samc_error *err)
{
    samc_status st = need_video(t, err);
    if (st)
        return st;
    t->cb = cb, t->user = user;
    return samc_video_propagate(t->video, start, max_frames, reverse != 0, forward_cb, t, err);
}

samc_status samc_tracker_push_frame(samc_tracker *t, const uint8_t *rgb, int h, int w, samc_error *err)
{
    samc_status st = need_video(t, err);
    return st ? st : samc_video_push_frame(t->video, rgb, h, w, err);
}

samc_status samc_tracker_clear_frame(samc_tracker *t, int frame, int obj_id, samc_error *err)
{
    samc_status st = need_video(t, err);
    return st ? st : samc_video_clear_frame(t->video, frame, obj_id, err);
}

samc_status samc_tracker_remove_object(samc_tracker *t, int obj_id, samc_error *err)
{
    samc_status st = need_video(t, err);
    return st ? st : samc_video_remove_object(t->video, obj_id, err);
}

void samc_tracker_reset(samc_tracker *t)
{
    if (t->video)
        samc_video_reset(t->video);
}

int samc_tracker_num_frames(const samc_tracker *t) { return t->video ? samc_video_num_frames(t->video) : 0; }

int samc_tracker_stored_outputs(const samc_tracker *t) { return t->video ? samc_video_stored_outputs(t->video) : 0; }
