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

samc_status samc__parity_run_isolated(parity_run *r, samc_error *err)
{
    (void)err;
    for (int i = 0; i < r->n_recs && !r->st; i++) {
        if (!samc__parity_is_point(r, r->recs[i].module))
            continue;
        r->seen[i] = true;
        samc_layer_out o = {0};
        samc_error e = {0};
        samc_status st = samc__parity_run_alone(r, i, 0, &o, &e);
        if (st) {
            report_error(r, i, st, &e);
        } else {
            const char *names[SAMC_LAYER_OUT_MAX];
            const samc_tensor *t[SAMC_LAYER_OUT_MAX];
            for (int k = 0; k < o.n; k++)
                names[k] = o.names[k], t[k] = &o.t[k];
            samc__parity_compare_record(r, i, o.n, names, t);
        }
        samc_layer_out_free(&o);
    }
    return SAMC_OK;
}
