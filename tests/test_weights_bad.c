/* SPDX-License-Identifier: Apache-2.0 */
/* test_weights_bad.c - every malformed or hostile weight file must fail
 * cleanly: the right status code and a message that names the file and the
 * problem (and the key, where there is one).
 *
 * All bad inputs are built here, at run time, in a private temp dir:
 *   - PyTorch checkpoints: a small pickle emitter (pk_*) writes the exact
 *     opcode sequence torch.save uses for {"model": OrderedDict(...)}
 *     (cf. `python3 -c "import pickletools, zipfile; pickletools.dis(
 *     zipfile.ZipFile('x.pt').read('x/data.pkl'))"`), then libzip packs it
 *     with the storages as <archive>/data.pkl, <archive>/data/<key>,
 *     <archive>/version. A valid control checkpoint built the same way must
 *     load, so each failure is caused by the one defect introduced.
 *   - safetensors: header bytes written directly.
 *   - HDF5: written with the HDF5 C API.
 *   - truncations: prefixes of the committed fixtures (the first .pt and
 *     .safetensors in fixtures/ckpt, the first .h5 in fixtures).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <zip.h>

#include "core/base/error.h"
#include "core/io/weights.h"
#include "util/testutil.h"

static char *g_tmp;     /* per-run temp dir */
static int g_deflate;   /* write_pt_zip: deflate members instead of storing them */

static int setup(void **state)
{
    (void)state;
    g_tmp = tu_mkdtemp("weights-bad");
    return g_tmp ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(g_tmp);
    free(g_tmp);
    g_tmp = NULL;
    return 0;
}

/* Open `path` (by content), expect status `want` and every substring in
 * the NULL-terminated list, plus the file name. */
static void expect_fail_v(const char *path, samc_status want, const char *const *subs)
{
    samc_error err;
    samc_error_clear(&err);
    samc_weights *w = (samc_weights *)0x1;
    samc_status st = samc_weights_open(path, &w, &err);
    if (st != want)
        print_error("status %s (want %s): %s\n", samc_status_name(st), samc_status_name(want), err.msg);
    assert_int_equal(st, want);
    assert_int_equal(err.status, want);
    assert_null(w);
    tu_assert_contains(err.msg, path);
    for (; subs && *subs; subs++)
        tu_assert_contains(err.msg, *subs);
}
#define expect_fail(path, want, ...)                                                                   \
    do {                                                                                               \
        const char *const subs_[] = {__VA_ARGS__, NULL};                                               \
        expect_fail_v((path), (want), subs_);                                                          \
    } while (0)

static samc_weights *expect_ok(const char *path)
{
    samc_error err;
    samc_error_clear(&err);
    samc_weights *w = NULL;
    samc_status st = samc_weights_open(path, &w, &err);
    if (st)
        print_error("unexpected failure: %s\n", err.msg);
    assert_int_equal(st, SAMC_OK);
    assert_non_null(w);
    return w;
}

static char *tmp_path(const char *name) { return tu_join(g_tmp, name); }

/* ------------------------------------------------------------------------ */
/* A minimal pickle emitter (protocol 2, as torch.save writes it)           */
/* ------------------------------------------------------------------------ */

static void pk_op(tu_buf *b, uint8_t op) { tu_buf_byte(b, op); }
static void pk_str(tu_buf *b, const char *s)
{
    pk_op(b, 'X');
    tu_buf_u32le(b, (uint32_t)strlen(s));
    tu_buf_str(b, s);
}
static void pk_int(tu_buf *b, int64_t v)
{
    if (v >= 0 && v < 256) {
        pk_op(b, 'K');
        tu_buf_byte(b, (uint8_t)v);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        pk_op(b, 'J');
        tu_buf_u32le(b, (uint32_t)(int32_t)v);
    } else {
        pk_op(b, 0x8a);
        tu_buf_byte(b, 8);
        tu_buf_u64le(b, (uint64_t)v);
    }
}
static void pk_global(tu_buf *b, const char *mod, const char *name)
{
    pk_op(b, 'c');
    tu_buf_str(b, mod);
    tu_buf_byte(b, '\n');
    tu_buf_str(b, name);
    tu_buf_byte(b, '\n');
}
static void pk_int_tuple(tu_buf *b, int n, const int64_t *v)
{
    pk_op(b, '(');
    for (int i = 0; i < n; i++)
        pk_int(b, v[i]);
    pk_op(b, 't');
}

typedef struct pt_tensor {
    const char *key;
    const char *stype; /* "FloatStorage", ... */
    const char *skey;  /* storage key */
    int64_t snumel;
    int64_t offset;
    int ndim;
    int64_t shape[4], stride[4];
} pt_tensor;

