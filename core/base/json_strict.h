/* SPDX-License-Identifier: Apache-2.0 */
/* json_strict.h - JSON read as Python's json module reads it, plus the
 * checks a typed config reader needs (core/base/json_strict.c).
 *
 * cJSON keeps duplicate keys and its lookups return the first; Python's
 * json (and serde, behind the safetensors reference) keep the last. cJSON
 * stops a string at an escaped NUL ("KEY\u0000junk" reads as "KEY"). Both
 * would let samc read other values than the official code. */
#ifndef SAMC_CORE_JSON_STRICT_H
#define SAMC_CORE_JSON_STRICT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "samc_status.h"

/* Most JSON values one document may hold (each a cJSON node of ~64 bytes:
 * the parse of a hostile 100 MB array would otherwise take gigabytes). */
#define SAMC_JSON_MAX_NODES (1 << 20)

/* Parse text[0..len) (NUL-terminated or not): the whole text must be one
 * JSON value (trailing whitespace only), no string may hold an escaped NUL,
 * at most SAMC_JSON_MAX_NODES values, and of duplicate keys in an object
 * only the last is kept. Messages start with `what`. */
samc_status samc__json_parse_strict(const char *text, size_t len, const char *what, cJSON **out, samc_error *err);

/* Which keys a typed reader consumed, for samc__json_refuse_unknown. */
typedef struct samc_json_seen {
    const cJSON **items;
    size_t n, cap;
} samc_json_seen;

/* cJSON_GetObjectItemCaseSensitive that records the item as consumed. */
/* The value at a dotted path ("a.b.0.c": object keys, array indices), or NULL. */
const cJSON *samc__json_path(const cJSON *root, const char *path);
const cJSON *samc__json_get(samc_json_seen *seen, const cJSON *obj, const char *key);
/* SAMC_ERR_FORMAT naming the first key under `root` that was not consumed
 * and is not in `ignored` (dotted paths relative to `root`, NULL-terminated;
 * "*" as the last component accepts any key under that object), as Hydra
 * refuses an unexpected constructor argument. The message shows the full
 * path: `prefix` (the path of `root` in the document, "" at the top) first. */
samc_status samc__json_refuse_unknown(const cJSON *root, const char *prefix, const samc_json_seen *seen,
                                      const char *const *ignored, const char *what, samc_error *err);
void samc__json_seen_free(samc_json_seen *seen);

#endif
