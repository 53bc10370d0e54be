/* SPDX-License-Identifier: Apache-2.0 */
/* rows.c - the rows of a parity report: a compared tensor (metrics, mask
 * IoU, digest, bf16 flip notes) and the slots a record has that samc lacks. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "harness_internal.h"

samc_parity_row *samc__parity_add_row(parity_run *r, int index, const char *module, int call, const char *slot)
{
    samc_parity_report *rep = r->rep;
    if (rep->n_rows == rep->cap_rows) {
        int cap = rep->cap_rows ? 2 * rep->cap_rows : 128;
        samc_parity_row *n = realloc(rep->rows, (size_t)cap * sizeof *n);
        if (!n) {
            r->st = SAMC_ERR_NOMEM;
            return NULL;
        }
        rep->rows = n, rep->cap_rows = cap;
    }
    samc_parity_row *row = &rep->rows[rep->n_rows++];
    memset(row, 0, sizeof *row);
    row->mask_iou = row->kappa = NAN;
    row->index = index;
    snprintf(row->module, sizeof row->module, "%s", module);
    row->call = call;
    snprintf(row->slot, sizeof row->slot, "%s", slot);
    return row;
}

/* IoU of the masks (x > 0); 1 when both are empty. */
static double mask_iou(const float *a, const float *b, int64_t n)
{
    int64_t inter = 0, uni = 0;
    for (int64_t i = 0; i < n; i++)
        inter += a[i] > 0 && b[i] > 0, uni += a[i] > 0 || b[i] > 0;
    return uni ? (double)inter / (double)uni : 1.0;
}

int64_t samc_parity_bf16_flips(const float *out, const float *ref, int64_t n, int64_t *first, int64_t *other)
{
    int64_t flips = 0;
    *first = -1, *other = 0;
    for (int64_t i = 0; i < n; i++) {
        if (out[i] == ref[i])
            continue;
        const float a = fabsf(ref[i]);
        const float step = a > 0 ? ldexpf(1.0f, ilogbf(a) - 7) : 0; /* one bf16 step at this magnitude */
        if (fabsf(out[i] - ref[i]) <= step * 1.0001f) {
            if (!flips++)
                *first = i;
        } else {
            (*other)++;
        }
    }
    return flips;
}

/* Stored memory is bfloat16: values within float32 error of a bf16 rounding
 * midpoint can round the other way. Name such flips (one bf16 step apart). */
static void note_bf16_flips(samc_parity_row *row, const samc_tensor *t, const samc_tensor *ref)
{
    int64_t first, other;
    const int64_t flips = samc_parity_bf16_flips(t->data, ref->data, samc_numel(t), &first, &other);
    if (flips)
        snprintf(row->note, sizeof row->note,
                 "%lld bfloat16 rounding flip(s) (value within float32 error of a bf16 midpoint; first at %lld: samc %.9g, dump %.9g)%s",
                 (long long)flips, (long long)first, t->data[first], ref->data[first],
                 other ? "; other differences too" : "");
}

