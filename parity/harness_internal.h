/* SPDX-License-Identifier: Apache-2.0 */
/* harness_internal.h - the parity run's state and its internal functions.
 *
 * The files call downwards only (tests/check_call_cycles.sh checks it):
 *   harness.c            the dispatcher: opens the dump, loads the model, calls
 *                        one task runner, then judges and counts the rows
 *   chained_image.c, chained_video.c, chained_amg.c, chained_sam3.c,
 *   chained_sam3_video.c, chained_sam3_inst.c,
 *   isolated.c           the task runners
 *   judge.c              the pass criterion (docs/parity.md, "The criterion")
 *   resync.c             the chained runs' decision hook
 *   match.c              records by module/call/frame/object; the trace callback
 *   rows.c, alone.c      report rows; one recorded call run alone
 *   batch.c              one object's slice of a batched record (SAM 3 video)
 *   dump*.c, compare.c   the dump reader and the metrics
 */
#ifndef SAMC_PARITY_HARNESS_INTERNAL_H
#define SAMC_PARITY_HARNESS_INTERNAL_H

#include "core/models/sam2/sam2_model.h"
#include "core/models/sam3/sam3_model.h"
#include "core/io/video_frames.h"
#include "core/runtime/exec.h"
#include "dump.h"
#include "parity.h"

typedef struct parity_run {
    samc_dump *dump;
    samc_sam2_model *model;
    samc_sam3_model *model3;   /* the sam3_* tasks */
    bool sam3;                 /* any sam3_* task */
    bool sam3_video, sam3_inst; /* which one (neither: sam3_image) */
    samc_exec x;               /* the implementation choice and the trace */
    samc_parity_report *rep;
    samc_dump_record *recs;
    int n_recs;
    bool *seen;                /* per record: matched by a samc output */
    struct { char module[160]; int count; } *calls; /* key: module (image) or module|frame|obj (video) */
    int n_calls, cap_calls;
    samc_status st;            /* first internal failure (out of memory, ...) */
    bool video;                /* the SAM 2 video task */
    bool scoped;               /* match records by (module, frame_idx, obj_id) and order (video, sam3_video) */
    bool amg;                  /* the automatic mask generator task (chained_amg.c) */
    int video_h, video_w;      /* video task: the frames' size */
    samc_sam_image_opts image_opts; /* image task: the predictor's options */
    int io_rec;                /* the record samc__parity_record_io reads */
    bool strict;               /* no re-synchronisation at decision points */
    int last_index;            /* completion order of the last record matched (decisions sort after it) */
    double plant_bf16_flip;    /* samc_parity_opts.plant_bf16_flip, cleared once planted */
    double plant_threshold_flip; /* samc_parity_opts.plant_threshold_flip, likewise */
    const samc_parity_opts *opts; /* the caller's options (planted faults) */
    double io_perturb;         /* > 0: samc__parity_record_io perturbs continuous inputs by this x max|input| */
    int batch, batch_n;        /* >= 0: one object's call against item `batch` of a record of batch_n objects */
} parity_run;

/* ---- rows.c: report rows --------------------------------------------- */
/* Append a row; returns NULL (and sets run->st) when out of memory. */
samc_parity_row *samc__parity_add_row(parity_run *r, int index, const char *module, int call, const char *slot);
/* Compare one tensor with dataset `path` of the dump into a new row (judged
 * against the call's own max|ref| here; judge.c may widen the scale). */
void samc__parity_compare(parity_run *r, int index, const char *module, int call, const char *slot,
                          const samc_tensor *t, const char *path);
/* Compare the emitted slots of record `rec` and flag dump slots samc lacks. */
void samc__parity_compare_record(parity_run *r, int rec, int nslots, const char *const *slots,
                                 const samc_tensor *const *t);
/* A test's planted fault (samc_parity_opts.plant_fault_*) applied to the
 * outputs samc produced for `module`. */
void samc__parity_plant_fault(const parity_run *r, const char *module, int nslots, const char *const *slots,
                              const samc_tensor *const *t);

