/* SPDX-License-Identifier: Apache-2.0 */
/* judge.c - the pass criterion (docs/parity.md, "The criterion"). Two rules
 * on top of rel = max|out - ref| / max|ref| <= tol, each of which can only
 * turn a failing row into a passing one, and only where the row's numbers
 * show why it fails on rounding:
 *
 * 1. Small outputs (every mode). A slot of at most SMALL_N values per call
 *    (an object-score logit, IoU predictions, a presence logit) is judged
 *    against scale = max(ref_max, slot_scale / SMALL), where ref_max =
 *    max|ref| of the call and slot_scale = the largest ref_max of the same
 *    module and slot over the dump's calls. A single logit that is 0.002 in
 *    one call and 0.3 in others comes out of the same sum of O(0.3) terms;
 *    its float32 error is that of the terms, not of the result. A row with
 *    ref_max >= slot_scale / SMALL, or with more values (whose max already
 *    samples the computation's scale), keeps scale == ref_max: today's rel,
 *    exactly.
 *
 * 2. Propagated error (chained runs). A row that still fails is run alone
 *    on its recorded inputs (alone.c). If it fails alone, the layer itself is
 *    at fault: FAIL. Otherwise its chained error came in through its
 *    inputs, and the layer may amplify it: the row is run again on its
 *    recorded inputs moved by +-tol x max|input| (every continuous input,
 *    a fixed sign pattern), and kappa = the output's change / (tol x scale).
 *    The row passes when rel <= tol x max(1, kappa): no more than an input
 *    error at the tolerance would cause. kappa <= 1 (a layer that does not
 *    amplify) leaves the bound at tol. The amplification must be smooth: a
 *    third run with the inputs moved by tol / 8 must give the same kappa
 *    within a factor of 2; an output that jumps (a decision inside the layer
 *    moved) keeps its FAIL.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "harness_internal.h"

#define SMALL 4.0        /* "small": below a quarter of the slot's largest magnitude */
#define SMALL_N 16       /* ... in a slot of at most this many values per call */
#define FINE 8.0         /* the smoothness check's smaller input move: tol / FINE */

/* Rows compared across calls: a traced slot by module and slot; a final
 * output by its group (/outputs/<k> -> /outputs, /outputs/frames/<t> ->
 * /outputs/frames) and slot ("obj <id>" -> "obj"). */
static void slot_key(const samc_parity_row *row, char *key, size_t n)
{
    char mod[sizeof row->module], slot[sizeof row->slot];
    snprintf(mod, sizeof mod, "%s", row->module);
    snprintf(slot, sizeof slot, "%s", row->slot);
    if (row->index >= INT_MAX - 1) {
        char *p = strrchr(mod, '/');
        if (p && p[1] && strspn(p + 1, "0123456789") == strlen(p + 1))
            *p = '\0';
        p = strrchr(slot, ' ');
        if (p && p[1] && strspn(p + 1, "0123456789") == strlen(p + 1))
            *p = '\0';
    }
    snprintf(key, n, "%s|%s", mod, slot);
}

/* At most SMALL_N values (and at least one: an empty slot has nothing to judge). */
static bool small_slot(const samc_parity_row *row)
{
    int64_t n = 1;
    for (int k = 0; k < row->ndim; k++)
        n *= row->shape[k];
    return n >= 1 && n <= SMALL_N;
}

/* Rule 1: every judged row's scale, rel and verdict. */
static void judge_scales(parity_run *r)
{
    samc_parity_report *rep = r->rep;
    double *slot_scale = calloc((size_t)(rep->n_rows ? rep->n_rows : 1), sizeof *slot_scale);
    if (!slot_scale) {
        r->st = SAMC_ERR_NOMEM;
        return;
    }
    for (int i = 0; i < rep->n_rows; i++) {
        if (!rep->rows[i].judged || slot_scale[i] != 0 || !small_slot(&rep->rows[i]))
            continue;
        char ki[400], kj[400];
        slot_key(&rep->rows[i], ki, sizeof ki);
        double s = 0;
        for (int pass = 0; pass < 2; pass++) /* the largest ref_max, then written to every row of the key */
            for (int j = i; j < rep->n_rows; j++) {
                if (!rep->rows[j].judged || !small_slot(&rep->rows[j]))
                    continue;
                slot_key(&rep->rows[j], kj, sizeof kj);
                if (strcmp(ki, kj))
                    continue;
                if (pass == 0)
                    s = rep->rows[j].ref_max > s ? rep->rows[j].ref_max : s;
                else
                    slot_scale[j] = s > 0 ? s : -1; /* -1: an all-zero slot, done */
            }
    }
    for (int i = 0; i < rep->n_rows; i++) {
        samc_parity_row *row = &rep->rows[i];
        if (!row->judged)
            continue;
        const double s = fmax(row->ref_max, slot_scale[i] / SMALL);
        row->scale = s > 1e-12 ? s : 1e-12;
        row->rel = row->max_abs / row->scale;
        if (row->exact)
            row->state = row->max_abs == 0 ? SAMC_PARITY_PASS : SAMC_PARITY_FAIL;
        else
            row->state = row->rel <= rep->tol ? SAMC_PARITY_PASS : SAMC_PARITY_FAIL;
        const double own = row->max_abs / (row->ref_max > 1e-12 ? row->ref_max : 1e-12);
        if (row->state == SAMC_PARITY_PASS && !row->exact && own > rep->tol)
            snprintf(row->note, sizeof row->note,
                     "small output: max|ref| %.3e is below 1/%g of this slot's largest over the calls (%.3e), so "
                     "judged against %.3e (rel to its own max|ref|: %.3e)",
                     row->ref_max, SMALL, slot_scale[i], row->scale, own);
    }
    free(slot_scale);
}

