/* SPDX-License-Identifier: Apache-2.0 */
/* chained_sam3_video.c - the sam3_video task (docs/parity_sam3_video.md):
 * one session of Sam3VideoPredictor requests replayed from
 * /inputs/requests/<k> through samc's loop (core/models/sam3/sam3_video.c),
 * every parity point traced by (module, frame_idx, obj_id) and order, and
 * each returned or yielded frame's outputs compared with
 * /outputs/requests/<k>[/yields/<i>]. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_video.h"
#include "harness_internal.h"

/* A frame's outputs against group `g` (out_obj_ids, out_probs,
 * out_boxes_xywh, out_binary_masks), as float32 rows of module `g`. */
static void compare_outputs(parity_run *r, const char *g, const samc_sam3_outputs *o)
{
    const int64_t n = o->n, hw = (int64_t)o->H * o->W;
    float *ids = malloc((size_t)(n + 1) * sizeof *ids), *masks = malloc((size_t)(n * hw + 1) * sizeof *masks);
    if (!ids || !masks) {
        r->st = SAMC_ERR_NOMEM;
        free(ids), free(masks);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        ids[i] = (float)o->obj_ids[i];
    for (int64_t i = 0; i < n * hw; i++)
        masks[i] = o->masks[i];
    const samc_tensor t[4] = {samc_tensor_view(ids, 1, (const int64_t[]){n}),
                              samc_tensor_view(o->probs, 1, (const int64_t[]){n}),
                              samc_tensor_view(o->boxes_xywh, 2, (const int64_t[]){n, 4}),
                              samc_tensor_view(masks, 3, (const int64_t[]){n, o->H, o->W})};
    static const char *const names[4] = {"out_obj_ids", "out_probs", "out_boxes_xywh", "out_binary_masks"};
    for (int i = 0; i < 4; i++) {
        char path[160];
        snprintf(path, sizeof path, "%s/%s", g, names[i]);
        samc__parity_compare(r, INT_MAX, g, 0, names[i], &t[i], path);
    }
    free(ids), free(masks);
}

typedef struct yield_ctx {
    parity_run *r;
    int k, i;
} yield_ctx;

static samc_status on_yield(void *user, const samc_sam3_outputs *o)
{
    yield_ctx *y = user;
    char g[96];
    snprintf(g, sizeof g, "/outputs/requests/%d/yields/%d", y->k, y->i++);
    if (!samc_dump_exists(y->r->dump, g)) {
        samc_parity_row *row = samc__parity_add_row(y->r, INT_MAX - 1, g, 0, "*");
        if (row) {
            row->state = SAMC_PARITY_NOT_IN_DUMP;
            snprintf(row->note, sizeof row->note, "samc yielded frame %d; the official run yielded no more frames",
                     o->frame_idx);
        }
        return SAMC_OK;
    }
    if ((int)samc__parity_attr_or(y->r->dump, g, "frame_index", -1) != o->frame_idx) {
        samc_parity_row *row = samc__parity_add_row(y->r, INT_MAX - 1, g, 0, "frame_index");
        if (row) {
            row->state = SAMC_PARITY_FAIL;
            snprintf(row->note, sizeof row->note, "samc yielded frame %d, the official run frame %d", o->frame_idx,
                     (int)samc__parity_attr_or(y->r->dump, g, "frame_index", -1));
        }
    }
    compare_outputs(y->r, g, o);
    return SAMC_OK;
}

/* An add_prompt request: a text and/or one box (a new session), or points on obj_id. */
static samc_status add_prompt(parity_run *r, samc_sam3_video *v, const char *g, samc_sam3_outputs *out,
                              samc_error *err)
{
    samc_dump *d = r->dump;
    const int frame = (int)samc__parity_attr_or(d, g, "frame_index", 0);
    char path[128];
    samc_tensor boxes = {0}, pts = {0};
    int32_t *box_labels = NULL, *pt_labels = NULL;
    int64_t nb = 0, np = 0;
    snprintf(path, sizeof path, "%s/bounding_boxes", g);
    samc_status st = samc_dump_exists(d, path) ? samc_dump_read(d, path, &boxes, err) : SAMC_OK;
    snprintf(path, sizeof path, "%s/bounding_box_labels", g);
    if (!st && samc_dump_exists(d, path))
        st = samc_dump_read_i32(d, path, &box_labels, &nb, err);
    snprintf(path, sizeof path, "%s/points", g);
    if (!st && samc_dump_exists(d, path))
        st = samc_dump_read(d, path, &pts, err);
    snprintf(path, sizeof path, "%s/point_labels", g);
    if (!st && samc_dump_exists(d, path))
        st = samc_dump_read_i32(d, path, &pt_labels, &np, err);
    if (!st && (nb > 1 || samc_numel(&boxes) != 4 * nb || samc_numel(&pts) != 2 * np))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: %s: at most one box [1,4] and points [P,2] matching their labels",
                       samc_dump_path(d), g);
    char *text = NULL;
    if (!st && samc_dump_has_attr(d, g, "text"))
        st = samc_dump_attr_str(d, g, "text", &text, err);
    if (!st && np > 0)
        st = samc_sam3_video_add_points(v, frame, (int)samc__parity_attr_or(d, g, "obj_id", -1), pts.data, pt_labels, (int)np,
                                        out, err);
    else if (!st)
        st = samc_sam3_video_add_prompt(v, frame, text, nb ? boxes.data : NULL, nb ? box_labels[0] : 1, out, err);
    free(text);
    samc_tensor_release(&boxes), samc_tensor_release(&pts);
    free(box_labels), free(pt_labels);
    return st;
}

