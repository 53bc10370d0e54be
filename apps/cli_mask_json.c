/* SPDX-License-Identifier: Apache-2.0 */
/* cli_mask_json.c - the per-mask JSON records of segment and track, built
 * on the mask records of include/samc_amg.h (the automatic mask generator's
 * own RLE, box and stability code), so these numbers mean what they mean there. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/base/error.h"
#include "samc_amg.h"

static cJSON *size_json(int h, int w)
{
    cJSON *s = cJSON_CreateArray();
    cJSON_AddItemToArray(s, cJSON_CreateNumber(h));
    cJSON_AddItemToArray(s, cJSON_CreateNumber(w));
    return s;
}

cJSON *cli_mask_entry(cJSON *arr, int k)
{
    char file[32];
    snprintf(file, sizeof file, "mask_%d.png", k);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    cJSON_AddNumberToObject(o, "index", k);
    cJSON_AddStringToObject(o, "file", file);
    return o;
}

samc_status cli_parse_rle(const char *v, cli_rle_format *f, samc_error *err)
{
    if (!strcmp(v, "coco"))
        *f = CLI_RLE_COCO;
    else if (!strcmp(v, "uncompressed"))
        *f = CLI_RLE_UNCOMPRESSED;
    else
        return samc_fail(err, SAMC_ERR_ARG, "--rle '%s': expected coco (pycocotools' compressed string, the "
                         "default) or uncompressed (the counts)", v);
    return SAMC_OK;
}

samc_status cli_mask_json(cJSON *obj, const float *logits, int h, int w, cli_rle_format fmt, samc_error *err)
{
    samc_mask_rle r;
    samc_status st = samc_mask_rle_encode_logits(logits, h, w, 0.0, &r, err); /* mask_threshold 0 */
    if (st)
        return st;
    cJSON_AddNumberToObject(obj, "area", (double)r.area);
    cJSON *b = cJSON_AddArrayToObject(obj, "bbox");
    for (int k = 0; k < 4; k++)
        cJSON_AddItemToArray(b, cJSON_CreateNumber(r.bbox[k]));
    const float stab = samc_stability_score(logits, h, w, 0.0, 1.0);
    if (stab == stab)
        cJSON_AddNumberToObject(obj, "stability_score", stab);
    else
        cJSON_AddNullToObject(obj, "stability_score"); /* no logit above -1: 0/0 */
    if (fmt == CLI_RLE_UNCOMPRESSED) {
        cJSON *rl = cJSON_AddObjectToObject(obj, "rle");
        cJSON_AddItemToObject(rl, "size", size_json(h, w));
        cJSON *c = cJSON_AddArrayToObject(rl, "counts");
        for (int64_t i = 0; i < r.n_counts; i++)
            cJSON_AddItemToArray(c, cJSON_CreateNumber((double)r.counts[i]));
    } else {
        cJSON *cr = cJSON_AddObjectToObject(obj, "coco_rle");
        cJSON_AddItemToObject(cr, "size", size_json(h, w));
        cJSON_AddStringToObject(cr, "counts", r.coco_counts);
    }
    samc_mask_rle_free(&r);
    return SAMC_OK;
}

void cli_prompt_json(cJSON *obj, const float *xy, const int32_t *labels, int n, const float *box)
{
    cJSON *pts = cJSON_AddArrayToObject(obj, "points");
    for (int i = 0; i < n; i++) {
        cJSON *p = cJSON_CreateArray();
        cJSON_AddItemToArray(p, cJSON_CreateNumber(xy[2 * i]));
        cJSON_AddItemToArray(p, cJSON_CreateNumber(xy[2 * i + 1]));
        cJSON_AddItemToArray(p, cJSON_CreateNumber(labels[i]));
        cJSON_AddItemToArray(pts, p);
    }
    if (box) {
        cJSON *b = cJSON_AddArrayToObject(obj, "box");
        for (int k = 0; k < 4; k++)
            cJSON_AddItemToArray(b, cJSON_CreateNumber(box[k]));
    }
}