/* The record whose alone runs are held (rows of one record are adjacent). */
typedef struct alone_runs {
    int rec;
    samc_status st;            /* either run failed: no propagation verdict */
    samc_layer_out plain, moved, fine; /* inputs as recorded, moved by tol, by tol / FINE */
} alone_runs;

static void alone_release(alone_runs *a)
{
    samc_layer_out_free(&a->plain);
    samc_layer_out_free(&a->moved);
    samc_layer_out_free(&a->fine);
    a->rec = -1;
}

static const samc_tensor *out_slot(const samc_layer_out *o, const char *slot)
{
    for (int k = 0; k < o->n; k++)
        if (!strcmp(o->names[k], slot))
            return &o->t[k];
    return NULL;
}

static bool alone_get(parity_run *r, alone_runs *a, int rec)
{
    if (a->rec == rec)
        return a->st == SAMC_OK;
    alone_release(a);
    a->rec = rec;
    samc_error e = {0};
    a->st = samc__parity_run_alone(r, rec, 0, &a->plain, &e);
    if (!a->st)
        a->st = samc__parity_run_alone(r, rec, r->rep->tol, &a->moved, &e);
    if (!a->st)
        a->st = samc__parity_run_alone(r, rec, r->rep->tol / FINE, &a->fine, &e);
    return a->st == SAMC_OK;
}

static double max_diff(const samc_tensor *a, const samc_tensor *b)
{
    return samc_parity_max_abs(a->data, b->data, samc_numel(a));
}

/* Rule 2 for one failing chained row. */
static void judge_propagated(parity_run *r, samc_parity_row *row, alone_runs *a)
{
    const double tol = r->rep->tol;
    const int rec = samc__parity_record_at(r, row->index);
    if (rec < 0 || !strncmp(row->slot, "in/", 3) || !alone_get(r, a, rec))
        return;
    const samc_tensor *plain = out_slot(&a->plain, row->slot), *moved = out_slot(&a->moved, row->slot),
                      *fine = out_slot(&a->fine, row->slot);
    samc_tensor ref = {0};
    char path[320];
    snprintf(path, sizeof path, "/trace/%06d/out/%s", row->index, row->slot);
    if (!plain || !moved || !fine || !samc_tensor_same_shape(plain, moved) || !samc_tensor_same_shape(plain, fine) ||
        samc_dump_read(r->dump, path, &ref, NULL) || !samc_tensor_same_shape(plain, &ref)) {
        samc_tensor_release(&ref);
        return;
    }
    const double alone = max_diff(plain, &ref) / row->scale;
    samc_tensor_release(&ref);
    if (alone > tol) {
        snprintf(row->note, sizeof row->note, "fails alone on its recorded inputs too (rel %.3e): the layer itself",
                 alone);
        return;
    }
    row->kappa = max_diff(moved, plain) / (tol * row->scale);
    const double k_fine = max_diff(fine, plain) / (tol / FINE * row->scale);
    const bool smooth = row->kappa <= 1 || (k_fine > 0 && row->kappa / k_fine <= 2 && k_fine / row->kappa <= 2);
    const double bound = tol * fmax(1.0, row->kappa);
    if (smooth && row->rel <= bound) {
        row->state = SAMC_PARITY_PASS;
        snprintf(row->note, sizeof row->note,
                 "propagated: alone rel %.2e; an input error of tol moves this slot by %.1f x tol (bound %.2e)", alone,
                 row->kappa, bound);
    } else if (!smooth) {
        snprintf(row->note, sizeof row->note,
                 "alone rel %.2e, but not a smooth function of its inputs (an input move of tol gives %.1f x tol, "
                 "of tol/%g %.1f x tol/%g)", alone, row->kappa, FINE, k_fine, FINE);
    } else {
        snprintf(row->note, sizeof row->note,
                 "alone rel %.2e, but more than its inputs explain (an input error of tol moves it by %.1f x tol)",
                 alone, row->kappa);
    }
}

void samc__parity_judge(parity_run *r)
{
    judge_scales(r);
    if (r->rep->isolated || r->st)
        return;
    alone_runs a = {.rec = -1};
    samc_decision_fn decide = r->x.decide; /* the runs alone take no decisions from the chain */
    r->x.decide = NULL;
    for (int i = 0; i < r->rep->n_rows && !r->st; i++) {
        samc_parity_row *row = &r->rep->rows[i];
        if (row->judged && !row->exact && row->state == SAMC_PARITY_FAIL && row->index < INT_MAX - 1)
            judge_propagated(r, row, &a);
    }
    alone_release(&a);
    r->x.decide = decide;
}
