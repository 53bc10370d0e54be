/* SPDX-License-Identifier: Apache-2.0 */
/* amg_regions.c - remove_small_regions with cv2's component order (see
 * amg_regions.h). */
#include "core/amg/amg_regions.h"

#include <limits.h>
#include <stdlib.h>

#include "core/nn/connected_components.h"
#include "core/base/error.h"

typedef struct regions {
    int32_t *labels, *counts; /* per pixel, from samc_connected_components */
    int32_t *size;            /* per label - 1: the component's area, 0 if no such label */
    uint8_t *keep;            /* per label - 1: pixels of this label end up in the mask */
} regions;

static void regions_free(regions *r)
{
    free(r->labels), free(r->counts), free(r->size), free(r->keep);
}

/* Label the working mask and record each label's size. */
static samc_status label(const uint8_t *work, int h, int w, regions *r, samc_error *err)
{
    const size_t n = (size_t)h * (size_t)w;
    r->labels = malloc(n * sizeof *r->labels);
    r->counts = malloc(n * sizeof *r->counts);
    r->size = calloc(n, sizeof *r->size);
    r->keep = calloc(n, 1);
    if (!r->labels || !r->counts || !r->size || !r->keep)
        return samc_fail(err, SAMC_ERR_NOMEM, "remove_small_regions: %dx%d mask", h, w);
    samc_status st = samc_connected_components(work, h, w, r->labels, r->counts);
    if (st)
        return samc_fail(err, st, "remove_small_regions: labelling a %dx%d mask failed", h, w);
    for (size_t p = 0; p < n; p++)
        if (r->labels[p])
            r->size[r->labels[p] - 1] = r->counts[p];
    return SAMC_OK;
}

/* Mark the labels to keep; returns whether any component was small. Labels
 * are visited in ascending order, which is cv2's order. */
static bool choose(regions *r, int64_t n, double area_thresh, samc_amg_regions_mode mode)
{
    bool any_small = false, any_large = false;
    int64_t first_max = -1;
    for (int64_t l = 0; l < n; l++) {
        if (!r->size[l])
            continue;
        const bool small = (double)r->size[l] < area_thresh;
        any_small |= small, any_large |= !small;
        /* holes: fill the small ones; islands: keep the large ones */
        r->keep[l] = mode == SAMC_AMG_REGIONS_HOLES ? small : !small;
        if (first_max < 0 || r->size[l] > r->size[first_max])
            first_max = l;
    }
    if (mode == SAMC_AMG_REGIONS_ISLANDS && any_small && !any_large)
        r->keep[first_max] = 1; /* every island is small: keep the largest */
    return any_small;
}

samc_status samc_amg_remove_small_regions(uint8_t *mask, int h, int w, double area_thresh,
                                          samc_amg_regions_mode mode, bool *changed,
                                          samc_error *err)
{
    *changed = false;
    if (h < 1 || w < 1 || (int64_t)h * w > INT32_MAX)
        return samc_fail(err, SAMC_ERR_ARG, "remove_small_regions: mask size %dx%d", h, w);
    if (mode != SAMC_AMG_REGIONS_HOLES && mode != SAMC_AMG_REGIONS_ISLANDS)
        return samc_fail(err, SAMC_ERR_ARG, "remove_small_regions: mode must be holes or islands");
    const int64_t n = (int64_t)h * w;
    uint8_t *work = malloc((size_t)n);
    regions r = {0};
    samc_status st = work ? SAMC_OK
                          : samc_fail(err, SAMC_ERR_NOMEM, "remove_small_regions: %dx%d", h, w);
    const bool holes = mode == SAMC_AMG_REGIONS_HOLES;
    for (int64_t p = 0; !st && p < n; p++)
        work[p] = holes ? !mask[p] : mask[p] != 0; /* correct_holes ^ mask */
    if (!st)
        st = label(work, h, w, &r, err);
    if (!st && choose(&r, n, area_thresh, mode)) {
        /* np.isin(regions, fill_labels); label 0 (the mask itself) is in
         * fill_labels only for holes */
        for (int64_t p = 0; p < n; p++)
            mask[p] = r.labels[p] ? r.keep[r.labels[p] - 1] : holes;
        *changed = true;
    }
    free(work);
    regions_free(&r);
    return st;
}
