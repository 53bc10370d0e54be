/* harness_internal.h - shared by the chained and isolated parity runs. */
#ifndef SAMC_PARITY_HARNESS_INTERNAL_H
#define SAMC_PARITY_HARNESS_INTERNAL_H

#include "core/sam2_model.h"
#include "dump.h"
#include "parity.h"

typedef struct parity_run {
    samc_dump *dump;
    samc_sam2_model *model;
    samc_parity_report *rep;
    samc_dump_record *recs;
    int n_recs;
    bool *seen;                /* per record: matched by a samc output */
    struct { char module[160]; int count; } *calls; /* key: module (image) or module|frame|obj (video) */
    int n_calls, cap_calls;
    samc_status st;            /* first internal failure (out of memory, ...) */
    bool video;                /* match records by (module, frame_idx, obj_id) and order */
} parity_run;

/* Append a row; returns NULL (and sets run->st) when out of memory. */
samc_parity_row *parity_add_row(parity_run *r, int index, const char *module, int call, const char *slot);
/* Compare one tensor with dataset `path` of the dump into a new row. */
void parity_compare(parity_run *r, int index, const char *module, int call, const char *slot,
                    const samc_tensor *t, const char *path);
/* Record index of (module, call), or -1. */
int parity_find_record(const parity_run *r, const char *module, int call);
/* Whether a module name is a parity point samc produces for this family. */
bool parity_is_point(const samc_sam2_model *m, const char *module);
/* Compare the emitted slots of record `rec` and flag dump slots samc lacks. */
void parity_compare_record(parity_run *r, int rec, int nslots, const char *const *slots,
                           const samc_tensor *const *t);

samc_status parity_run_isolated(parity_run *r, samc_error *err);
/* The chained mode's trace callback (chained.c). */
void parity_on_trace(void *user, const char *module, int nslots, const char *const *slots, const samc_tensor *const *t);
/* The video task (chained_video.c). */
samc_status parity_run_video(parity_run *r, samc_error *err);
/* Record index of the n-th call of module on (frame_idx, obj_id), or -1. */
int parity_find_record_video(const parity_run *r, const char *module, int frame_idx, int obj_id, int nth);
samc_status parity_run_chained(parity_run *r, samc_error *err);

#endif
