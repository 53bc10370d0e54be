/* SPDX-License-Identifier: Apache-2.0 */
#include "core/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *samc_status_name(samc_status st)
{
    switch (st) {
    case SAMC_OK: return "ok";
    case SAMC_ERR_IO: return "io";
    case SAMC_ERR_FORMAT: return "format";
    case SAMC_ERR_KEY: return "key";
    case SAMC_ERR_SHAPE: return "shape";
    case SAMC_ERR_DTYPE: return "dtype";
    case SAMC_ERR_ARG: return "argument";
    case SAMC_ERR_NOMEM: return "memory";
    case SAMC_ERR_UNSUPPORTED: return "unsupported";
    case SAMC_ERR_SECURITY: return "security";
    case SAMC_ERR_PARITY: return "parity";
    case SAMC_ERR_INTERNAL: return "internal";
    case SAMC_ERR_ABORTED: return "aborted";
    }
    return "unknown";
}

/* Control characters from names in the message (a file named with
 * terminal escape sequences, a newline forging a log line) are written as
 * \xNN: a message is always one line of plain text. */
static void escape_controls(char *msg, size_t cap)
{
    char out[SAMC_ERROR_MSG_MAX];
    size_t j = 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p && j + 1 < sizeof out; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            if (j + 5 >= sizeof out)
                break;
            j += (size_t)snprintf(out + j, sizeof out - j, "\\x%02x", *p);
        } else {
            out[j++] = (char)*p;
        }
    }
    out[j] = '\0';
    snprintf(msg, cap, "%s", out);
}

samc_status samc_fail(samc_error *e, samc_status st, const char *fmt, ...)
{
    if (!e || e->status != SAMC_OK)
        return st;
    e->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    escape_controls(e->msg, sizeof e->msg);
    return st;
}

void samc_error_prefix(samc_error *e, const char *fmt, ...)
{
    if (!e)
        return;
    char pre[SAMC_ERROR_MSG_MAX], old[SAMC_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    /* Keep as much of both as fits; the prefix comes first. */
    size_t n = strlen(pre);
    if (n > sizeof e->msg - 3)
        n = sizeof e->msg - 3;
    memcpy(e->msg, pre, n);
    memcpy(e->msg + n, ": ", 2);
    size_t room = sizeof e->msg - n - 3, m = strlen(old);
    if (m > room)
        m = room;
    memcpy(e->msg + n + 2, old, m);
    e->msg[n + 2 + m] = '\0';
    escape_controls(e->msg, sizeof e->msg);
}

void samc_error_clear(samc_error *e)
{
    if (e) {
        e->status = SAMC_OK;
        e->msg[0] = '\0';
    }
}
