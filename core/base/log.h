/* SPDX-License-Identifier: Apache-2.0 */
/* log.h - the library's own messages, through the log callback of samc.h
 * (samc_log_set; core/api/api_log.c), for any part of the library. */
#ifndef SAMC_CORE_BASE_LOG_H
#define SAMC_CORE_BASE_LOG_H

#include "core/base/error.h"
#include "samc.h"

/* printf-style message to the installed log callback, if `level` passes. */
void samc__log(samc_log_level level, const char *fmt, ...) SAMC_PRINTF(2, 3);

#endif