/* torch._utils._rebuild_tensor_v2((persid), offset, size, stride, False, OrderedDict()) */
static void pk_tensor(tu_buf *b, const pt_tensor *t)
{
    pk_global(b, "torch._utils", "_rebuild_tensor_v2");
    pk_op(b, '(');
    pk_op(b, '(');
    pk_str(b, "storage");
    pk_global(b, "torch", t->stype);
    pk_str(b, t->skey);
    pk_str(b, "cpu");
    pk_int(b, t->snumel);
    pk_op(b, 't');
    pk_op(b, 'Q');
    pk_int(b, t->offset);
    pk_int_tuple(b, t->ndim, t->shape);
    pk_int_tuple(b, t->ndim, t->stride);
    pk_op(b, 0x89);
    pk_global(b, "collections", "OrderedDict");
    pk_op(b, ')');
    pk_op(b, 'R');
    pk_op(b, 't');
    pk_op(b, 'R');
}

/* {"model": OrderedDict(tensors...), "epoch": 3} */
static void pk_checkpoint(tu_buf *b, const pt_tensor *ts, int n)
{
    pk_op(b, 0x80);
    tu_buf_byte(b, 2);
    pk_op(b, '}');
    pk_op(b, '(');
    pk_str(b, "model");
    pk_global(b, "collections", "OrderedDict");
    pk_op(b, ')');
    pk_op(b, 'R');
    pk_op(b, '(');
    for (int i = 0; i < n; i++) {
        pk_str(b, ts[i].key);
        pk_tensor(b, &ts[i]);
    }
    pk_op(b, 'u');
    pk_str(b, "epoch");
    pk_int(b, 3);
    pk_op(b, 'u');
    pk_op(b, '.');
}

typedef struct zip_member {
    const char *name; /* relative to the archive dir, e.g. "data/0" */
    const void *data;
    size_t n;
} zip_member;

/* Write <archive>/data.pkl, the members and <archive>/version with libzip. */
static void write_pt_zip(const char *path, const char *archive, const tu_buf *pkl,
                         const zip_member *m, int nm)
{
    int zerr = 0;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    assert_non_null(za);
    char *names[32];
    int nn = 0;
    zip_member all[34];
    all[0] = (zip_member){"data.pkl", pkl ? pkl->data : NULL, pkl ? pkl->len : 0};
    int na = pkl ? 1 : 0;
    if (!pkl)
        all[0].name = NULL;
    for (int i = 0; i < nm && na < 33; i++)
        all[na++] = m[i];
    all[na++] = (zip_member){"version", "3\n", 2};
    for (int i = 0; i < na; i++) {
        if (!all[i].name)
            continue;
        names[nn] = tu_strdupf("%s/%s", archive, all[i].name);
        zip_source_t *src = zip_source_buffer(za, all[i].data, all[i].n, 0);
        assert_non_null(src);
        zip_int64_t idx = zip_file_add(za, names[nn], src, ZIP_FL_ENC_UTF_8);
        assert_true(idx >= 0);
        assert_int_equal(zip_set_file_compression(za, (zip_uint64_t)idx,
                                                  g_deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0),
                         0);
        nn++;
    }
    assert_int_equal(zip_close(za), 0);
    for (int i = 0; i < nn; i++)
        free(names[i]);
}

/* A checkpoint of the given tensors over storages "0".."k" holding
 * float32 values 0,1,2,... (storage i has `sn[i]` elements). */
static char *make_pt(const char *fname, const pt_tensor *ts, int n, const int64_t *sn, int ns)
{
    char *path = tmp_path(fname);
    tu_buf pkl = {0};
    pk_checkpoint(&pkl, ts, n);
    float *bufs[8] = {0};
    char names[8][32];
    zip_member m[8];
    for (int i = 0; i < ns; i++) {
        bufs[i] = malloc((size_t)(sn[i] ? sn[i] : 1) * sizeof(float));
        for (int64_t j = 0; j < sn[i]; j++)
            bufs[i][j] = (float)j;
        snprintf(names[i], sizeof names[i], "data/%d", i);
        m[i] = (zip_member){names[i], bufs[i], (size_t)sn[i] * sizeof(float)};
    }
    write_pt_zip(path, "archive", &pkl, m, ns);
    for (int i = 0; i < ns; i++)
        free(bufs[i]);
    tu_buf_free(&pkl);
    return path;
}

/* A zip whose data.pkl is exactly `pkl`. */
static char *make_pt_raw(const char *fname, const tu_buf *pkl)
{
    char *path = tmp_path(fname);
    float six[6] = {0, 1, 2, 3, 4, 5};
    zip_member m = {"data/0", six, sizeof six};
    write_pt_zip(path, "archive", pkl, &m, 1);
    return path;
}

static const pt_tensor T_GOOD = {"layer.weight", "FloatStorage", "0", 6, 0, 2, {2, 3}, {3, 1}};

/* ------------------------------------------------------------------------ */
/* Generic                                                                  */
/* ------------------------------------------------------------------------ */

