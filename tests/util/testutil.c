/* SPDX-License-Identifier: Apache-2.0 */
#define _XOPEN_SOURCE 700
#include "testutil.h"

#include "core/base/error.h"
#include "core/nn/records.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tu_strdupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort();
    char *s = malloc((size_t)n + 1);
    if (!s)
        abort();
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

const char *tu_source_dir(void)
{
    const char *e = getenv("SAMC_SOURCE_DIR");
    if (e && *e)
        return e;
    static const char *const guesses[] = {".", "..", "../.."};
    for (size_t i = 0; i < sizeof guesses / sizeof *guesses; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/CMakeLists.txt", guesses[i]);
        char q[4096];
        snprintf(q, sizeof q, "%s/core", guesses[i]);
        if (tu_file_exists(p) && tu_file_exists(q))
            return guesses[i];
    }
    return ".";
}

const char *tu_binary_dir(void)
{
    const char *e = getenv("SAMC_BINARY_DIR");
    return e && *e ? e : ".";
}

char *tu_join(const char *a, const char *b) { return tu_strdupf("%s/%s", a, b); }

char *tu_src_path(const char *rel) { return tu_join(tu_source_dir(), rel); }

bool tu_file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

int64_t tu_file_size(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    return (int64_t)sb.st_size;
}

char *tu_mkdtemp(const char *tag)
{
    const char *t = getenv("TMPDIR");
    char *tmpl = tu_strdupf("%s/samc-%s-XXXXXX", t && *t ? t : "/tmp", tag ? tag : "test");
    if (!mkdtemp(tmpl)) {
        free(tmpl);
        return NULL;
    }
    return tmpl;
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int tu_rmtree(const char *dir)
{
    if (!dir)
        return 0;
    return nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

int tu_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = n ? fwrite(data, 1, n, f) : 0;
    int rc = fclose(f);
    return (w == n && rc == 0) ? 0 : -1;
}

int tu_read_file(const char *path, uint8_t **data, size_t *n)
{
    *data = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    tu_buf b = {0};
    uint8_t chunk[65536];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0)
        tu_buf_put(&b, chunk, r);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        tu_buf_free(&b);
        return -1;
    }
    *data = b.data ? b.data : malloc(1);
    *n = b.len;
    return 0;
}

int tu_copy_prefix(const char *src, const char *dst, size_t n)
{
    uint8_t *d;
    size_t len;
    if (tu_read_file(src, &d, &len) != 0)
        return -1;
    int rc = tu_write_file(dst, d, n < len ? n : len);
    free(d);
    return rc;
}

void tu_buf_put(tu_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap < b->len + n)
            ncap *= 2;
        uint8_t *nd = realloc(b->data, ncap);
        if (!nd)
            abort();
        b->data = nd;
        b->cap = ncap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

void tu_buf_byte(tu_buf *b, uint8_t v) { tu_buf_put(b, &v, 1); }

void tu_buf_u16le(tu_buf *b, uint16_t v)
{
    uint8_t p[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    tu_buf_put(b, p, 2);
}

void tu_buf_u32le(tu_buf *b, uint32_t v)
{
    uint8_t p[4];
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    tu_buf_put(b, p, 4);
}

void tu_buf_u64le(tu_buf *b, uint64_t v)
{
    uint8_t p[8];
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    tu_buf_put(b, p, 8);
}

void tu_buf_str(tu_buf *b, const char *s) { tu_buf_put(b, s, strlen(s)); }

void tu_buf_free(tu_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void tu_assert_contains_(const char *hay, const char *needle, const char *file, int line)
{
    if (hay && needle && strstr(hay, needle))
        return;
    print_error("%s:%d: expected \"%s\" to contain \"%s\"\n", file, line, hay ? hay : "(null)",
                needle ? needle : "(null)");
    _fail(file, line);
}

samc_ctx *tu_ctx(void)
{
    static samc_error err;
    static samc_ctx ctx;
    samc_error_clear(&err);
    ctx = (samc_ctx){.err = &err, .prep_slot = -1, .num_threads = 1};
    return &ctx;
}
