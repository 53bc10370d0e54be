/* SPDX-License-Identifier: Apache-2.0 */
/* tmpfile.h - temporaries for atomic output (core/base/tmpfile.c).
 *
 * Every output samc writes goes to a temporary beside it, created with
 * mkostemp (O_CREAT|O_EXCL: an existing name or a planted symlink is never
 * opened) and reopened only with O_NOFOLLOW, then renamed into place. Live
 * temporaries are registered so that a signal handler can remove them all
 * (samc__tmp_remove_all is async-signal-safe). */
#ifndef SAMC_CORE_TMPFILE_H
#define SAMC_CORE_TMPFILE_H

#include <stdio.h>

#include "samc_status.h"

/* Create "DIR/.NAME.XXXXXX" for `final` = "DIR/NAME" (mode 0666 & ~umask);
 * *tmp receives its malloc'd name. Paths past PATH_MAX or a name past
 * NAME_MAX are refused before anything is created. */
samc_status samc__tmp_create(const char *final, char **tmp, samc_error *err);
/* Open the temporary for writing (truncated; O_NOFOLLOW); `what` names the
 * final file in messages. */
samc_status samc__tmp_reopen(const char *tmp, const char *what, FILE **f, samc_error *err);
/* Rename the temporary onto `final` (refused when a directory is in the
 * way); on success the name is freed and *tmp set to NULL. */
samc_status samc__tmp_commit(char **tmp, const char *final, samc_error *err);
/* Remove an uncommitted temporary, unregister and free its name. NULL: no-op. */
void samc__tmp_discard(char *tmp);
/* Remove every registered temporary (async-signal-safe: unlink only). */
void samc__tmp_remove_all(void);
/* SAMC_OK when `path` plus `extra` more bytes fits PATH_MAX and none of its
 * components is longer than NAME_MAX; the message names `what`. */
samc_status samc__path_fits(const char *path, size_t extra, const char *what, samc_error *err);

#endif