static samc_status run_request(parity_run *r, samc_sam3_video *v, int k, samc_error *err)
{
    samc_dump *d = r->dump;
    char g[64], og[64], *type = NULL;
    snprintf(g, sizeof g, "/inputs/requests/%d", k);
    snprintf(og, sizeof og, "/outputs/requests/%d", k);
    samc_status st = samc_dump_attr_str(d, g, "type", &type, err);
    if (st)
        return st;
    if (!strcmp(type, "add_prompt")) {
        samc_sam3_outputs out = {0};
        st = add_prompt(r, v, g, &out, err);
        if (!st)
            compare_outputs(r, og, &out);
        samc_sam3_outputs_free(&out);
    } else if (!strcmp(type, "propagate")) {
        char *dir = NULL;
        st = samc_dump_attr_str(d, g, "propagation_direction", &dir, err);
        const samc_sam3_direction dr = st ? SAMC_SAM3_BOTH
                                       : !strcmp(dir, "forward")  ? SAMC_SAM3_FORWARD
                                       : !strcmp(dir, "backward") ? SAMC_SAM3_BACKWARD
                                                                  : SAMC_SAM3_BOTH;
        if (!st && strcmp(dir, "forward") && strcmp(dir, "backward") && strcmp(dir, "both"))
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: %s: unknown propagation_direction '%s'", samc_dump_path(d), g,
                           dir);
        free(dir);
        yield_ctx y = {r, k, 0};
        if (!st)
            st = samc_sam3_video_propagate(v, dr, (int)samc__parity_attr_or(d, g, "start_frame_index", -1),
                                           (int)samc__parity_attr_or(d, g, "max_frame_num_to_track", -1), on_yield, &y, err);
        char yg[96];
        snprintf(yg, sizeof yg, "%s/yields/%d", og, y.i);
        if (!st && samc_dump_exists(d, yg)) {
            samc_parity_row *row = samc__parity_add_row(r, INT_MAX - 1, yg, 0, "*");
            if (row) {
                row->state = SAMC_PARITY_NOT_PRODUCED;
                snprintf(row->note, sizeof row->note, "the official run yielded more frames than samc (%d)", y.i);
            }
        }
    } else if (!strcmp(type, "remove")) {
        st = samc_sam3_video_remove_object(v, (int)samc__parity_attr_or(d, g, "obj_id", -1), err);
    } else if (!strcmp(type, "reset")) {
        samc_sam3_video_reset(v);
    } else {
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: %s: unknown request type '%s'", samc_dump_path(d), g, type);
    }
    free(type);
    return st;
}

samc_status samc__parity_run_sam3_video(parity_run *r, samc_error *err)
{
    samc_dump *d = r->dump;
    samc_frames *fr = NULL;
    samc_status st = samc__parity_read_frames(d, &fr, err);
    samc_exec_set_trace(&r->x, samc__parity_on_trace, r);
    if (!r->strict || r->plant_bf16_flip > 0 || r->plant_threshold_flip > 0)
        r->x.decide = samc__parity_resync, r->x.decide_user = r;
    samc_sam3_video *v = NULL;
    if (!st)
        st = samc_sam3_video_open(&r->x, fr, NULL, &v, err);
    for (int t = 0; !st && t < samc_sam3_video_num_frames(v); t++) { /* init_state loads every frame */
        samc_tensor x = {0};
        st = samc_sam3_video_preprocess(v, t, &x, err);
        samc_tensor_release(&x);
    }
    for (int k = 0; !st; k++) {
        char g[64];
        snprintf(g, sizeof g, "/inputs/requests/%d", k);
        if (!samc_dump_exists(d, g))
            break;
        st = run_request(r, v, k, err);
    }
    samc_exec_set_trace(&r->x, NULL, NULL);
    samc_sam3_video_close(v);
    return st;
}