static void test_missing_file(void **state)
{
    (void)state;
    char *p = tmp_path("does_not_exist.pt");
    expect_fail(p, SAMC_ERR_IO, "No such file");
    /* the format-specific entry points too */
    samc_error err;
    samc_weights *w;
    samc_status (*fns[3])(const char *, samc_weights **, samc_error *) = {
        samc_weights_open_pt, samc_weights_open_safetensors, samc_weights_open_h5};
    for (int i = 0; i < 3; i++) {
        samc_error_clear(&err);
        assert_int_equal(fns[i](p, &w, &err), SAMC_ERR_IO);
        assert_null(w);
        tu_assert_contains(err.msg, p);
    }
    free(p);
}

static void test_empty_file(void **state)
{
    (void)state;
    char *p = tmp_path("empty.safetensors");
    assert_int_equal(tu_write_file(p, "", 0), 0);
    expect_fail(p, SAMC_ERR_IO, "empty");
    samc_error err;
    samc_weights *w;
    samc_status (*fns[3])(const char *, samc_weights **, samc_error *) = {
        samc_weights_open_pt, samc_weights_open_safetensors, samc_weights_open_h5};
    for (int i = 0; i < 3; i++) {
        samc_error_clear(&err);
        assert_int_equal(fns[i](p, &w, &err), SAMC_ERR_IO);
        tu_assert_contains(err.msg, p);
        tu_assert_contains(err.msg, "empty");
    }
    free(p);
}

static void test_unknown_format(void **state)
{
    (void)state;
    char *p = tmp_path("garbage.bin");
    const char junk[] = "this is not a weight file at all";
    assert_int_equal(tu_write_file(p, junk, sizeof junk), 0);
    expect_fail(p, SAMC_ERR_FORMAT, "unknown weight file format");
    assert_int_equal(tu_write_file(p, "PK", 2), 0);
    expect_fail(p, SAMC_ERR_IO, "too short");
    /* a directory is not a file */
    expect_fail(g_tmp, SAMC_ERR_IO, "not a regular file");
    free(p);
}

/* ------------------------------------------------------------------------ */
/* Truncated fixtures                                                       */
/* ------------------------------------------------------------------------ */

/* First (by name) file in `dir` whose name ends with `ext`. */
static char *first_with_ext(const char *dir, const char *ext)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char *best = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name), k = strlen(ext);
        if (n > k && strcmp(e->d_name + n - k, ext) == 0 && (!best || strcmp(e->d_name, best) < 0)) {
            free(best);
            best = tu_strdupf("%s", e->d_name);
        }
    }
    closedir(d);
    if (!best)
        return NULL;
    char *p = tu_join(dir, best);
    free(best);
    return p;
}

static void truncate_and_check(const char *rel_dir, const char *ext)
{
    char *dir = tu_src_path(rel_dir);
    char *src = first_with_ext(dir, ext);
    if (!src)
        print_error("no *%s fixture in %s\n", ext, dir);
    assert_non_null(src);
    int64_t size = tu_file_size(src);
    assert_true(size > 64);
    /* the untruncated file loads */
    samc_weights *w = expect_ok(src);
    samc_weights_free(w);
    int64_t cuts[] = {1, 4, 8, 9, 16, 64, 200, size / 4, size / 2, size - 1024, size - 100, size - 8,
                      size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        if (cuts[i] <= 0 || cuts[i] >= size)
            continue;
        char name[64];
        snprintf(name, sizeof name, "trunc_%lld%s", (long long)cuts[i], ext);
        char *p = tmp_path(name);
        assert_int_equal(tu_copy_prefix(src, p, (size_t)cuts[i]), 0);
        samc_error err;
        samc_error_clear(&err);
        samc_weights *bad = (samc_weights *)0x1;
        samc_status st = samc_weights_open(p, &bad, &err);
        if (st == SAMC_OK)
            print_error("%s truncated to %lld bytes loaded without error\n", src, (long long)cuts[i]);
        assert_true(st == SAMC_ERR_IO || st == SAMC_ERR_FORMAT);
        assert_null(bad);
        tu_assert_contains(err.msg, p);
        free(p);
    }
    free(src);
    free(dir);
}

static void test_truncated_pt(void **state)
{
    (void)state;
    truncate_and_check("fixtures/ckpt", ".pt");
}

static void test_truncated_safetensors(void **state)
{
    (void)state;
    truncate_and_check("fixtures/ckpt", ".safetensors");
}

static void test_truncated_h5(void **state)
{
    (void)state;
    truncate_and_check("fixtures", ".h5");
}

/* ------------------------------------------------------------------------ */
/* PyTorch checkpoints                                                      */
/* ------------------------------------------------------------------------ */

