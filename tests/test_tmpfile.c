/* SPDX-License-Identifier: Apache-2.0 */
/* test_tmpfile.c - the temporaries behind every output (core/base/tmpfile.c)
 * and the command line's signal cleanup (apps/cli_files.c), issue 23:
 *   - an interrupted run leaves none: a child holding 3000 temporaries (amg
 *     --output-mode binary_mask holds one per mask) dies of SIGINT/SIGTERM
 *     with the CLI's handler installed, and the directory is empty;
 *   - a temporary replaced by a symlink is never written through;
 *   - names are unpredictable and created exclusively (a planted file at
 *     the old "DIR/.NAME.tmp<pid>" name is neither opened nor removed). */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "apps/cli.h"
#include "core/base/tmpfile.h"
#include "util/testutil.h"

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static void interrupted(int sig)
{
    char *dir = tu_mkdtemp("tmpfile_sig");
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cli_install_signal_cleanup();
        for (int i = 0; i < 3000; i++) {
            char final[512], *tmp = NULL;
            snprintf(final, sizeof final, "%s/mask_%04d.png", dir, i);
            samc_error e = {0};
            if (samc__tmp_create(final, &tmp, &e))
                _exit(3);
        }
        raise(sig);
        _exit(4); /* not reached */
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == sig); /* died of the signal, as without the handler */
    assert_int_equal(count_entries(dir), 0);
    tu_rmtree(dir);
    free(dir);
}

static void test_signal_removes_temporaries(void **s)
{
    (void)s;
    interrupted(SIGINT);
    interrupted(SIGTERM);
}

static void test_no_write_through_links(void **s)
{
    (void)s;
    char *dir = tu_mkdtemp("tmpfile_link"), *victim = tu_join(dir, "victim"), *final = tu_join(dir, "out.png");
    assert_int_equal(tu_write_file(victim, "precious", 8), 0);
    /* the old predictable name, planted: neither opened nor removed */
    char *old = tu_strdupf("%s/.out.png.tmp%d", dir, (int)getpid());
    assert_int_equal(symlink(victim, old), 0);
    char *tmp = NULL;
    samc_error e = {0};
    assert_int_equal(samc__tmp_create(final, &tmp, &e), SAMC_OK);
    assert_string_not_equal(tmp, old);
    /* the temporary swapped for a link before it is written: refused */
    assert_int_equal(unlink(tmp), 0);
    assert_int_equal(symlink(victim, tmp), 0);
    FILE *f = NULL;
    assert_int_not_equal(samc__tmp_reopen(tmp, final, &f, &e), SAMC_OK);
    tu_assert_contains(e.msg, "out.png");
    samc__tmp_discard(tmp);
    uint8_t *d = NULL;
    size_t n = 0;
    assert_int_equal(tu_read_file(victim, &d, &n), 0);
    assert_int_equal(n, 8);
    assert_memory_equal(d, "precious", 8);
    free(d);
    assert_int_equal(access(old, F_OK), 0); /* still there */
    /* too long: refused before anything is created */
    char longname[5000];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    e = (samc_error){0};
    assert_int_not_equal(samc__tmp_create(longname, &tmp, &e), SAMC_OK);
    tu_assert_contains(e.msg, "too long");
    tu_rmtree(dir);
    free(dir), free(victim), free(final), free(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_signal_removes_temporaries),
                                       cmocka_unit_test(test_no_write_through_links)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
