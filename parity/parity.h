/* SPDX-License-Identifier: Apache-2.0 */
/* parity.h - run a dump's task through samc and compare every parity point.
 *
 * Chained mode runs the task end to end from /inputs, comparing every traced
 * point against the dump as it completes. Isolated mode runs each recorded
 * call alone on its recorded inputs. Rows are reported in the dump's
 * completion order; the first failing row is the bisection result.
 */
#ifndef SAMC_PARITY_H
#define SAMC_PARITY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/base/tensor.h"

typedef enum samc_parity_state {
    SAMC_PARITY_PASS = 0,
    SAMC_PARITY_FAIL,          /* rel over tolerance */
    SAMC_PARITY_SHAPE,         /* shape mismatch */
    SAMC_PARITY_NOT_PRODUCED,  /* in the dump, samc did not produce it */
    SAMC_PARITY_NOT_IN_DUMP,   /* samc produced it, the dump lacks it */
    SAMC_PARITY_ERROR,         /* the layer failed to run */
    SAMC_PARITY_FLIP           /* a decision within tolerance of its threshold, re-synchronised (neither pass nor fail) */
} samc_parity_state;

typedef struct samc_parity_row {
    int index;                 /* dump completion order; INT_MAX for /outputs rows */
    char module[128];
    int call;
    char slot[64];
    int ndim;
    int64_t shape[SAMC_MAX_DIMS];
    /* The criterion (docs/parity.md, "The criterion"): rel = max_abs / scale,
     * where scale = max(ref_max, slot_scale / 4): ref_max = max|ref| of this
     * call, slot_scale = the largest ref_max of the same module and slot over
     * the dump's calls. A point not small against its slot is judged exactly
     * as max_abs / max|ref| (scale == ref_max). */
    double max_abs, rel, nmse;
    double ref_max, scale;
    /* Chained rows that fail rel <= tol and pass alone on their recorded
     * inputs: how much an input error of relative size tol moves this slot,
     * in units of tol (the bound is tol * max(1, kappa)); NAN elsewhere. */
    double kappa;
    bool judged;               /* a compared tensor: rel (or exactness) decides */
    bool exact;                /* must be bit-identical (max_abs 0) */
    double mask_iou;           /* final mask outputs: IoU of (out > 0) and (ref > 0); NAN elsewhere */
    /* FNV-1a 64 of samc's output bytes (0: none): two runs whose digests
     * agree produced bit-identical outputs (a regression guard). */
    uint64_t digest;
    samc_parity_state state;
    char note[256];
} samc_parity_row;

typedef struct samc_parity_report {
    const char *dump_path;
    const char *impl;
    bool isolated;
    double tol;
    samc_parity_row *rows;
    int n_rows, cap_rows;
    int n_pass, n_fail, n_flips;   /* rows */
    int64_t n_flip_values;         /* values whose decision was re-synchronised */
    int n_ignored_records;     /* dump records of modules that are not parity points */
    int n_chained_only;        /* isolated runs: records of composites compared in chained runs only */
    int first_fail;            /* row index, -1 when all pass */
} samc_parity_report;

typedef struct samc_parity_opts {
    const char *impl;          /* an implementation's name; NULL: the default */
    const char *const *overrides; /* "LAYER=IMPL" */
    int n_overrides;
    bool isolated;
    double tol;                /* <= 0: the implementation's (registry) */
    /* Chained runs re-synchronise at decision points within tolerance of
     * their threshold (FLIP rows) unless strict. */
    bool strict;
    /* Testing the re-synchronisation: > 0 moves the first stored memory
     * value that the dump reads back to this relative margin on the other
     * side of its bf16 rounding midpoint (a planted flip). */
    double plant_bf16_flip;
    /* > 0 (tests): the first loop-threshold decision of a SAM 3 video run
     * (the value nearest its threshold) moved this far (relative) to the
     * other side of its recorded decision (a planted flip). */
    double plant_threshold_flip;
    /* Testing the criterion: every output samc produces for a module named
     * plant_fault_module ("*": every parity point), slot plant_fault_slot
     * (NULL: every output slot), gets element 0 moved by plant_fault_size x
     * the slot's max|value| (a fault of that relative size in the layer; in
     * chained runs later layers consume it). */
    const char *plant_fault_module;
    const char *plant_fault_slot;
    double plant_fault_size;
} samc_parity_opts;

/* Returns SAMC_OK when the run completed (pass or fail: see the report),
 * an error when the dump cannot be used at all. */
samc_status samc_parity_run(const char *dump_path, const samc_parity_opts *o, samc_parity_report *rep,
                            samc_error *err);
void samc_parity_report_free(samc_parity_report *rep);

/* Human-readable table plus the closing "N passed, M failed, K flips" line. */
void samc_parity_print(const samc_parity_report *rep, FILE *f);
samc_status samc_parity_write_json(const samc_parity_report *rep, const char *path, samc_error *err);

/* Comparison metrics of PARITY_DUMP_FORMAT.md. */
void samc_parity_metrics(const float *out, const float *ref, int64_t n, double *max_abs, double *rel,
                         double *nmse);
/* The same with max|ref| instead of rel (rel = max_abs / max(ref_max, 1e-12)). */
void samc_parity_metrics_ref(const float *out, const float *ref, int64_t n, double *max_abs, double *ref_max,
                             double *nmse);
/* max|a - b| (INFINITY when a NaN is involved). */
double samc_parity_max_abs(const float *a, const float *b, int64_t n);

/* Elements of out that differ from ref by exactly one bfloat16 step (a
 * rounding flip of stored bf16 memory); *first = the first such index,
 * *other = elements that differ by more. */
int64_t samc_parity_bf16_flips(const float *out, const float *ref, int64_t n, int64_t *first, int64_t *other);

#endif
