/* harness_internal.h - shared by the chained and isolated parity runs. */
#ifndef SAMC_PARITY_HARNESS_INTERNAL_H
#define SAMC_PARITY_HARNESS_INTERNAL_H

#include "core/models/sam2/sam2_model.h"
#include "core/models/sam3/sam3_model.h"
#include "core/runtime/exec.h"
#include "dump.h"
#include "parity.h"

typedef struct parity_run {
    samc_dump *dump;
    samc_sam2_model *model;
    samc_sam3_model *model3;   /* the sam3_image task */
    bool sam3;
    samc_exec x;               /* the implementation choice and the trace */
    samc_parity_report *rep;
    samc_dump_record *recs;
    int n_recs;
    bool *seen;                /* per record: matched by a samc output */
    struct { char module[160]; int count; } *calls; /* key: module (image) or module|frame|obj (video) */
    int n_calls, cap_calls;
    samc_status st;            /* first internal failure (out of memory, ...) */
    bool video;                /* match records by (module, frame_idx, obj_id) and order */
    bool amg;                  /* the automatic mask generator task (chained_amg.c) */
    int video_h, video_w;      /* video task: the frames' size */
    samc_sam_image_opts image_opts; /* image task: the predictor's options */
    int io_rec;                /* the record samc__parity_record_io reads */
    bool strict;               /* no re-synchronisation at decision points */
    int last_index;            /* completion order of the last record matched (decisions sort after it) */
    double plant_bf16_flip;    /* samc_parity_opts.plant_bf16_flip, cleared once planted */
} parity_run;

/* Append a row; returns NULL (and sets run->st) when out of memory. */
samc_parity_row *samc__parity_add_row(parity_run *r, int index, const char *module, int call, const char *slot);
/* Compare one tensor with dataset `path` of the dump into a new row. */
void samc__parity_compare(parity_run *r, int index, const char *module, int call, const char *slot,
                    const samc_tensor *t, const char *path);
/* Record index of (module, call), or -1. */
int samc__parity_find_record(const parity_run *r, const char *module, int call);
/* Whether a module name is a parity point of the model (registry). */
bool samc__parity_is_point(const parity_run *r, const char *module);
/* Compare the emitted slots of record `rec` and flag dump slots samc lacks. */
void samc__parity_compare_record(parity_run *r, int rec, int nslots, const char *const *slots,
                           const samc_tensor *const *t);

samc_status samc__parity_run_isolated(parity_run *r, samc_error *err);
/* The chained mode's trace callback (chained.c). */
void samc__parity_on_trace(void *user, const char *module, const samc_scope *sc, int nslots, const char *const *slots,
                     const samc_tensor *const *t);
/* How many calls of `key` the chained run has matched so far (chained.c). */
int samc__parity_peek_call(const parity_run *r, const char *key);
/* The chained mode's decision hook (resync.c). */
void samc__parity_resync(void *user, const samc_scope *sc, samc_decision *d);
/* A samc_layer_io over record `rec`'s in/ group (dump_io.c). */
samc_layer_io samc__parity_record_io(parity_run *r, int rec);
/* The video task (chained_video.c). */
samc_status samc__parity_run_video(parity_run *r, samc_error *err);
/* Record index of the n-th call of module on (frame_idx, obj_id), or -1. */
int samc__parity_find_record_video(const parity_run *r, const char *module, int frame_idx, int obj_id, int nth);
samc_status samc__parity_run_chained(parity_run *r, samc_error *err);
/* The SAM 3 image task (chained_sam3.c). */
samc_status samc__parity_run_sam3(parity_run *r, samc_error *err);
/* Load a sam3 dump's model and exec (chained_sam3.c). */
samc_status samc__parity_load_sam3(parity_run *r, const char *path, const char *impl, samc_error *err);
/* The amg task (chained_amg.c). */
samc_status samc__parity_run_amg(parity_run *r, samc_error *err);

#endif