/* ---- match.c: records and the trace callback -------------------------- */
/* Record index of (module, call), or -1. */
int samc__parity_find_record(const parity_run *r, const char *module, int call);
/* Record index of the n-th call of module on (frame_idx, obj_id), or -1. */
int samc__parity_find_record_video(const parity_run *r, const char *module, int frame_idx, int obj_id, int nth);
/* Record index whose completion order is `index`, or -1. */
int samc__parity_record_at(const parity_run *r, int index);
/* Whether a module name is a parity point of the model (registry). */
bool samc__parity_is_point(const parity_run *r, const char *module);
/* The chained mode's trace callback. */
void samc__parity_on_trace(void *user, const char *module, const samc_scope *sc, int nslots, const char *const *slots,
                           const samc_tensor *const *t);
/* How many calls of `key` the chained run has matched so far. */
int samc__parity_peek_call(const parity_run *r, const char *key);

/* ---- dump_io.c, alone.c: a recorded call run alone ------------------- */
/* Numeric attribute `name` of `obj`, or `dflt` when absent or None. */
double samc__parity_attr_or(samc_dump *d, const char *obj, const char *name, double dflt);
/* /inputs/frames_u8 [T,H,W,3] as a frame source (the video tasks). */
samc_status samc__parity_read_frames(samc_dump *d, samc_frames **out, samc_error *err);
/* A samc_layer_io over record `rec`'s in/ group. */
samc_layer_io samc__parity_record_io(parity_run *r, int rec);
/* Run record `rec` alone on its recorded inputs (each continuous input moved
 * by `perturb` x its max|value|, random signs, when perturb > 0) through the
 * registry's runner; the planted fault, if any, applied. */
samc_status samc__parity_run_alone(parity_run *r, int rec, double perturb, samc_layer_out *o, samc_error *err);

/* ---- chained_image.c: a SAM 1 prompt of the image tasks ------------------ */
typedef struct samc_parity_prompt {
    samc_sam_prompt p;
    samc_tensor coords, mask;
    int32_t *labels;
} samc_parity_prompt;
/* /inputs/prompts/<k> group `g` (points, labels, box, mask_input,
 * multimask_output) into a prompt replayed exactly (points outside allowed). */
samc_status samc__parity_read_prompt(samc_dump *d, const char *g, samc_parity_prompt *dp, samc_error *err);
void samc__parity_prompt_free(samc_parity_prompt *dp);
/* /outputs/<k>: masks, iou_predictions, low_res_masks. */
void samc__parity_compare_prediction(parity_run *r, int k, const samc_sam_prediction *pr);

/* ---- resync.c: the chained runs' decision hook ------------------------ */
void samc__parity_resync(void *user, const samc_scope *sc, samc_decision *d);

/* ---- batch.c: one object's slice of a batched record --------------------- */
/* The position of obj_id in a record of a multi-object tracker state (its
 * obj_ids, no obj_id of its own), else -1. */
int samc__parity_batch_index(const samc_dump_record *rec, int obj_id);
/* A recorded tensor of a batch of n as one object's (item b of the one axis
 * where it has n and `like` has 1); unchanged when no such single axis. */
samc_status samc__parity_slice_like(samc_tensor *ref, const samc_tensor *like, int b, int n, samc_error *err);
/* A recorded input of a batch of n as object b's (axis 0, or 1 for the
 * memory attention's sequence-first inputs); unchanged if not batched. */
samc_status samc__parity_slice_input(samc_tensor *t, const char *name, int b, int n, samc_error *err);

/* ---- judge.c: the pass criterion --------------------------------------- */
/* Every compared row's scale and verdict (docs/parity.md, "The criterion"). */
void samc__parity_judge(parity_run *r);

/* ---- the task runners ----------------------------------------------- */
samc_status samc__parity_run_isolated(parity_run *r, samc_error *err);
samc_status samc__parity_run_image(parity_run *r, samc_error *err);
samc_status samc__parity_run_video(parity_run *r, samc_error *err);
samc_status samc__parity_run_sam3(parity_run *r, samc_error *err);
samc_status samc__parity_run_amg(parity_run *r, samc_error *err);
samc_status samc__parity_run_sam3_video(parity_run *r, samc_error *err);
samc_status samc__parity_run_sam3_inst(parity_run *r, samc_error *err);
/* Load a sam3 dump's model and exec (chained_sam3.c). */
samc_status samc__parity_load_sam3(parity_run *r, const char *path, const char *impl, samc_error *err);

#endif
