/* SPDX-License-Identifier: Apache-2.0 */
/* frame_dict.c - insertion-ordered frame map (small: linear search). */
#include "core/models/tracker/frame_dict.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

void samc_frame_out_release(samc_frame_out *o)
{
    samc_tensor_release(&o->maskmem);
    samc_tensor_release(&o->pred_masks);
    samc_tensor_release(&o->obj_ptr);
    o->has_mem = false;
}

samc_status samc_frame_out_copy(samc_frame_out *dst, const samc_frame_out *src, samc_error *err)
{
    memset(dst, 0, sizeof *dst);
    dst->frame_idx = src->frame_idx, dst->has_mem = src->has_mem, dst->object_score = src->object_score;
    dst->iou_score = src->iou_score, dst->has_eff = src->has_eff, dst->eff_iou_score = src->eff_iou_score;
    samc_status st = samc_tensor_copy(&dst->pred_masks, &src->pred_masks, err);
    if (!st)
        st = samc_tensor_copy(&dst->obj_ptr, &src->obj_ptr, err);
    if (!st && src->has_mem)
        st = samc_tensor_copy(&dst->maskmem, &src->maskmem, err);
    if (st)
        samc_frame_out_release(dst);
    return st;
}

samc_frame_out *samc_frame_dict_get(const samc_frame_dict *d, int frame_idx)
{
    for (int i = 0; i < d->n; i++)
        if (d->items[i].frame_idx == frame_idx)
            return &d->items[i];
    return NULL;
}

samc_status samc_frame_dict_put(samc_frame_dict *d, samc_frame_out *o, samc_error *err)
{
    samc_frame_out *old = samc_frame_dict_get(d, o->frame_idx);
    if (old) {
        samc_frame_out_release(old);
        *old = *o;
        memset(o, 0, sizeof *o);
        return SAMC_OK;
    }
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 8;
        samc_frame_out *n = realloc(d->items, (size_t)cap * sizeof *n);
        if (!n) {
            samc_frame_out_release(o);
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory (memory bank)");
        }
        d->items = n, d->cap = cap;
    }
    d->items[d->n++] = *o;
    memset(o, 0, sizeof *o);
    return SAMC_OK;
}

bool samc_frame_dict_pop(samc_frame_dict *d, int frame_idx, samc_frame_out *out)
{
    for (int i = 0; i < d->n; i++) {
        if (d->items[i].frame_idx != frame_idx)
            continue;
        if (out)
            *out = d->items[i];
        else
            samc_frame_out_release(&d->items[i]);
        memmove(d->items + i, d->items + i + 1, (size_t)(d->n - i - 1) * sizeof *d->items);
        d->n--;
        return true;
    }
    return false;
}

void samc_frame_dict_clear(samc_frame_dict *d)
{
    for (int i = 0; i < d->n; i++)
        samc_frame_out_release(&d->items[i]);
    d->n = 0;
}

void samc_frame_dict_free(samc_frame_dict *d)
{
    samc_frame_dict_clear(d);
    free(d->items);
    memset(d, 0, sizeof *d);
}
