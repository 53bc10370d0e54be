/* SPDX-License-Identifier: Apache-2.0 */
/* cli_signal.c - SIGINT and SIGTERM as the library's abort callback
 * (segment, track, amg): the first signal sets a flag that the running call
 * reads at its next layer or frame boundary (samc_abort_fn), the command
 * then writes what it has finished (track: track.json, "interrupted": true)
 * and exits 128 + the signal's number (130 for Ctrl-C); a second signal
 * kills the process at once (the handler is reset after the first). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static volatile sig_atomic_t interrupted; /* the signal's number, 0: none */

static void on_signal(int sig) { interrupted = sig; }

void cli_catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool cli_abort_requested(void *user)
{
    (void)user;
    return interrupted != 0;
}

int cli_interrupted(void) { return interrupted; }

int cli_interrupt_exit(const char *cmd, const char *what_was_kept)
{
    fprintf(stderr, "samc %s: interrupted (%s)%s%s\n", cmd, interrupted == SIGTERM ? "SIGTERM" : "SIGINT",
            what_was_kept ? "; " : "", what_was_kept ? what_was_kept : "");
    return 128 + (interrupted ? interrupted : SIGINT);
}