/* FNV-1a 64 over the tensor's bytes. */
static uint64_t digest(const samc_tensor *t)
{
    const unsigned char *p = (const unsigned char *)t->data;
    const int64_t n = samc_numel(t) * (int64_t)sizeof(float);
    uint64_t h = 14695981039346656037ull;
    for (int64_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

void samc__parity_compare(parity_run *r, int index, const char *module, int call, const char *slot,
                          const samc_tensor *t, const char *path)
{
    samc_parity_row *row = samc__parity_add_row(r, index, module, call, slot);
    if (!row)
        return;
    row->digest = digest(t);
    row->ndim = t->ndim;
    memcpy(row->shape, t->shape, sizeof row->shape);
    samc_tensor ref = {0};
    samc_error e = {0};
    if (samc_dump_read(r->dump, path, &ref, &e) || samc__parity_slice_like(&ref, t, r->batch, r->batch_n, &e)) {
        row->state = SAMC_PARITY_NOT_IN_DUMP;
        snprintf(row->note, sizeof row->note, "%s", e.msg);
        samc_tensor_release(&ref);
        return;
    }
    if (!samc_tensor_same_shape(t, &ref)) {
        char a[96], b[96];
        row->state = SAMC_PARITY_SHAPE;
        snprintf(row->note, sizeof row->note, "shape %s, dump has %s", samc_shape_str(t->ndim, t->shape, a, sizeof a),
                 samc_shape_str(ref.ndim, ref.shape, b, sizeof b));
    } else {
        samc_parity_metrics_ref(t->data, ref.data, samc_numel(t), &row->max_abs, &row->ref_max, &row->nmse);
        row->judged = true;
        row->scale = row->ref_max > 1e-12 ? row->ref_max : 1e-12; /* judge.c may widen it */
        row->rel = row->max_abs / row->scale;
        if (!strncmp(path, "/outputs/", 9) && strstr(slot, "low_res") == NULL &&
            (strstr(slot, "mask") || !strncmp(slot, "obj ", 4))) /* the user's masks: logit > 0 */
            row->mask_iou = mask_iou(t->data, ref.data, samc_numel(t));
        row->state = row->rel <= r->rep->tol ? SAMC_PARITY_PASS : SAMC_PARITY_FAIL;
        if (row->state == SAMC_PARITY_FAIL && strstr(slot, "maskmem_features"))
            note_bf16_flips(row, t, &ref);
    }
    samc_tensor_release(&ref);
}

static bool has_slot(const char *const *slots, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(slots[i], s))
            return true;
    return false;
}

void samc__parity_compare_record(parity_run *r, int rec, int nslots, const char *const *slots,
                                 const samc_tensor *const *t)
{
    const samc_dump_record *d = &r->recs[rec];
    char path[320];
    for (int i = 0; i < nslots; i++) { /* "in/<slot>" compares a recorded input (state) */
        if (!strncmp(slots[i], "in/", 3))
            snprintf(path, sizeof path, "/trace/%06d/%s", d->index, slots[i]);
        else
            snprintf(path, sizeof path, "/trace/%06d/out/%s", d->index, slots[i]);
        samc__parity_compare(r, d->index, d->module, d->call, slots[i], t[i], path);
    }
    char **names = NULL;
    int n = 0;
    snprintf(path, sizeof path, "/trace/%06d/out", d->index);
    if (samc_dump_list(r->dump, path, &names, &n, NULL) == SAMC_OK)
        for (int i = 0; i < n; i++)
            if (!has_slot(slots, nslots, names[i])) {
                samc_parity_row *row = samc__parity_add_row(r, d->index, d->module, d->call, names[i]);
                if (row) {
                    row->state = SAMC_PARITY_NOT_PRODUCED;
                    snprintf(row->note, sizeof row->note, "output slot in the dump that samc does not produce");
                }
            }
    samc_dump_free_names(names, n);
}

static bool fault_here(const samc_parity_opts *o, const char *module, const char *slot)
{
    return o && o->plant_fault_module && o->plant_fault_size > 0 &&
           (!strcmp(o->plant_fault_module, module) || !strcmp(o->plant_fault_module, "*")) &&
           (!o->plant_fault_slot || !strcmp(o->plant_fault_slot, slot)) && strncmp(slot, "in/", 3) != 0;
}

void samc__parity_plant_fault(const parity_run *r, const char *module, int nslots, const char *const *slots,
                              const samc_tensor *const *t)
{
    for (int i = 0; i < nslots; i++) {
        const int64_t n = samc_numel(t[i]);
        if (!fault_here(r->opts, module, slots[i]) || n == 0 || !t[i]->data)
            continue;
        float mx = 0;
        for (int64_t k = 0; k < n; k++)
            mx = fabsf(t[i]->data[k]) > mx ? fabsf(t[i]->data[k]) : mx;
        t[i]->data[0] += (float)(r->opts->plant_fault_size * mx); /* the layer's output, as a faulty body would */
    }
}
