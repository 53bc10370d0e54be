/* SPDX-License-Identifier: Apache-2.0 */
/* chained_video.c - run a dump's video task from /inputs (frames, prompts,
 * propagation) through the samc video predictor, comparing every traced
 * point by (module, frame_idx, obj_id) and the per-frame mask logits. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/video.h"
#include "harness_internal.h"

static void compare_masks(parity_run *r, const char *what, int k, const samc_video_masks *m, const char *fmt_path)
{
    const int64_t hw = (int64_t)m->height * m->width, shape[2] = {m->height, m->width};
    for (int i = 0; i < m->n_obj; i++) {
        char path[160], mod[96], slot[32];
        snprintf(path, sizeof path, fmt_path, k, m->obj_ids[i]);
        snprintf(mod, sizeof mod, "%s/%d", what, k);
        snprintf(slot, sizeof slot, "obj %d", m->obj_ids[i]);
        samc_tensor t = samc_tensor_view(m->logits + i * hw, 2, shape);
        if (samc_dump_exists(r->dump, path))
            samc__parity_compare(r, INT_MAX, mod, 0, slot, &t, path);
    }
}

static samc_status frame_cb(void *user, const samc_video_masks *m)
{
    compare_masks(user, "/outputs/frames", m->frame_idx, m, "/outputs/frames/%d/%d/mask_logits");
    return SAMC_OK;
}

/* One /inputs/prompts/<k>: points/box or a mask on (frame_idx, obj_id). */
static samc_status apply_prompt(parity_run *r, samc_video *v, int k, samc_error *err)
{
    samc_dump *d = r->dump;
    char g[64], path[128];
    snprintf(g, sizeof g, "/inputs/prompts/%d", k);
    const int frame = (int)samc__parity_attr_or(d, g, "frame_idx", 0), obj = (int)samc__parity_attr_or(d, g, "obj_id", 0);
    const bool clear = samc__parity_attr_or(d, g, "clear_old_points", 1) != 0;
    samc_video_masks out = {0};
    samc_status st;
    snprintf(path, sizeof path, "%s/mask", g);
    if (samc_dump_exists(d, path)) {
        samc_tensor mk = {0};
        st = samc_dump_read(d, path, &mk, err);
        if (!st && mk.ndim != 2)
            st = samc_fail(err, SAMC_ERR_SHAPE, "%s: %s must be [H,W]", samc_dump_path(d), path);
        if (!st)
            st = samc_video_add_mask(v, frame, obj, mk.data, (int)mk.shape[0], (int)mk.shape[1], &out, err);
        samc_tensor_release(&mk);
    } else {
        samc_tensor pc = {0}, box = {0};
        int32_t *labels = NULL;
        int64_t n = 0;
        snprintf(path, sizeof path, "%s/point_coords", g);
        st = samc_dump_read(d, path, &pc, err);
        snprintf(path, sizeof path, "%s/point_labels", g);
        if (!st)
            st = samc_dump_read_i32(d, path, &labels, &n, err);
        snprintf(path, sizeof path, "%s/box", g);
        if (!st && samc_dump_exists(d, path))
            st = samc_dump_read(d, path, &box, err);
        if (!st)
            st = samc_video_add_points(v, frame, obj, n ? pc.data : NULL, n ? labels : NULL, (int)n,
                                       box.data, clear, false, &out, err);
        samc_tensor_release(&pc), samc_tensor_release(&box);
        free(labels);
    }
    snprintf(path, sizeof path, "/outputs/prompts/%d/mask_logits", k);
    if (!st && samc_dump_exists(d, path)) { /* the consolidated masks the prompt call returned */
        const int64_t shape[3] = {out.n_obj, out.height, out.width};
        samc_tensor t = samc_tensor_view(out.logits, 3, shape);
        char mod[64];
        snprintf(mod, sizeof mod, "/outputs/prompts/%d", k);
        samc__parity_compare(r, INT_MAX, mod, 0, "mask_logits", &t, path);
    }
    samc_video_masks_free(&out);
    return st;
}

samc_status samc__parity_run_video(parity_run *r, samc_error *err)
{
    samc_dump *d = r->dump;
    samc_frames *fr = NULL;
    samc_status st = samc__parity_read_frames(d, &fr, err);
    /* the predictor's options are the config's (PARITY_DUMP_FORMAT.md, video task) */
    samc_video *v = NULL;
    const samc_feature_source src = samc_sam2_feature_source(r->model);
    samc_exec_set_trace(&r->x, samc__parity_on_trace, r);
    if (!r->strict || r->plant_bf16_flip > 0)
        r->x.decide = samc__parity_resync, r->x.decide_user = r;
    if (!st)
        st = samc_video_init(&r->x, &r->model->tracker, &src, fr, NULL, &v, err);
    for (int t = 0; !st && t < samc_video_num_frames(v); t++) { /* init_state loads every frame */
        samc_tensor x = {0};
        st = samc_video_preprocess_frame(v, t, &x, err);
        samc_tensor_release(&x);
    }
    for (int k = 0; !st; k++) {
        char g[64];
        snprintf(g, sizeof g, "/inputs/prompts/%d", k);
        if (!samc_dump_exists(d, g))
            break;
        st = apply_prompt(r, v, k, err);
    }
    if (!st) {
        const double start = samc__parity_attr_or(d, "/inputs", "start_frame_idx", -1);
        const double maxf = samc__parity_attr_or(d, "/inputs", "max_frame_num_to_track", -1);
        st = samc_video_propagate(v, (int)start, (int)maxf, samc__parity_attr_or(d, "/inputs", "reverse", 0) != 0, frame_cb, r, err);
    }
    samc_exec_set_trace(&r->x, NULL, NULL);
    samc_video_free(v);
    return st;
}
