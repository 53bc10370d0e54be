/* SPDX-License-Identifier: Apache-2.0 */
/* api_mask.c - one mask's records (include/samc_amg.h) on the automatic
 * mask generator's RLE, box and stability code (core/amg/), so the numbers
 * of segment, track and the server mean what they mean in the generator. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_box.h"
#include "core/amg/amg_coco_rle.h"
#include "core/amg/amg_rle.h"
#include "core/amg/amg_stability.h"
#include "core/api/api_internal.h"
#include "samc_amg.h"

/* The records of an RLE (taken: its counts move to out). */
static samc_status records(samc_amg_rle *rle, samc_mask_rle *out, samc_error *err)
{
    samc_status st = samc_amg_rle_to_coco_string(rle, &out->coco_counts, err);
    if (st) {
        samc_amg_rle_free(rle);
        samc_mask_rle_free(out);
        return st;
    }
    int64_t box[4];
    samc_amg_rle_box(rle, box);
    samc_amg_box_xywh(box, out->bbox);
    out->height = rle->h, out->width = rle->w;
    out->area = samc_amg_rle_area(rle);
    out->n_counts = rle->n, out->counts = rle->counts; /* handed over */
    return SAMC_OK;
}

samc_status samc_mask_rle_encode(const uint8_t *mask, int height, int width, samc_mask_rle *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    SAMC_API_NEED(mask, err);
    if (height < 1 || width < 1)
        return samc_fail(err, SAMC_ERR_ARG, "samc_mask_rle_encode: empty mask (%d x %d)", width, height);
    samc_amg_rle rle = {0};
    samc_status st = samc_amg_mask_to_rle(mask, height, width, &rle, err);
    return st ? st : records(&rle, out, err);
}

samc_status samc_mask_rle_encode_logits(const float *logits, int height, int width, double mask_threshold,
                                        samc_mask_rle *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    memset(out, 0, sizeof *out);
    SAMC_API_NEED(logits, err);
    if (height < 1 || width < 1)
        return samc_fail(err, SAMC_ERR_ARG, "samc_mask_rle_encode_logits: empty mask (%d x %d)", width, height);
    samc_amg_rle rle = {0};
    samc_status st = samc_amg_logits_to_rle(logits, height, width, mask_threshold, &rle, err);
    return st ? st : records(&rle, out, err);
}

void samc_mask_rle_free(samc_mask_rle *r)
{
    if (!r)
        return;
    free(r->counts);
    free(r->coco_counts);
    memset(r, 0, sizeof *r);
}

float samc_stability_score(const float *logits, int height, int width, double mask_threshold, double offset)
{
    if (!logits || height < 1 || width < 1)
        return NAN;
    return samc_amg_stability_score(logits, height, width, mask_threshold, offset);
}
