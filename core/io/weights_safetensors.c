/* SPDX-License-Identifier: Apache-2.0 */
/* weights_safetensors.c - safetensors files.
 *
 * Layout: u64 little-endian header length N, N bytes of JSON
 *   {"key": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
 *    "__metadata__": {...}}
 * then the data section; offsets are relative to its start (8 + N).
 * The file is mapped read-only; F32 tensors are views into the mapping (no
 * copy), F16/BF16 are converted to float32, C64 becomes (re, im) pairs.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/base/json_strict.h"
#include "core/io/weights.h"

#define ST_MAX_HEADER ((uint64_t)100 * 1024 * 1024)
#define ST_MAX_NUMEL ((int64_t)1 << 31)

typedef struct st_item {
    const cJSON *node;
    samc_elem_kind kind;
    int ndim;
    int64_t shape[SAMC_MAX_DIMS];
    uint64_t begin, end;
} st_item;

/* A JSON number that is an exact non-negative integer below 2^53. */
static int json_uint(const cJSON *n, uint64_t *v)
{
    if (!cJSON_IsNumber(n))
        return 0;
    double d = n->valuedouble;
    if (!(d >= 0) || d > 9007199254740992.0 || floor(d) != d)
        return 0;
    *v = (uint64_t)d;
    return 1;
}

static int cmp_item(const void *a, const void *b)
{
    const st_item *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static samc_status parse_item(const char *path, const cJSON *node, st_item *it, uint64_t data_size,
                              samc_error *err)
{
    const char *key = node->string;
    bool cplx = false;
    memset(it, 0, sizeof *it);
    it->node = node;
    if (!cJSON_IsObject(node))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: key '%s': header entry is not a JSON object", path, key);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(node, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(node, "shape");
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(node, "data_offsets");
    if (!cJSON_IsString(dt))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: key '%s': missing or non-string \"dtype\"", path, key);
    if (strcmp(dt->valuestring, "F32") == 0)
        it->kind = SAMC_ELEM_F32;
    else if (strcmp(dt->valuestring, "F16") == 0)
        it->kind = SAMC_ELEM_F16;
    else if (strcmp(dt->valuestring, "BF16") == 0)
        it->kind = SAMC_ELEM_BF16;
    else if (strcmp(dt->valuestring, "C64") == 0) /* complex64: (re, im) float32 pairs, a trailing dim of 2 */
        it->kind = SAMC_ELEM_F32, cplx = true;
    else
        return samc_fail(err, SAMC_ERR_DTYPE,
                         "%s: key '%s': dtype '%.32s' is not supported (only F32, F16, BF16 and C64)", path,
                         key, dt->valuestring);
    if (!cJSON_IsArray(sh))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: key '%s': missing or non-array \"shape\"", path, key);
    int nd = cJSON_GetArraySize(sh);
    if (nd + (cplx ? 1 : 0) > SAMC_MAX_DIMS)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: key '%s': rank %d exceeds %d", path, key, nd,
                         SAMC_MAX_DIMS);
    int64_t numel = 1;
    int i = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, sh)
    {
        uint64_t v;
        if (!json_uint(d, &v))
            return samc_fail(err, SAMC_ERR_FORMAT,
                             "%s: key '%s': shape entry %d is not a non-negative integer", path, key, i);
        if (v > (uint64_t)ST_MAX_NUMEL || (v && numel > ST_MAX_NUMEL / (int64_t)v))
            return samc_fail(err, SAMC_ERR_NOMEM,
                             "%s: key '%s': tensor has more than %lld elements (absurd size)", path, key,
                             (long long)ST_MAX_NUMEL);
        numel *= (int64_t)v;
        it->shape[i++] = (int64_t)v;
    }
    if (cplx) {
        if (numel > ST_MAX_NUMEL / 2)
            return samc_fail(err, SAMC_ERR_NOMEM, "%s: key '%s': tensor has more than %lld elements (absurd size)",
                             path, key, (long long)ST_MAX_NUMEL);
        it->shape[nd++] = 2, numel *= 2;
    }
    it->ndim = nd;
    if (!cJSON_IsArray(of) || cJSON_GetArraySize(of) != 2 ||
        !json_uint(cJSON_GetArrayItem(of, 0), &it->begin) ||
        !json_uint(cJSON_GetArrayItem(of, 1), &it->end))
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "%s: key '%s': \"data_offsets\" must be two non-negative integers", path, key);
    if (it->begin > it->end)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: key '%s': data_offsets begin %llu > end %llu", path,
                         key, (unsigned long long)it->begin, (unsigned long long)it->end);
    if (it->end > data_size)
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "%s: key '%s': data_offsets [%llu, %llu] lie outside the data section of %llu "
                         "bytes (file truncated?)",
                         path, key, (unsigned long long)it->begin, (unsigned long long)it->end,
                         (unsigned long long)data_size);
    uint64_t want = (uint64_t)numel * samc_elem_size(it->kind);
    if (it->end - it->begin != want)
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "%s: key '%s': data_offsets cover %llu bytes, but shape and dtype %s need %llu",
                         path, key, (unsigned long long)(it->end - it->begin), dt->valuestring,
                         (unsigned long long)want);
    return SAMC_OK;
}

