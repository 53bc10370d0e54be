/* amg_rle.c - column-major uncompressed RLE (see amg_rle.h). */
#include "core/amg/amg_rle.h"

#include <limits.h>
#include <stdlib.h>

#include "core/base/error.h"

void samc_amg_rle_free(samc_amg_rle *rle)
{
    if (!rle)
        return;
    free(rle->counts);
    rle->counts = NULL;
    rle->n = 0;
}

static samc_status check_size(int h, int w, samc_error *err)
{
    if (h < 1 || w < 1 || (int64_t)h * w > INT32_MAX)
        return samc_fail(err, SAMC_ERR_ARG, "RLE: mask size %dx%d; expected 1x1 to %d pixels", h,
                         w, INT32_MAX);
    return SAMC_OK;
}

/* The padded mask's pixel (y, x): the crop's pixel inside the crop, else 0. */
static uint8_t padded_pixel(const uint8_t *m, const samc_amg_crop *c, int y, int x)
{
    if (x < c->x0 || x >= c->x1 || y < c->y0 || y >= c->y1)
        return 0;
    return m[(int64_t)(y - c->y0) * (c->x1 - c->x0) + (x - c->x0)] != 0;
}

/* Walk the padded mask in column-major order; with counts == NULL only count
 * the runs. Returns the number of counts. */
static int64_t encode_runs(const uint8_t *m, const samc_amg_crop *c, int h, int w,
                           int64_t *counts)
{
    int64_t n = 0, run = 0;
    uint8_t cur = 0; /* runs start with a 0-run, 0 long if pixel (0, 0) is set */
    for (int x = 0; x < w; x++)
        for (int y = 0; y < h; y++) {
            const uint8_t v = padded_pixel(m, c, y, x);
            if (v != cur) {
                if (counts)
                    counts[n] = run;
                n++, run = 0, cur = v;
            }
            run++;
        }
    if (counts)
        counts[n] = run;
    return n + 1;
}

samc_status samc_amg_mask_to_rle_uncrop(const uint8_t *crop_mask, const samc_amg_crop *crop,
                                        int orig_h, int orig_w, samc_amg_rle *out,
                                        samc_error *err)
{
    *out = (samc_amg_rle){orig_h, orig_w, 0, NULL};
    samc_status st = check_size(orig_h, orig_w, err);
    if (st)
        return st;
    if (crop->x0 < 0 || crop->y0 < 0 || crop->x1 > orig_w || crop->y1 > orig_h ||
        crop->x1 <= crop->x0 || crop->y1 <= crop->y0)
        return samc_fail(err, SAMC_ERR_ARG, "RLE: crop box (%d, %d, %d, %d) is not inside %dx%d",
                         crop->x0, crop->y0, crop->x1, crop->y1, orig_h, orig_w);
    const int64_t n = encode_runs(crop_mask, crop, orig_h, orig_w, NULL);
    out->counts = malloc((size_t)n * sizeof *out->counts);
    if (!out->counts)
        return samc_fail(err, SAMC_ERR_NOMEM, "RLE: %lld counts", (long long)n);
    out->n = encode_runs(crop_mask, crop, orig_h, orig_w, out->counts);
    return SAMC_OK;
}

samc_status samc_amg_mask_to_rle(const uint8_t *mask, int h, int w, samc_amg_rle *out,
                                 samc_error *err)
{
    const samc_amg_crop whole = {0, 0, w, h, 0};
    return samc_amg_mask_to_rle_uncrop(mask, &whole, h, w, out, err);
}

samc_status samc_amg_rle_check(const samc_amg_rle *rle, samc_error *err)
{
    samc_status st = check_size(rle->h, rle->w, err);
    if (st)
        return st;
    const int64_t total = (int64_t)rle->h * rle->w;
    int64_t sum = 0;
    for (int64_t i = 0; i < rle->n; i++) {
        if (rle->counts[i] < 0 || rle->counts[i] > total - sum)
            return samc_fail(err, SAMC_ERR_FORMAT,
                             "RLE: count %lld (%lld) is negative or runs past the %dx%d mask",
                             (long long)i, (long long)rle->counts[i], rle->h, rle->w);
        sum += rle->counts[i];
    }
    if (sum != total)
        return samc_fail(err, SAMC_ERR_FORMAT, "RLE: counts sum to %lld; a %dx%d mask needs %lld",
                         (long long)sum, rle->h, rle->w, (long long)total);
    return SAMC_OK;
}

samc_status samc_amg_rle_to_mask(const samc_amg_rle *rle, uint8_t *mask, samc_error *err)
{
    samc_status st = samc_amg_rle_check(rle, err);
    if (st)
        return st;
    int64_t p = 0; /* column-major position */
    for (int64_t i = 0; i < rle->n; i++)
        for (int64_t k = 0; k < rle->counts[i]; k++, p++)
            mask[(p % rle->h) * rle->w + p / rle->h] = (uint8_t)(i & 1);
    return SAMC_OK;
}

int64_t samc_amg_rle_area(const samc_amg_rle *rle)
{
    int64_t area = 0;
    for (int64_t i = 1; i < rle->n; i += 2)
        area += rle->counts[i];
    return area;
}
