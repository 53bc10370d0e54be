/* SPDX-License-Identifier: Apache-2.0 */
/* cli_tuning.c - process settings of the commands that run the model many
 * times (`samc bench`, `samc serve`): OpenMP's wait policy and malloc. */
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* OpenMP's default wait policy lets idle threads spin between parallel
 * regions. On a machine shared with other work (these 2-core machines always
 * are) a spinning thread takes the core its partner needs, and the many short
 * regions of the decoder ran 2-10x slower (docs/fast.md). libgomp reads the
 * policy once at start-up, so `samc bench` and `samc serve` re-execute
 * themselves with OMP_WAIT_POLICY=PASSIVE unless the variable is set: the
 * same setting tools/bench_pytorch.py gives PyTorch. */
void cli_passive_wait_policy(int argc, char **argv)
{
    if (getenv("OMP_WAIT_POLICY"))
        return;
    /* Started through the dynamic loader (`ld-linux-x86-64.so.2 samc ...`,
     * as the bundles of tools/device_pack.sh run), /proc/self/exe is the
     * loader, which would take the subcommand for the program: run as we are. */
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (exe[n] = 0, !strncmp(basename(exe), "ld-", 3)))
        return;
    char **nargv = calloc((size_t)argc + 2, sizeof *nargv);
    if (!nargv || setenv("OMP_WAIT_POLICY", "PASSIVE", 1))
        return;
    nargv[0] = (char *)"samc";
    for (int i = 0; i < argc; i++)
        nargv[i + 1] = argv[i];
    execv("/proc/self/exe", nargv); /* returns only on failure: then run as we are */
    free(nargv);
}

/* glibc maps every large calloc fresh and unmaps it on free, so each
 * forward pass pays ~50K first-touch page faults for core's activation
 * tensors (~20% of t's encoder CPU time in this VM, docs/fast.md): keep
 * freed memory for reuse instead, the malloc tuning tools/bench_pytorch.py
 * gives PyTorch. Peak RSS is unchanged (measured). */
void cli_keep_freed_memory(void)
{
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 1 << 28);
}
