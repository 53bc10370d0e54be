/* SPDX-License-Identifier: Apache-2.0 */
/* amg_coco_rle.c - pycocotools' compressed RLE strings (see amg_coco_rle.h). */
#include "core/amg/amg_coco_rle.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

enum { MAX_GROUPS = 12 }; /* 60 bits: far beyond any count of a valid mask */

/* Append one value; returns the characters written. floor(x / 32) is
 * written out so the sign handling does not rest on >> of negatives. */
static int put_value(int64_t x, char *s)
{
    int p = 0, more = 1;
    while (more) {
        int c = (int)((uint64_t)x & 0x1f);
        x = (x - c) / 32;
        more = (c & 0x10) ? x != -1 : x != 0;
        if (more)
            c |= 0x20;
        s[p++] = (char)(c + 48);
    }
    return p;
}

samc_status samc_amg_rle_to_coco_string(const samc_amg_rle *rle, char **out, samc_error *err)
{
    *out = NULL;
    samc_status st = samc_amg_rle_check(rle, err);
    if (st)
        return st;
    /* A count <= INT32_MAX and a difference of two take at most 7 groups. */
    char *s = malloc((size_t)rle->n * 7 + 1);
    if (!s)
        return samc_fail(err, SAMC_ERR_NOMEM, "COCO RLE: %lld counts", (long long)rle->n);
    int64_t p = 0;
    for (int64_t i = 0; i < rle->n; i++) {
        /* pycocotools holds counts as uint32, the difference as long. */
        int64_t x = (int64_t)(uint32_t)rle->counts[i];
        if (i > 2)
            x -= (int64_t)(uint32_t)rle->counts[i - 2];
        p += put_value(x, s + p);
    }
    s[p] = '\0';
    *out = s;
    return SAMC_OK;
}

/* One value starting at s[*p]; advances *p. */
static samc_status get_value(const char *s, int64_t *p, int64_t *value, samc_error *err)
{
    int64_t x = 0;
    for (int k = 0;; k++) {
        const int ch = (unsigned char)s[*p];
        if (ch == '\0')
            return samc_fail(err, SAMC_ERR_FORMAT,
                             "COCO RLE string: value at offset %lld is cut off by the end",
                             (long long)*p);
        if (ch < 48 || ch > 111)
            return samc_fail(err, SAMC_ERR_FORMAT,
                             "COCO RLE string: character 0x%02x at offset %lld is not in '0'..'o'",
                             ch, (long long)*p);
        if (k == MAX_GROUPS)
            return samc_fail(err, SAMC_ERR_FORMAT,
                             "COCO RLE string: value at offset %lld has more than %d groups",
                             (long long)*p, MAX_GROUPS);
        const int c = ch - 48;
        x |= (int64_t)(c & 0x1f) << (5 * k);
        (*p)++;
        if (!(c & 0x20)) {
            if (c & 0x10) /* sign-extend from the last group's bit 4 */
                x -= (int64_t)1 << (5 * (k + 1));
            *value = x;
            return SAMC_OK;
        }
    }
}

samc_status samc_amg_rle_from_coco_string(const char *s, int h, int w, samc_amg_rle *out,
                                          samc_error *err)
{
    *out = (samc_amg_rle){h, w, 0, NULL};
    const int64_t len = (int64_t)strlen(s);
    out->counts = malloc(((size_t)len + 1) * sizeof *out->counts);
    if (!out->counts)
        return samc_fail(err, SAMC_ERR_NOMEM, "COCO RLE string: %lld characters", (long long)len);
    samc_status st = SAMC_OK;
    for (int64_t p = 0; !st && p < len; out->n++) {
        int64_t x = 0;
        st = get_value(s, &p, &x, err);
        if (!st && out->n > 2)
            x += out->counts[out->n - 2];
        if (!st && (x < 0 || x > UINT32_MAX))
            st = samc_fail(err, SAMC_ERR_FORMAT, "COCO RLE string: count %lld decodes to %lld",
                           (long long)out->n, (long long)x);
        if (!st)
            out->counts[out->n] = x;
    }
    if (!st)
        st = samc_amg_rle_check(out, err);
    if (st)
        samc_amg_rle_free(out);
    return st;
}
