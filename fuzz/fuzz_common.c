/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_common.c - see fuzz_common.h. */
#include "fuzz_common.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h> /* client requests: no-ops outside valgrind */
#define SAMC_HAVE_MEMCHECK 1
#endif
#endif

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/runtime/statedict.h"

static char tmp_paths[8][256];
static int n_tmp;

static void remove_temps(void)
{
    for (int i = 0; i < n_tmp; i++)
        unlink(tmp_paths[i]);
}

const char *fuzz_temp_file(const uint8_t *data, size_t size, const char *suffix)
{
    int slot = -1;
    for (int i = 0; i < n_tmp; i++)
        if (strlen(tmp_paths[i]) > strlen(suffix) &&
            !strcmp(tmp_paths[i] + strlen(tmp_paths[i]) - strlen(suffix), suffix))
            slot = i;
    if (slot < 0) {
        if (n_tmp == 8)
            abort();
        slot = n_tmp++;
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        snprintf(tmp_paths[slot], sizeof tmp_paths[slot], "%s/samc_fuzz_%d_%d%s", dir, (int)getpid(), slot, suffix);
        if (slot == 0)
            atexit(remove_temps);
    }
    const char *path = tmp_paths[slot];
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror(path);
        abort();
    }
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            perror(path);
            abort();
        }
        done += (size_t)w;
    }
    close(fd);
    return path;
}

void fuzz_check_error(samc_status st, const samc_error *err, const char *must_name, const char *what)
{
    if (st == SAMC_OK)
        return;
    if (!err->msg[0]) {
        fprintf(stderr, "fuzz invariant: %s failed with status %d and no message\n", what, (int)st);
        abort();
    }
    if (must_name && !strstr(err->msg, must_name)) {
        fprintf(stderr, "fuzz invariant: %s: message does not name '%s': %s\n", what, must_name, err->msg);
        abort();
    }
}

double fuzz_touch(const float *p, size_t n)
{
    volatile double s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

unsigned fuzz_touch_bytes(const void *p, size_t n)
{
    unsigned s = 0;
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        s = s * 31u + b[i];
#ifdef SAMC_HAVE_MEMCHECK
    /* under valgrind: report any byte no decoder wrote, where it lies */
    if (VALGRIND_CHECK_MEM_IS_DEFINED(p, n) != 0)
        abort();
#endif
    return s;
}

void fuzz_check_keys(const samc_key_list *keys, const char *family)
{
    for (int i = 0; i < keys->count; i++) {
        const samc_key_spec *k = &keys->items[i];
        int bad = k->ndim < 0 || k->ndim > 4 || !memchr(k->key, 0, sizeof k->key);
        for (int j = 0; !bad && j < k->ndim; j++)
            bad = k->shape[j] < 0;
        if (bad) {
            fprintf(stderr, "fuzz invariant: accepted %s config implies key '%.160s' of rank %d, shape", family,
                    k->key, k->ndim);
            for (int j = 0; j < k->ndim && j < 4; j++)
                fprintf(stderr, " %lld", (long long)k->shape[j]);
            fprintf(stderr, "\n");
            abort();
        }
    }
}
