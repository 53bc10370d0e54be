/* SPDX-License-Identifier: Apache-2.0 */
/* alone.c - one recorded call run alone on its recorded inputs through the
 * registry's isolated runner: the isolated mode's unit, and the chained
 * criterion's check of a point that fails in the chain (judge.c). */
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "harness_internal.h"

samc_status samc__parity_run_alone(parity_run *r, int rec, double perturb, samc_layer_out *o, samc_error *err)
{
    memset(o, 0, sizeof *o);
    const samc_layer *L = samc_exec_find(&r->x, r->recs[rec].module);
    if (!L || !L->def->isolated)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s cannot run alone", r->recs[rec].module);
    r->io_perturb = perturb;
    const samc_layer_io io = samc__parity_record_io(r, rec);
    samc_status st = L->def->isolated(&r->x, L, &io, o, err);
    r->io_perturb = 0;
    if (!st && o->n == 0)
        st = samc_fail(err, SAMC_ERR_INTERNAL, "%s produced no output", L->name);
    if (!st) {
        const char *names[SAMC_LAYER_OUT_MAX];
        const samc_tensor *t[SAMC_LAYER_OUT_MAX];
        for (int k = 0; k < o->n; k++)
            names[k] = o->names[k], t[k] = &o->t[k];
        samc__parity_plant_fault(r, r->recs[rec].module, o->n, names, t);
    }
    return st;
}
