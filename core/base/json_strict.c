/* SPDX-License-Identifier: Apache-2.0 */
/* json_strict.c - see json_strict.h. */
#include "core/base/json_strict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

/* Scan outside and inside strings: count the values (an upper bound: one
 * per '[', '{', ',' and one for the document) and find escaped NULs. */
static samc_status prescan(const char *t, size_t len, const char *what, samc_error *err)
{
    size_t nodes = 1;
    int in_str = 0;
    for (size_t i = 0; i < len; i++) {
        const char c = t[i];
        if (in_str) {
            if (c == '\\' && i + 1 < len) {
                if (t[i + 1] == 'u' && i + 5 < len && !memcmp(t + i + 2, "0000", 4))
                    return samc_fail(err, SAMC_ERR_FORMAT,
                                     "%s: JSON string with an escaped NUL (\\u0000) at byte %zu: samc cannot read "
                                     "it as the official code does", what, i);
                i++;
            } else if (c == '"') {
                in_str = 0;
            }
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{' || c == ',') {
            if (++nodes > SAMC_JSON_MAX_NODES)
                return samc_fail(err, SAMC_ERR_FORMAT, "%s: JSON holds more than %d values (samc's limit)", what,
                                 SAMC_JSON_MAX_NODES);
        }
    }
    return SAMC_OK;
}

typedef struct keypos {
    cJSON *item;
    size_t pos; /* in the object's list */
} keypos;

static const char *key_of(const cJSON *c) { return c->string ? c->string : ""; }

static int by_name_then_pos(const void *a, const void *b)
{
    const keypos *x = a, *y = b;
    const int c = strcmp(key_of(x->item), key_of(y->item));
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* In every object, keep only the last of equal keys (Python's dict). */
static samc_status dedupe(cJSON *o, samc_error *err)
{
    if (!cJSON_IsObject(o) && !cJSON_IsArray(o))
        return SAMC_OK;
    size_t n = 0;
    for (cJSON *c = o->child; c; c = c->next) {
        samc_status st = dedupe(c, err);
        if (st)
            return st;
        n++;
    }
    if (!cJSON_IsObject(o) || n < 2)
        return SAMC_OK;
    /* Sort by (name, list position): of each run of equal names all but
     * the last are removed. */
    keypos *v = malloc(n * sizeof *v);
    if (!v)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    size_t i = 0;
    for (cJSON *c = o->child; c; c = c->next)
        v[i].item = c, v[i].pos = i, i++;
    qsort(v, n, sizeof *v, by_name_then_pos);
    for (size_t a = 0; a + 1 < n; a++)
        if (!strcmp(key_of(v[a].item), key_of(v[a + 1].item)))
            cJSON_Delete(cJSON_DetachItemViaPointer(o, v[a].item));
    free(v);
    return SAMC_OK;
}

samc_status samc__json_parse_strict(const char *text, size_t len, const char *what, cJSON **out, samc_error *err)
{
    *out = NULL;
    samc_status st = prescan(text, len, what, err);
    if (st)
        return st;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not valid JSON (at byte %zu)", what,
                         cJSON_GetErrorPtr() ? (size_t)(cJSON_GetErrorPtr() - text) : (size_t)0);
    for (; end && (size_t)(end - text) < len; end++)
        if (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r' && *end != '\0') {
            cJSON_Delete(root);
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: not valid JSON (trailing bytes after the value at byte %zu)",
                             what, (size_t)(end - text));
        }
    if ((st = dedupe(root, err))) {
        cJSON_Delete(root);
        return st;
    }
    *out = root;
    return SAMC_OK;
}

const cJSON *samc__json_get(samc_json_seen *seen, const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v && seen) {
        if (seen->n == seen->cap) {
            const size_t cap = seen->cap ? 2 * seen->cap : 64;
            const cJSON **items = realloc(seen->items, cap * sizeof *items);
            if (!items)
                return v; /* unrecorded: reported as unknown later, never silently accepted */
            seen->items = items, seen->cap = cap;
        }
        seen->items[seen->n++] = v;
    }
    return v;
}

void samc__json_seen_free(samc_json_seen *seen)
{
    free(seen->items);
    *seen = (samc_json_seen){0};
}

static int was_seen(const samc_json_seen *seen, const cJSON *item)
{
    for (size_t i = 0; i < seen->n; i++)
        if (seen->items[i] == item)
            return 1;
    return 0;
}

static int ignored_path(const char *path, const char *const *ignored)
{
    for (const char *const *p = ignored; p && *p; p++) {
        const size_t n = strlen(*p);
        if (!strcmp(*p, path))
            return 1;
        if (n >= 2 && !strcmp(*p + n - 2, ".*") && !strncmp(*p, path, n - 1)) /* "a.b.*" takes "a.b.c..." */
            return 1;
    }
    return 0;
}

static samc_status unknown_under(const cJSON *o, const char *rel, const char *shown, const samc_json_seen *seen,
                                 const char *const *ignored, const char *what, samc_error *err)
{
    if (!cJSON_IsObject(o))
        return SAMC_OK;
    for (const cJSON *c = o->child; c; c = c->next) {
        char r[512], full[600];
        snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "." : "", c->string ? c->string : "");
        snprintf(full, sizeof full, "%s%s%s", shown, *shown ? "." : "", r);
        if (ignored_path(r, ignored))
            continue;
        if (!was_seen(seen, c)) {
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: unknown config key '%s' (misspelt, or not a parameter of "
                             "the official constructor)", what, full);
        }
        samc_status st = unknown_under(c, r, shown, seen, ignored, what, err);
        if (st)
            return st;
    }
    return SAMC_OK;
}

samc_status samc__json_refuse_unknown(const cJSON *root, const char *prefix, const samc_json_seen *seen,
                                      const char *const *ignored, const char *what, samc_error *err)
{
    return unknown_under(root, "", prefix, seen, ignored, what, err);
}

const cJSON *samc__json_path(const cJSON *root, const char *path)
{
    const cJSON *cur = root;
    const char *p = path;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        const size_t n = dot ? (size_t)(dot - p) : strlen(p);
        char key[128];
        if (n == 0 || n >= sizeof key)
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        if (cJSON_IsArray(cur)) {
            char *end;
            const long i = strtol(key, &end, 10);
            cur = (*end || i < 0) ? NULL : cJSON_GetArrayItem(cur, (int)i);
        } else {
            cur = cJSON_GetObjectItemCaseSensitive(cur, key);
        }
        p = dot ? dot + 1 : p + n;
    }
    return cur;
}
