/* SPDX-License-Identifier: Apache-2.0 */
/* text_buf.c - growable UTF-32 / byte strings and table look-ups. */
#include <stdlib.h>
#include <string.h>

#include "core/text/text_internal.h"

/* Grow to hold `need` elements of size `elem`; false (and nothing changed)
 * when the size overflows or malloc fails. */
static bool grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / elem)
            return false;
        nc *= 2;
    }
    void *p = realloc(*v, nc * elem);
    if (!p)
        return false;
    *v = p;
    *cap = nc;
    return true;
}

void samc__ustr_free(samc__ustr *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

bool samc__ustr_reserve(samc__ustr *s, size_t extra)
{
    if (s->oom || extra > SIZE_MAX - s->n || !grow((void **)&s->v, &s->cap, s->n + extra, sizeof *s->v)) {
        s->oom = true;
        return false;
    }
    return true;
}

void samc__ustr_push(samc__ustr *s, uint32_t c)
{
    if (s->n < s->cap || samc__ustr_reserve(s, 1))
        s->v[s->n++] = c;
}

void samc__ustr_append(samc__ustr *s, const uint32_t *p, size_t n)
{
    if (n && samc__ustr_reserve(s, n)) {
        memcpy(s->v + s->n, p, n * sizeof *p);
        s->n += n;
    }
}

void samc__ustr_copy(samc__ustr *dst, const samc__ustr *src)
{
    dst->n = 0;
    dst->oom = src->oom;
    samc__ustr_append(dst, src->v, src->n);
}

void samc__ustr_swap(samc__ustr *a, samc__ustr *b)
{
    samc__ustr t = *a;
    *a = *b;
    *b = t;
}

bool samc__ustr_eq(const samc__ustr *a, const samc__ustr *b)
{
    return a->n == b->n && (a->n == 0 || !memcmp(a->v, b->v, a->n * sizeof *a->v));
}

bool samc__ustr_has(const uint32_t *p, size_t n, uint32_t c)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == c)
            return true;
    return false;
}

void samc__bstr_free(samc__bstr *b)
{
    free(b->v);
    memset(b, 0, sizeof *b);
}

void samc__bstr_push(samc__bstr *b, uint8_t c)
{
    if (b->oom)
        return;
    if (b->n == SIZE_MAX || !grow((void **)&b->v, &b->cap, b->n + 1, 1)) {
        b->oom = true;
        return;
    }
    b->v[b->n++] = c;
}

void samc__bstr_append(samc__bstr *b, const uint8_t *p, size_t n)
{
    if (b->oom || !n)
        return;
    if (n > SIZE_MAX - b->n || !grow((void **)&b->v, &b->cap, b->n + n, 1)) {
        b->oom = true;
        return;
    }
    memcpy(b->v + b->n, p, n);
    b->n += n;
}

void samc__bstr_swap(samc__bstr *a, samc__bstr *b)
{
    samc__bstr t = *a;
    *a = *b;
    *b = t;
}

bool samc__bstr_eq(const samc__bstr *a, const samc__bstr *b)
{
    return a->n == b->n && (a->n == 0 || !memcmp(a->v, b->v, a->n));
}

bool samc__in_ranges(const samc__cprange *r, size_t n, uint32_t c)
{
    if (n == 0 || c < r[0].lo || c > r[n - 1].hi)
        return false;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < r[mid].lo)
            hi = mid;
        else if (c > r[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

const samc__cpmap *samc__cpmap_find(const samc__cpmap *m, size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < m[mid].cp)
            hi = mid;
        else if (cp > m[mid].cp)
            lo = mid + 1;
        else
            return &m[mid];
    }
    return NULL;
}

/* Compare an ASCII C string with a UTF-32 name, in byte order. */
static int name_cmp(const char *a, const uint32_t *b, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ca = (unsigned char)a[i];
        if (ca == 0)
            return -1;
        if (ca != b[i])
            return ca < b[i] ? -1 : 1;
    }
    return a[len] ? 1 : 0;
}

const samc__entity *samc__entity_find(const samc__entity *t, size_t n, const uint32_t *name, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (name[i] == 0 || name[i] > 0x7F)
            return NULL;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = name_cmp(t[mid].name, name, len);
        if (c == 0)
            return &t[mid];
        if (c > 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}
