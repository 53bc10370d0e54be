/* SPDX-License-Identifier: Apache-2.0 */
/* amg_postprocess.c - SAM2AutomaticMaskGenerator.postprocess_small_regions
 * (automatic_mask_generator.py), the static clean-up SAM 1's generate() ran
 * for min_mask_region_area and SAM 2's leaves to the caller: per record
 * remove_small_regions "holes" then "islands"; score 1 for unchanged masks,
 * 0 for changed ones (float32); batched_nms on the new boxes; the kept
 * records in NMS order, the changed ones with their new RLE and box. */
#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_box.h"
#include "core/amg/amg_coco_rle.h"
#include "core/amg/amg_nms.h"
#include "core/amg/amg_regions.h"
#include "core/amg/amg_rle.h"
#include "core/api/api_internal.h"
#include "core/base/error.h"
#include "samc_amg.h"

/* Record m cleaned: its mask (h*w), whether it changed, its new box. */
static samc_status clean_one(const samc_amg_mask *m, double min_area, uint8_t *mask, bool *changed, int64_t box[4],
                             samc_error *err)
{
    samc_amg_rle rle = {m->height, m->width, m->n_counts, m->counts};
    bool ch_holes = false, ch_islands = false;
    samc_status st = samc_amg_rle_to_mask(&rle, mask, err);
    if (!st)
        st = samc_amg_remove_small_regions(mask, m->height, m->width, min_area, SAMC_AMG_REGIONS_HOLES, &ch_holes, err);
    if (!st)
        st = samc_amg_remove_small_regions(mask, m->height, m->width, min_area, SAMC_AMG_REGIONS_ISLANDS, &ch_islands,
                                           err);
    *changed = ch_holes || ch_islands;
    samc_amg_mask_box(mask, m->height, m->width, box);
    return st;
}

/* A changed record that NMS kept: mask_to_rle_pytorch of the new mask, the
 * new box, and what generate() derives from them. */
static samc_status update(samc_amg_mask *m, const uint8_t *mask, const int64_t box[4], samc_error *err)
{
    samc_amg_rle rle = {0};
    samc_status st = samc_amg_mask_to_rle(mask, m->height, m->width, &rle, err);
    if (st)
        return st;
    free(m->counts);
    m->counts = rle.counts, m->n_counts = rle.n;
    m->area = samc_amg_rle_area(&rle);
    samc_amg_box_xywh(box, m->bbox);
    if (m->binary)
        memcpy(m->binary, mask, (size_t)m->height * m->width);
    if (m->coco_counts) {
        free(m->coco_counts), m->coco_counts = NULL;
        st = samc_amg_rle_to_coco_string(&rle, &m->coco_counts, err);
    }
    return st;
}

samc_status samc_amg_postprocess_small_regions(samc_amg_result *r, double min_area, double nms_thresh, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(r, err);
    if (r->n < 0 || (r->n && !r->masks))
        return samc_fail(err, SAMC_ERR_ARG, "%s: the result holds %lld masks and no mask array", __func__,
                         (long long)r->n);
    if (!(min_area >= 0) || !(nms_thresh >= 0 && nms_thresh <= 1))
        return samc_fail(err, SAMC_ERR_ARG, "postprocess_small_regions: min_area %g must be >= 0 and nms_thresh %g in [0, 1]",
                         min_area, nms_thresh);
    if (r->n == 0)
        return SAMC_OK;
    const int64_t n = r->n, hw = (int64_t)r->masks[0].height * r->masks[0].width;
    uint8_t *masks = malloc((size_t)(n * hw));
    float *boxes = malloc((size_t)n * 4 * sizeof *boxes), *scores = malloc((size_t)n * sizeof *scores);
    int64_t *b64 = malloc((size_t)n * 4 * sizeof *b64), *keep = malloc((size_t)n * sizeof *keep), n_keep = 0;
    samc_amg_mask *kept = malloc((size_t)n * sizeof *kept);
    samc_status st = (!masks || !boxes || !scores || !b64 || !keep || !kept)
                         ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory (%lld masks)", (long long)n)
                         : SAMC_OK;
    for (int64_t i = 0; !st && i < n; i++) {
        if ((int64_t)r->masks[i].height * r->masks[i].width != hw)
            st = samc_fail(err, SAMC_ERR_SHAPE, "record %lld has another size than record 0", (long long)i);
        bool changed = false;
        if (!st)
            st = clean_one(&r->masks[i], min_area, masks + i * hw, &changed, b64 + 4 * i, err);
        scores[i] = changed ? 0.0f : 1.0f;
        samc_amg_box_float(b64 + 4 * i, boxes + 4 * i);
    }
    if (!st)
        st = samc_amg_batched_nms(boxes, scores, n, nms_thresh, keep, &n_keep, err);
    for (int64_t k = 0; !st && k < n_keep; k++)
        if (scores[keep[k]] == 0.0f)
            st = update(&r->masks[keep[k]], masks + keep[k] * hw, b64 + 4 * keep[k], err);
    if (!st) { /* mask_data.filter(keep_by_nms) */
        bool *is_kept = calloc((size_t)n, sizeof *is_kept);
        if (!is_kept)
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        for (int64_t k = 0; !st && k < n_keep; k++)
            kept[k] = r->masks[keep[k]], is_kept[keep[k]] = true;
        for (int64_t i = 0; !st && i < n; i++)
            if (!is_kept[i])
                free(r->masks[i].counts), free(r->masks[i].coco_counts), free(r->masks[i].binary);
        if (!st)
            memcpy(r->masks, kept, (size_t)n_keep * sizeof *kept), r->n = n_keep;
        free(is_kept);
    }
    free(masks), free(boxes), free(scores), free(b64), free(keep), free(kept);
    return st;
}