/* __metadata__ is a map of strings to strings in the reference. */
static samc_status check_metadata(const char *path, const cJSON *meta, samc_error *err)
{
    if (!cJSON_IsObject(meta))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: __metadata__ is not a JSON object of strings", path);
    const cJSON *v;
    cJSON_ArrayForEach(v, meta)
    {
        if (!cJSON_IsString(v))
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: __metadata__ entry '%s' is not a string", path,
                             v->string ? v->string : "");
    }
    return SAMC_OK;
}

static samc_status load_st(const char *path, const samc_mapped_file *mf, samc_weights *w, samc_error *err)
{
    if (mf->size < 8)
        return samc_fail(err, SAMC_ERR_IO, "%s: file is too short (%zu bytes) for a safetensors header",
                         path, mf->size);
    uint64_t n = samc_load_u64le(mf->data);
    if (n > ST_MAX_HEADER)
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "%s: safetensors header length %llu exceeds the limit of %llu bytes", path,
                         (unsigned long long)n, (unsigned long long)ST_MAX_HEADER);
    if (n > mf->size - 8)
        return samc_fail(err, SAMC_ERR_IO,
                         "%s: safetensors header length %llu goes beyond the end of the file (%zu "
                         "bytes; truncated?)",
                         path, (unsigned long long)n, mf->size);
    const char *hdr = (const char *)mf->data + 8;
    /* As the reference implementation (serde_json): the header starts with
     * '{', is one JSON value followed only by whitespace padding, of
     * duplicate keys the last wins; samc also refuses escaped NULs (a key
     * "KEY\u0000junk" would read as "KEY") and more than
     * SAMC_JSON_MAX_NODES values. */
    if (n == 0 || hdr[0] != '{')
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: safetensors header is not a JSON object (it must start with '{')",
                         path);
    char what[600];
    snprintf(what, sizeof what, "%s: safetensors header", path);
    cJSON *root = NULL;
    samc_status st = samc__json_parse_strict(hdr, (size_t)n, what, &root, err);
    if (st)
        return st;
    st_item *items = NULL;
    if (!cJSON_IsObject(root)) {
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: safetensors header is not a JSON object", path);
        goto done;
    }
    uint64_t data_size = (uint64_t)mf->size - 8 - n;
    int count = cJSON_GetArraySize(root);
    items = calloc((size_t)(count > 0 ? count : 1), sizeof *items);
    if (!items) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    int ni = 0;
    const cJSON *node;
    cJSON_ArrayForEach(node, root)
    {
        if (!node->string) {
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: header entry without a key", path);
            goto done;
        }
        if (strcmp(node->string, "__metadata__") == 0) {
            if ((st = check_metadata(path, node, err)))
                goto done;
            continue;
        }
        if ((st = parse_item(path, node, &items[ni], data_size, err)))
            goto done;
        ni++;
    }
    /* layout check on a sorted copy (the store keeps the header order): the
     * reference requires the tensors to tile the data section exactly, from
     * 0 to its end, without gaps or overlaps */
    {
        st_item *sorted = malloc((size_t)(ni > 0 ? ni : 1) * sizeof *sorted);
        if (!sorted) {
            st = samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory", path);
            goto done;
        }
        memcpy(sorted, items, (size_t)ni * sizeof *sorted);
        qsort(sorted, (size_t)ni, sizeof *sorted, cmp_item);
        const st_item *prev = NULL; /* the tensor before, in offset order */
        uint64_t at = 0;
        for (int i = 0; i < ni && !st; i++) {
            const st_item *b = &sorted[i];
            if (prev && b->begin < at)
                st = samc_fail(err, SAMC_ERR_FORMAT,
                               "%s: tensors '%s' [%llu, %llu) and '%s' [%llu, %llu) overlap", path,
                               prev->node->string, (unsigned long long)prev->begin,
                               (unsigned long long)prev->end, b->node->string,
                               (unsigned long long)b->begin, (unsigned long long)b->end);
            else if (b->begin != at)
                st = samc_fail(err, SAMC_ERR_FORMAT,
                               "%s: %llu unused bytes before tensor '%s' at offset %llu (the reference implementation "
                               "refuses gaps in the data section)", path, (unsigned long long)(b->begin - at),
                               b->node->string, (unsigned long long)b->begin);
            prev = b, at = b->end;
        }
        if (!st && at != data_size)
            st = samc_fail(err, SAMC_ERR_FORMAT,
                           "%s: the tensors cover %llu bytes of a %llu-byte data section (the reference "
                           "implementation refuses trailing bytes)", path, (unsigned long long)at,
                           (unsigned long long)data_size);
        free(sorted);
        if (st)
            goto done;
    }
    const uint8_t *data = mf->data + 8 + n;
    /* F32 little-endian data of a mapped file is used where it lies */
    const bool in_place = mf->mapped && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    for (int i = 0; i < ni; i++) {
        const st_item *it = &items[i];
        size_t numel = (size_t)samc_shape_numel(it->ndim, it->shape);
        const uint8_t *src = data + it->begin;
        if (in_place && it->kind == SAMC_ELEM_F32 && ((uintptr_t)src % sizeof(float)) == 0) {
            if ((st = samc_weights_add_view(w, it->node->string, it->ndim, it->shape, (const float *)src, err)))
                goto done;
            continue;
        }
        float *dst = malloc((numel ? numel : 1) * sizeof(float));
        if (!dst) {
            st = samc_fail(err, SAMC_ERR_NOMEM, "%s: key '%s': out of memory for %zu floats", path,
                           it->node->string, numel);
            goto done;
        }
        samc_decode_elems(it->kind, data + it->begin, numel, dst);
        if ((st = samc_weights_add(w, it->node->string, it->ndim, it->shape, dst, err)))
            goto done;
    }
done:
    free(items);
    cJSON_Delete(root);
    return st;
}

samc_status samc_weights_open_safetensors(const char *path, samc_weights **out, samc_error *err)
{
    *out = NULL;
    if (!path)
        return samc_fail(err, SAMC_ERR_ARG, "samc_weights_open_safetensors: NULL path");
    samc_mapped_file mf;
    samc_status st = samc_file_map(path, &mf, err);
    if (st)
        return st;
    if (mf.size == 0) {
        samc_file_unmap(&mf);
        return samc_fail(err, SAMC_ERR_IO, "%s: file is empty", path);
    }
    samc_weights *w = samc_weights_new(path);
    if (!w) {
        samc_file_unmap(&mf);
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory", path);
    }
    samc_weights_set_format(w, SAMC_WEIGHTS_SAFETENSORS);
    st = load_st(path, &mf, w, err);
    samc_weights_adopt_map(w, &mf); /* views point into it; freed with the store */
    if (st) {
        samc_weights_free(w);
        return st;
    }
    *out = w;
    return SAMC_OK;
}
