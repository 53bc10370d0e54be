/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_tracker_step.c - one object's tracking step on its state's batched
 * outputs (Sam3TrackerPredictor._run_single_frame_inference for its slice):
 * the tracker's track_step on a view of the batch's outputs, its memory
 * rounded to bfloat16 as the state stores it. */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_tracker_state_internal.h"
#include "core/models/tracker/memory.h"
#include "core/nn/bf16.h"

void samc__s3_round_memory(samc_s3_state *s, const samc_scope *sc, samc_tensor *mem)
{
    /* each value's rounding direction; the recorded side: the memory the
     * official encoder gave (its @encode_new_memory, just traced) */
    samc_decision d = {.kind = SAMC_DECISION_BF16, .module = "@encode_new_memory", .values = mem->data,
                       .n = samc_numel(mem)};
    samc_exec_decide(s->x, sc, &d);
    samc_round_bf16(mem->data, samc_numel(mem));
}

/* Object i's slices of the batch's outputs as the frame dicts its tracking
 * step reads (views: the tensors stay the state's). */
static samc_status view(const samc_s3_state *s, int i, samc_frame_dict *d, samc_error *err)
{
    for (int kind = 0; kind < 2; kind++) {
        const samc_s3_dict *src = &s->out[kind];
        d[kind].items = malloc((size_t)(src->n ? src->n : 1) * sizeof *d[kind].items);
        if (!d[kind].items)
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        d[kind].n = d[kind].cap = src->n;
        for (int k = 0; k < src->n; k++) {
            samc_frame_out *o = &d[kind].items[k];
            *o = src->e[k].obj[i];
            o->frame_idx = src->e[k].frame;
            o->maskmem.owns = o->pred_masks.owns = o->obj_ptr.owns = false;
        }
    }
    return SAMC_OK;
}

samc_status samc__s3_step(samc_s3_state *s, const samc_s3_frame *fr, int obj, const samc_s3_step_in *in,
                          samc_frame_out *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    samc_frame_dict d[2] = {{0}};
    samc_status st = view(s, obj, d, err);
    const samc_scope sc = {fr->t, s->objs[obj].id};
    const samc_track_in tin = {.frame_idx = fr->t, .is_init_cond_frame = in->is_init, .f = fr->f,
                               .n_points = in->n_points, .point_coords = in->coords, .point_labels = in->labels,
                               .mask_inputs = in->mask, .cond = &d[0], .non_cond = &d[1],
                               .num_frames = s->num_frames, .reverse = in->reverse, .run_mem_encoder = in->run_mem,
                               .prev_sam_mask_logits = in->prev_logits, .binarize_mask_from_pts = true,
                               .no_memory = in->no_memory, .no_step_record = in->batched};
    samc_track_out r = {0};
    if (!st)
        st = samc_tracker_track_step(s->x, s->tr, &sc, &tin, &r, err);
    free(d[0].items), free(d[1].items);
    if (st)
        return st;
    if (r.has_mem && !in->batched)
        samc__s3_round_memory(s, &sc, &r.maskmem);
    out->frame_idx = fr->t, out->has_mem = r.has_mem, out->object_score = r.object_score, out->iou_score = r.iou_score;
    out->maskmem = r.maskmem, out->pred_masks = r.pred_masks, out->obj_ptr = r.obj_ptr;
    memset(&r.maskmem, 0, sizeof r.maskmem), memset(&r.pred_masks, 0, sizeof r.pred_masks);
    memset(&r.obj_ptr, 0, sizeof r.obj_ptr);
    samc_track_out_release(&r);
    return SAMC_OK;
}


samc_status samc__s3_step_done(samc_s3_state *s, const samc_s3_frame *fr, int obj, samc_frame_out *out, float eff,
                               samc_error *err)
{
    const samc_scope sc = {fr->t, s->objs[obj].id};
    const samc_track_out view = {.pred_masks = out->pred_masks, .obj_ptr = out->obj_ptr,
                                 .object_score = out->object_score, .iou_score = out->iou_score,
                                 .has_mem = out->has_mem, .maskmem = out->maskmem};
    samc_status st = samc_tracker_trace_step(s->x, s->tr, &sc, &view, &eff, err);
    if (!st && out->has_mem)
        samc__s3_round_memory(s, &sc, &out->maskmem);
    return st;
}
