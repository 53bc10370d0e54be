/* SPDX-License-Identifier: Apache-2.0 */
/* amg_inputs.c - see amg_inputs.h. */
#include "amg_inputs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

float amg_hval(uint64_t i, uint32_t seed)
{
    uint32_t u = (uint32_t)(i * 2654435761u + (uint64_t)seed * 2246822519u);
    u ^= u >> 13;
    u *= 3266489917u;
    u ^= u >> 16;
    return (float)(u >> 8) / 16777216.0f;
}

void amg_hash_mask(uint8_t *m, int h, int w, uint32_t seed, double density, int block,
                   double noise)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint64_t cell = (uint64_t)(y / block) * 65537u + (uint64_t)(x / block);
            const int base = amg_hval(cell, seed) < (float)density;
            const int flip = amg_hval((uint64_t)y * w + x, seed + 1) < (float)noise;
            m[(int64_t)y * w + x] = (uint8_t)(base ^ flip);
        }
}

void amg_hash_values(float *v, int64_t n, uint32_t seed, float scale, float quant)
{
    for (int64_t i = 0; i < n; i++) {
        float t = (amg_hval((uint64_t)i, seed) - 0.5f) * scale;
        if (quant > 0)
            t = rintf(t * quant) / quant;
        v[i] = t;
    }
}

void amg_hash_boxes(float *b, int64_t n, uint32_t seed, double extent, double max_size)
{
    for (int64_t k = 0; k < n; k++) {
        double v[4];
        for (int j = 0; j < 4; j++)
            v[j] = amg_hval((uint64_t)(4 * k + j), seed);
        const double x0 = floor(v[0] * extent), y0 = floor(v[1] * extent);
        b[4 * k] = (float)x0;
        b[4 * k + 1] = (float)y0;
        b[4 * k + 2] = (float)(x0 + floor(v[2] * max_size));
        b[4 * k + 3] = (float)(y0 + floor(v[3] * max_size));
    }
}

uint64_t amg_digest_i64(const int64_t *v, int64_t n)
{
    uint64_t acc = 0;
    for (int64_t i = 0; i < n; i++)
        acc += (uint64_t)v[i] * (uint64_t)(2 * i + 1);
    return acc;
}

uint64_t amg_digest_u8(const uint8_t *v, int64_t n)
{
    uint64_t acc = 0;
    for (int64_t i = 0; i < n; i++)
        acc += (uint64_t)v[i] * (uint64_t)(2 * i + 1);
    return acc;
}

uint64_t amg_json_digest(const cJSON *item, const char *key)
{
    const cJSON *d = amg_get(item, key);
    assert_true(cJSON_IsString(d));
    return strtoull(d->valuestring, NULL, 16);
}

cJSON *amg_load_cases(void)
{
    char *path = tu_src_path("tests/data/amg/amg_cases.json");
    uint8_t *data = NULL;
    size_t n = 0;
    if (tu_read_file(path, &data, &n) != 0)
        fail_msg("cannot read %s (made by tools/make_amg_testdata.py)", path);
    cJSON *root = cJSON_ParseWithLength((const char *)data, n);
    if (!root)
        fail_msg("%s: not valid JSON", path);
    free(data);
    free(path);
    return root;
}

const cJSON *amg_get(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        fail_msg("amg_cases.json: key '%s' missing", key);
    return v;
}

double amg_num(const cJSON *obj, const char *key)
{
    const cJSON *v = amg_get(obj, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

int amg_int(const cJSON *obj, const char *key)
{
    return (int)amg_num(obj, key);
}

int64_t *amg_i64_array(const cJSON *arr, int64_t *n)
{
    assert_true(cJSON_IsArray(arr));
    *n = cJSON_GetArraySize(arr);
    int64_t *v = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *v);
    assert_non_null(v);
    int64_t k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) v[k++] = (int64_t)e->valuedouble;
    return v;
}

double *amg_f64_array(const cJSON *arr, int64_t *n)
{
    assert_true(cJSON_IsArray(arr));
    *n = cJSON_GetArraySize(arr);
    double *v = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *v);
    assert_non_null(v);
    int64_t k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) v[k++] = e->valuedouble;
    return v;
}
