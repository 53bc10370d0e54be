/* SPDX-License-Identifier: Apache-2.0 */
/* error.h - helpers to fill a samc_error. */
#ifndef SAMC_CORE_ERROR_H
#define SAMC_CORE_ERROR_H

#include "samc_status.h"

#if defined(__GNUC__)
#define SAMC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SAMC_PRINTF(a, b)
#endif

/* Record status `st` with a printf-style message in `e` (which may be NULL)
 * and return `st`, so callers can write `return samc_fail(err, ...);`.
 * If `e` already holds an error, the new message is NOT overwritten: the
 * first (innermost) failure is the one reported. Use samc_error_clear first
 * to start over. */
samc_status samc_fail(samc_error *e, samc_status st, const char *fmt, ...) SAMC_PRINTF(3, 4);

/* Prefix an existing message with "<prefix>: " (e.g. the file name). */
void samc_error_prefix(samc_error *e, const char *fmt, ...) SAMC_PRINTF(2, 3);

void samc_error_clear(samc_error *e);

#endif
