/* SPDX-License-Identifier: Apache-2.0 */
/* amg_nms.c - torchvision 0.14's CPU NMS and batched_nms (see amg_nms.h). */
#include "core/amg/amg_nms.h"

#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_sort.h"
#include "core/base/error.h"

static float box_area(const float b[4])
{
    return (b[2] - b[0]) * (b[3] - b[1]);
}

/* The kernel's overlap with the areas it precomputed: each step one float32
 * rounding, in its order. */
static float overlap(const float a[4], float area_a, const float b[4], float area_b)
{
    const float xx1 = a[0] > b[0] ? a[0] : b[0], yy1 = a[1] > b[1] ? a[1] : b[1];
    const float xx2 = a[2] < b[2] ? a[2] : b[2], yy2 = a[3] < b[3] ? a[3] : b[3];
    const float w = xx2 - xx1 > 0.0f ? xx2 - xx1 : 0.0f; /* std::max(0, xx2 - xx1) */
    const float h = yy2 - yy1 > 0.0f ? yy2 - yy1 : 0.0f;
    const float inter = w * h;
    return inter / (area_a + area_b - inter);
}

float samc_amg_box_iou(const float a[4], const float b[4])
{
    return overlap(a, box_area(a), b, box_area(b));
}

/* The kernel's loop over boxes visited in `order`. */
static int64_t suppress(const float *boxes, const float *areas, const int64_t *order, int64_t n,
                        double iou_threshold, uint8_t *suppressed, int64_t *keep)
{
    int64_t n_keep = 0;
    for (int64_t a = 0; a < n; a++) {
        const int64_t i = order[a];
        if (suppressed[i])
            continue;
        keep[n_keep++] = i;
        for (int64_t b = a + 1; b < n; b++) {
            const int64_t j = order[b];
            if (suppressed[j])
                continue;
            const float ovr = overlap(boxes + 4 * i, areas[i], boxes + 4 * j, areas[j]);
            if ((double)ovr > iou_threshold)
                suppressed[j] = 1;
        }
    }
    return n_keep;
}

samc_status samc_amg_nms(const float *boxes, const float *scores, int64_t n, double iou_threshold,
                         int64_t *keep, int64_t *n_keep, samc_error *err)
{
    *n_keep = 0;
    if (n < 0)
        return samc_fail(err, SAMC_ERR_ARG, "nms: negative box count %lld", (long long)n);
    if (n == 0)
        return SAMC_OK;
    int64_t *order = malloc((size_t)n * sizeof *order);
    float *areas = malloc((size_t)n * sizeof *areas);
    uint8_t *suppressed = calloc((size_t)n, 1);
    samc_status st = SAMC_OK;
    if (!order || !areas || !suppressed)
        st = samc_fail(err, SAMC_ERR_NOMEM, "nms: %lld boxes", (long long)n);
    if (!st)
        st = samc_amg_argsort_desc_stable(scores, n, order, err);
    if (!st) {
        for (int64_t i = 0; i < n; i++)
            areas[i] = box_area(boxes + 4 * i);
        *n_keep = suppress(boxes, areas, order, n, iou_threshold, suppressed, keep);
    }
    free(order), free(areas), free(suppressed);
    return st;
}

static int cmp_index(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* _batched_nms_vanilla for one category: torch.where(keep_mask) lists the
 * kept indices in ascending order, which are then sorted by score again with
 * the unstable sort. */
static samc_status vanilla_reorder(const float *scores, int64_t *keep, int64_t n_keep,
                                   samc_error *err)
{
    if (n_keep == 0)
        return SAMC_OK;
    int64_t *asc = malloc((size_t)n_keep * sizeof *asc);
    float *s = malloc((size_t)n_keep * sizeof *s);
    int64_t *order = malloc((size_t)n_keep * sizeof *order);
    samc_status st = SAMC_OK;
    if (!asc || !s || !order)
        st = samc_fail(err, SAMC_ERR_NOMEM, "batched_nms: %lld kept boxes", (long long)n_keep);
    if (!st) {
        memcpy(asc, keep, (size_t)n_keep * sizeof *asc);
        qsort(asc, (size_t)n_keep, sizeof *asc, cmp_index);
        for (int64_t k = 0; k < n_keep; k++)
            s[k] = scores[asc[k]];
        st = samc_amg_argsort_desc(s, n_keep, order, err);
    }
    for (int64_t k = 0; !st && k < n_keep; k++)
        keep[k] = asc[order[k]];
    free(asc), free(s), free(order);
    return st;
}

samc_status samc_amg_batched_nms(const float *boxes, const float *scores, int64_t n,
                                 double iou_threshold, int64_t *keep, int64_t *n_keep,
                                 samc_error *err)
{
    /* The coordinate trick adds category * (max + 1) = 0 to every box: plain nms. */
    samc_status st = samc_amg_nms(boxes, scores, n, iou_threshold, keep, n_keep, err);
    if (st || 4 * n <= 4000)
        return st;
    return vanilla_reorder(scores, keep, *n_keep, err);
}