static void test_pt_control(void **state)
{
    (void)state;
    /* valid: a plain tensor, a transposed view and an offset slice */
    pt_tensor ts[3] = {T_GOOD,
                       {"t.weight", "FloatStorage", "0", 6, 0, 2, {3, 2}, {1, 3}},
                       {"row", "FloatStorage", "1", 8, 5, 1, {3}, {1}}};
    int64_t sn[2] = {6, 8};
    char *p = make_pt("control.pt", ts, 3, sn, 2);
    samc_weights *w = expect_ok(p);
    assert_int_equal(samc_weights_count(w), 3);
    assert_string_equal(samc_weights_key(w, 0), "layer.weight");
    const samc_tensor *t = samc_weights_find(w, "t.weight");
    assert_non_null(t);
    const float want_t[6] = {0, 3, 1, 4, 2, 5};
    assert_memory_equal(t->data, want_t, sizeof want_t);
    t = samc_weights_find(w, "row");
    const float want_r[3] = {5, 6, 7};
    assert_memory_equal(t->data, want_r, sizeof want_r);
    assert_int_equal(samc_weights_get_format(w), SAMC_WEIGHTS_PT);
    samc_weights_free(w);
    free(p);

    /* the same, deflated: libzip inflates, the values are identical */
    g_deflate = 1;
    p = make_pt("control_deflate.pt", ts, 3, sn, 2);
    g_deflate = 0;
    w = expect_ok(p);
    t = samc_weights_find(w, "t.weight");
    assert_non_null(t);
    assert_memory_equal(t->data, want_t, sizeof want_t);
    samc_weights_free(w);
    free(p);
}

/* Flip one bit of the first occurrence of `pat` in the file. */
static void flip_in_file(const char *path, const void *pat, size_t n)
{
    uint8_t *d;
    size_t len;
    assert_int_equal(tu_read_file(path, &d, &len), 0);
    size_t i = 0;
    while (i + n <= len && memcmp(d + i, pat, n) != 0)
        i++;
    assert_true(i + n <= len);
    d[i + n / 2] ^= 0x10;
    assert_int_equal(tu_write_file(path, d, len), 0);
    free(d);
}

static void test_pt_crc(void **state)
{
    (void)state;
    /* a flipped bit in a storage entry: libzip's CRC check catches it */
    int64_t sn = 6;
    char *p = make_pt("crc_storage.pt", &T_GOOD, 1, &sn, 1);
    const float six[6] = {0, 1, 2, 3, 4, 5};
    flip_in_file(p, six, sizeof six);
    expect_fail(p, SAMC_ERR_FORMAT, "archive/data/0", "CRC");
    free(p);
    /* ... and in data.pkl */
    p = make_pt("crc_pkl.pt", &T_GOOD, 1, &sn, 1);
    flip_in_file(p, "layer.weight", 12);
    expect_fail(p, SAMC_ERR_FORMAT, "archive/data.pkl", "CRC");
    free(p);
}

static void test_pt_disallowed_global(void **state)
{
    (void)state;
    /* GLOBAL 'os system' + REDUCE: what a malicious checkpoint does */
    tu_buf b = {0};
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    pk_global(&b, "os", "system");
    pk_str(&b, "echo pwned > /tmp/samc_pwned");
    pk_op(&b, 0x85);
    pk_op(&b, 'R');
    pk_op(&b, '.');
    char *p = make_pt_raw("evil_global.pt", &b);
    expect_fail(p, SAMC_ERR_SECURITY, "pickle global 'os.system' is not allowed", "data.pkl");
    free(p);
    tu_buf_free(&b);

    /* the same with STACK_GLOBAL (protocol 4) */
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 4);
    pk_str(&b, "builtins");
    pk_str(&b, "eval");
    pk_op(&b, 0x93);
    pk_str(&b, "1+1");
    pk_op(&b, 0x85);
    pk_op(&b, 'R');
    pk_op(&b, '.');
    p = make_pt_raw("evil_stack_global.pt", &b);
    expect_fail(p, SAMC_ERR_SECURITY, "'builtins.eval' is not allowed");
    free(p);
    tu_buf_free(&b);

    /* a non-storage torch name where a storage class belongs */
    pt_tensor t = T_GOOD;
    t.stype = "load";
    int64_t sn = 6;
    p = make_pt("evil_storage.pt", &t, 1, &sn, 1);
    expect_fail(p, SAMC_ERR_SECURITY, "not allowed");
    free(p);
}

static void test_pt_deep_nesting(void **state)
{
    (void)state;
    tu_buf b = {0};
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    for (int i = 0; i < 100000; i++)
        pk_op(&b, '(');
    pk_op(&b, '.');
    char *p = make_pt_raw("deep_marks.pt", &b);
    expect_fail(p, SAMC_ERR_NOMEM, "nesting is deeper than");
    free(p);
    tu_buf_free(&b);

    /* 100000 nested lists (no MARKs): harmless for an iterative interpreter
     * (and within the memory budget), rejected because the result is not a
     * dict */
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    for (int i = 0; i < 100000; i++)
        pk_op(&b, ']');
    for (int i = 0; i < 99999; i++)
        pk_op(&b, 'a');
    pk_op(&b, '.');
    p = make_pt_raw("deep_lists.pt", &b);
    expect_fail(p, SAMC_ERR_FORMAT, "list, not a dict");
    free(p);
    tu_buf_free(&b);
}

