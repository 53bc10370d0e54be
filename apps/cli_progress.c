/* SPDX-License-Identifier: Apache-2.0 */
/* cli_progress.c - progress lines on stderr: "\r" updates on a terminal,
 * one plain line per step otherwise (logs, CI), nothing with --quiet. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static int pending; /* a "\r" line is on the terminal */

double cli_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void cli_progress(const char *what, int done, int total, const char *detail)
{
    if (cli_verbosity < 1)
        return;
    if (isatty(2)) {
        const int bar = total > 0 ? done * 30 / total : 0;
        fprintf(stderr, "\r%s [%-30.*s] %d/%d %s\033[K", what, bar, "##############################", done, total,
                detail ? detail : "");
        pending = 1;
    } else {
        fprintf(stderr, "%s %d/%d %s\n", what, done, total, detail ? detail : "");
    }
    fflush(stderr);
}

void cli_progress_end(void)
{
    if (pending)
        fputc('\n', stderr);
    pending = 0;
}
