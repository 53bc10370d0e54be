/* SPDX-License-Identifier: Apache-2.0 */
/* weights.c - the weight store, format detection and the open dispatch.
 *
 * The store is an insertion-ordered array of (key, tensor) plus an
 * open-addressing hash index (FNV-1a, linear probing) for O(1) lookups.
 */
#include "core/io/weights.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/fileio.h"

typedef struct samc_weight_entry {
    char *key;
    samc_tensor t;
} samc_weight_entry;

struct samc_weights {
    char *source;
    samc_weights_format format;
    samc_weight_entry *entries;
    size_t count, cap;
    uint32_t *index; /* slot -> entry index + 1 (0 = empty) */
    size_t index_cap; /* power of two, or 0 */
    samc_mapped_file map; /* the file views point into (samc_weights_add_view), unmapped at free */
    samc_key_naming_fn naming; /* official name -> the file's (samc_weights_set_naming), or NULL */
    const char *naming_name;
};

static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

samc_weights *samc_weights_new(const char *source)
{
    samc_weights *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->source = dup_str(source ? source : "");
    if (!w->source) {
        free(w);
        return NULL;
    }
    return w;
}

void samc_weights_free(samc_weights *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->count; i++) {
        free(w->entries[i].key);
        samc_tensor_release(&w->entries[i].t);
    }
    free(w->entries);
    free(w->index);
    free(w->source);
    samc_file_unmap(&w->map);
    free(w);
}

void samc_weights_adopt_map(samc_weights *w, samc_mapped_file *mf)
{
    samc_file_unmap(&w->map);
    w->map = *mf;
    memset(mf, 0, sizeof *mf);
}

/* Slot of `key` in the index, or the empty slot where it would go. */
static size_t index_slot(const samc_weights *w, const char *key)
{
    size_t mask = w->index_cap - 1;
    size_t s = (size_t)hash_key(key) & mask;
    while (w->index[s] && strcmp(w->entries[w->index[s] - 1].key, key) != 0)
        s = (s + 1) & mask;
    return s;
}

static int index_grow(samc_weights *w)
{
    size_t ncap = w->index_cap ? w->index_cap * 2 : 64;
    uint32_t *ni = calloc(ncap, sizeof *ni);
    if (!ni)
        return -1;
    free(w->index);
    w->index = ni;
    w->index_cap = ncap;
    for (size_t i = 0; i < w->count; i++)
        w->index[index_slot(w, w->entries[i].key)] = (uint32_t)(i + 1);
    return 0;
}

/* Add `data` (owned: freed on failure and at free; else a view into the
 * adopted mapping). */
static samc_status add_entry(samc_weights *w, const char *key, int ndim, const int64_t *shape, float *data,
                             bool owns, samc_error *err)
{
    const char *src = w && w->source ? w->source : "";
    if (!w || !key) {
        if (owns)
            free(data);
        return samc_fail(err, SAMC_ERR_ARG, "samc_weights_add: NULL store or key");
    }
    if (ndim < 0 || ndim > SAMC_MAX_DIMS) {
        if (owns)
            free(data);
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: key '%s': rank %d is outside 0..%d", src, key,
                         ndim, SAMC_MAX_DIMS);
    }
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            if (owns)
            free(data);
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: key '%s': negative dimension %lld", src, key,
                             (long long)shape[i]);
        }
    }
    if (!data) {
        return samc_fail(err, SAMC_ERR_ARG, "%s: key '%s': NULL data", src, key);
    }
    if (w->count >= SAMC_WEIGHTS_MAX_TENSORS) {
        if (owns)
            free(data);
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: more than %d tensors (samc's limit)", src,
                         SAMC_WEIGHTS_MAX_TENSORS);
    }
    /* keep the load factor below 1/2 */
    if ((w->count + 1) * 2 > w->index_cap && index_grow(w) != 0) {
        if (owns)
            free(data);
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory growing the key index", src);
    }
    size_t slot = index_slot(w, key);
    if (w->index[slot]) {
        if (owns)
            free(data);
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: duplicate key '%s'", src, key);
    }
    if (w->count == w->cap) {
        size_t ncap = w->cap ? w->cap * 2 : 64;
        samc_weight_entry *ne = realloc(w->entries, ncap * sizeof *ne);
        if (!ne) {
            if (owns)
            free(data);
            return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory adding key '%s'", src, key);
        }
        w->entries = ne;
        w->cap = ncap;
    }
    char *k = dup_str(key);
    if (!k) {
        if (owns)
            free(data);
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory adding key '%s'", src, key);
    }
    samc_weight_entry *e = &w->entries[w->count];
    memset(e, 0, sizeof *e);
    e->key = k;
    e->t.ndim = ndim;
    for (int i = 0; i < ndim; i++)
        e->t.shape[i] = shape[i];
    e->t.data = data;
    e->t.owns = owns;
    w->count++;
    w->index[slot] = (uint32_t)w->count;
    return SAMC_OK;
}

