/* SPDX-License-Identifier: Apache-2.0 */
/* testutil.h - small generic helpers shared by the cmocka tests.
 *
 * Paths: SAMC_SOURCE_DIR / SAMC_BINARY_DIR come from CTest; when a test is
 * run by hand without them, the source dir is guessed by looking for
 * CMakeLists.txt in ".", ".." and "../..".
 * Strings returned as `char *` are malloc'd; free them.
 */
#ifndef SAMC_TESTS_TESTUTIL_H
#define SAMC_TESTS_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Repository root (never NULL). */
const char *tu_source_dir(void);
/* Build directory (SAMC_BINARY_DIR, else "."). */
const char *tu_binary_dir(void);
/* "<source dir>/<rel>". */
char *tu_src_path(const char *rel);
/* "<a>/<b>". */
char *tu_join(const char *a, const char *b);
/* printf into a malloc'd string. */
char *tu_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

bool tu_file_exists(const char *path);
/* Size of a file in bytes, -1 when it cannot be stat'ed. */
int64_t tu_file_size(const char *path);

/* A fresh private directory under $TMPDIR (or /tmp), named after `tag`. */
char *tu_mkdtemp(const char *tag);
/* Remove a directory tree (only what the test created). 0 on success. */
int tu_rmtree(const char *dir);

/* Whole-file helpers; 0 on success. */
int tu_write_file(const char *path, const void *data, size_t n);
int tu_read_file(const char *path, uint8_t **data, size_t *n);
/* Write the first `n` bytes of `src` to `dst` (n may exceed the size). */
int tu_copy_prefix(const char *src, const char *dst, size_t n);

/* A growable byte buffer for building test inputs. */
typedef struct tu_buf {
    uint8_t *data;
    size_t len, cap;
} tu_buf;
void tu_buf_put(tu_buf *b, const void *p, size_t n);
void tu_buf_byte(tu_buf *b, uint8_t v);
void tu_buf_u16le(tu_buf *b, uint16_t v);
void tu_buf_u32le(tu_buf *b, uint32_t v);
void tu_buf_u64le(tu_buf *b, uint64_t v);
void tu_buf_str(tu_buf *b, const char *s); /* without the NUL */
void tu_buf_free(tu_buf *b);

/* cmocka-friendly check that `hay` contains `needle`; on failure prints both
 * and fails the current test. */
/* A layer body's context (one thread, no workspace), its error record
 * cleared on every call. */
struct samc_ctx;
struct samc_ctx *tu_ctx(void);

#define tu_assert_contains(hay, needle) tu_assert_contains_((hay), (needle), __FILE__, __LINE__)
void tu_assert_contains_(const char *hay, const char *needle, const char *file, int line);

#endif