static void test_pt_absurd_sizes(void **state)
{
    (void)state;
    int64_t sn = 6;
    /* a 2^40 x 2^40 view with zero strides over 6 elements */
    pt_tensor t = {"huge", "FloatStorage", "0", 6, 0, 2, {(int64_t)1 << 40, (int64_t)1 << 40}, {0, 0}};
    char *p = make_pt("absurd_shape.pt", &t, 1, &sn, 1);
    expect_fail(p, SAMC_ERR_NOMEM, "'huge'", "absurd size");
    free(p);
    /* a storage that claims 2^60 elements */
    pt_tensor t2 = T_GOOD;
    t2.snumel = (int64_t)1 << 60;
    p = make_pt("absurd_numel.pt", &t2, 1, &sn, 1);
    expect_fail(p, SAMC_ERR_NOMEM, "'layer.weight'", "absurd size");
    free(p);
    /* a string length running past the end */
    tu_buf b = {0};
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    pk_op(&b, 'X');
    tu_buf_u32le(&b, 0xffffffffu);
    tu_buf_str(&b, "abc");
    p = make_pt_raw("absurd_string.pt", &b);
    expect_fail(p, SAMC_ERR_FORMAT, "runs past the end");
    free(p);
    tu_buf_free(&b);
    /* a memo index of 4 billion */
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    pk_op(&b, '}');
    pk_op(&b, 'r');
    tu_buf_u32le(&b, 0xfffffff0u);
    pk_op(&b, '.');
    p = make_pt_raw("absurd_memo.pt", &b);
    expect_fail(p, SAMC_ERR_NOMEM, "memo index");
    free(p);
    tu_buf_free(&b);
    /* rank 9 */
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    pk_op(&b, '}');
    pk_str(&b, "x");
    pk_global(&b, "torch._utils", "_rebuild_tensor_v2");
    pk_op(&b, '(');
    pk_op(&b, '(');
    pk_str(&b, "storage");
    pk_global(&b, "torch", "FloatStorage");
    pk_str(&b, "0");
    pk_str(&b, "cpu");
    pk_int(&b, 6);
    pk_op(&b, 't');
    pk_op(&b, 'Q');
    pk_int(&b, 0);
    int64_t ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    pk_int_tuple(&b, 9, ones);
    pk_int_tuple(&b, 9, ones);
    pk_op(&b, 0x89);
    pk_op(&b, 'N');
    pk_op(&b, 't');
    pk_op(&b, 'R');
    pk_op(&b, 's');
    pk_op(&b, '.');
    p = make_pt_raw("rank9.pt", &b);
    expect_fail(p, SAMC_ERR_UNSUPPORTED, "rank 9");
    free(p);
    tu_buf_free(&b);
}

static void test_pt_storage_missing(void **state)
{
    (void)state;
    pt_tensor ts[2] = {T_GOOD, {"other.bias", "FloatStorage", "7", 4, 0, 1, {4}, {1}}};
    int64_t sn = 6;
    char *p = make_pt("storage_missing.pt", ts, 2, &sn, 1);
    expect_fail(p, SAMC_ERR_FORMAT, "'other.bias'", "storage '7'", "archive/data/7");
    free(p);
}

static void test_pt_storage_short(void **state)
{
    (void)state;
    pt_tensor t = T_GOOD;
    t.snumel = 6;
    int64_t sn = 5; /* 20 bytes written, 24 needed */
    char *p = make_pt("storage_short.pt", &t, 1, &sn, 1);
    expect_fail(p, SAMC_ERR_FORMAT, "'layer.weight'", "storage '0'", "20 bytes");
    free(p);
}

static void test_pt_view_out_of_bounds(void **state)
{
    (void)state;
    int64_t sn = 6;
    pt_tensor t = {"oob", "FloatStorage", "0", 6, 4, 1, {3}, {1}}; /* elements 4,5,6 */
    char *p = make_pt("view_oob.pt", &t, 1, &sn, 1);
    expect_fail(p, SAMC_ERR_FORMAT, "'oob'", "outside storage '0'");
    free(p);
    pt_tensor t2 = {"stride", "FloatStorage", "0", 6, 0, 2, {2, 3}, {4, 1}}; /* reaches 6 */
    p = make_pt("view_stride.pt", &t2, 1, &sn, 1);
    expect_fail(p, SAMC_ERR_FORMAT, "'stride'", "reaches element 6");
    free(p);
    pt_tensor t3 = {"neg", "FloatStorage", "0", 6, 0, 1, {2}, {-1}};
    p = make_pt("view_neg.pt", &t3, 1, &sn, 1);
    expect_fail(p, SAMC_ERR_FORMAT, "'neg'", "negative stride");
    free(p);
}