samc_status samc_weights_add(samc_weights *w, const char *key, int ndim, const int64_t *shape,
                             float *data, samc_error *err)
{
    return add_entry(w, key, ndim, shape, data, true, err);
}

samc_status samc_weights_add_view(samc_weights *w, const char *key, int ndim, const int64_t *shape,
                                  const float *data, samc_error *err)
{
    return add_entry(w, key, ndim, shape, (float *)data, false, err); /* never written: the store is read-only */
}

size_t samc_weights_count(const samc_weights *w) { return w ? w->count : 0; }

const char *samc_weights_key(const samc_weights *w, size_t i)
{
    return w && i < w->count ? w->entries[i].key : NULL;
}

const samc_tensor *samc_weights_at(const samc_weights *w, size_t i)
{
    return w && i < w->count ? &w->entries[i].t : NULL;
}

const samc_tensor *samc_weights_find_file(const samc_weights *w, const char *file_key)
{
    if (!w || !file_key || !w->index_cap)
        return NULL;
    size_t s = index_slot(w, file_key);
    return w->index[s] ? &w->entries[w->index[s] - 1].t : NULL;
}

const samc_tensor *samc_weights_find(const samc_weights *w, const char *key)
{
    char buf[256];
    return samc_weights_find_file(w, w && key ? samc_weights_file_key(w, key, buf, sizeof buf) : key);
}

void samc_weights_set_naming(samc_weights *w, samc_key_naming_fn fn, const char *name)
{
    if (w)
        w->naming = fn, w->naming_name = fn ? name : NULL;
}

const char *samc_weights_naming(const samc_weights *w) { return w ? w->naming_name : NULL; }

const char *samc_weights_file_key(const samc_weights *w, const char *official, char *buf, size_t n)
{
    if (!w || !w->naming)
        return official;
    w->naming(official, buf, n);
    return buf;
}

samc_status samc_weights_remove(samc_weights *w, const char *key, samc_error *err)
{
    size_t i = 0;
    while (w && key && i < w->count && strcmp(w->entries[i].key, key))
        i++;
    if (!w || !key || i == w->count)
        return samc_fail(err, SAMC_ERR_KEY, "%s: no key '%s' to remove", samc_weights_source(w), key ? key : "");
    free(w->entries[i].key);
    samc_tensor_release(&w->entries[i].t);
    memmove(&w->entries[i], &w->entries[i + 1], (w->count - i - 1) * sizeof *w->entries);
    w->count--;
    memset(w->index, 0, w->index_cap * sizeof *w->index); /* the indices after i moved: rebuild */
    for (size_t k = 0; k < w->count; k++)
        w->index[index_slot(w, w->entries[k].key)] = (uint32_t)(k + 1);
    return SAMC_OK;
}

const char *samc_weights_source(const samc_weights *w) { return w && w->source ? w->source : ""; }

samc_weights_format samc_weights_get_format(const samc_weights *w)
{
    return w ? w->format : SAMC_WEIGHTS_UNKNOWN;
}

void samc_weights_set_format(samc_weights *w, samc_weights_format f)
{
    if (w)
        w->format = f;
}

