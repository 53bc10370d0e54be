/* SPDX-License-Identifier: Apache-2.0 */
/* match.c - which dump record a samc output is: records by module and call
 * (image, amg, sam3) or by module, frame, object and order (video); the
 * chained runs' trace callback, which compares each traced call with its
 * record. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "harness_internal.h"

/* A record of (frame, object): its own, or a batched one whose state holds
 * the object (samc runs a state's objects one at a time: batch.c). */
int samc__parity_find_record_video(const parity_run *r, const char *module, int frame_idx, int obj_id, int nth)
{
    for (int i = 0; i < r->n_recs; i++) {
        const samc_dump_record *d = &r->recs[i];
        if (d->frame_idx == frame_idx && (d->obj_id == obj_id || samc__parity_batch_index(d, obj_id) >= 0) &&
            !strcmp(d->module, module) && nth-- == 0)
            return i;
    }
    return -1;
}

int samc__parity_find_record(const parity_run *r, const char *module, int call)
{
    for (int i = 0; i < r->n_recs; i++)
        if (r->recs[i].call == call && !strcmp(r->recs[i].module, module))
            return i;
    return -1;
}

int samc__parity_record_at(const parity_run *r, int index)
{
    for (int i = 0; i < r->n_recs; i++)
        if (r->recs[i].index == index)
            return i;
    return -1;
}

bool samc__parity_is_point(const parity_run *r, const char *module)
{
    const samc_layer *L = samc_exec_find(&r->x, module);
    return L && samc_layer_is_parity(L);
}

/* Per-key call counter: per module like the dump's `call` attribute (image),
 * or per (module, frame, object) (video). */
static int next_call(parity_run *r, const char *module)
{
    for (int i = 0; i < r->n_calls; i++)
        if (!strcmp(r->calls[i].module, module))
            return r->calls[i].count++;
    if (r->n_calls == r->cap_calls) {
        int cap = r->cap_calls ? 2 * r->cap_calls : 64;
        void *n = realloc(r->calls, (size_t)cap * sizeof *r->calls);
        if (!n) {
            r->st = SAMC_ERR_NOMEM;
            return 0;
        }
        r->calls = n, r->cap_calls = cap;
    }
    snprintf(r->calls[r->n_calls].module, sizeof r->calls[0].module, "%s", module);
    r->calls[r->n_calls++].count = 1;
    return 0;
}

int samc__parity_peek_call(const parity_run *r, const char *key)
{
    for (int i = 0; i < r->n_calls; i++)
        if (!strcmp(r->calls[i].module, key))
            return r->calls[i].count;
    return 0;
}

void samc__parity_on_trace(void *user, const char *module, const samc_scope *sc, int nslots, const char *const *slots,
                     const samc_tensor *const *t)
{
    parity_run *r = user;
    char key[160];
    const int fr = sc->frame_idx, ob = sc->obj_id;
    snprintf(key, sizeof key, r->scoped ? "%s|%d|%d" : "%s", module, fr, ob);
    const int call = next_call(r, key);
    const int rec = r->scoped ? samc__parity_find_record_video(r, module, fr, ob, call) : samc__parity_find_record(r, module, call);
    if (rec < 0) {
        samc_parity_row *row = samc__parity_add_row(r, INT_MAX - 1, module, call, "*");
        if (row) {
            row->state = SAMC_PARITY_NOT_IN_DUMP;
            snprintf(row->note, sizeof row->note, "samc produced this call; the dump has no record of it");
        }
        return;
    }
    r->seen[rec] = true;
    r->last_index = r->recs[rec].index;
    samc__parity_plant_fault(r, module, nslots, slots, t);
    r->batch = r->scoped ? samc__parity_batch_index(&r->recs[rec], ob) : -1, r->batch_n = r->recs[rec].n_objs;
    samc__parity_compare_record(r, rec, nslots, slots, t);
    r->batch = -1;
}