static void test_pt_bad_dtype(void **state)
{
    (void)state;
    int64_t sn = 6;
    pt_tensor t = T_GOOD;
    t.stype = "DoubleStorage";
    t.snumel = 3;
    t.shape[0] = 1;
    char *p = make_pt("double.pt", &t, 1, &sn, 1);
    expect_fail(p, SAMC_ERR_DTYPE, "'layer.weight'", "DoubleStorage");
    free(p);
    t.stype = "LongStorage";
    p = make_pt("long.pt", &t, 1, &sn, 1);
    expect_fail(p, SAMC_ERR_DTYPE, "'layer.weight'", "LongStorage");
    free(p);
}

static void test_pt_structure(void **state)
{
    (void)state;
    tu_buf b = {0};
    /* "model" holds a non-tensor entry */
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    pk_op(&b, '}');
    pk_str(&b, "model");
    pk_op(&b, '}');
    pk_str(&b, "a.weight");
    pk_tensor(&b, &T_GOOD);
    pk_op(&b, 's');
    pk_str(&b, "a.num_batches");
    pk_int(&b, 3);
    pk_op(&b, 's');
    pk_op(&b, 's');
    pk_op(&b, '.');
    char *p = make_pt_raw("model_int.pt", &b);
    expect_fail(p, SAMC_ERR_FORMAT, "'a.num_batches'", "int, not a tensor");
    free(p);
    tu_buf_free(&b);
    /* no "model" and the top level is not all tensors */
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    pk_op(&b, '}');
    pk_str(&b, "epoch");
    pk_int(&b, 3);
    pk_op(&b, 's');
    pk_op(&b, '.');
    p = make_pt_raw("no_model.pt", &b);
    expect_fail(p, SAMC_ERR_FORMAT, "no 'model' entry", "'epoch'");
    free(p);
    tu_buf_free(&b);
    /* pickle without STOP */
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    pk_op(&b, '}');
    p = make_pt_raw("no_stop.pt", &b);
    expect_fail(p, SAMC_ERR_FORMAT, "without STOP");
    free(p);
    tu_buf_free(&b);
    /* an opcode torch never writes (INST) */
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    tu_buf_str(&b, "ios\nsystem\n");
    pk_op(&b, '.');
    p = make_pt_raw("inst.pt", &b);
    expect_fail(p, SAMC_ERR_UNSUPPORTED, "opcode 0x69");
    free(p);
    tu_buf_free(&b);
    /* stack underflow */
    pk_op(&b, 0x80);
    tu_buf_byte(&b, 2);
    pk_op(&b, 's');
    pk_op(&b, '.');
    p = make_pt_raw("underflow.pt", &b);
    expect_fail(p, SAMC_ERR_FORMAT, "underflow");
    free(p);
    tu_buf_free(&b);
    /* a zip that is not a torch checkpoint */
    p = tmp_path("not_torch.pt");
    write_pt_zip(p, "archive", NULL, NULL, 0);
    expect_fail(p, SAMC_ERR_FORMAT, "data.pkl");
    free(p);
    /* a state-dict key set twice: Python's dict keeps one entry (the last
     * value), and so does samc, as torch.load would */
    pt_tensor ts[2] = {T_GOOD, T_GOOD};
    int64_t sn = 6;
    p = make_pt("dup.pt", ts, 2, &sn, 1);
    samc_weights *w = expect_ok(p);
    assert_int_equal(samc_weights_count(w), 1);
    samc_weights_free(w);
    free(p);
}

static void test_pt_big_endian(void **state)
{
    (void)state;
    tu_buf pkl = {0};
    pk_checkpoint(&pkl, &T_GOOD, 1);
    float six[6] = {0};
    zip_member m[2] = {{"data/0", six, sizeof six}, {"byteorder", "big", 3}};
    char *p = tmp_path("big_endian.pt");
    write_pt_zip(p, "archive", &pkl, m, 2);
    expect_fail(p, SAMC_ERR_UNSUPPORTED, "big-endian");
    /* "little" is fine */
    m[1].data = "little";
    m[1].n = 6;
    write_pt_zip(p, "archive", &pkl, m, 2);
    samc_weights_free(expect_ok(p));
    free(p);
    tu_buf_free(&pkl);
}

/* ------------------------------------------------------------------------ */
/* safetensors                                                              */
/* ------------------------------------------------------------------------ */

/* header JSON + `data_len` data bytes (value i at byte i). */
static char *make_st(const char *fname, const char *json, size_t data_len)
{
    char *p = tmp_path(fname);
    tu_buf b = {0};
    tu_buf_u64le(&b, strlen(json));
    tu_buf_str(&b, json);
    for (size_t i = 0; i < data_len; i++)
        tu_buf_byte(&b, (uint8_t)i);
    assert_int_equal(tu_write_file(p, b.data, b.len), 0);
    tu_buf_free(&b);
    return p;
}

