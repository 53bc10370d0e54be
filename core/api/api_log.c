/* SPDX-License-Identifier: Apache-2.0 */
/* api_log.c - the library version and its log (callback and verbosity). */
#include <stdarg.h>
#include <stdio.h>

#include "core/api/api_internal.h"

const char *samc_version(void) { return SAMC_VERSION_STRING; }

/* Process-wide settings, set before use from several threads (samc.h). */
static samc_log_fn log_fn;
static void *log_user;
static samc_log_level log_level = SAMC_LOG_WARN;

void samc_log_set(samc_log_fn fn, void *user)
{
    log_fn = fn;
    log_user = user;
}

void samc_log_set_level(samc_log_level level)
{
    log_level = level < SAMC_LOG_ERROR ? SAMC_LOG_ERROR : level > SAMC_LOG_DEBUG ? SAMC_LOG_DEBUG : level;
}

samc_log_level samc_log_get_level(void) { return log_level; }

void samc__log(samc_log_level level, const char *fmt, ...)
{
    if (level > log_level)
        return;
    char msg[SAMC_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log_fn)
        log_fn(level, msg, log_user);
    else
        fprintf(stderr, "samc: %s\n", msg);
}
