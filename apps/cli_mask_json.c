/* cli_mask_json.c - the per-mask JSON records of segment and track, built
 * on the automatic mask generator's own RLE, box and stability code
 * (core/amg/), so these numbers mean what they mean there. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "core/amg/amg_box.h"
#include "core/amg/amg_coco_rle.h"
#include "core/amg/amg_rle.h"
#include "core/amg/amg_stability.h"
#include "core/base/error.h"

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

samc_status cli_mask_json(cJSON *obj, const float *logits, int h, int w, samc_error *err)
{
    const int64_t hw = (int64_t)h * w;
    uint8_t *bin = malloc((size_t)hw);
    if (!bin)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < hw; i++)
        bin[i] = logits[i] > 0.0f; /* mask_threshold 0 */
    samc_amg_rle rle = {0};
    char *coco = NULL;
    samc_status st = samc_amg_mask_to_rle(bin, h, w, &rle, err);
    if (!st)
        st = samc_amg_rle_to_coco_string(&rle, &coco, err);
    if (!st) {
        int64_t box[4];
        float xywh[4];
        samc_amg_mask_box(bin, h, w, box);
        samc_amg_box_xywh(box, xywh);
        cJSON_AddNumberToObject(obj, "area", (double)samc_amg_rle_area(&rle));
        cJSON *b = cJSON_AddArrayToObject(obj, "bbox");
        for (int k = 0; k < 4; k++)
            cJSON_AddItemToArray(b, cJSON_CreateNumber(xywh[k]));
        const float stab = samc_amg_stability_score(logits, h, w, 0.0, 1.0);
        if (stab == stab)
            cJSON_AddNumberToObject(obj, "stability_score", stab);
        else
            cJSON_AddNullToObject(obj, "stability_score"); /* no logit above -1: 0/0 */
        cJSON *r = cJSON_AddObjectToObject(obj, "rle");
        cJSON_AddItemToObject(r, "size", size_json(h, w));
        cJSON *c = cJSON_AddArrayToObject(r, "counts");
        for (int64_t i = 0; i < rle.n; i++)
            cJSON_AddItemToArray(c, cJSON_CreateNumber((double)rle.counts[i]));
        cJSON *cr = cJSON_AddObjectToObject(obj, "coco_rle");
        cJSON_AddItemToObject(cr, "size", size_json(h, w));
        cJSON_AddStringToObject(cr, "counts", coco);
    }
    free(coco);
    samc_amg_rle_free(&rle);
    free(bin);
    return st;
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
