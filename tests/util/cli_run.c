/* SPDX-License-Identifier: Apache-2.0 */
/* cli_run.c - the `samc` command run from a test (cli_run.h). */
#include "util/cli_run.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util/testutil.h"

char *tu_slurp(const char *path)
{
    uint8_t *d = NULL;
    size_t n = 0;
    if (tu_read_file(path, &d, &n))
        return strdup("");
    char *s = realloc(d, n + 1);
    s[n] = '\0';
    return s;
}

tu_run_result tu_run_samc(const char *tmp, const char *args)
{
    char *bin = tu_join(tu_binary_dir(), "samc");
    char *o = tu_join(tmp, "stdout"), *e = tu_join(tmp, "stderr");
    char *cmd = tu_strdupf("'%s' %s >'%s' 2>'%s'", bin, args, o, e);
    const int st = system(cmd);
    tu_run_result r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128, tu_slurp(o), tu_slurp(e)};
    free(bin), free(o), free(e), free(cmd);
    return r;
}

void tu_run_free(tu_run_result *r) { free(r->out), free(r->err); }