static void test_st_control(void **state)
{
    (void)state;
    char *p = make_st("st_ok.safetensors",
                      "{\"__metadata__\":{\"format\":\"pt\"},"
                      "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
                      "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                      "\"e\":{\"dtype\":\"F16\",\"shape\":[0,3],\"data_offsets\":[16,16]}}   ",
                      16);
    samc_weights *w = expect_ok(p);
    assert_int_equal(samc_weights_count(w), 3);
    assert_string_equal(samc_weights_key(w, 0), "b"); /* header order */
    assert_int_equal(samc_weights_get_format(w), SAMC_WEIGHTS_SAFETENSORS);
    samc_weights_free(w);
    free(p);
}

static void test_st_header_beyond_file(void **state)
{
    (void)state;
    char *p = tmp_path("st_hdr_len.safetensors");
    tu_buf b = {0};
    tu_buf_u64le(&b, 5000);
    tu_buf_str(&b, "{\"a\":{}}");
    assert_int_equal(tu_write_file(p, b.data, b.len), 0);
    expect_fail(p, SAMC_ERR_IO, "header length 5000", "beyond the end of the file");
    tu_buf_free(&b);
    /* absurd header length */
    tu_buf_u64le(&b, (uint64_t)1 << 33);
    tu_buf_str(&b, "{\"a\":{}}");
    assert_int_equal(tu_write_file(p, b.data, b.len), 0);
    samc_error err;
    samc_error_clear(&err);
    samc_weights *w;
    assert_int_equal(samc_weights_open_safetensors(p, &w, &err), SAMC_ERR_FORMAT);
    tu_assert_contains(err.msg, p);
    tu_assert_contains(err.msg, "exceeds the limit");
    tu_buf_free(&b);
    free(p);
}

static void test_st_offsets(void **state)
{
    (void)state;
    char *p = make_st("st_outside.safetensors",
                      "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 12);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "outside the data section");
    free(p);
    p = make_st("st_begin_end.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 12);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "begin 8 > end 4");
    free(p);
    p = make_st("st_three.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 12);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "data_offsets");
    free(p);
    p = make_st("st_negoff.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 12);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "data_offsets");
    free(p);
    p = make_st("st_fracoff.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0.5,4]}}", 12);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "data_offsets");
    free(p);
    p = make_st("st_count.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,12]}}", 12);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "cover 12 bytes", "need 8");
    free(p);
    p = make_st("st_overlap.safetensors",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]},"
                "\"c\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[6,10]}}",
                16);
    expect_fail(p, SAMC_ERR_FORMAT, "'a'", "'c'", "overlap");
    free(p);
    /* overlap hidden behind a zero-length tensor */
    p = make_st("st_overlap2.safetensors",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                16);
    expect_fail(p, SAMC_ERR_FORMAT, "'a'", "'z'", "overlap");
    free(p);
}

