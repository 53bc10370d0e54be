/* SPDX-License-Identifier: Apache-2.0 */
/* isolated.c - run every recorded call alone on its recorded inputs, so an
 * error is measured per layer, without accumulation. Each layer's runner
 * comes from the model's registry (core/runtime/exec.h); composite points
 * run their subtree from their own recorded inputs. */
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "harness_internal.h"

static void report_error(parity_run *r, int i, samc_status st, const samc_error *e)
{
    samc_parity_row *row = samc__parity_add_row(r, r->recs[i].index, r->recs[i].module, r->recs[i].call, "*");
    if (row) {
        row->state = SAMC_PARITY_ERROR;
        snprintf(row->note, sizeof row->note, "%s", e->msg[0] ? e->msg : samc_status_name(st));
    }
}

/* Record i alone: its outputs compared, or its runner's error reported
 * (when `report`). */
static samc_status run_one(parity_run *r, int i, bool report)
{
    samc_layer_out o = {0};
    samc_error e = {0};
    samc_status st = samc__parity_run_alone(r, i, 0, &o, &e);
    if (st && report) {
        report_error(r, i, st, &e);
    } else if (!st) {
        const char *names[SAMC_LAYER_OUT_MAX];
        const samc_tensor *t[SAMC_LAYER_OUT_MAX];
        for (int k = 0; k < o.n; k++)
            names[k] = o.names[k], t[k] = &o.t[k];
        samc__parity_compare_record(r, i, o.n, names, t);
    }
    samc_layer_out_free(&o);
    return st;
}

samc_status samc__parity_run_isolated(parity_run *r, samc_error *err)
{
    (void)err;
    for (int i = 0; i < r->n_recs && !r->st; i++) {
        if (!samc__parity_is_point(r, r->recs[i].module))
            continue;
        r->seen[i] = true;
        const samc_layer *L = samc_exec_find(&r->x, r->recs[i].module);
        if (L->def->chained_only) { /* its children run alone */
            r->rep->n_chained_only++;
            continue;
        }
        const samc_dump_record *d = &r->recs[i];
        const bool batched = d->obj_id < 0 && d->n_objs >= 2;
        /* a batch of a multi-object state whose runner takes one object at
         * a time (as samc's tracker runs them) runs once per object, each on
         * its slice (batch.c) */
        if (run_one(r, i, !batched) && batched) {
            for (int b = 0; b < d->n_objs; b++) {
                r->batch = b, r->batch_n = d->n_objs;
                run_one(r, i, true);
            }
            r->batch = -1;
        }
    }
    return SAMC_OK;
}