samc_status samc_weights_expect(const samc_weights *w, const char *key, int ndim,
                                 const int64_t *shape, const samc_tensor **out, samc_error *err)
{
    if (out)
        *out = NULL;
    const samc_tensor *t = samc_weights_find(w, key);
    char fk[256];
    const char *name = key ? samc_weights_file_key(w, key, fk, sizeof fk) : "(null)";
    if (!t)
        return samc_fail(err, SAMC_ERR_KEY, "%s: missing key '%s'", samc_weights_source(w), name);
    if (!samc_shape_equal(t->ndim, t->shape, ndim, shape)) {
        char want[256], got[256];
        samc_shape_str(ndim, shape, want, sizeof want);
        samc_shape_str(t->ndim, t->shape, got, sizeof got);
        return samc_fail(err, SAMC_ERR_SHAPE, "%s: key '%s': expected shape %s, got %s",
                         samc_weights_source(w), name, want, got);
    }
    if (out)
        *out = t;
    return SAMC_OK;
}

samc_status samc_weights_check_finite(const samc_weights *w, samc_error *err)
{
    for (size_t i = 0; i < samc_weights_count(w); i++) {
        const samc_tensor *t = &w->entries[i].t;
        int64_t n = samc_numel(t);
        for (int64_t j = 0; j < n; j++) {
            if (!isfinite(t->data[j]))
                return samc_fail(err, SAMC_ERR_FORMAT,
                                 "%s: key '%s' holds a non-finite value (%s) at flat index %lld",
                                 samc_weights_source(w), w->entries[i].key,
                                 isnan(t->data[j]) ? "nan" : "inf", (long long)j);
        }
    }
    return SAMC_OK;
}

/* ------------------------------------------------------------------------ */
/* Detection and dispatch                                                   */
/* ------------------------------------------------------------------------ */

/* safetensors headers are at most 100 MB (the reference implementation's limit). */
#define SAMC_ST_MAX_HEADER (100u * 1024u * 1024u)

samc_status samc_weights_detect(const char *path, samc_weights_format *fmt, samc_error *err)
{
    *fmt = SAMC_WEIGHTS_UNKNOWN;
    if (!path)
        return samc_fail(err, SAMC_ERR_ARG, "samc_weights_detect: NULL path");
    uint8_t head[16];
    size_t got = 0;
    uint64_t fsize = 0;
    samc_status st = samc_file_head(path, head, sizeof head, &got, &fsize, err);
    if (st)
        return st;
    if (got == 0)
        return samc_fail(err, SAMC_ERR_IO, "%s: file is empty", path);
    if (got >= 4 && memcmp(head, "PK\x03\x04", 4) == 0) {
        *fmt = SAMC_WEIGHTS_PT;
        return SAMC_OK;
    }
    if (got >= 8 && memcmp(head, "\x89HDF\r\n\x1a\n", 8) == 0) {
        *fmt = SAMC_WEIGHTS_H5;
        return SAMC_OK;
    }
    if (got >= 9) {
        uint64_t n = samc_load_u64le(head);
        if (n >= 2 && n <= SAMC_ST_MAX_HEADER && head[8] == '{') {
            *fmt = SAMC_WEIGHTS_SAFETENSORS;
            return SAMC_OK;
        }
    }
    if (got < 9)
        return samc_fail(err, SAMC_ERR_IO,
                         "%s: file is too short (%zu bytes) to be a weight file (truncated?)", path,
                         got);
    return samc_fail(err, SAMC_ERR_FORMAT,
                     "%s: unknown weight file format (not a PyTorch zip checkpoint, safetensors or "
                     "HDF5 file; first bytes %02x %02x %02x %02x)",
                     path, head[0], head[1], head[2], head[3]);
}

samc_status samc_weights_open(const char *path, samc_weights **out, samc_error *err)
{
    *out = NULL;
    samc_weights_format fmt;
    samc_status st = samc_weights_detect(path, &fmt, err);
    if (st)
        return st;
    switch (fmt) {
    case SAMC_WEIGHTS_PT: return samc_weights_open_pt(path, out, err);
    case SAMC_WEIGHTS_SAFETENSORS: return samc_weights_open_safetensors(path, out, err);
    case SAMC_WEIGHTS_H5: return samc_weights_open_h5(path, out, err);
    case SAMC_WEIGHTS_UNKNOWN: break;
    }
    return samc_fail(err, SAMC_ERR_INTERNAL, "%s: format detection failed", path);
}
