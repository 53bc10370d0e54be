/* SPDX-License-Identifier: Apache-2.0 */
/* amg_rle.c - column-major uncompressed RLE (see amg_rle.h). */
#include "core/amg/amg_rle.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The padded mask in column-major order (out[x * h + y], 0/1): the crop's
 * pixels copied in 32 x 32 tiles, so neither side is walked with a stride
 * (a column walk of a row-major 1024 x 768 mask misses the cache at every
 * pixel; this is several times faster). */
static void to_columns(const uint8_t *m, const samc_amg_crop *c, int h, int w, uint8_t *out)
{
    enum { T = 32 };
    memset(out, 0, (size_t)h * w);
    const int cw = c->x1 - c->x0;
    for (int y0 = c->y0; y0 < c->y1; y0 += T)
        for (int x0 = c->x0; x0 < c->x1; x0 += T) {
            const int y1 = y0 + T < c->y1 ? y0 + T : c->y1, x1 = x0 + T < c->x1 ? x0 + T : c->x1;
            for (int x = x0; x < x1; x++)
                for (int y = y0; y < y1; y++)
                    out[(int64_t)x * h + y] = m[(int64_t)(y - c->y0) * cw + (x - c->x0)] != 0;
        }
}

/* The same from logits (row-major h x w, in the mask where > threshold, as
 * samc_amg_logit_in_mask): thresholded while transposed, no mask in between. */
static void logits_to_columns(const float *lg, int h, int w, float thr, uint8_t *out)
{
    enum { T = 32 };
    for (int y0 = 0; y0 < h; y0 += T)
        for (int x0 = 0; x0 < w; x0 += T) {
            const int y1 = y0 + T < h ? y0 + T : h, x1 = x0 + T < w ? x0 + T : w;
            for (int x = x0; x < x1; x++)
                for (int y = y0; y < y1; y++)
                    out[(int64_t)x * h + y] = lg[(int64_t)y * w + x] > thr;
        }
}

/* The runs of `total` column-major 0/1 pixels, found with memchr (runs are
 * long: the C library's vector search skips them); with counts == NULL only
 * count them. Returns the number of counts. */
static int64_t encode_runs(const uint8_t *col, int64_t total, int64_t *counts)
{
    int64_t n = 0, i = 0;
    uint8_t cur = 0; /* runs start with a 0-run, 0 long if pixel (0, 0) is set */
    do {
        const uint8_t *next = memchr(col + i, cur ^ 1, (size_t)(total - i));
        const int64_t j = next ? next - col : total;
        if (counts)
            counts[n] = j - i;
        n++, i = j, cur ^= 1;
    } while (i < total);
    return n;
}

/* out->counts from the column-major pixels (two passes: count, then fill). */
static samc_status runs_of(const uint8_t *col, samc_amg_rle *out, samc_error *err)
{
    const int64_t total = (int64_t)out->h * out->w, n = encode_runs(col, total, NULL);
    out->counts = malloc((size_t)n * sizeof *out->counts);
    if (!out->counts)
        return samc_fail(err, SAMC_ERR_NOMEM, "RLE: %lld counts", (long long)n);
    out->n = encode_runs(col, total, out->counts);
    return SAMC_OK;
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
    uint8_t *col = malloc((size_t)orig_h * orig_w);
    if (!col)
        return samc_fail(err, SAMC_ERR_NOMEM, "RLE: a %dx%d mask", orig_w, orig_h);
    to_columns(crop_mask, crop, orig_h, orig_w, col);
    st = runs_of(col, out, err);
    free(col);
    return st;
}

samc_status samc_amg_mask_to_rle(const uint8_t *mask, int h, int w, samc_amg_rle *out,
                                 samc_error *err)
{
    const samc_amg_crop whole = {0, 0, w, h, 0};
    return samc_amg_mask_to_rle_uncrop(mask, &whole, h, w, out, err);
}

samc_status samc_amg_logits_to_rle(const float *logits, int h, int w, double mask_threshold, samc_amg_rle *out,
                                   samc_error *err)
{
    *out = (samc_amg_rle){h, w, 0, NULL};
    samc_status st = check_size(h, w, err);
    uint8_t *col = st ? NULL : malloc((size_t)h * w);
    if (!st && !col)
        st = samc_fail(err, SAMC_ERR_NOMEM, "RLE: a %dx%d mask", w, h);
    if (!st) {
        logits_to_columns(logits, h, w, (float)mask_threshold, col);
        st = runs_of(col, out, err);
    }
    free(col);
    return st;
}

void samc_amg_rle_box(const samc_amg_rle *rle, int64_t box[4])
{
    int64_t x0 = INT64_MAX, y0 = INT64_MAX, x1 = -1, y1 = -1, p = 0;
    const int64_t h = rle->h;
    for (int64_t i = 0; i < rle->n; p += rle->counts[i++]) {
        if (!(i & 1) || !rle->counts[i])
            continue;
        const int64_t q = p + rle->counts[i] - 1, xa = p / h, xb = q / h; /* the 1-run's first and last pixel */
        const int64_t ya = xa == xb ? p % h : 0, yb = xa == xb ? q % h : h - 1;
        x0 = xa < x0 ? xa : x0, x1 = xb > x1 ? xb : x1;
        y0 = ya < y0 ? ya : y0, y1 = yb > y1 ? yb : y1;
    }
    if (x1 < 0) /* the official empty_filter zeroes the box */
        x0 = y0 = x1 = y1 = 0;
    box[0] = x0, box[1] = y0, box[2] = x1, box[3] = y1;
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
