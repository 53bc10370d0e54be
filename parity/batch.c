/* SPDX-License-Identifier: Apache-2.0 */
/* batch.c - records of a tracker state with several objects (SAM 3 video):
 * the official code runs the state's objects as one batch, samc one object
 * at a time, so one object's call is compared with its slice of the
 * batched record (docs/parity_sam3_video.md, "/trace"). */
#include <string.h>

#include "core/base/error.h"
#include "harness_internal.h"

int samc__parity_batch_index(const samc_dump_record *rec, int obj_id)
{
    if (rec->obj_id >= 0 || rec->n_objs < 2 || obj_id < 0)
        return -1;
    for (int i = 0; i < rec->n_objs; i++)
        if (rec->objs[i] == obj_id)
            return i;
    return -1;
}

/* Item b of `axis` (of size n) of t, into *out (a copy). */
static samc_status take(const samc_tensor *t, int axis, int b, samc_tensor *out, samc_error *err)
{
    int64_t shape[SAMC_MAX_DIMS], outer = 1, inner = 1;
    for (int d = 0; d < t->ndim; d++) {
        shape[d] = d == axis ? 1 : t->shape[d];
        outer *= d < axis ? t->shape[d] : 1;
        inner *= d > axis ? t->shape[d] : 1;
    }
    samc_status st = samc_tensor_alloc(out, t->ndim, shape, err);
    for (int64_t o = 0; !st && o < outer; o++)
        memcpy(out->data + o * inner, t->data + (o * t->shape[axis] + b) * inner, (size_t)inner * sizeof(float));
    return st;
}

samc_status samc__parity_slice_like(samc_tensor *ref, const samc_tensor *like, int b, int n, samc_error *err)
{
    if (b < 0 || ref->ndim != like->ndim || samc_tensor_same_shape(ref, like))
        return SAMC_OK;
    int axis = -1;
    for (int d = 0; d < ref->ndim; d++) {
        if (ref->shape[d] == like->shape[d])
            continue;
        if (axis >= 0 || ref->shape[d] != n || like->shape[d] != 1)
            return SAMC_OK; /* not one batch axis apart: compared as it is (a shape row) */
        axis = d;
    }
    samc_tensor s = {0};
    samc_status st = axis < 0 ? SAMC_OK : take(ref, axis, b, &s, err);
    if (!st && axis >= 0)
        samc_tensor_release(ref), *ref = s;
    return st;
}

samc_status samc__parity_slice_input(samc_tensor *t, const char *name, int b, int n, samc_error *err)
{
    /* sequence-first tensors of the memory attention: (HW, B, C) */
    static const char *const seq_first[] = {"current_vision_feats", "current_vision_pos_embeds", "src", "prompt"};
    int axis = 0;
    for (size_t i = 0; i < sizeof seq_first / sizeof *seq_first; i++)
        if (!strncmp(name, seq_first[i], strlen(seq_first[i])))
            axis = 1;
    if (b < 0 || t->ndim <= axis || t->shape[axis] != n)
        return SAMC_OK; /* not batched: an input the objects share */
    samc_tensor s = {0};
    samc_status st = take(t, axis, b, &s, err);
    if (!st)
        samc_tensor_release(t), *t = s;
    return st;
}
