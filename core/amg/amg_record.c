/* SPDX-License-Identifier: Apache-2.0 */
/* amg_record.c - the generator's output record as JSON (see amg_record.h).
 * cJSON signals allocation failures only through NULL items and false
 * returns; every helper turns them into NULL so one check at the end
 * suffices. */
#include "core/amg/amg_record.h"

#include <stdlib.h>

#include "core/amg/amg_box.h"
#include "core/amg/amg_coco_rle.h"
#include "core/base/error.h"

/* Add item to array a (NULL a or item: free both, return NULL). */
static cJSON *push(cJSON *a, cJSON *item)
{
    if (a && item && cJSON_AddItemToArray(a, item))
        return a;
    cJSON_Delete(a);
    cJSON_Delete(item);
    return NULL;
}

/* Add item under key (returns false, freeing item, when anything is NULL). */
static bool put(cJSON *o, const char *key, cJSON *item)
{
    if (o && item && cJSON_AddItemToObject(o, key, item))
        return true;
    cJSON_Delete(item);
    return false;
}

/* float32 values through double: cJSON prints enough digits to round-trip. */
static cJSON *float_array(const float *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        a = push(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

static cJSON *counts_array(const samc_amg_rle *rle)
{
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; a && i < rle->n; i++)
        a = push(a, cJSON_CreateNumber((double)rle->counts[i]));
    return a;
}

static cJSON *segmentation(const samc_amg_rle *rle, cJSON *counts)
{
    const int hw[2] = {rle->h, rle->w};
    cJSON *s = cJSON_CreateObject();
    if (!put(s, "size", cJSON_CreateIntArray(hw, 2))) {
        cJSON_Delete(s);
        cJSON_Delete(counts);
        return NULL;
    }
    if (!put(s, "counts", counts)) { /* put freed counts */
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

static bool add_scalars(cJSON *o, const samc_amg_record *r)
{
    float bbox[4], crop[4];
    const int64_t crop_xyxy[4] = {r->crop.x0, r->crop.y0, r->crop.x1, r->crop.y1};
    samc_amg_box_xywh(r->box, bbox);
    samc_amg_box_xywh(crop_xyxy, crop);
    return put(o, "area", cJSON_CreateNumber((double)samc_amg_rle_area(&r->rle))) &&
           put(o, "bbox", float_array(bbox, 4)) &&
           put(o, "predicted_iou", cJSON_CreateNumber((double)r->predicted_iou)) &&
           put(o, "point_coords", push(cJSON_CreateArray(), float_array(r->point, 2))) &&
           put(o, "stability_score", cJSON_CreateNumber((double)r->stability_score)) &&
           put(o, "crop_box", float_array(crop, 4));
}

samc_status samc_amg_record_json(const samc_amg_record *r, bool coco_string, cJSON **out,
                                 samc_error *err)
{
    *out = NULL;
    samc_status st = samc_amg_rle_check(&r->rle, err);
    char *s = NULL;
    if (!st && coco_string)
        st = samc_amg_rle_to_coco_string(&r->rle, &s, err);
    if (st)
        return st;
    cJSON *o = cJSON_CreateObject();
    bool ok = put(o, "segmentation", segmentation(&r->rle, s ? cJSON_CreateString(s) : counts_array(&r->rle)));
    ok = ok && add_scalars(o, r);
    free(s);
    if (!ok) {
        cJSON_Delete(o);
        return samc_fail(err, SAMC_ERR_NOMEM, "amg record JSON: out of memory");
    }
    *out = o;
    return SAMC_OK;
}
