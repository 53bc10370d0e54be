/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_records.c - the detector-tracker loop's parity records
 * (docs/parity_sam3_video.md): one part, mounted at the video family's
 * root, whose rows are the loop's function points; records are built slot
 * by slot (copies, so that the loop may go on changing its values) and
 * traced under the frame they work on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_video_internal.h"

#define SAM3_ROW_DEF(id, pat) [S3R_##id] = {.pattern = pat, .parity = true, .chained_only = true},
static const samc_layer_def rows[S3R_N] = {SAM3_ROWS(SAM3_ROW_DEF)};
#undef SAM3_ROW_DEF
const samc_part_def samc_sam3_loop_part = {"Sam3VideoBase", rows, S3R_N, NULL};

/* The next slot of the record (ignored when full: the loop's records have
 * at most 24 slots by construction). */
static samc_tensor *slot(s3_rec *r, const char *name)
{
    if (r->n >= (int)(sizeof r->t / sizeof r->t[0]))
        return NULL;
    snprintf(r->names[r->n], sizeof r->names[0], "%s", name);
    r->slots[r->n] = r->names[r->n];
    memset(&r->t[r->n], 0, sizeof r->t[0]);
    return &r->t[r->n++];
}

void samc__s3_rec_floats(s3_rec *r, const char *name, int ndim, const int64_t *shape, const float *v)
{
    samc_tensor *t = slot(r, name);
    if (!t)
        return;
    if (samc_tensor_alloc_uninit(t, ndim, shape, NULL)) {
        r->n--;
        return;
    }
    if (samc_numel(t))
        memcpy(t->data, v, (size_t)samc_numel(t) * sizeof(float));
}

void samc__s3_rec_ints(s3_rec *r, const char *name, const int *v, int n)
{
    samc_tensor *t = slot(r, name);
    if (!t)
        return;
    if (samc_tensor_alloc_uninit(t, 1, (const int64_t[]){n}, NULL)) {
        r->n--;
        return;
    }
    for (int i = 0; i < n; i++)
        t->data[i] = (float)v[i];
}

static int cmp_kv(const void *a, const void *b)
{
    const s3_kv *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

/* The map's entries, keys ascending. */
static s3_kv *sorted(const s3_map *m)
{
    s3_kv *e = malloc((size_t)(m->n + 1) * sizeof *e);
    if (e && m->n) {
        memcpy(e, m->e, (size_t)m->n * sizeof *e);
        qsort(e, (size_t)m->n, sizeof *e, cmp_kv);
    }
    return e;
}

void samc__s3_rec_pairs(s3_rec *r, const char *name, const s3_map *m)
{
    s3_kv *e = sorted(m);
    samc_tensor *t = e ? slot(r, name) : NULL;
    if (t && samc_tensor_alloc_uninit(t, 2, (const int64_t[]){m->n, 2}, NULL))
        r->n--, t = NULL;
    for (int i = 0; t && i < m->n; i++)
        t->data[2 * i] = (float)e[i].key, t->data[2 * i + 1] = (float)e[i].v;
    free(e);
}

void samc__s3_rec_keys(s3_rec *r, const char *name, const s3_map *m)
{
    s3_kv *e = sorted(m);
    samc_tensor *t = e ? slot(r, name) : NULL;
    if (t && samc_tensor_alloc_uninit(t, 1, (const int64_t[]){m->n}, NULL))
        r->n--, t = NULL;
    for (int i = 0; t && i < m->n; i++)
        t->data[i] = (float)e[i].key;
    free(e);
}

void samc__s3_rec_emit(samc_sam3_video *v, s3_rec *r, int row, int frame, int obj)
{
    if (row >= 0 && v->x->trace && r->n) {
        const samc_tensor *t[24];
        for (int i = 0; i < r->n; i++)
            t[i] = &r->t[i];
        const samc_scope sc = {frame, obj};
        samc_layer_emit(v->x, samc_part_layer(v->x, v->m, &rows[row], 0), &sc, r->n, r->slots, t);
    }
    for (int i = 0; i < r->n; i++)
        samc_tensor_release(&r->t[i]);
    r->n = 0;
}