static void test_st_dtype(void **state)
{
    (void)state;
    char *p = make_st("st_i64.safetensors",
                      "{\"steps\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8);
    expect_fail(p, SAMC_ERR_DTYPE, "'steps'", "'I64'");
    free(p);
    p = make_st("st_f64.safetensors",
                "{\"w\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8);
    expect_fail(p, SAMC_ERR_DTYPE, "'w'", "'F64'");
    free(p);
}

static void test_st_bad_json(void **state)
{
    (void)state;
    char *p = make_st("st_json.safetensors", "{\"w\": {\"dtype\": \"F32\", \"shape\": [1", 8);
    expect_fail(p, SAMC_ERR_FORMAT, "not valid JSON");
    free(p);
    p = make_st("st_notobj.safetensors", "{\"w\": 3}", 8);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "not a JSON object");
    free(p);
    /* not an object at the top: only reachable through the explicit entry point */
    p = make_st("st_array.safetensors", "[1, 2, 3]", 8);
    samc_error err;
    samc_error_clear(&err);
    samc_weights *w;
    assert_int_equal(samc_weights_open_safetensors(p, &w, &err), SAMC_ERR_FORMAT);
    tu_assert_contains(err.msg, p);
    tu_assert_contains(err.msg, "not a JSON object");
    free(p);
    p = make_st("st_noshape.safetensors", "{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 8);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "shape");
    free(p);
    p = make_st("st_negshape.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 8);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "shape entry 0");
    free(p);
    p = make_st("st_fracshape.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1.5],\"data_offsets\":[0,4]}}", 8);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "shape entry 1");
    free(p);
    p = make_st("st_strshape.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]}}", 8);
    expect_fail(p, SAMC_ERR_FORMAT, "'w'", "shape entry 0");
    free(p);
    p = make_st("st_hugeshape.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}",
                8);
    expect_fail(p, SAMC_ERR_NOMEM, "'w'", "absurd size");
    free(p);
    p = make_st("st_dup.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                8);
    /* as serde (the reference): the last 'w' wins, leaving [0,4) unused */
    expect_fail(p, SAMC_ERR_FORMAT, "4 unused bytes before tensor 'w'");
    free(p);
}

/* ------------------------------------------------------------------------ */
/* HDF5                                                                     */
/* ------------------------------------------------------------------------ */

static void h5_float_dataset(hid_t loc, const char *name, hid_t type, int nd, const hsize_t *dims,
                             const void *data, hid_t memtype)
{
    hid_t sp = nd ? H5Screate_simple(nd, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t ds = H5Dcreate2(loc, name, type, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(ds >= 0);
    assert_true(H5Dwrite(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(ds);
    H5Pclose(lcpl);
    H5Sclose(sp);
}

static void test_h5_no_weights(void **state)
{
    (void)state;
    char *p = tmp_path("no_weights.h5");
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gcreate2(f, "model", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    float v[2] = {1, 2};
    hsize_t d = 2;
    h5_float_dataset(g, "x", H5T_IEEE_F32LE, 1, &d, v, H5T_NATIVE_FLOAT);
    H5Gclose(g);
    H5Fclose(f);
    expect_fail(p, SAMC_ERR_KEY, "no /weights group");
    free(p);
}

static void test_h5_bad_datasets(void **state)
{
    (void)state;
    char *p = tmp_path("int_weights.h5");
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gcreate2(f, "weights", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    float v[2] = {1, 2};
    int iv[2] = {1, 2};
    hsize_t d = 2;
    h5_float_dataset(g, "a.weight", H5T_IEEE_F32LE, 1, &d, v, H5T_NATIVE_FLOAT);
    h5_float_dataset(g, "b.num_batches_tracked", H5T_STD_I32LE, 1, &d, iv, H5T_NATIVE_INT);
    H5Gclose(g);
    H5Fclose(f);
    expect_fail(p, SAMC_ERR_DTYPE, "'/weights/b.num_batches_tracked'", "integer");
    free(p);

    /* /weights is a dataset, not a group */
    p = tmp_path("weights_dataset.h5");
    f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    h5_float_dataset(f, "weights", H5T_IEEE_F32LE, 1, &d, v, H5T_NATIVE_FLOAT);
    H5Fclose(f);
    expect_fail(p, SAMC_ERR_FORMAT, "/weights is not a group");
    free(p);

    /* a soft link under /weights */
    p = tmp_path("soft_link.h5");
    f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    g = H5Gcreate2(f, "weights", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    h5_float_dataset(f, "other", H5T_IEEE_F32LE, 1, &d, v, H5T_NATIVE_FLOAT);
    assert_true(H5Lcreate_soft("/other", g, "linked", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Gclose(g);
    H5Fclose(f);
    expect_fail(p, SAMC_ERR_FORMAT, "'/weights/linked'", "link");
    free(p);
}

static void test_h5_control(void **state)
{
    (void)state;
    /* float64 and float16-free control: names with dots, a nested group, a scalar */
    char *p = tmp_path("h5_ok.h5");
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g = H5Gcreate2(f, "weights", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    double dv[3] = {0.5, -2, 1e-3};
    float s = 7;
    hsize_t d = 3;
    h5_float_dataset(g, "x.y.z", H5T_IEEE_F64LE, 1, &d, dv, H5T_NATIVE_DOUBLE);
    h5_float_dataset(g, "grp/scalar", H5T_IEEE_F32LE, 0, NULL, &s, H5T_NATIVE_FLOAT);
    H5Gclose(g);
    H5Fclose(f);
    samc_weights *w = expect_ok(p);
    assert_int_equal(samc_weights_count(w), 2);
    const samc_tensor *t = samc_weights_find(w, "x.y.z");
    assert_non_null(t);
    assert_int_equal(t->ndim, 1);
    assert_true(t->data[0] == 0.5f && t->data[1] == -2.0f && t->data[2] == (float)1e-3);
    t = samc_weights_find(w, "grp.scalar");
    assert_non_null(t);
    assert_int_equal(t->ndim, 0);
    assert_true(t->data[0] == 7.0f);
    samc_weights_free(w);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_unknown_format),
        cmocka_unit_test(test_truncated_pt),
        cmocka_unit_test(test_truncated_safetensors),
        cmocka_unit_test(test_truncated_h5),
        cmocka_unit_test(test_pt_control),
        cmocka_unit_test(test_pt_crc),
        cmocka_unit_test(test_pt_disallowed_global),
        cmocka_unit_test(test_pt_deep_nesting),
        cmocka_unit_test(test_pt_absurd_sizes),
        cmocka_unit_test(test_pt_storage_missing),
        cmocka_unit_test(test_pt_storage_short),
        cmocka_unit_test(test_pt_view_out_of_bounds),
        cmocka_unit_test(test_pt_bad_dtype),
        cmocka_unit_test(test_pt_structure),
        cmocka_unit_test(test_pt_big_endian),
        cmocka_unit_test(test_st_control),
        cmocka_unit_test(test_st_header_beyond_file),
        cmocka_unit_test(test_st_offsets),
        cmocka_unit_test(test_st_dtype),
        cmocka_unit_test(test_st_bad_json),
        cmocka_unit_test(test_h5_no_weights),
        cmocka_unit_test(test_h5_bad_datasets),
        cmocka_unit_test(test_h5_control),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
