/* SPDX-License-Identifier: Apache-2.0 */
/* memory_select.c - Sam3TrackerBase.frame_filter (sam3/model/sam3_tracker_base.py,
 * after SAM2Long): with use_memory_selection, the previous frames whose
 * memories and object pointers a tracking step reads are those whose
 * stored eff_iou_score exceeds mf_threshold (and always the adjacent
 * frame), instead of the last num_maskmem - 1 frames. A part of its own
 * (its row @frame_filter, mounted by SAM 3), called by the memory bank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/memory.h"
#include "core/models/tracker/track_step.h"

enum { FRAME_FILTER, N_ROWS };
static int uses_selection(const void *self) { return ((const samc_tracker_model *)self)->cfg.sam3.use_memory_selection; }
static samc_isolated_body iso_frame_filter;
static const samc_layer_def rows[N_ROWS] = {
    [FRAME_FILTER] = {.pattern = "@frame_filter", .parity = true, .count = uses_selection,
                      .isolated = iso_frame_filter},
};
const samc_part_def samc_frame_filter_part = {"Sam3TrackerBase.frame_filter", rows, N_ROWS, NULL};

/* The official loop: scan frame-1, frame-1-r, ... down to 1 (reverse:
 * frame+1 .. num_frames-1), prepend each frame with a non-conditioning
 * output whose eff_iou_score > mf, stop once max_num - 1 are found; then
 * the adjacent frame if it is not in. */
static int filter(const samc_frame_dict *non_cond, int frame, int num_frames, bool reverse, int r, int max_ptrs,
                  double mf, int *valid)
{
    if ((frame == 0 && !reverse) || (frame == num_frames - 1 && reverse))
        return 0;
    int max_num = num_frames < max_ptrs ? num_frames : max_ptrs, n = 0;
    if (max_num > SAMC_TRACKER_MAX_VALID)
        max_num = SAMC_TRACKER_MAX_VALID;
    const int step = reverse ? r : -r, must = reverse ? frame + 1 : frame - 1;
    for (int i = frame + step; reverse ? i < num_frames : i > 0; i += step) {
        const samc_frame_out *o = samc_frame_dict_get(non_cond, i);
        if (!o || !o->has_eff)
            continue;
        if (o->eff_iou_score > mf) { /* valid.insert(0, i) */
            memmove(valid + 1, valid, (size_t)n * sizeof *valid);
            valid[0] = i, n++;
        }
        if (n >= max_num - 1)
            break;
    }
    bool in = false;
    for (int k = 0; k < n; k++)
        in |= valid[k] == must;
    if (!in)
        valid[n++] = must;
    return n;
}

static int cmp_frame(const void *a, const void *b)
{
    return ((const samc_frame_out *)a)->frame_idx - ((const samc_frame_out *)b)->frame_idx;
}

/* The record: in/eff_iou_score (frame, score) of every non-conditioning
 * output that has one, by frame; out/0 the selected frames. */
static void trace(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc, const samc_frame_dict *non_cond,
                  const int *valid, int n)
{
    float *pairs = malloc((size_t)(2 * non_cond->n + 1) * sizeof *pairs), *sel = malloc((size_t)(n + 1) * sizeof *sel);
    samc_frame_out *sorted = malloc((size_t)(non_cond->n + 1) * sizeof *sorted);
    if (pairs && sel && sorted) {
        if (non_cond->n)
            memcpy(sorted, non_cond->items, (size_t)non_cond->n * sizeof *sorted);
        qsort(sorted, (size_t)non_cond->n, sizeof *sorted, cmp_frame);
        int k = 0;
        for (int i = 0; i < non_cond->n; i++)
            if (sorted[i].has_eff)
                pairs[2 * k] = (float)sorted[i].frame_idx, pairs[2 * k + 1] = sorted[i].eff_iou_score, k++;
        for (int i = 0; i < n; i++)
            sel[i] = (float)valid[i];
        const samc_tensor tp = samc_tensor_view(pairs, 2, (const int64_t[]){k, 2});
        const samc_tensor ts = samc_tensor_view(sel, 1, (const int64_t[]){n});
        const char *slots[] = {"in/eff_iou_score", "0"};
        const samc_tensor *t[] = {&tp, &ts};
        samc_layer_emit(x, samc_part_layer(x, tr, &rows[FRAME_FILTER], 0), sc, 2, slots, t);
    }
    free(pairs), free(sel), free(sorted);
}

int samc_tracker_frame_filter(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                              const samc_track_in *in, int *valid)
{
    const samc_tracker_config *c = &tr->cfg;
    const int n = filter(in->non_cond, in->frame_idx, in->num_frames, in->reverse, c->memory_temporal_stride_for_eval,
                         c->max_obj_ptrs_in_encoder, c->sam3.mf_threshold, valid);
    if (x->trace)
        trace(x, tr, sc, in->non_cond, valid, n);
    return n;
}

/* ---- the isolated runner: the recorded candidates ------------------------------ */

static samc_status iso_frame_filter(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                    samc_error *err)
{
    (void)x;
    const samc_tracker_model *tr = L->self;
    samc_tensor pairs = {0};
    samc_frame_dict non_cond = {0};
    samc_status st = samc_io_tensor(in, "eff_iou_score", NULL, &pairs, err);
    if (!st && (pairs.ndim != 2 || pairs.shape[1] != 2))
        st = samc_fail(err, SAMC_ERR_SHAPE, "in/eff_iou_score must be [K,2] (frame, score)");
    for (int64_t i = 0; !st && i < pairs.shape[0]; i++) {
        samc_frame_out o = {.frame_idx = (int)pairs.data[2 * i], .has_eff = true, .eff_iou_score = pairs.data[2 * i + 1]};
        st = samc_frame_dict_put(&non_cond, &o, err);
    }
    int valid[SAMC_TRACKER_MAX_VALID], n = 0;
    if (!st)
        n = filter(&non_cond, (int)samc_io_scalar_or(in, "frame_idx", NULL, 0),
                   (int)samc_io_scalar_or(in, "num_frames", NULL, 1), samc_io_scalar_or(in, "track_in_reverse", NULL, 0) != 0,
                   tr->cfg.memory_temporal_stride_for_eval, tr->cfg.max_obj_ptrs_in_encoder, tr->cfg.sam3.mf_threshold,
                   valid);
    samc_tensor *y = st ? NULL : samc_layer_out_slot(out, "0");
    if (!st && !y)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st && !(st = samc_tensor_allocv(y, err, 1, (int64_t)n)))
        for (int i = 0; i < n; i++)
            y->data[i] = (float)valid[i];
    samc_frame_dict_free(&non_cond);
    samc_tensor_release(&pairs);
    return st;
}
