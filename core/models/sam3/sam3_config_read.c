/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_config_read.c - reading a `_target_` config tree (sam3_config_read.h). */
#include "core/models/sam3/sam3_config_read.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"

/* ---- reading a section ------------------------------------------------------ */

void samc__s3cfg_fail(samc_s3cfg_rd *r, samc_status st, const char *fmt, ...)
{
    if (r->st)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->st = samc_fail(r->err, st, "%s: config: %s", r->what, msg);
}

/* The value at s.key, NULL when absent or null; `required` fails then. */
const cJSON *samc__s3cfg_value(samc_s3cfg_sec *s, const char *key, bool required)
{
    const cJSON *v = s->o ? cJSON_GetObjectItemCaseSensitive(s->o, key) : NULL;
    if (v && cJSON_IsNull(v))
        v = NULL;
    if (!v && required)
        samc__s3cfg_fail(s->r, SAMC_ERR_FORMAT, "'%s%s%s' is required (the official constructor has no default)", s->path, s->path[0] ? "." : "", key);
    return v;
}

double samc__s3cfg_num(samc_s3cfg_sec *s, const char *key, bool required, double def)
{
    const cJSON *v = samc__s3cfg_value(s, key, required);
    if (!v)
        return def;
    if (cJSON_IsBool(v)) /* Python's True is 1 */
        return cJSON_IsTrue(v) ? 1.0 : 0.0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
        samc__s3cfg_fail(s->r, SAMC_ERR_FORMAT, "'%s%s%s' is not a number", s->path, s->path[0] ? "." : "", key);
        return def;
    }
    return v->valuedouble;
}

int samc__s3cfg_int(samc_s3cfg_sec *s, const char *key, bool required, int def)
{
    const double v = samc__s3cfg_num(s, key, required, def);
    if (v != floor(v) || fabs(v) > 1e9) {
        samc__s3cfg_fail(s->r, SAMC_ERR_FORMAT, "'%s%s%s' is not an integer", s->path, s->path[0] ? "." : "", key);
        return def;
    }
    return (int)v;
}

bool samc__s3cfg_bool(samc_s3cfg_sec *s, const char *key, bool required, bool def)
{
    return samc__s3cfg_num(s, key, required, def ? 1.0 : 0.0) != 0.0;
}

const char *samc__s3cfg_str(samc_s3cfg_sec *s, const char *key, bool required, const char *def)
{
    const cJSON *v = samc__s3cfg_value(s, key, required);
    if (!v)
        return def;
    if (!cJSON_IsString(v)) {
        samc__s3cfg_fail(s->r, SAMC_ERR_FORMAT, "'%s%s%s' is not a string", s->path, s->path[0] ? "." : "", key);
        return def;
    }
    return v->valuestring;
}

/* Whether s.key is present and not null. */
bool samc__s3cfg_present(const samc_s3cfg_sec *s, const char *key)
{
    const cJSON *v = s->o ? cJSON_GetObjectItemCaseSensitive(s->o, key) : NULL;
    return v && !cJSON_IsNull(v);
}

/* The sub-section s.key (an object, or absent/null: an empty section);
 * `cls` the official class its `_target_` must name, when it has one. */
samc_s3cfg_sec samc__s3cfg_child(samc_s3cfg_sec *s, const char *key, bool required, const char *cls, const char *cls2)
{
    samc_s3cfg_sec c = {.r = s->r};
    snprintf(c.path, sizeof c.path, "%s%s%s", s->path, s->path[0] ? "." : "", key);
    const cJSON *v = samc__s3cfg_value(s, key, required);
    if (v && !cJSON_IsObject(v)) {
        samc__s3cfg_fail(s->r, SAMC_ERR_FORMAT, "'%s' is not an object", c.path);
        return c;
    }
    c.o = v;
    const cJSON *t = v ? cJSON_GetObjectItemCaseSensitive(v, "_target_") : NULL;
    if (t && cls) {
        const char *name = cJSON_IsString(t) ? t->valuestring : "";
        const char *dot = strrchr(name, '.');
        const char *last = dot ? dot + 1 : name;
        if (strcmp(last, cls) && (!cls2 || strcmp(last, cls2)))
            samc__s3cfg_fail(s->r, SAMC_ERR_UNSUPPORTED, "%s._target_ is '%s'; samc implements %s", c.path, name, cls);
    }
    return c;
}

/* An option that must keep the value samc implements. */
void samc__s3cfg_must(samc_s3cfg_sec *s, const char *key, bool ok, const char *why)
{
    if (!ok)
        samc__s3cfg_fail(s->r, SAMC_ERR_UNSUPPORTED, "'%s%s%s': %s", s->path, s->path[0] ? "." : "", key, why);
}

