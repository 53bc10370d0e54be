/* SPDX-License-Identifier: Apache-2.0 */
/* cli_files.c - the file-writing contract of the command line
 * (docs/hostile_input.md, "Files"): stale outputs of an earlier run removed
 * when a new set is committed, JSON lines appended whole or not at all, and
 * temporaries removed when the process is interrupted. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "core/base/error.h"
#include "core/base/tmpfile.h"

const char *const cli_segment_outputs[] = {"mask_*.png", "overlay.png", "overlay_*.png", "result.json",
                                            "low_res_masks.f32", NULL};
const char *const cli_amg_outputs[] = {"mask_*.png", "overlay.png", "masks.json", NULL};

static int kept(const char *dir, const char *name, const char *const *keep, int n)
{
    const size_t dl = strlen(dir);
    for (int i = 0; i < n; i++)
        if (!strncmp(keep[i], dir, dl) && keep[i][dl] == '/' && !strcmp(keep[i] + dl + 1, name))
            return 1;
    return 0;
}

void cli_remove_stale(const char *dir, const char *const *patterns, const char *const *keep, int n)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        int match = 0;
        for (const char *const *p = patterns; *p && !match; p++)
            match = fnmatch(*p, e->d_name, FNM_PERIOD) == 0;
        if (!match || kept(dir, e->d_name, keep, n))
            continue;
        char path[8192];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            unlink(path);
    }
    closedir(d);
}

samc_status cli_append_line(int fd, const char *what, const char *text, long long *len, samc_error *err)
{
    const size_t n = strlen(text);
    size_t done = 0;
    int e = 0;
    for (const char nl = '\n'; !e && done <= n;) {
        const ssize_t w = done < n ? write(fd, text + done, n - done) : write(fd, &nl, 1);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            e = w < 0 ? errno : EIO;
        else
            done += (size_t)w;
    }
    if (e) { /* no half line: cut the file back to where the line began */
        if (ftruncate(fd, (off_t)*len) == 0)
            (void)lseek(fd, (off_t)*len, SEEK_SET);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot write: %s", what, strerror(e));
    }
    *len += (long long)n + 1;
    return SAMC_OK;
}

void cli_escape(const char *s, char *out, size_t n)
{
    size_t j = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && j + 5 < n; p++)
        j += *p < 0x20 || *p == 0x7f ? (size_t)snprintf(out + j, n - j, "\\x%02x", *p) : (out[j] = (char)*p, 1);
    if (n)
        out[j < n ? j : n - 1] = '\0';
}

static void on_signal(int sig)
{
    samc__tmp_remove_all(); /* unlink only: async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_install_signal_cleanup(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        /* keep a handler someone else installed (and ignored signals ignored) */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            sigaction(sigs[i], &sa, NULL);
    }
}
