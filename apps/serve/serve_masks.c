/* SPDX-License-Identifier: Apache-2.0 */
/* serve_masks.c - masks as the server answers them (serve.h): the records
 * of include/samc_amg.h (COCO RLE as pycocotools' string, area, XYWH box,
 * stability score) and, when asked, the mask as a base64 PNG. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>

#include "core/base/error.h"
#include "serve.h"

/* RFC 4648 base64 with padding. Written here (20 lines) rather than taken
 * from FFmpeg's libavutil, so that samc serve builds without FFmpeg too
 * (SAMC_WITH_FFMPEG=OFF). */
char *serve_base64(const uint8_t *data, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n > (size_t)INT_MAX / 2)
        return NULL;
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        const uint32_t v = (uint32_t)data[i] << 16 | (i + 1 < n ? (uint32_t)data[i + 1] << 8 : 0) |
                           (i + 2 < n ? data[i + 2] : 0);
        *o++ = abc[v >> 18 & 63];
        *o++ = abc[v >> 12 & 63];
        *o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? abc[v & 63] : '=';
    }
    *o = 0;
    return out;
}

static samc_status add_png(cJSON *obj, const uint8_t *bin, int h, int w, samc_error *err)
{
    const int64_t hw = (int64_t)h * w;
    uint8_t *gray = malloc((size_t)hw), *png = NULL;
    if (!gray)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < hw; i++)
        gray[i] = bin[i] ? 255 : 0;
    size_t n = 0;
    samc_status st = samc_encode_png(gray, h, w, 1, &png, &n, err);
    free(gray);
    char *b64 = st ? NULL : serve_base64(png, n);
    samc_free(png);
    if (!st && !b64)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        cJSON_AddStringToObject(obj, "png", b64);
    free(b64);
    return st;
}

samc_status serve_mask_encode(const float *logits, int h, int w, serve_mask_rec *out, samc_error *err)
{
    samc_status st = samc_mask_rle_encode_logits(logits, h, w, 0.0, &out->rle, err); /* mask_threshold 0 */
    out->stability = samc_stability_score(logits, h, w, 0.0, 1.0);
    out->has_stability = out->stability == out->stability; /* 0/0: no logit above -1 */
    return st;
}

static void rle_json(cJSON *obj, samc_mask_rle *r)
{
    cJSON_AddNumberToObject(obj, "area", (double)r->area);
    cJSON *b = cJSON_AddArrayToObject(obj, "bbox");
    for (int k = 0; k < 4; k++)
        cJSON_AddItemToArray(b, cJSON_CreateNumber(r->bbox[k]));
}

static void counts_json(cJSON *obj, samc_mask_rle *r)
{
    cJSON *rle = cJSON_AddObjectToObject(obj, "rle");
    cJSON *size = cJSON_AddArrayToObject(rle, "size");
    cJSON_AddItemToArray(size, cJSON_CreateNumber(r->height));
    cJSON_AddItemToArray(size, cJSON_CreateNumber(r->width));
    cJSON_AddStringToObject(rle, "counts", r->coco_counts);
    samc_mask_rle_free(r);
}

void serve_mask_rec_json(cJSON *obj, serve_mask_rec *r)
{
    rle_json(obj, &r->rle);
    if (r->has_stability)
        cJSON_AddNumberToObject(obj, "stability_score", r->stability);
    else
        cJSON_AddNullToObject(obj, "stability_score");
    counts_json(obj, &r->rle);
}

samc_status serve_mask_png(cJSON *obj, const float *logits, const uint8_t *mask, int h, int w, samc_error *err)
{
    const int64_t hw = (int64_t)h * w;
    uint8_t *bin = mask ? NULL : malloc((size_t)hw);
    if (!mask && !bin)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; bin && i < hw; i++)
        bin[i] = logits[i] > 0.0f;
    samc_status st = add_png(obj, mask ? mask : bin, h, w, err);
    free(bin);
    return st;
}

samc_status serve_mask_json(cJSON *obj, const float *logits, const uint8_t *mask, int h, int w, bool png,
                            samc_error *err)
{
    if (logits) {
        serve_mask_rec r;
        samc_status st = serve_mask_encode(logits, h, w, &r, err);
        if (st)
            return st;
        serve_mask_rec_json(obj, &r);
    } else {
        samc_mask_rle r;
        samc_status st = samc_mask_rle_encode(mask, h, w, &r, err);
        if (st)
            return st;
        rle_json(obj, &r);
        counts_json(obj, &r);
    }
    return png ? serve_mask_png(obj, logits, mask, h, w, err) : SAMC_OK;
}
