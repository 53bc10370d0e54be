/* SPDX-License-Identifier: Apache-2.0 */
/* cli_run.h - running the built `samc` command from a test, as a user would
 * (stdout and stderr captured to files, so stderr is not a terminal). */
#ifndef SAMC_TESTS_CLI_RUN_H
#define SAMC_TESTS_CLI_RUN_H

typedef struct tu_run_result {
    int rc;              /* exit status; 128 when killed by a signal */
    char *out, *err;     /* what it wrote */
} tu_run_result;

/* Run `samc ARGS` (a shell word list) with its captures in `tmp`. */
tu_run_result tu_run_samc(const char *tmp, const char *args);
void tu_run_free(tu_run_result *r);
/* A whole file as a string ("" when it cannot be read). */
char *tu_slurp(const char *path);

#endif
