/* SPDX-License-Identifier: Apache-2.0 */
/* tmpfile.c - exclusive temporaries, registered for removal on a signal.
 *
 * The registry is a list of chunks of slots; a slot is claimed and released
 * with atomics and chunks are only ever added (never freed), so the signal
 * handler (samc__tmp_remove_all) only reads whole pointers and calls
 * unlink. A name is published to its slot only after it is complete and
 * cleared before it is freed. (amg --output-mode binary_mask keeps one
 * temporary per mask until the set is committed: thousands.) */
#define _GNU_SOURCE /* mkostemp */
#include "core/base/tmpfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/error.h"

#define SAMC_TMP_CHUNK 1024

typedef struct tmp_chunk {
    _Atomic(char *) slots[SAMC_TMP_CHUNK];
    _Atomic(struct tmp_chunk *) next;
} tmp_chunk;

static tmp_chunk first_chunk;

/* 0 when no slot could be had (out of memory): the temporary still works,
 * only a signal would leave it behind. */
static int publish(char *name)
{
    for (tmp_chunk *c = &first_chunk;;) {
        for (int i = 0; i < SAMC_TMP_CHUNK; i++) {
            char *expected = NULL;
            if (!atomic_load(&c->slots[i]) && atomic_compare_exchange_strong(&c->slots[i], &expected, name))
                return 1;
        }
        tmp_chunk *next = atomic_load(&c->next);
        if (!next) {
            tmp_chunk *fresh = calloc(1, sizeof *fresh), *none = NULL;
            if (!fresh)
                return 0;
            if (!atomic_compare_exchange_strong(&c->next, &none, fresh))
                free(fresh); /* another thread added one */
            next = atomic_load(&c->next);
        }
        c = next;
    }
}

static void unpublish(const char *name)
{
    for (tmp_chunk *c = &first_chunk; c; c = atomic_load(&c->next))
        for (int i = 0; i < SAMC_TMP_CHUNK; i++) {
            char *expected = (char *)name;
            if (atomic_load(&c->slots[i]) == name && atomic_compare_exchange_strong(&c->slots[i], &expected, NULL))
                return;
        }
}

void samc__tmp_remove_all(void)
{
    for (tmp_chunk *c = &first_chunk; c; c = atomic_load(&c->next))
        for (int i = 0; i < SAMC_TMP_CHUNK; i++) {
            char *name = atomic_load(&c->slots[i]);
            if (name)
                unlink(name);
        }
}

samc_status samc__path_fits(const char *path, size_t extra, const char *what, samc_error *err)
{
    const size_t len = strlen(path);
    const char *more = strlen(what) > 200 ? "..." : ""; /* the reason must fit the message */
    if (len + extra >= PATH_MAX)
        return samc_fail(err, SAMC_ERR_ARG, "%.200s%s: path of %zu bytes is too long (the system allows %d)", what,
                         more, len + extra, PATH_MAX - 1);
    for (const char *p = path; *p;) {
        const size_t c = strcspn(p, "/");
        if (c > NAME_MAX)
            return samc_fail(err, SAMC_ERR_ARG,
                             "%.200s%s: a path component of %zu bytes is too long (the system allows %d)", what, more,
                             c, NAME_MAX);
        p += c;
        p += *p == '/';
    }
    return SAMC_OK;
}

samc_status samc__tmp_create(const char *final, char **tmp, samc_error *err)
{
    *tmp = NULL;
    const char *slash = strrchr(final, '/');
    const size_t dlen = slash ? (size_t)(slash - final + 1) : 0, blen = strlen(final + dlen);
    samc_status st = samc__path_fits(final, 9, final, err); /* ".", ".XXXXXX" */
    if (st)
        return st;
    if (blen + 8 > NAME_MAX)
        return samc_fail(err, SAMC_ERR_ARG, "%s: file name of %zu bytes is too long for a temporary beside it", final,
                         blen);
    char *t = malloc(dlen + blen + 9);
    if (!t)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    memcpy(t, final, dlen);
    t[dlen] = '.';
    memcpy(t + dlen + 1, final + dlen, blen);
    memcpy(t + dlen + 1 + blen, ".XXXXXX", 8);
    const int fd = mkostemp(t, O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        free(t);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot create a temporary beside it: %s", final, strerror(e));
    }
    const mode_t mask = umask(0); /* mkostemp makes 0600; outputs get the usual 0666 & ~umask */
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    close(fd);
    (void)publish(t);
    *tmp = t;
    return SAMC_OK;
}

samc_status samc__tmp_reopen(const char *tmp, const char *what, FILE **f, samc_error *err)
{
    *f = NULL;
    const int fd = open(tmp, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || !(*f = fdopen(fd, "wb"))) {
        const int e = errno;
        if (fd >= 0)
            close(fd);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot write: %s", what, strerror(e));
    }
    return SAMC_OK;
}

samc_status samc__tmp_commit(char **tmp, const char *final, samc_error *err)
{
    struct stat sb;
    if (lstat(final, &sb) == 0 && S_ISDIR(sb.st_mode))
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot write the output: a directory is in the way", final);
    if (rename(*tmp, final))
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot move the finished file into place: %s", final, strerror(errno));
    unpublish(*tmp);
    free(*tmp);
    *tmp = NULL;
    return SAMC_OK;
}

void samc__tmp_discard(char *tmp)
{
    if (!tmp)
        return;
    unpublish(tmp);
    unlink(tmp);
    free(tmp);
}
