/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_config_read.h - reading a `_target_` config tree section by
 * section (cJSON), for the SAM 3 image config (sam3_config_json.c) and the
 * video config (sam3_video_config.c): values with their official defaults,
 * required values, sub-sections checked against their class, options samc
 * must refuse; the first failure is kept, naming the key's path. */
#ifndef SAMC_CORE_MODELS_SAM3_CONFIG_READ_H
#define SAMC_CORE_MODELS_SAM3_CONFIG_READ_H

#include <stdbool.h>

#include "core/base/error.h"
#include "samc_status.h"

typedef struct cJSON cJSON;

typedef struct samc_s3cfg_rd {
    const char *what;
    samc_error *err;
    samc_status st;
} samc_s3cfg_rd;

typedef struct samc_s3cfg_sec {
    samc_s3cfg_rd *r;
    const cJSON *o;                     /* NULL: absent (every read takes its default) */
    char path[160];                     /* "backbone.visual.trunk" */
} samc_s3cfg_sec;

void samc__s3cfg_fail(samc_s3cfg_rd *r, samc_status st, const char *fmt, ...) SAMC_PRINTF(3, 4);
/* The value at s.key, NULL when absent or null; `required` fails then. */
const cJSON *samc__s3cfg_value(samc_s3cfg_sec *s, const char *key, bool required);
double samc__s3cfg_num(samc_s3cfg_sec *s, const char *key, bool required, double def);
int samc__s3cfg_int(samc_s3cfg_sec *s, const char *key, bool required, int def);
bool samc__s3cfg_bool(samc_s3cfg_sec *s, const char *key, bool required, bool def);
const char *samc__s3cfg_str(samc_s3cfg_sec *s, const char *key, bool required, const char *def);
/* Whether s.key is present and not null. */
bool samc__s3cfg_present(const samc_s3cfg_sec *s, const char *key);
/* The sub-section s.key (an object, or absent/null: an empty section);
 * `cls` (or `cls2`) the official class its `_target_` must name, when it has one. */
samc_s3cfg_sec samc__s3cfg_child(samc_s3cfg_sec *s, const char *key, bool required, const char *cls, const char *cls2);
/* An option that must keep the value samc implements. */
void samc__s3cfg_must(samc_s3cfg_sec *s, const char *key, bool ok, const char *why);

#define NUM(s, key, def) samc__s3cfg_num((s), (key), false, (def))
#define INT(s, key, def) samc__s3cfg_int((s), (key), false, (def))
#define BOOL(s, key, def) samc__s3cfg_bool((s), (key), false, (def))
#define INT_REQ(s, key) samc__s3cfg_int((s), (key), true, 0)
#define BOOL_REQ(s, key) samc__s3cfg_bool((s), (key), true, false)
/* The readers' short names (this header is included only by them). */
typedef samc_s3cfg_rd rd;
typedef samc_s3cfg_sec sec;
#define fail(...) samc__s3cfg_fail(__VA_ARGS__)
#define value(...) samc__s3cfg_value(__VA_ARGS__)
#define str_at(...) samc__s3cfg_str(__VA_ARGS__)
#define present(...) samc__s3cfg_present(__VA_ARGS__)
#define child(...) samc__s3cfg_child(__VA_ARGS__)
#define must(...) samc__s3cfg_must(__VA_ARGS__)

#endif
