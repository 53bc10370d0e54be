/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_tracker_state_internal.h - what the tracker state's files share
 * (sam3_tracker_state.c: dicts, objects, removal; sam3_tracker_step.c: one
 * object's tracking step; sam3_tracker_consolidate.c: consolidation and
 * preflight; sam3_tracker_infer.c: propagation, masks, clicks, memory updates). */
#ifndef SAMC_MODELS_SAM3_TRACKER_STATE_INTERNAL_H
#define SAMC_MODELS_SAM3_TRACKER_STATE_INTERNAL_H

#include "core/models/sam3/sam3_tracker_state.h"
#include "core/models/tracker/track_step.h"

/* The official constants of Sam3TrackerPredictor / Sam3TrackerBase. */
#define SAMC_S3_NO_OBJ_SCORE (-1024.0f)        /* NO_OBJ_SCORE */
#define SAMC_S3_PREV_MASK_CLAMP 32.0f          /* prev_sam_mask_logits clamp */

bool samc__s3_set_has(const samc_s3_int_set *s, int v);
samc_status samc__s3_set_add(samc_s3_int_set *s, int v);
bool samc__s3_set_del(samc_s3_int_set *s, int v);

void samc__s3_entry_release(samc_s3_entry *e, int n_obj);
samc_s3_entry *samc__s3_dict_get(const samc_s3_dict *d, int frame);
/* d[e->frame] = *e (e's data moves in; an existing key keeps its place). */
samc_status samc__s3_dict_put(samc_s3_dict *d, samc_s3_entry *e, int n_obj, samc_error *err);
bool samc__s3_dict_pop(samc_s3_dict *d, int frame, samc_s3_entry *out, int n_obj);
samc_status samc__s3_add_slices(samc_s3_state *s, int kind, int frame);

void samc__s3_temp_release(samc_s3_temp *t);
samc_s3_temp *samc__s3_temp_get(samc_s3_object *o, int frame, bool cond);
void samc__s3_temp_pop(samc_s3_object *o, int frame, bool cond);
samc_s3_points *samc__s3_points_get(samc_s3_object *o, int frame);
void samc__s3_points_pop(samc_s3_object *o, int frame);
samc_status samc__s3_obj_index(samc_s3_state *s, int obj_id, int *idx, samc_error *err);

int samc__s3_tracked_get(const samc_s3_state *s, int frame); /* reverse flag, -1: not tracked */
samc_status samc__s3_tracked_set(samc_s3_state *s, int frame, bool reverse);

/* The scope of a state's records: the frame, and its object when it holds one. */
samc_scope samc__s3_scope(const samc_s3_state *s, int frame);

/* One object's tracking step on the batch's outputs (_run_single_frame_inference
 * for its slice), compacted: memory rounded to bfloat16. */
typedef struct samc_s3_step_in {
    bool is_init, reverse, run_mem, no_memory;
    bool batched;                       /* one object of a batch: its @track_step record and its memory's
                                           bf16 rounding left to samc__s3_step_done (the batch's eff) */
    int n_points;                       /* < 0: no points */
    const float *coords;
    const int32_t *labels;
    const samc_tensor *mask;            /* (1,1,S,S) or NULL */
    const samc_tensor *prev_logits;     /* (1,1,4G,4G) or NULL */
} samc_s3_step_in;
samc_status samc__s3_step(samc_s3_state *s, const samc_s3_frame *fr, int obj, const samc_s3_step_in *in,
                          samc_frame_out *out, samc_error *err);
/* A batched step's end, once the batch's eff_iou_score is known: its
 * @track_step record, then its memory rounded to bfloat16 as stored. */
samc_status samc__s3_step_done(samc_s3_state *s, const samc_s3_frame *fr, int obj, samc_frame_out *out, float eff,
                               samc_error *err);

/* _consolidate_temp_output_across_obj (6.3): at low resolution into
 * *entry (run_mem: with memory), or at video resolution into video (n_obj,1,H,W). */
samc_status samc__s3_consolidate(samc_s3_state *s, const samc_s3_frame *fr, bool cond, bool run_mem,
                                 samc_s3_entry *entry, samc_tensor *video, samc_error *err);
/* _clear_non_cond_mem_around_input (6.4): the per-object slices only; and
 * whether the state's options ask for it. */
void samc__s3_clear_around(samc_s3_state *s, int frame);
bool samc__s3_clears_around(const samc_s3_state *s);
/* Stored memory is bfloat16: round (a decision point per value). */
void samc__s3_round_memory(samc_s3_state *s, const samc_scope *sc, samc_tensor *mem);

/* The part of Sam3TrackerPredictor's records (@consolidate, @suppress_shrinkage),
 * mounted at the family's root on the tracker. */
extern const samc_part_def samc_s3_tracker_predictor_part;
void samc__s3_emit_consolidate(samc_s3_state *s, const samc_scope *sc, int n, const char *const *slots,
                               const samc_tensor *const *t);

#endif
