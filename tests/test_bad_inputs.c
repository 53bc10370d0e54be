/* SPDX-License-Identifier: Apache-2.0 */
/* test_bad_inputs.c - the catalogue of bad inputs (tests/bad_inputs/README.md,
 * docs/hostile_input.md).
 *
 * Every case builds its input at run time in a private temp dir (a few come
 * from the fixtures or from tests/fuzz_regress/), then runs it
 *   - through the public C API (samc.h, plus the parity and frames calls),
 *     expecting a failure status and a message with the listed substrings
 *     (the file, key or argument and what was expected), and
 *   - through the `samc` command line, expecting exit status 1 or 2 (never a
 *     signal), the substrings on stderr, no sanitizer report on stderr (the
 *     CLI inherits ASAN_OPTIONS, so a leak or overflow in the sanitizer build
 *     fails here), and an --out directory holding no file at all (outputs
 *     are written under temporary names and renamed only at the end).
 * Controls check that the accepted inputs (1x1, grayscale, RGBA, 16-bit
 * images, non-finite weights with --allow-nonfinite) work through both.
 *
 * `test_bad_inputs --list` prints the catalogue as a Markdown table.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <hdf5.h>
#include <zip.h>

#include "core/io/image_io.h"
#include "parity/parity.h"
#include "samc.h"
#include "util/testutil.h"

/* ------------------------------------------------------------------------ */
/* Shared state: paths, a predictor with the demo image set, a tracker       */
/* ------------------------------------------------------------------------ */

static char *g_tmp, *g_samc, *g_ck, *g_cfg, *g_st, *g_img, *g_vd, *g_vf, *g_dump, *g_s3;
static char *g_in; /* the case's input path */
static samc_predictor *g_pred;
static samc_tracker *g_trk;
static int g_img_w, g_img_h;

static char *P(const char *name) { return tu_join(g_tmp, name); }

/* ------------------------------------------------------------------------ */
/* Builders                                                                   */
/* ------------------------------------------------------------------------ */

static void write_bytes(const char *name, const void *d, size_t n)
{
    char *p = P(name);
    assert_int_equal(tu_write_file(p, d, n), 0);
    free(p);
}

static void write_str(const char *name, const char *s) { write_bytes(name, s, strlen(s)); }

static void copy_prefix(const char *src, const char *name, size_t n)
{
    char *p = P(name);
    assert_int_equal(tu_copy_prefix(src, p, n), 0);
    free(p);
}

/* Deterministic junk (xorshift), optionally after a magic prefix. */
static void write_garbage(const char *name, const char *magic, size_t magic_n, size_t n)
{
    uint8_t *b = malloc(n);
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        b[i] = (uint8_t)x;
    }
    memcpy(b, magic, magic_n);
    write_bytes(name, b, n);
    free(b);
}

/* --- PNG by hand (stored deflate blocks), any size / depth / colour type -- */

static uint32_t crc32_of(const uint8_t *p, size_t n, uint32_t c)
{
    c = ~c;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static void be32(tu_buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    tu_buf_put(b, x, 4);
}

static void png_chunk(tu_buf *b, const char *type, const uint8_t *d, size_t n)
{
    be32(b, (uint32_t)n);
    size_t start = b->len;
    tu_buf_put(b, type, 4);
    if (n)
        tu_buf_put(b, d, n);
    be32(b, crc32_of(b->data + start, n + 4, 0));
}

/* rows: h rows of (1 filter byte + row bytes); NULL writes no IDAT data rows. */
/* A PLTE chunk for write_png to add after IHDR (palette images), or none. */
static const uint8_t *g_plte;
static size_t g_plte_n;

static void write_png(const char *name, uint32_t w, uint32_t h, int depth, int ctype, const uint8_t *raw,
                      size_t raw_n)
{
    tu_buf b = {0}, z = {0};
    tu_buf_put(&b, "\x89PNG\r\n\x1a\n", 8);
    uint8_t ihdr[13];
    for (int i = 0; i < 4; i++)
        ihdr[i] = (uint8_t)(w >> (24 - 8 * i)), ihdr[4 + i] = (uint8_t)(h >> (24 - 8 * i));
    ihdr[8] = (uint8_t)depth, ihdr[9] = (uint8_t)ctype, ihdr[10] = ihdr[11] = ihdr[12] = 0;
    png_chunk(&b, "IHDR", ihdr, 13);
    if (g_plte)
        png_chunk(&b, "PLTE", g_plte, g_plte_n);
    /* zlib stream of stored blocks */
    tu_buf_byte(&z, 0x78), tu_buf_byte(&z, 0x01);
    size_t pos = 0;
    do {
        size_t k = raw_n - pos > 65535 ? 65535 : raw_n - pos;
        tu_buf_byte(&z, pos + k == raw_n ? 1 : 0);
        tu_buf_u16le(&z, (uint16_t)k), tu_buf_u16le(&z, (uint16_t)~k);
        if (k)
            tu_buf_put(&z, raw + pos, k);
        pos += k;
    } while (pos < raw_n);
    uint32_t a = 1, s2 = 0;
    for (size_t i = 0; i < raw_n; i++)
        a = (a + raw[i]) % 65521, s2 = (s2 + a) % 65521;
    be32(&z, (s2 << 16) | a);
    png_chunk(&b, "IDAT", z.data, z.len);
    png_chunk(&b, "IEND", NULL, 0);
    write_bytes(name, b.data, b.len);
    tu_buf_free(&b), tu_buf_free(&z);
}

/* A w x h image of `ch` channels of `depth` bits with pixel value f(x,y,c). */
static void write_png_pattern(const char *name, int w, int h, int depth, int ctype, int ch)
{
    const int bpc = depth / 8, row = 1 + w * ch * bpc;
    uint8_t *raw = calloc((size_t)row * h, 1);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < ch; c++) {
                unsigned v = (unsigned)(x * 40 + y * 7 + c * 60) & 0xFF;
                uint8_t *p = raw + (size_t)y * row + 1 + ((size_t)x * ch + c) * bpc;
                p[0] = (uint8_t)v;
                if (bpc == 2)
                    p[1] = 0x5A; /* low byte: dropped by the 16 -> 8 bit conversion */
            }
    write_png(name, (uint32_t)w, (uint32_t)h, depth, ctype, raw, (size_t)row * h);
    free(raw);
}

/* --- pickles and torch zips ------------------------------------------------ */

static void pk_str(tu_buf *b, const char *s)
{
    tu_buf_byte(b, 'X'), tu_buf_u32le(b, (uint32_t)strlen(s)), tu_buf_str(b, s);
}

static void pk_int(tu_buf *b, int64_t v)
{
    tu_buf_byte(b, 0x8a), tu_buf_byte(b, 8);
    tu_buf_u64le(b, (uint64_t)v);
}

/* {"model": {key: tensor(storage, 0, size, stride)}} with one storage. */
static void pk_one_tensor(tu_buf *b, const char *key, const char *stype, int64_t numel, int nd, const int64_t *size,
                          const int64_t *stride, int value_is_int)
{
    tu_buf_put(b, "\x80\x02}(", 4);
    pk_str(b, "model");
    tu_buf_byte(b, '}'), tu_buf_byte(b, '(');
    pk_str(b, key);
    if (value_is_int) {
        pk_int(b, 7);
    } else {
        tu_buf_str(b, "ctorch._utils\n_rebuild_tensor_v2\n(");
        tu_buf_byte(b, '(');
        pk_str(b, "storage");
        tu_buf_str(b, "ctorch\n"), tu_buf_str(b, stype), tu_buf_byte(b, '\n');
        pk_str(b, "0"), pk_str(b, "cpu"), pk_int(b, numel);
        tu_buf_put(b, "tQ", 2);
        pk_int(b, 0);
        tu_buf_byte(b, '(');
        for (int i = 0; i < nd; i++)
            pk_int(b, size[i]);
        tu_buf_put(b, "t(", 2);
        for (int i = 0; i < nd; i++)
            pk_int(b, stride[i]);
        tu_buf_put(b, "t\x89}tR", 5);
    }
    tu_buf_put(b, "uu.", 3);
}

/* archive/data.pkl, archive/data/0 (storage bytes), archive/byteorder. */
static void write_pt(const char *name, const tu_buf *pkl, const void *storage, size_t sn, const char *byteorder)
{
    char *p = P(name);
    int ze = 0;
    zip_t *z = zip_open(p, ZIP_CREATE | ZIP_TRUNCATE, &ze);
    assert_non_null(z);
    zip_source_t *s = zip_source_buffer(z, pkl->data, pkl->len, 0);
    assert_true(zip_file_add(z, "archive/data.pkl", s, 0) >= 0);
    if (storage) {
        s = zip_source_buffer(z, storage, sn, 0);
        assert_true(zip_file_add(z, "archive/data/0", s, 0) >= 0);
    }
    if (byteorder) {
        s = zip_source_buffer(z, byteorder, strlen(byteorder), 0);
        assert_true(zip_file_add(z, "archive/byteorder", s, 0) >= 0);
    }
    s = zip_source_buffer(z, "3\n", 2, 0);
    assert_true(zip_file_add(z, "archive/version", s, 0) >= 0);
    assert_int_equal(zip_close(z), 0);
    free(p);
}

static const int64_t SZ23[2] = {2, 3}, ST23[2] = {3, 1};
static const float SIX[6] = {1, 2, 3, 4, 5, 6};

static void mk_pt_global(void)
{
    tu_buf b = {0};
    tu_buf_str(&b, "\x80\x02" "cos\nsystem\n");
    pk_str(&b, "echo owned");
    tu_buf_put(&b, "\x85R.", 3);
    write_pt("in.pt", &b, NULL, 0, "little");
    tu_buf_free(&b);
}

static void mk_pt_nesting(void)
{
    tu_buf b = {0};
    tu_buf_put(&b, "\x80\x02", 2);
    for (int i = 0; i < 5000; i++)
        tu_buf_byte(&b, '(');
    tu_buf_byte(&b, '.');
    write_pt("in.pt", &b, NULL, 0, "little");
    tu_buf_free(&b);
}

static void mk_pt_absurd(void)
{
    tu_buf b = {0};
    const int64_t size[2] = {1 << 20, 1 << 20}, stride[2] = {1 << 20, 1};
    pk_one_tensor(&b, "layer.weight", "FloatStorage", (int64_t)1 << 40, 2, size, stride, 0);
    write_pt("in.pt", &b, SIX, sizeof SIX, "little");
    tu_buf_free(&b);
}

static void mk_pt_broadcast(void)
{
    tu_buf b = {0};
    pk_one_tensor(&b, "layer.weight", "FloatStorage", 1, 1, (const int64_t[]){(int64_t)1 << 30},
                  (const int64_t[]){0}, 0);
    write_pt("in.pt", &b, SIX, 4, "little");
    tu_buf_free(&b);
}

static void mk_pt_view(void)
{
    tu_buf b = {0};
    pk_one_tensor(&b, "layer.weight", "FloatStorage", 4, 2, SZ23, ST23, 0);
    write_pt("in.pt", &b, SIX, 16, "little");
    tu_buf_free(&b);
}

static void mk_pt_no_storage(void)
{
    tu_buf b = {0};
    pk_one_tensor(&b, "layer.weight", "FloatStorage", 6, 2, SZ23, ST23, 0);
    write_pt("in.pt", &b, NULL, 0, "little");
    tu_buf_free(&b);
}

static void mk_pt_big_endian(void)
{
    tu_buf b = {0};
    pk_one_tensor(&b, "layer.weight", "FloatStorage", 6, 2, SZ23, ST23, 0);
    write_pt("in.pt", &b, SIX, sizeof SIX, "big");
    tu_buf_free(&b);
}

static void mk_pt_not_tensor(void)
{
    tu_buf b = {0};
    pk_one_tensor(&b, "layer.weight", "FloatStorage", 6, 2, SZ23, ST23, 1);
    write_pt("in.pt", &b, SIX, sizeof SIX, "little");
    tu_buf_free(&b);
}

static void mk_pt_long_storage(void)
{
    tu_buf b = {0};
    pk_one_tensor(&b, "layer.steps", "LongStorage", 3, 1, (const int64_t[]){3}, (const int64_t[]){1}, 0);
    write_pt("in.pt", &b, SIX, 24, "little");
    tu_buf_free(&b);
}

static void mk_pt_empty(void) { write_bytes("in.pt", "", 0); }
static void mk_pt_truncated(void) { copy_prefix(g_ck, "in.pt", 4000); }
static void mk_pt_garbage(void) { write_garbage("in.pt", "PK\x03\x04", 4, 4096); }

/* One byte of the fixture's data.pkl flipped: the zip CRC no longer matches. */
static void mk_pt_crc(void)
{
    uint8_t *d;
    size_t n;
    assert_int_equal(tu_read_file(g_ck, &d, &n), 0);
    size_t at = 0;
    while (at + 8 < n && memcmp(d + at, "data.pkl", 8))
        at++;
    assert_true(at + 400 < n);
    d[at + 8 + 300] ^= 0x01; /* inside the stored data.pkl (its local header comes first) */
    write_bytes("in.pt", d, n);
    free(d);
}

/* --- safetensors ------------------------------------------------------------ */

static void write_st(const char *name, const char *json, const void *data, size_t n, uint64_t hdr_len_override)
{
    tu_buf b = {0};
    tu_buf_u64le(&b, hdr_len_override ? hdr_len_override : strlen(json));
    tu_buf_str(&b, json);
    if (n)
        tu_buf_put(&b, data, n);
    write_bytes(name, b.data, b.len);
    tu_buf_free(&b);
}

static void mk_st_empty(void) { write_bytes("in.safetensors", "", 0); }
static void mk_st_truncated(void) { copy_prefix(g_st, "in.safetensors", 200000); }
static void mk_st_garbage(void) { write_garbage("in.safetensors", "", 0, 4096); }
static void mk_st_hdr_beyond(void)
{
    write_st("in.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", SIX, 4, 4096);
}
static void mk_st_offsets_out(void)
{
    write_st("in.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[250],\"data_offsets\":[0,1000]}}", SIX, 24, 0);
}
static void mk_st_overlap(void)
{
    write_st("in.safetensors",
             "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
             "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}",
             SIX, 24, 0);
}
static void mk_st_not_json(void) { write_st("in.safetensors", "{\"a\": {dtype: F32, shape: [1]", SIX, 4, 0); }
static void mk_st_bytecount(void)
{
    write_st("in.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,12]}}", SIX, 24, 0);
}
static void mk_st_begin_end(void)
{
    write_st("in.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[16,8]}}", SIX, 24, 0);
}

/* The fixture safetensors with its header edited by `fn` (data unchanged
 * unless fn writes into it: it gets the data section). */
typedef void (*st_edit_fn)(cJSON *hdr, uint8_t *data, size_t n);

static void mk_st_edited(st_edit_fn fn)
{
    uint8_t *d;
    size_t n;
    assert_int_equal(tu_read_file(g_st, &d, &n), 0);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--)
        hl = (hl << 8) | d[i];
    cJSON *h = cJSON_ParseWithLength((const char *)d + 8, (size_t)hl);
    assert_non_null(h);
    fn(h, d + 8 + hl, n - 8 - hl);
    /* repack: the entries left, in header order, tile the data section (a
     * safetensors file has no unused bytes) */
    const uint8_t *old = d + 8 + hl;
    uint8_t *nd = malloc(n);
    size_t at = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, h)
    {
        cJSON *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
        if (!of)
            continue;
        const size_t b = (size_t)cJSON_GetArrayItem(of, 0)->valuedouble, len = (size_t)cJSON_GetArrayItem(of, 1)->valuedouble - b;
        memcpy(nd + at, old + b, len);
        cJSON_SetNumberValue(cJSON_GetArrayItem(of, 0), (double)at);
        cJSON_SetNumberValue(cJSON_GetArrayItem(of, 1), (double)(at + len));
        at += len;
    }
    char *js = cJSON_PrintUnformatted(h);
    write_st("in.safetensors", js, nd, at, 0);
    cJSON_free(js);
    cJSON_Delete(h);
    free(nd);
    free(d);
}

#define KEY_EDITED "image_encoder.neck.convs.0.conv.weight"

static void ed_missing(cJSON *h, uint8_t *d, size_t n) { (void)d, (void)n, cJSON_DeleteItemFromObjectCaseSensitive(h, KEY_EDITED); }

static void ed_shape(cJSON *h, uint8_t *d, size_t n)
{
    (void)d, (void)n;
    cJSON *sh = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(h, KEY_EDITED), "shape");
    /* (O, I, 1, 1) -> (I, O, 1, 1): the same bytes, a different shape */
    cJSON *a = cJSON_GetArrayItem(sh, 0), *b = cJSON_GetArrayItem(sh, 1);
    double t = a->valuedouble;
    cJSON_SetNumberValue(a, b->valuedouble);
    cJSON_SetNumberValue(b, t);
}

static void ed_unexpected(cJSON *h, uint8_t *d, size_t n)
{
    (void)d, (void)n;
    cJSON_AddItemToObject(h, "extra.optimizer_state",
                          cJSON_Parse("{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}"));
}

static void poke(cJSON *h, uint8_t *d, float v)
{
    cJSON *of = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(h, KEY_EDITED), "data_offsets");
    const size_t begin = (size_t)cJSON_GetArrayItem(of, 0)->valuedouble;
    memcpy(d + begin + 4 * 5, &v, 4); /* flat index 5 */
}

static void ed_nan(cJSON *h, uint8_t *d, size_t n) { (void)n, poke(h, d, NAN); }
static void ed_inf(cJSON *h, uint8_t *d, size_t n) { (void)n, poke(h, d, -INFINITY); }

static void mk_missing_key(void) { mk_st_edited(ed_missing); }
static void mk_wrong_shape(void) { mk_st_edited(ed_shape); }
static void mk_unexpected_key(void) { mk_st_edited(ed_unexpected); }
static void mk_nan(void) { mk_st_edited(ed_nan); }
static void mk_inf(void) { mk_st_edited(ed_inf); }

/* --- HDF5 -------------------------------------------------------------------- */

static hid_t h5_new(const char *name)
{
    char *p = P(name);
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    free(p);
    assert_true(f >= 0);
    return f;
}

static void h5_str_attr(hid_t loc, const char *name, const char *const *vals, int n)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    hsize_t dim = (hsize_t)n;
    hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
    hid_t a = H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, vals);
    H5Aclose(a), H5Sclose(sp), H5Tclose(t);
}

static void h5_dataset(hid_t loc, const char *name, hsize_t n, hid_t dcpl, int write)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ds = H5Dcreate2(loc, name, H5T_IEEE_F32LE, sp, lcpl, dcpl, H5P_DEFAULT);
    assert_true(ds >= 0);
    if (write) {
        float *z = calloc((size_t)n, sizeof *z);
        H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, z);
        free(z);
    }
    H5Dclose(ds), H5Sclose(sp), H5Pclose(lcpl);
}

static void mk_h5_empty(void) { write_bytes("in.h5", "", 0); }
static void mk_h5_truncated(void) { copy_prefix(g_dump, "in.h5", 4096); }
static void mk_h5_garbage(void) { write_garbage("in.h5", "\x89HDF\r\n\x1a\n", 8, 4096); }

static void mk_h5_not_dump(void)
{
    hid_t f = h5_new("in.h5");
    h5_dataset(f, "weights/a", 4, H5P_DEFAULT, 1);
    H5Fclose(f);
}

static void mk_h5_two_strings(void)
{
    hid_t f = h5_new("in.h5");
    const char *v[2] = {"samc-parity-dump", "x"};
    h5_str_attr(f, "format", v, 2);
    H5Fclose(f);
}

static void mk_h5_config_two_strings(void)
{
    hid_t f = h5_new("in.h5");
    hid_t g = H5Gcreate2(f, "model", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const char *v[2] = {"{}", "{}"};
    h5_str_attr(g, "config_json", v, 2);
    H5Gclose(g), H5Fclose(f);
}

static void mk_h5_never_written(void)
{
    hid_t f = h5_new("in.h5");
    h5_dataset(f, "weights/huge", ((hsize_t)1 << 31) - 1, H5P_DEFAULT, 0);
    H5Fclose(f);
}

static void mk_h5_external(void)
{
    hid_t f = h5_new("in.h5");
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_external(dcpl, "/etc/hostname", 0, 4 * 4096);
    h5_dataset(f, "weights/ext", 4096, dcpl, 0);
    H5Pclose(dcpl), H5Fclose(f);
}

static void frame_copy(const char *dir, const char *name, size_t prefix);

/* --- images ------------------------------------------------------------------- */

static void mk_img_empty(void) { write_bytes("in.png", "", 0); }
static void mk_img_truncated(void) { copy_prefix(g_img, "in.png", 3000); }
static void mk_img_garbage(void) { write_garbage("in.png", "", 0, 2048); }
static void mk_img_zero(void) { write_png("in.png", 0, 0, 8, 2, (const uint8_t *)"", 0); }
static void mk_img_huge(void)
{
    static uint8_t rows[8 * (1 + 3)]; /* IHDR says 20000 x 8; the data never gets decoded */
    write_png("in.png", 20000, 8, 8, 2, rows, sizeof rows);
}
static void mk_img_truncated_jpeg(void)
{
    char *f = tu_join(g_vf, "00000.jpg");
    copy_prefix(f, "in.jpg", (size_t)tu_file_size(f) / 2);
    free(f);
}
static void mk_img_jpeg_dht(void)
{
    char *src = tu_src_path("tests/fuzz_regress/image/jpeg_dht_more_than_256_codes.jpg");
    copy_prefix(src, "in.jpg", 1 << 20);
    free(src);
}
static void mk_fifo(const char *name)
{
    char *p = P(name);
    assert_int_equal(mkfifo(p, 0600), 0);
    free(p);
}
static void mk_img_fifo(void) { mk_fifo("in.png"); }
static void mk_frames_fifo(void)
{
    frame_copy("frames", "00000.jpg", 0);
    mk_fifo("frames/00001.jpg");
}
static void mk_img_png_empty_idat(void)
{
    char *src = tu_src_path("tests/fuzz_regress/image/png_empty_first_idat.png");
    copy_prefix(src, "in.png", 1 << 20);
    free(src);
}
static void mk_img_psd_alpha(void)
{
    char *src = tu_src_path("tests/fuzz_regress/image/psd_alpha_unpremultiply_overflow.psd");
    copy_prefix(src, "in.psd", 1 << 20);
    free(src);
}
static void mk_img_pnm_overflow(void) { write_str("in.ppm", "P6\n99999999999 4\n255\n"); }

/* --- configs -------------------------------------------------------------------- */

static void mk_cfg_not_json(void) { write_str("in.json", "{\"model\": {\"image_encoder\": "); }
static void mk_cfg_empty(void) { write_bytes("in.json", "", 0); }

/* The fixture config with one value replaced (path of keys, JSON value). */
static void mk_cfg_edit(const char *const *path, int depth, const char *value)
{
    uint8_t *d;
    size_t n;
    assert_int_equal(tu_read_file(g_cfg, &d, &n), 0);
    cJSON *root = cJSON_ParseWithLength((const char *)d, n);
    assert_non_null(root);
    cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!o)
        o = root;
    for (int i = 0; i < depth - 1; i++)
        o = cJSON_GetObjectItemCaseSensitive(o, path[i]);
    assert_non_null(o);
    cJSON_DeleteItemFromObjectCaseSensitive(o, path[depth - 1]);
    cJSON_AddItemToObject(o, path[depth - 1], cJSON_Parse(value));
    char *js = cJSON_Print(root);
    write_str("in.json", js);
    cJSON_free(js);
    cJSON_Delete(root);
    free(d);
}
static void mk_cfg_window0(void)
{
    const char *p[] = {"image_encoder", "trunk", "window_spec"};
    mk_cfg_edit(p, 3, "[0, 4, 14, 7]");
}
static void mk_cfg_negative(void)
{
    const char *p[] = {"memory_attention", "d_model"};
    mk_cfg_edit(p, 2, "-1");
}
static void mk_cfg_type(void)
{
    const char *p[] = {"image_encoder", "trunk", "embed_dim"};
    mk_cfg_edit(p, 3, "\"ninety-six\"");
}

/* --- issue 23 (hostile input, round two): builders ------------------------------ */

static void mk_cfg_memattn_layers(void)
{
    const char *p[] = {"memory_attention", "num_layers"};
    mk_cfg_edit(p, 2, "9");
}
static void mk_cfg_fuser_layers(void)
{
    const char *p[] = {"memory_encoder", "fuser", "num_layers"};
    mk_cfg_edit(p, 3, "9");
}
static void mk_cfg_misspelt(void)
{
    const char *p[] = {"image_sise"};
    mk_cfg_edit(p, 1, "160");
}
static void mk_cfg_untileable(void)
{
    const char *p[] = {"image_size"};
    mk_cfg_edit(p, 1, "176"); /* a 44x44 patch grid; window_spec[0] = 10 */
}
static void mk_cfg_too_big(void)
{
    const char *p[] = {"image_size"};
    mk_cfg_edit(p, 1, "8160");
}
/* The fixture config text with `extra` spliced in after its opening brace
 * (at_end: before its closing brace, after a comma). */
static void mk_cfg_spliced(const char *extra, int at_end)
{
    uint8_t *d;
    size_t n;
    assert_int_equal(tu_read_file(g_cfg, &d, &n), 0);
    size_t at = 0;
    if (at_end) {
        at = n;
        while (at > 0 && d[at - 1] != '}')
            at--;
        assert_true(at > 0);
        at--;
    } else {
        const char *brace = memchr(d, '{', n);
        assert_non_null(brace);
        at = (size_t)(brace - (const char *)d) + 1;
    }
    tu_buf b = {0};
    tu_buf_put(&b, d, at);
    tu_buf_str(&b, extra);
    tu_buf_put(&b, d + at, n - at);
    write_bytes("in.json", b.data, b.len);
    tu_buf_free(&b), free(d);
}
/* image_size again after the fixture's: Python keeps the last ("160", a string) */
static void mk_cfg_duplicate(void) { mk_cfg_spliced(", \"image_size\": \"160\"", 1); }
static void mk_cfg_nul_key(void) { mk_cfg_spliced("\"image_size\\u0000junk\": 160, ", 0); }
/* The SAM 3 fixture config with one trunk value set (or a key added). */
static void mk_s3_cfg(const char *key, const char *value)
{
    char *src = tu_src_path("fixtures/sam3/tiny_s2_sam3.config.json");
    uint8_t *d;
    size_t n;
    assert_int_equal(tu_read_file(src, &d, &n), 0);
    cJSON *root = cJSON_ParseWithLength((const char *)d, n);
    assert_non_null(root);
    cJSON *t = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "image"), "backbone"), "visual"),
        "trunk");
    assert_non_null(t);
    cJSON_DeleteItemFromObjectCaseSensitive(t, key);
    cJSON_AddItemToObject(t, key, cJSON_Parse(value));
    char *js = cJSON_PrintUnformatted(root);
    write_str("in.json", js);
    cJSON_free(js), cJSON_Delete(root), free(d), free(src);
}
static void mk_s3_img_size(void) { mk_s3_cfg("img_size", "1000000"); }
static void mk_s3_window(void) { mk_s3_cfg("window_size", "100000"); }
static void mk_s3_misspelt(void) { mk_s3_cfg("img_sise", "112"); }

/* {"model": <the valid one-tensor dict>, "model": {}}: torch.load keeps the last. */
static void mk_pt_model_twice(void)
{
    tu_buf b = {0};
    pk_one_tensor(&b, "layer.weight", "FloatStorage", 6, 2, SZ23, ST23, 0);
    b.len -= 3; /* "uu." */
    tu_buf_byte(&b, 'u');
    pk_str(&b, "model");
    tu_buf_put(&b, "}u.", 3);
    write_pt("in.pt", &b, SIX, sizeof SIX, "little");
    tu_buf_free(&b);
}
/* The fixture with a second central directory and end record hidden in the
 * comment of the first: libzip and PyTorch's reader may take either. */
static void mk_pt_two_eocd(void)
{
    uint8_t *d;
    size_t n;
    assert_int_equal(tu_read_file(g_ck, &d, &n), 0);
    assert_true(n > 22 && !memcmp(d + n - 22, "PK\x05\x06", 4)); /* torch.save: no archive comment */
    const uint32_t cd_size = (uint32_t)d[n - 10] | (uint32_t)d[n - 9] << 8 | (uint32_t)d[n - 8] << 16 | (uint32_t)d[n - 7] << 24;
    const uint32_t cd_off = (uint32_t)d[n - 6] | (uint32_t)d[n - 5] << 8 | (uint32_t)d[n - 4] << 16 | (uint32_t)d[n - 3] << 24;
    tu_buf b = {0};
    tu_buf_put(&b, d, n);
    const uint16_t clen = (uint16_t)(cd_size + 22);
    b.data[n - 2] = (uint8_t)clen, b.data[n - 1] = (uint8_t)(clen >> 8);
    tu_buf_put(&b, d + cd_off, cd_size); /* the directory again, at offset n */
    tu_buf_put(&b, d + n - 22, 16);
    tu_buf_u32le(&b, (uint32_t)n); /* its offset */
    tu_buf_u16le(&b, 0);           /* no comment */
    write_bytes("in.pt", b.data, b.len);
    tu_buf_free(&b), free(d);
}
/* 400000 empty lists from 400 KB of pickle: past the memory budget. */
static void mk_pt_pickle_budget(void)
{
    tu_buf b = {0};
    tu_buf_put(&b, "\x80\x02", 2);
    for (int i = 0; i < 400000; i++)
        tu_buf_byte(&b, ']');
    tu_buf_byte(&b, '.');
    write_pt("in.pt", &b, NULL, 0, "little");
    tu_buf_free(&b);
}
/* 2 MiB of NONE opcodes, deflated by libzip to a few KiB. */
static void mk_pt_pickle_ratio(void)
{
    tu_buf b = {0};
    tu_buf_put(&b, "\x80\x02", 2);
    for (int i = 0; i < (2 << 20); i++)
        tu_buf_byte(&b, 'N');
    tu_buf_byte(&b, '.');
    write_pt("in.pt", &b, NULL, 0, "little");
    tu_buf_free(&b);
}
static const uint8_t ZERO8[8] = {0};
static void mk_st_nul_key(void)
{
    write_st("in.safetensors", "{\"a\\u0000junk\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", ZERO8, 4, 0);
}
static void mk_st_trailing(void)
{
    write_st("in.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", ZERO8, 8, 0);
}
static void mk_st_gap(void)
{
    write_st("in.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", ZERO8, 8, 0);
}
static void mk_st_meta_number(void)
{
    write_st("in.safetensors",
             "{\"__metadata__\":{\"v\":1},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", ZERO8, 4,
             0);
}
static void mk_st_meta_bomb(void)
{
    tu_buf b = {0};
    tu_buf_str(&b, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"x\":[0");
    for (int i = 0; i < (1 << 20) + 8; i++)
        tu_buf_str(&b, ",0");
    tu_buf_str(&b, "]}");
    tu_buf_byte(&b, 0);
    write_st("in.safetensors", (const char *)b.data, ZERO8, 4, 0);
    tu_buf_free(&b);
}
static void mk_st_many(void)
{
    tu_buf b = {0};
    tu_buf_byte(&b, '{');
    for (int i = 0; i < 65537; i++) {
        char e[96];
        snprintf(e, sizeof e, "%s\"t%d\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}", i ? "," : "", i);
        tu_buf_str(&b, e);
    }
    tu_buf_str(&b, "}");
    tu_buf_byte(&b, 0);
    write_st("in.safetensors", (const char *)b.data, ZERO8, 0, 0);
    tu_buf_free(&b);
}
static void copy_regress(const char *file, const char *name)
{
    char *src = tu_src_path(file);
    copy_prefix(src, name, 1 << 20);
    free(src);
}
static void mk_img_ppm_short(void) { copy_regress("tests/fuzz_regress/image/ppm_truncated_pixels.ppm", "in.ppm"); }
static void mk_img_tga_short(void) { copy_regress("tests/fuzz_regress/image/tga_truncated_pixels.tga", "in.tga"); }
static void mk_img_bmp_palette(void) { copy_regress("tests/fuzz_regress/image/bmp8_index_past_palette.bmp", "in.bmp"); }
static void mk_img_bmp_offset(void) { copy_regress("tests/fuzz_regress/image/bmp8_offset_inside_header.bmp", "in.bmp"); }
static void mk_img_hdr_flat(void) { copy_regress("tests/fuzz_regress/image/hdr_flat_without_pixels.hdr", "in.hdr"); }
static void mk_img_bmp_bomb(void) { copy_regress("tests/fuzz_regress/image/bmp_54_bytes_16384_square.bmp", "in.bmp"); }
static void mk_img_psd_int_min(void) { copy_regress("tests/fuzz_regress/image/psd_height_int_min.psd", "in.psd"); }
static void mk_img_png_crc(void) { copy_regress("tests/fuzz_regress/image/png_text_chunk_bad_crc.png", "in.png"); }
/* a 12000x12000 24-bit BMP header (144 Mpixel, under the pixel limit) and no pixels */
static void mk_img_bmp_header_only(void)
{
    uint8_t h[54] = {'B', 'M'};
    h[10] = 54, h[14] = 40, h[26] = 1, h[28] = 24;
    for (int i = 0; i < 4; i++)
        h[18 + i] = (uint8_t)(12000u >> (8 * i)), h[22 + i] = (uint8_t)(12000u >> (8 * i));
    write_bytes("in.bmp", h, sizeof h);
}
/* an 8-bit palette PNG of 2 colours whose pixels use index 7 */
static void mk_img_png_palette(void)
{
    static const uint8_t plte[6] = {255, 0, 0, 0, 255, 0};
    uint8_t raw[4 * (1 + 4)] = {0};
    for (int y = 0; y < 4; y++)
        memset(raw + y * 5 + 1, 7, 4);
    g_plte = plte, g_plte_n = sizeof plte;
    write_png("in.png", 4, 4, 8, 3, raw, sizeof raw);
    g_plte = NULL, g_plte_n = 0;
}
/* a valid header of a 16-bit RGBA 16384x16384 PNG (a 2 GiB image) */
static void mk_img_png_rgba16_huge(void) { write_png("in.png", 16384, 16384, 16, 6, NULL, 0); }
/* a chunk whose length is 2^31 after a valid IHDR */
static void mk_img_png_chunk_len(void)
{
    write_png_pattern("in.png", 2, 2, 8, 2, 3);
    uint8_t *d;
    size_t n;
    char *p = P("in.png");
    assert_int_equal(tu_read_file(p, &d, &n), 0);
    d[33] = 0x80, d[34] = d[35] = d[36] = 0; /* the IDAT chunk's length */
    write_bytes("in.png", d, n);
    free(d), free(p);
}
/* an image whose name carries a terminal escape and a newline */
static void mk_img_escape_name(void) { write_garbage("in\x1b[2J\nFORGED.png", "", 0, 64); }

static samc_status api_s3_config(samc_error *e)
{
    samc_model_params mp = samc_model_default_params();
    mp.config = g_in;
    samc_model *m = NULL;
    samc_status st = samc_model_load(g_s3, &mp, &m, e);
    samc_model_free(m);
    return st;
}
static samc_status api_threads(samc_error *e)
{
    samc_model *m = NULL;
    samc_model_params mp = samc_model_default_params();
    mp.config = g_cfg;
    samc_status st = samc_model_load(g_ck, &mp, &m, e);
    samc_predictor_params pp = samc_predictor_default_params();
    pp.n_threads = 100000;
    samc_predictor *p = NULL;
    if (!st)
        st = samc_predictor_new(m, &pp, &p, e);
    samc_predictor_free(p), samc_model_free(m);
    return st;
}

/* --- frame directories ---------------------------------------------------------------- */

static void frame_copy(const char *dir, const char *name, size_t prefix)
{
    char *src = tu_join(g_vf, "00000.jpg"), *d = P(dir), *dst = tu_join(d, name);
    mkdir(d, 0700);
    assert_int_equal(tu_copy_prefix(src, dst, prefix ? prefix : (size_t)tu_file_size(src)), 0);
    free(src), free(d), free(dst);
}
static void mk_frames_empty(void)
{
    char *d = P("frames");
    mkdir(d, 0700);
    free(d);
}
static void mk_frames_name(void) { frame_copy("frames", "00000.jpg", 0), frame_copy("frames", "frame_one.jpg", 0); }
static void mk_frames_dup(void) { frame_copy("frames", "7.jpg", 0), frame_copy("frames", "007.jpg", 0); }
static void mk_frames_not_jpeg(void)
{
    mk_frames_empty();
    write_str("frames/00000.jpg", "GIF89a this is not a JPEG");
}
static void mk_frames_sizes(void)
{
    frame_copy("frames", "00000.jpg", 0); /* 144x96, then a 112x80 frame of the other fixture video */
    char *other = tu_src_path("fixtures/video/tiny_v2_sam20_s128_frames/00000.jpg"), *d = P("frames/00001.jpg");
    assert_int_equal(tu_copy_prefix(other, d, 1 << 20), 0);
    free(other), free(d);
}
static void mk_frames_truncated(void)
{
    frame_copy("frames", "00000.jpg", 0);
    char *src = tu_join(g_vf, "00000.jpg");
    frame_copy("frames", "00001.jpg", (size_t)tu_file_size(src) / 2);
    free(src);
}

/* ------------------------------------------------------------------------ */
/* API runners                                                                */
/* ------------------------------------------------------------------------ */


static samc_status api_load_model(samc_error *e)
{
    samc_predictor *p = NULL;
    samc_status st = samc_predictor_load_ex(g_in, g_cfg, NULL, &p, e);
    samc_predictor_free(p);
    return st;
}

static samc_status api_load_config(samc_error *e)
{
    samc_predictor *p = NULL;
    samc_status st = samc_predictor_load_ex(g_ck, g_in, NULL, &p, e);
    samc_predictor_free(p);
    return st;
}

static samc_status api_image(samc_error *e)
{
    samc_image img;
    samc_status st = samc_image_load(g_in, &img, e);
    samc_image_free(&img);
    return st;
}

static samc_status api_parity(samc_error *e)
{
    samc_parity_opts o = {.impl = "ref"};
    samc_parity_report rep;
    samc_status st = samc_parity_run(g_in, &o, &rep, e);
    if (!st)
        samc_parity_report_free(&rep);
    return st;
}

static samc_status predict(const float *pts, const int32_t *labels, int n, const float *box, const float *mask,
                           samc_error *e)
{
    samc_predict_request rq = {pts, labels, n, box, mask, 1, 0, 0};
    samc_masks m;
    samc_status st = samc_predictor_predict(g_pred, &rq, &m, e);
    samc_masks_free(&m);
    return st;
}

static samc_status api_point_outside(samc_error *e)
{
    const float p[2] = {400, 10};
    return predict(p, (const int32_t[]){1}, 1, NULL, NULL, e);
}
static samc_status api_point_nan(samc_error *e)
{
    const float p[2] = {NAN, 10};
    return predict(p, (const int32_t[]){1}, 1, NULL, NULL, e);
}
static samc_status api_label(samc_error *e)
{
    const float p[2] = {10, 10};
    return predict(p, (const int32_t[]){5}, 1, NULL, NULL, e);
}
static samc_status api_label_neg(samc_error *e)
{
    const float p[2] = {10, 10};
    return predict(p, (const int32_t[]){-2}, 1, NULL, NULL, e);
}
static samc_status api_box_order(samc_error *e)
{
    const float b[4] = {100, 10, 50, 60};
    return predict(NULL, NULL, 0, b, NULL, e);
}
static samc_status api_box_nan(samc_error *e)
{
    const float b[4] = {1, NAN, 3, 4};
    return predict(NULL, NULL, 0, b, NULL, e);
}
static samc_status api_too_many_points(samc_error *e)
{
    static float p[2 * 5000];
    static int32_t l[5000];
    return predict(p, l, 5000, NULL, NULL, e);
}
static samc_status api_mask_nan(samc_error *e)
{
    const int s = samc_predictor_low_res_size(g_pred);
    float *m = calloc((size_t)s * s, sizeof *m);
    m[17] = NAN;
    samc_status st = predict(NULL, NULL, 0, NULL, m, e);
    free(m);
    return st;
}
static samc_status api_impl(samc_error *e) { return samc_predictor_set_impl(g_pred, "gpu", e); }
static samc_status api_override_layer(samc_error *e)
{
    return samc_predictor_override(g_pred, "image_encoder.trunk.blocks.77=ref", e);
}
static samc_status api_override_syntax(samc_error *e) { return samc_predictor_override(g_pred, "image_encoder", e); }
static samc_status api_override_impl(samc_error *e) { return samc_predictor_override(g_pred, "image_encoder=gpu", e); }
static samc_status api_hole_area(samc_error *e) { return samc_predictor_set_postprocess(g_pred, -1, 0, e); }
static samc_status api_preset(samc_error *e)
{
    samc_predictor *p = NULL;
    samc_status st = samc_predictor_load_ex(g_ck, "sam2_hiera_q", NULL, &p, e);
    samc_predictor_free(p);
    return st;
}
static samc_status api_frames(samc_error *e) { return samc_tracker_open_frames_dir(g_trk, g_in, e); }

static samc_status no_frames_cb(void *u, const samc_frame_masks *m) { return (void)u, (void)m, SAMC_OK; }

static samc_status api_frames_track(samc_error *e)
{
    samc_tracker *t = NULL;
    samc_status st = samc_tracker_load(g_vd, g_vd, &t, e);
    if (!st)
        st = samc_tracker_open_frames_dir(t, g_in, e);
    const float pt[2] = {10, 10};
    if (!st)
        st = samc_tracker_add_points(t, 0, 1, pt, (const int32_t[]){1}, 1, NULL, 1, NULL, e);
    if (!st)
        st = samc_tracker_propagate(t, -1, -1, 0, no_frames_cb, NULL, e);
    samc_tracker_free(t);
    return st;
}

/* ------------------------------------------------------------------------ */
/* The catalogue                                                              */
/* ------------------------------------------------------------------------ */

typedef struct bad_case {
    const char *id, *input, *made;
    void (*make)(void);
    const char *in;                   /* input name in the temp dir ({IN}) */
    const char *cli;                  /* arguments; {IN} {CK} {CFG} {IMG} {VD} {VF}; --out added for segment/track */
    const char *cli_msg[3];
    samc_status (*api)(samc_error *);
    const char *api_msg[3];
} bad_case;

#define SEG_MODEL "segment --model {IN} --config {CFG} --image {IMG} --point 10,10"
#define SEG_IMAGE "segment --model {CK} --config {CFG} --image {IN} --point 1,1"
#define SEG_CFG "segment --model {CK} --config {IN} --image {IMG} --point 1,1"
#define SEG_S3 "segment --model {S3} --config {IN} --image {IMG} --text cat"
#define SEG "segment --model {CK} --config {CFG} --image {IMG} "
#define TRACK "track --model {VD} --config {VD} --frames {IN} --prompt 0:1:point=10,10"

static const bad_case CASES[] = {
    /* PyTorch zip checkpoints */
    {"pt_empty", ".pt, empty", "0 bytes", mk_pt_empty, "in.pt", SEG_MODEL, {"in.pt", "file is empty"}, api_load_model,
     {"in.pt", "file is empty"}},
    {"pt_truncated", ".pt, truncated", "first 4000 bytes of fixtures/ckpt/tiny_c_f32.pt", mk_pt_truncated, "in.pt",
     SEG_MODEL, {"in.pt", "not a readable zip archive"}, api_load_model, {"in.pt", "truncated or corrupt"}},
    {"pt_garbage", ".pt, garbage", "zip magic then 4 KiB of xorshift bytes", mk_pt_garbage, "in.pt", SEG_MODEL,
     {"in.pt", "not a readable zip archive"}, api_load_model, {"in.pt", "zip"}},
    {"pt_crc", ".pt, corrupt data.pkl (CRC mismatch)", "fixture with one bit of data.pkl flipped", mk_pt_crc,
     "in.pt", SEG_MODEL, {"in.pt", "data.pkl"}, api_load_model, {"in.pt", "data.pkl"}},
    {"pt_disallowed_global", "pickle calling os.system", "GLOBAL os.system + REDUCE in data.pkl", mk_pt_global,
     "in.pt", SEG_MODEL, {"in.pt", "pickle global 'os.system' is not allowed"}, api_load_model,
     {"in.pt", "'os.system' is not allowed"}},
    {"pt_deep_nesting", "pickle nested 5000 MARKs deep", "5000 MARK opcodes", mk_pt_nesting, "in.pt", SEG_MODEL,
     {"in.pt", "nesting is deeper than 1000"}, api_load_model, {"data.pkl", "nesting is deeper"}},
    {"pt_absurd_size", "tensor of 2^40 elements", "size (2^20, 2^20), storage numel 2^40", mk_pt_absurd, "in.pt",
     SEG_MODEL, {"layer.weight", "absurd size"}, api_load_model, {"in.pt", "absurd size"}},
    {"pt_broadcast_bomb", "1 KiB .pt expanding to 4 GiB", "a (2^30,) stride-0 view of a 1-element storage",
     mk_pt_broadcast, "in.pt", SEG_MODEL, {"layer.weight", "floats from a file of"}, api_load_model,
     {"in.pt", "absurd size"}},
    {"pt_view_outside", "tensor view beyond its storage", "(2,3) view of a 4-element storage", mk_pt_view, "in.pt",
     SEG_MODEL, {"layer.weight", "outside storage"}, api_load_model, {"in.pt", "outside storage"}},
    {"pt_storage_missing", "storage entry missing from the zip", "no archive/data/0", mk_pt_no_storage, "in.pt",
     SEG_MODEL, {"layer.weight", "has no data entry"}, api_load_model, {"in.pt", "archive/data/0"}},
    {"pt_big_endian", "big-endian checkpoint", "byteorder 'big'", mk_pt_big_endian, "in.pt", SEG_MODEL,
     {"in.pt", "big-endian"}, api_load_model, {"in.pt", "only little-endian"}},
    {"pt_not_tensor", "state-dict value that is not a tensor", "an int under a key", mk_pt_not_tensor, "in.pt",
     SEG_MODEL, {"layer.weight", "not a tensor"}, api_load_model, {"in.pt", "is a int, not a tensor"}},
    {"pt_long_storage", "int64 storage", "torch.LongStorage", mk_pt_long_storage, "in.pt", SEG_MODEL,
     {"layer.steps", "LongStorage is not supported"}, api_load_model, {"in.pt", "FloatStorage"}},
    /* safetensors */
    {"st_empty", ".safetensors, empty", "0 bytes", mk_st_empty, "in.safetensors", SEG_MODEL,
     {"in.safetensors", "file is empty"}, api_load_model, {"in.safetensors", "empty"}},
    {"st_truncated", ".safetensors, truncated", "first 200000 bytes of the fixture", mk_st_truncated,
     "in.safetensors", SEG_MODEL, {"in.safetensors", "outside the data section"}, api_load_model,
     {"in.safetensors", "truncated"}},
    {"st_garbage", ".safetensors, garbage", "4 KiB of xorshift bytes", mk_st_garbage, "in.safetensors", SEG_MODEL,
     {"in.safetensors", "unknown weight file format"}, api_load_model, {"in.safetensors", "unknown weight file format"}},
    {"st_header_beyond_file", "header length beyond the file", "u64 4096, 60-byte file", mk_st_hdr_beyond,
     "in.safetensors", SEG_MODEL, {"in.safetensors", "beyond the end of the file"}, api_load_model,
     {"in.safetensors", "header length 4096"}},
    {"st_offsets_out_of_range", "data_offsets past the data", "[0,1000] with 24 data bytes", mk_st_offsets_out,
     "in.safetensors", SEG_MODEL, {"key 'a'", "outside the data section"}, api_load_model, {"in.safetensors", "[0, 1000]"}},
    {"st_overlap", "overlapping tensors", "[0,16) and [8,24)", mk_st_overlap, "in.safetensors", SEG_MODEL,
     {"'a'", "overlap"}, api_load_model, {"in.safetensors", "'b' [8, 24)"}},
    {"st_not_json", "header that is not JSON", "unquoted keys, unterminated", mk_st_not_json, "in.safetensors",
     SEG_MODEL, {"in.safetensors", "not valid JSON"}, api_load_model, {"in.safetensors", "not valid JSON"}},
    {"st_dtype_bytes", "dtype/shape not matching the byte count", "F32 [2,3] over 12 bytes", mk_st_bytecount,
     "in.safetensors", SEG_MODEL, {"key 'a'", "need 24"}, api_load_model, {"in.safetensors", "cover 12 bytes"}},
    {"st_begin_after_end", "data_offsets begin > end", "[16, 8]", mk_st_begin_end, "in.safetensors", SEG_MODEL,
     {"key 'a'", "begin 16 > end 8"}, api_load_model, {"in.safetensors", "begin 16 > end 8"}},
    /* model-level checks (the fixture safetensors, edited) */
    {"missing_key", "a required key missing", "fixture minus " KEY_EDITED, mk_missing_key, "in.safetensors",
     SEG_MODEL, {"missing key '" KEY_EDITED "'"}, api_load_model, {"in.safetensors", "missing key"}},
    {"wrong_shape", "a key with the wrong shape", "fixture with " KEY_EDITED " as (I,O,1,1)", mk_wrong_shape,
     "in.safetensors", SEG_MODEL, {KEY_EDITED, "expected shape"}, api_load_model, {"in.safetensors", "expected shape"}},
    {"unexpected_key", "a key the model does not have", "fixture plus extra.optimizer_state", mk_unexpected_key,
     "in.safetensors", SEG_MODEL, {"unexpected key", "extra.optimizer_state"}, api_load_model,
     {"in.safetensors", "extra.optimizer_state"}},
    {"nan_weight", "NaN in a weight", "fixture with " KEY_EDITED "[5] = NaN", mk_nan, "in.safetensors", SEG_MODEL,
     {KEY_EDITED, "non-finite value (nan) at flat index 5", "--allow-nonfinite"}, api_load_model,
     {"in.safetensors", "(nan)", "allow_nonfinite"}},
    {"inf_weight", "-Inf in a weight", "fixture with " KEY_EDITED "[5] = -Inf", mk_inf, "in.safetensors", SEG_MODEL,
     {KEY_EDITED, "non-finite value (inf)"}, api_load_model, {"in.safetensors", "(inf)"}},
    /* HDF5 parity dumps and .h5 checkpoints */
    {"h5_empty", "dump, empty", "0 bytes", mk_h5_empty, "in.h5", "parity {IN}", {"in.h5", "not an HDF5 parity dump"},
     api_parity, {"in.h5", "bad signature"}},
    {"h5_truncated", "dump, truncated", "first 4096 bytes of fixtures/tiny_c_sam21_s160.h5", mk_h5_truncated, "in.h5",
     "parity {IN}", {"in.h5", "truncated or corrupt"}, api_parity, {"in.h5", "HDF5 cannot open it"}},
    {"h5_garbage", "dump, garbage", "HDF5 signature then xorshift bytes", mk_h5_garbage, "in.h5", "parity {IN}",
     {"in.h5", "truncated or corrupt"}, api_parity, {"in.h5", "HDF5 cannot open it"}},
    {"h5_not_a_dump", "HDF5 file that is not a dump", "only /weights/a", mk_h5_not_dump, "in.h5", "parity {IN}",
     {"in.h5", "missing attribute /format"}, api_parity, {"in.h5", "/format"}},
    {"h5_attr_two_strings", "dump whose format attribute holds 2 strings", "vlen string array [2]", mk_h5_two_strings,
     "in.h5", "parity {IN}", {"in.h5", "holds 2 strings, expected one"}, api_parity, {"in.h5", "/format"}},
    {"h5_config_two_strings", "--config dump.h5 whose config_json holds 2 strings", "vlen string array [2]",
     mk_h5_config_two_strings, "in.h5", "segment --model {CK} --config {IN} --image {IMG} --point 1,1",
     {"in.h5", "config_json attribute holding one string"}, api_load_config, {"in.h5", "/model/config_json"}},
    {"h5_never_written", ".h5 checkpoint declaring 2^31-1 unwritten floats", "dataset without data (fill value)",
     mk_h5_never_written, "in.h5", SEG_MODEL, {"/weights/huge", "stores fewer bytes than its shape needs"},
     api_load_model, {"in.h5", "never written"}},
    {"h5_external", ".h5 checkpoint with external storage", "data in /etc/hostname (H5Pset_external)", mk_h5_external,
     "in.h5", SEG_MODEL, {"/weights/ext", "external files"}, api_load_model, {"in.h5", "only reads data stored in the file"}},
    /* images */
    {"img_empty", "image, empty", "0 bytes", mk_img_empty, "in.png", SEG_IMAGE, {"in.png", "image file is empty"},
     api_image, {"in.png", "empty"}},
    {"img_truncated_png", "PNG, truncated", "first 3000 bytes of fixtures/demo/demo.png", mk_img_truncated, "in.png",
     SEG_IMAGE, {"in.png", "file is truncated"}, api_image, {"in.png", "not a readable PNG (file is truncated)"}},
    {"img_garbage", "image, garbage", "2 KiB of xorshift bytes", mk_img_garbage, "in.png", SEG_IMAGE,
     {"in.png", "not a readable image"}, api_image, {"in.png", "not a readable image"}},
    {"img_0x0", "PNG of 0x0 pixels", "IHDR width = height = 0", mk_img_zero, "in.png", SEG_IMAGE,
     {"in.png", "not a readable PNG"}, api_image, {"in.png", "Invalid IHDR"}},
    {"img_too_large", "PNG over the size limit", "IHDR 20000 x 8 (limit 16384 a side)", mk_img_huge, "in.png",
     SEG_IMAGE, {"in.png", "at most 16384 pixels a side"}, api_image, {"in.png", "20000x8"}},
    {"img_truncated_jpeg", "JPEG, truncated", "first half of a fixture video frame", mk_img_truncated_jpeg, "in.jpg",
     SEG_IMAGE, {"in.jpg", "file is truncated"}, api_image, {"in.jpg", "not a readable JPEG"}},
    {"img_jpeg_dht", "JPEG with a Huffman table of > 256 codes", "tests/fuzz_regress/image (fuzz find)",
     mk_img_jpeg_dht, "in.jpg", SEG_IMAGE, {"in.jpg", "not a readable JPEG"}, api_image, {"in.jpg", "JPEG"}},
    {"img_pnm_overflow", "PPM whose width overflows an int", "\"P6\\n99999999999 4\\n255\\n\"", mk_img_pnm_overflow,
     "in.ppm", SEG_IMAGE, {"in.ppm", "PNM header number out of range"}, api_image, {"in.ppm", "not a readable image"}},
    {"img_png_empty_idat", "PNG whose first IDAT chunk is empty", "tests/fuzz_regress/image (fuzz find)",
     mk_img_png_empty_idat, "in.png", SEG_IMAGE, {"in.png", "not a readable PNG"}, api_image,
     {"in.png", "not a readable PNG"}},
    {"img_psd_alpha", "PSD with an alpha channel (stb's un-premultiply overflows)", "tests/fuzz_regress/image (fuzz find)",
     mk_img_psd_alpha, "in.psd", SEG_IMAGE, {"in.psd", "PSD with an alpha channel is not supported"}, api_image,
     {"in.psd", "PSD with an alpha channel"}},
    {"img_fifo", "image path that is a FIFO", "mkfifo (would block a plain open)", mk_img_fifo, "in.png", SEG_IMAGE,
     {"in.png", "not a regular file"}, api_image, {"in.png", "not a regular file"}},
    /* prompts and arguments */
    {"point_outside", "point outside the image", "--point 400,10 on 320x240", NULL, NULL, SEG "--point 400,10",
     {"point 0 (400,10) is outside the 320x240 image"}, api_point_outside, {"point 0", "outside the 320x240 image"}},
    {"point_nan", "NaN point coordinate", "--point nan,10", NULL, NULL, SEG "--point nan,10",
     {"--point 'nan,10'", "finite numbers"}, api_point_nan, {"point 0", "not finite"}},
    {"label_too_big", "label outside -1..3", "--point 10,10,5", NULL, NULL, SEG "--point 10,10,5",
     {"--point '10,10,5'", "label 5 outside -1..3"}, api_label, {"label 5", "-1..3"}},
    {"label_too_small", "label below -1", "--point 10,10,-2", NULL, NULL, SEG "--point 10,10,-2",
     {"--point '10,10,-2'", "outside -1..3"}, api_label_neg, {"label -2", "-1..3"}},
    {"box_reversed", "box with x1 < x0", "--box 100,10,50,60", NULL, NULL, SEG "--box 100,10,50,60",
     {"--box '100,10,50,60'", "x1 < x0"}, api_box_order, {"box (100,10,50,60)", "x1 < x0"}},
    {"box_nan", "NaN box coordinate", "--box 1,nan,3,4", NULL, NULL, SEG "--box 1,nan,3,4",
     {"--box '1,nan,3,4'", "finite numbers"}, api_box_nan, {"box", "not finite"}},
    {"too_many_points", "more points than allowed", "257 --point / 5000 API points", NULL, NULL, NULL,
     {"more than 256 --point"}, api_too_many_points, {"point count 5000", "0..4096"}},
    {"mask_input_bad", "mask input of the wrong size / non-finite", "100 float32s (CLI) / a NaN logit (API)", NULL,
     NULL, SEG "--mask-input {IN}", {"--mask-input", "40x40"}, api_mask_nan, {"mask input", "non-finite"}},
    {"unknown_impl", "unknown --impl", "--impl gpu", NULL, NULL, SEG "--point 1,1 --impl gpu",
     {"--impl: unknown implementation 'gpu'"}, api_impl, {"unknown implementation 'gpu'"}},
    {"unknown_override_layer", "unknown layer in --impl-override", "image_encoder.trunk.blocks.77=ref", NULL, NULL,
     SEG "--point 1,1 --impl-override image_encoder.trunk.blocks.77=ref",
     {"unknown layer 'image_encoder.trunk.blocks.77'"}, api_override_layer, {"unknown layer", "blocks.77"}},
    {"override_syntax", "--impl-override without =IMPL", "image_encoder", NULL, NULL,
     SEG "--point 1,1 --impl-override image_encoder", {"--impl-override 'image_encoder'", "LAYER=IMPL"},
     api_override_syntax, {"expected LAYER=IMPL"}},
    {"override_unknown_impl", "--impl-override to an unknown implementation", "image_encoder=gpu", NULL, NULL,
     SEG "--point 1,1 --impl-override image_encoder=gpu", {"'image_encoder=gpu'", "unknown implementation 'gpu'"},
     api_override_impl, {"unknown implementation 'gpu'"}},
    {"negative_hole_area", "negative --max-hole-area", "-1", NULL, NULL, SEG "--point 1,1 --max-hole-area -1",
     {"--max-hole-area '-1'", ">= 0"}, api_hole_area, {"max_hole_area", ">= 0"}},
    /* configs */
    {"cfg_not_json", "config that is not JSON", "unterminated object", mk_cfg_not_json, "in.json",
     "segment --model {CK} --config {IN} --image {IMG} --point 1,1", {"in.json", "not valid JSON"}, api_load_config,
     {"in.json", "not valid JSON"}},
    {"cfg_empty", "config file, empty", "0 bytes", mk_cfg_empty, "in.json",
     "segment --model {CK} --config {IN} --image {IMG} --point 1,1", {"in.json", "not valid JSON"}, api_load_config,
     {"in.json", "not valid JSON"}},
    {"cfg_wrong_type", "config value of the wrong type", "trunk.embed_dim = \"ninety-six\"", mk_cfg_type, "in.json",
     "segment --model {CK} --config {IN} --image {IMG} --point 1,1", {"in.json", "'image_encoder.trunk.embed_dim' must be an integer"},
     api_load_config, {"in.json", "must be an integer"}},
    {"cfg_window0", "config with window_spec[0] = 0", "fuzz find: divided by zero in the pos-embed tiling",
     mk_cfg_window0, "in.json", "segment --model {CK} --config {IN} --image {IMG} --point 1,1",
     {"in.json", "window_spec[0] = 0 must be at least 1"}, api_load_config, {"in.json", "window_spec[0]"}},
    {"cfg_negative_dim", "config with a negative size", "fuzz find: memory_attention.d_model = -1", mk_cfg_negative,
     "in.json", "segment --model {CK} --config {IN} --image {IMG} --point 1,1",
     {"in.json", "memory_attention.d_model = -1 is outside 1..65536"}, api_load_config, {"in.json", "d_model"}},
    {"cfg_unknown_preset", "unknown config name", "--config sam2_hiera_q", NULL, NULL,
     "segment --model {CK} --config sam2_hiera_q --image {IMG} --point 1,1", {"unknown config 'sam2_hiera_q'"},
     api_preset, {"unknown config 'sam2_hiera_q'"}},
    /* video frame directories */
    {"frames_empty", "frames directory without JPEGs", "empty directory", mk_frames_empty, "frames", TRACK,
     {"frames", "no JPEG frames"}, api_frames, {"frames", "no JPEG frames"}},
    {"frames_bad_name", "frame not named by a number", "00000.jpg + frame_one.jpg", mk_frames_name, "frames", TRACK,
     {"frame_one.jpg", "not named by a number"}, api_frames, {"frame_one.jpg", "not named by a number"}},
    {"frames_duplicate", "two frames with one number", "7.jpg + 007.jpg", mk_frames_dup, "frames", TRACK,
     {"frames", "two frames have the number 7"}, api_frames, {"number 7"}},
    {"frames_not_jpeg", "frame that is not a JPEG", "00000.jpg holding GIF text", mk_frames_not_jpeg, "frames",
     TRACK, {"00000.jpg", "not a readable"}, api_frames, {"00000.jpg", "not a readable"}},
    {"frames_mixed_sizes", "frames of different sizes", "frames of the two fixture videos", mk_frames_sizes, "frames",
     TRACK, {"00001.jpg", "but the first frame is"}, api_frames, {"00001.jpg", "first frame"}},
    {"frames_fifo", "frame that is a FIFO", "00001.jpg made with mkfifo", mk_frames_fifo, "frames", TRACK,
     {"00001.jpg", "not a regular file"}, api_frames, {"00001.jpg", "not a regular file"}},
    {"frames_truncated", "truncated JPEG frame", "00001.jpg cut in half (header intact)", mk_frames_truncated,
     "frames", TRACK, {"00001.jpg", "file is truncated"}, api_frames_track, {"00001.jpg", "truncated"}},
    /* issue 23: SAM 2 configs */
    {"cfg_memattn_layers", "memory_attention.num_layers past the model's array", "num_layers = 9 (at most 8)",
     mk_cfg_memattn_layers, "in.json", SEG_CFG, {"in.json", "memory_attention.num_layers = 9 is outside 0..8"},
     api_load_config, {"in.json", "memory_attention.num_layers"}},
    {"cfg_fuser_layers", "memory_encoder.fuser.num_layers past the model's array", "fuser.num_layers = 9",
     mk_cfg_fuser_layers, "in.json", SEG_CFG, {"in.json", "memory_encoder.fuser.num_layers = 9 is outside 0..8"},
     api_load_config, {"in.json", "fuser.num_layers"}},
    {"cfg_unknown_key", "misspelt config key", "image_sise = 160", mk_cfg_misspelt, "in.json", SEG_CFG,
     {"in.json", "unknown config key 'image_sise'"}, api_load_config, {"in.json", "'image_sise'"}},
    {"cfg_duplicate_key", "config key given twice (Python keeps the last)", "image_size: 160, then \"160\"",
     mk_cfg_duplicate, "in.json", SEG_CFG, {"in.json", "'image_size' must be an integer"}, api_load_config,
     {"in.json", "'image_size'"}},
    {"cfg_nul_key", "config key with an escaped NUL", "\"image_size\\u0000junk\"", mk_cfg_nul_key, "in.json",
     SEG_CFG, {"in.json", "escaped NUL"}, api_load_config, {"in.json", "\\u0000"}},
    {"cfg_untileable", "image_size the position-embedding window cannot tile", "image_size 176: 44x44 grid, window 10",
     mk_cfg_untileable, "in.json", SEG_CFG, {"in.json", "image_size 176 gives a 44x44 patch grid"}, api_load_config,
     {"in.json", "window_spec[0]"}},
    {"cfg_image_size_big", "image_size past the budget", "image_size 8160 (3 KB config, minutes of work)",
     mk_cfg_too_big, "in.json", SEG_CFG, {"in.json", "image_size 8160 is over 2048"}, api_load_config,
     {"in.json", "image_size 8160"}},
    /* issue 23: SAM 3 configs */
    {"s3_cfg_img_size", "SAM 3 img_size without bound", "trunk img_size 10^6 (side*side overflowed)", mk_s3_img_size,
     "in.json", SEG_S3, {"in.json", "'image.backbone.visual.trunk.img_size' = 1e+06 is outside"}, api_s3_config,
     {"in.json", "img_size"}},
    {"s3_cfg_window", "SAM 3 window_size without bound", "trunk window_size 100000", mk_s3_window, "in.json", SEG_S3,
     {"in.json", "'image.backbone.visual.trunk.window_size' = 100000 is outside"}, api_s3_config,
     {"in.json", "window_size"}},
    {"s3_cfg_unknown_key", "misspelt SAM 3 config key", "trunk img_sise", mk_s3_misspelt, "in.json", SEG_S3,
     {"in.json", "unknown config key 'image.backbone.visual.trunk.img_sise'"}, api_s3_config, {"in.json", "img_sise"}},
    /* issue 23: checkpoints */
    {"pt_model_twice", "data.pkl with the key \"model\" twice", "a valid state dict, then {} (pickle keeps the last)",
     mk_pt_model_twice, "in.pt", SEG_MODEL, {"in.pt", "holds no tensors"}, api_load_model, {"in.pt", "no tensors"}},
    {"pt_two_eocd", "zip with two central directories", "the fixture, a second directory in the first's comment",
     mk_pt_two_eocd, "in.pt", SEG_MODEL, {"in.pt", "2 end-of-central-directory records"}, api_load_model,
     {"in.pt", "end-of-central-directory"}},
    {"pt_pickle_budget", "pickle of empty objects", "400000 EMPTY_LIST opcodes (400 KB)", mk_pt_pickle_budget, "in.pt",
     SEG_MODEL, {"in.pt", "bytes of memory"}, api_load_model, {"data.pkl", "budget"}},
    {"pt_pickle_ratio", "deflated data.pkl inflating 1000x", "2 MiB of NONE opcodes, deflated", mk_pt_pickle_ratio,
     "in.pt", SEG_MODEL, {"in.pt", "inflates from"}, api_load_model, {"data.pkl", "decompression bomb"}},
    {"st_nul_key", ".safetensors key with an escaped NUL", "\"a\\u0000junk\"", mk_st_nul_key, "in.safetensors",
     SEG_MODEL, {"in.safetensors", "escaped NUL"}, api_load_model, {"in.safetensors", "\\u0000"}},
    {"st_trailing_bytes", "bytes after the last tensor", "4 data bytes used of 8", mk_st_trailing, "in.safetensors",
     SEG_MODEL, {"in.safetensors", "trailing bytes"}, api_load_model, {"in.safetensors", "cover 4 bytes of a 8"}},
    {"st_gap", "gap before the first tensor", "data_offsets [4,8]", mk_st_gap, "in.safetensors", SEG_MODEL,
     {"in.safetensors", "4 unused bytes before tensor 'a'"}, api_load_model, {"in.safetensors", "unused bytes"}},
    {"st_metadata_number", "__metadata__ value that is not a string", "{\"v\": 1}", mk_st_meta_number,
     "in.safetensors", SEG_MODEL, {"in.safetensors", "__metadata__ entry 'v' is not a string"}, api_load_model,
     {"in.safetensors", "__metadata__"}},
    {"st_header_nodes", "header of a million JSON values", "an array of 2^20 + 9 zeros (2 MB)", mk_st_meta_bomb,
     "in.safetensors", SEG_MODEL, {"in.safetensors", "more than 1048576 values"}, api_load_model,
     {"in.safetensors", "1048576"}},
    {"st_many_tensors", "65537 empty tensors", "65537 F32 [0] entries", mk_st_many, "in.safetensors", SEG_MODEL,
     {"in.safetensors", "more than 65536 tensors"}, api_load_model, {"in.safetensors", "65536"}},
    /* issue 23: images */
    {"img_ppm_truncated", "PPM with fewer pixels than its header", "16 bytes: \"P6 80 60 255\" + 3 bytes",
     mk_img_ppm_short, "in.ppm", SEG_IMAGE, {"in.ppm", "image file is truncated"}, api_image, {"in.ppm", "80x60"}},
    {"img_tga_truncated", "TGA with fewer pixels than its header", "64x64 24-bit, 100 pixel bytes", mk_img_tga_short,
     "in.tga", SEG_IMAGE, {"in.tga", "image file is truncated"}, api_image, {"in.tga", "truncated"}},
    {"img_bmp_palette", "8-bit BMP whose indices pass its palette", "2 colours, indices up to 200",
     mk_img_bmp_palette, "in.bmp", SEG_IMAGE, {"in.bmp", "palette index"}, api_image, {"in.bmp", "2 colours"}},
    {"img_bmp_offset", "8-bit BMP whose pixel data offset points inside its header", "offset 0: stb's palette size < 0",
     mk_img_bmp_offset, "in.bmp", SEG_IMAGE, {"in.bmp", "inside its"}, api_image, {"in.bmp", "70-byte header"}},
    {"img_hdr_no_pixels", "flat HDR without pixels", "a 4x4 header, no data", mk_img_hdr_flat, "in.hdr", SEG_IMAGE,
     {"in.hdr", "truncated"}, api_image, {"in.hdr", "truncated"}},
    {"img_bmp_bomb", "54-byte BMP declaring 16384x16384", "header only", mk_img_bmp_bomb, "in.bmp", SEG_IMAGE,
     {"in.bmp", "decompression bomb"}, api_image, {"in.bmp", "16384x16384"}},
    {"img_bmp_header_only", "BMP header of 12000x12000 pixels without them", "54 bytes, 144 Mpixel",
     mk_img_bmp_header_only, "in.bmp", SEG_IMAGE, {"in.bmp", "image file is truncated"}, api_image,
     {"in.bmp", "12000x12000"}},
    {"img_png_crc", "PNG with a bad chunk CRC", "a tEXt chunk, CRC off by one bit", mk_img_png_crc, "in.png",
     SEG_IMAGE, {"in.png", "CRC"}, api_image, {"in.png", "not a readable PNG"}},
    {"img_png_palette", "palette PNG whose indices pass its palette", "2 colours, index 7", mk_img_png_palette,
     "in.png", SEG_IMAGE, {"in.png", "palette index"}, api_image, {"in.png", "palette"}},
    {"img_png_rgba16_huge", "valid 16-bit RGBA 16384x16384 PNG header", "IHDR only", mk_img_png_rgba16_huge, "in.png",
     SEG_IMAGE, {"in.png", "decompression bomb"}, api_image, {"in.png", "SAMC_MAX_IMAGE_PIXELS"}},
    {"img_png_chunk_len", "PNG chunk length 2^31", "IDAT length 0x80000000", mk_img_png_chunk_len, "in.png",
     SEG_IMAGE, {"in.png", "not a readable PNG ("}, api_image, {"in.png", "not a readable PNG"}},
    {"img_escape_name", "image name with a terminal escape and a newline", "\"in<ESC>[2J<LF>FORGED.png\"",
     mk_img_escape_name, "in\x1b[2J\nFORGED.png", SEG_IMAGE, {"\\x1b[2J\\x0aFORGED.png"}, api_image,
     {"\\x1b[2J\\x0aFORGED"}},
    {"img_psd_height_int_min", "PSD of height 2^31", "tests/fuzz_regress/image (fuzz find)", mk_img_psd_int_min,
     "in.psd", SEG_IMAGE, {"in.psd", "not a readable image (height -2147483648)"}, api_image, {"in.psd", "height"}},
    /* issue 23: threads */
    {"threads_too_many", "thread count past SAMC_MAX_THREADS", "--threads 100000 / n_threads 100000", NULL, NULL,
     SEG "--point 1,1 --threads 100000", {"--threads", "256"}, api_threads, {"n_threads", "0..256"}},
};
#define N_CASES ((int)(sizeof CASES / sizeof CASES[0]))

/* ------------------------------------------------------------------------ */
/* Running the CLI                                                            */
/* ------------------------------------------------------------------------ */

typedef struct cli_result {
    int rc; /* exit status, or 128 + signal */
    char *err;
    char *out_dir;
} cli_result;

static char *subst(const char *tok)
{
    static const struct {
        const char *k;
        char **v;
    } m[] = {{"{IN}", &g_in}, {"{CK}", &g_ck}, {"{CFG}", &g_cfg}, {"{IMG}", &g_img}, {"{VD}", &g_vd}, {"{VF}", &g_vf},
       {"{S3}", &g_s3}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        const char *p = strstr(tok, m[i].k);
        if (p)
            return tu_strdupf("%.*s%s%s", (int)(p - tok), tok, *m[i].v, p + strlen(m[i].k));
    }
    return strdup(tok);
}

/* Run `samc ARGS` (+ --out DIR for segment/track, + extra args). */
static cli_result run_cli(const char *args, const char *const *extra, int n_extra, const char *tag)
{
    cli_result r = {0};
    char *argv[600];
    int argc = 0;
    argv[argc++] = strdup(g_samc);
    char *copy = strdup(args), *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t && argc < 560; t = strtok_r(NULL, " ", &save))
        argv[argc++] = subst(t);
    for (int i = 0; i < n_extra; i++)
        argv[argc++] = strdup(extra[i]);
    free(copy);
    const int wants_out = !strcmp(argv[1], "segment") || !strcmp(argv[1], "track");
    r.out_dir = tu_strdupf("%s/out_%s", g_tmp, tag);
    if (wants_out) {
        argv[argc++] = strdup("--out");
        argv[argc++] = strdup(r.out_dir);
    }
    argv[argc] = NULL;
    char *errf = tu_strdupf("%s/stderr_%s", g_tmp, tag);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600), nul = open("/dev/null", O_WRONLY);
        dup2(fd, 2), dup2(nul, 1);
        execv(g_samc, argv);
        _exit(127);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    r.rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    uint8_t *e = NULL;
    size_t n = 0;
    tu_read_file(errf, &e, &n);
    r.err = calloc(n + 1, 1);
    if (n)
        memcpy(r.err, e, n);
    free(e), free(errf);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    return r;
}

/* Files left under dir (recursively), 0 when it does not exist. */
static int count_files(const char *dir)
{
    char *cmd = tu_strdupf("find '%s' -type f 2>/dev/null | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = 0;
    if (p && fscanf(p, "%d", &n) != 1)
        n = -1;
    if (p)
        pclose(p);
    free(cmd);
    return n;
}

static void cli_result_free(cli_result *r) { free(r->err), free(r->out_dir); }

static int g_failures;

static void expect(int ok, const char *id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void expect(int ok, const char *id, const char *fmt, ...)
{
    if (ok)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL [%s] ", id);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    g_failures++;
}

static void check_cli_failure(const bad_case *c, const cli_result *r)
{
    expect(r->rc != 0 && r->rc < 126 && !strstr(r->err, "Sanitizer") && !strstr(r->err, "runtime error"), c->id,
           "CLI must fail with status 1 or 2, no crash, no sanitizer report: exit %d, stderr: %s", r->rc, r->err);
    for (int i = 0; i < 3 && c->cli_msg[i]; i++)
        expect(strstr(r->err, c->cli_msg[i]) != NULL, c->id, "CLI stderr lacks \"%s\": %s", c->cli_msg[i], r->err);
    const int left = count_files(r->out_dir);
    expect(left == 0, c->id, "CLI left %d file(s) in %s", left, r->out_dir);
}

static void run_case(const bad_case *c)
{
    g_in = c->in ? P(c->in) : NULL;
    if (g_in) { /* inputs of earlier cases with the same name are gone */
        tu_rmtree(g_in);
        unlink(g_in);
    }
    if (c->make)
        c->make();
    if (!strcmp(c->id, "mask_input_bad")) { /* 100 floats: neither 40x40 logits nor an image */
        g_in = P("small.f32");
        float z[100] = {0};
        write_bytes("small.f32", z, sizeof z);
    }
    /* API */
    samc_error e = {0};
    samc_status st = c->api(&e);
    expect(st != SAMC_OK, c->id, "API call succeeded");
    expect(e.msg[0] != '\0', c->id, "API failure without a message");
    for (int i = 0; i < 3 && c->api_msg[i]; i++)
        expect(strstr(e.msg, c->api_msg[i]) != NULL, c->id, "API message lacks \"%s\": %s", c->api_msg[i], e.msg);
    /* CLI */
    cli_result r;
    if (!strcmp(c->id, "too_many_points")) {
        static const char *pts[2 * 257];
        for (int i = 0; i < 257; i++)
            pts[2 * i] = "--point", pts[2 * i + 1] = "5,5";
        r = run_cli(SEG "--point 1,1", pts, 2 * 257, c->id);
    } else {
        r = run_cli(c->cli, NULL, 0, c->id);
    }
    check_cli_failure(c, &r);
    cli_result_free(&r);
    free(g_in);
    g_in = NULL;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                      */
/* ------------------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    g_tmp = tu_mkdtemp("bad_inputs");
    g_samc = tu_join(tu_binary_dir(), "samc");
    g_ck = tu_src_path("fixtures/ckpt/tiny_c_f32.pt");
    g_cfg = tu_src_path("fixtures/ckpt/tiny_c_f32.config.json");
    g_st = tu_src_path("fixtures/ckpt/tiny_c_f32.safetensors");
    g_img = tu_src_path("fixtures/demo/demo.png");
    g_vd = tu_src_path("fixtures/video/tiny_v1_sam21_s128.h5");
    g_vf = tu_src_path("fixtures/video/tiny_v1_sam21_s128_frames");
    g_dump = tu_src_path("fixtures/tiny_c_sam21_s160.h5");
    g_s3 = tu_src_path("fixtures/sam3/tiny_s2_sam3.pt");
    samc_error e = {0};
    samc_image img;
    if (samc_predictor_load(g_ck, g_cfg, &g_pred, &e) || samc_image_load(g_img, &img, &e) ||
        samc_predictor_set_image(g_pred, img.rgb, img.h, img.w, &e) || samc_tracker_load(g_vd, g_vd, &g_trk, &e)) {
        fprintf(stderr, "setup: %s\n", e.msg);
        return -1;
    }
    g_img_w = img.w, g_img_h = img.h;
    samc_image_free(&img);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    samc_predictor_free(g_pred);
    samc_tracker_free(g_trk);
    tu_rmtree(g_tmp);
    free(g_tmp), free(g_samc), free(g_ck), free(g_cfg), free(g_st), free(g_img), free(g_vd), free(g_vf), free(g_dump), free(g_s3);
    return 0;
}

static void test_catalogue(void **state)
{
    (void)state;
    assert_true(N_CASES >= 40);
    assert_int_equal(g_img_w, 320);
    for (int i = 0; i < N_CASES; i++)
        run_case(&CASES[i]);
    fprintf(stderr, "%d bad-input cases, %d failed check(s)\n", N_CASES, g_failures);
    assert_int_equal(g_failures, 0);
}

/* Accepted inputs: 1x1 (the official predictor takes any size >= 1),
 * grayscale, RGBA and 16-bit PNGs (converted to 8-bit RGB), through the API
 * (pixel values) and the CLI (masks written). */
static void test_images_accepted(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int w, h, depth, ctype, ch;
    } imgs[] = {{"one.png", 1, 1, 8, 2, 3},    {"gray.png", 5, 4, 8, 0, 1},      {"rgba.png", 5, 4, 8, 6, 4},
                {"gray16.png", 5, 4, 16, 0, 1}, {"rgb16.png", 5, 4, 16, 2, 3}, {"gray_alpha.png", 5, 4, 8, 4, 2}};
    for (size_t i = 0; i < sizeof imgs / sizeof imgs[0]; i++) {
        write_png_pattern(imgs[i].name, imgs[i].w, imgs[i].h, imgs[i].depth, imgs[i].ctype, imgs[i].ch);
        g_in = P(imgs[i].name);
        samc_image img;
        samc_error e = {0};
        assert_int_equal(samc_image_load(g_in, &img, &e), SAMC_OK);
        assert_int_equal(img.w, imgs[i].w);
        assert_int_equal(img.h, imgs[i].h);
        for (int y = 0; y < img.h; y++)
            for (int x = 0; x < img.w; x++)
                for (int c = 0; c < 3; c++) {
                    const int src_c = imgs[i].ch >= 3 ? c : 0; /* gray replicated, alpha dropped */
                    unsigned want = (unsigned)(x * 40 + y * 7 + src_c * 60) & 0xFF;
                    if (imgs[i].depth == 16 && imgs[i].ch == 1) /* Pillow's "I": (v << 8 | 0x5A) clipped */
                        want = want ? 255 : 0x5A;
                    assert_int_equal(img.rgb[((size_t)y * img.w + x) * 3 + c], want);
                }
        /* the predictor runs on it and gives finite masks of its size */
        samc_predictor *p = NULL;
        assert_int_equal(samc_predictor_load(g_ck, g_cfg, &p, &e), SAMC_OK);
        assert_int_equal(samc_predictor_set_image(p, img.rgb, img.h, img.w, &e), SAMC_OK);
        const float pt[2] = {0.5f, 0.5f};
        samc_predict_request rq = {pt, (const int32_t[]){1}, 1, NULL, NULL, 1, 1, 0};
        samc_masks m;
        assert_int_equal(samc_predictor_predict(p, &rq, &m, &e), SAMC_OK);
        assert_int_equal(m.width, img.w);
        assert_int_equal(m.height, img.h);
        for (int k = 0; k < m.num_masks * m.width * m.height; k++)
            assert_true(isfinite(m.masks[k]));
        samc_masks_free(&m);
        samc_predictor_free(p);
        samc_image_free(&img);
        char tag[64];
        snprintf(tag, sizeof tag, "ok_%zu", i);
        cli_result r = run_cli("segment --model {CK} --config {CFG} --image {IN} --point 0.5,0.5", NULL, 0, tag);
        if (r.rc != 0)
            fail_msg("%s: CLI failed (%d): %s", imgs[i].name, r.rc, r.err);
        char *mask = tu_join(r.out_dir, "mask_0.png");
        assert_true(tu_file_exists(mask));
        free(mask);
        assert_int_equal(count_files(r.out_dir), 4); /* mask_0, overlay, result.json, low_res_masks.f32: no temporaries */
        cli_result_free(&r);
        free(g_in);
    }
    g_in = NULL;
}

/* Accepted inputs that decode exactly as Pillow's Image.open(f).convert("RGB")
 * (tests/data/images/, NAME.pillow.rgb, made with Debian's Pillow 9.4): a CMYK
 * JPEG with an Adobe marker (Pillow inverts and converts it; libjpeg alone
 * refused it) and a top-down BMP (negative height). */
static void test_images_as_pillow(void **state)
{
    (void)state;
    static const char *const names[] = {"cmyk_adobe.jpg", "bmp24_top_down.bmp"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *img = tu_strdupf("tests/data/images/%s", names[i]), *ref = tu_strdupf("%.*s.pillow.rgb",
                                                                                   (int)(strrchr(img, '.') - img), img);
        char *ip = tu_src_path(img), *rp = tu_src_path(ref);
        uint8_t *want = NULL;
        size_t n = 0;
        assert_int_equal(tu_read_file(rp, &want, &n), 0);
        samc_image im;
        samc_error e = {0};
        if (samc_image_load(ip, &im, &e))
            fail_msg("%s: %s", names[i], e.msg);
        assert_int_equal((size_t)im.w * im.h * 3, n);
        assert_memory_equal(im.rgb, want, n);
        samc_image_free(&im);
        free(want), free(img), free(ref), free(ip), free(rp);
    }
}

/* Non-finite weights load when asked for (CLI flag and API option). */
static void test_allow_nonfinite(void **state)
{
    (void)state;
    mk_nan();
    g_in = P("in.safetensors");
    samc_predictor *p = NULL;
    samc_error e = {0};
    samc_load_options o = {.allow_nonfinite = 1};
    assert_int_equal(samc_predictor_load_ex(g_in, g_cfg, &o, &p, &e), SAMC_OK);
    samc_predictor_free(p);
    const char *extra[] = {"--allow-nonfinite"};
    cli_result r = run_cli(SEG_MODEL, extra, 1, "allow_nonfinite");
    if (r.rc != 0)
        fail_msg("--allow-nonfinite: CLI failed (%d): %s", r.rc, r.err);
    cli_result_free(&r);
    /* samc info reports them: exit 1, or 0 with --allow-nonfinite */
    r = run_cli("info {IN} --config {CFG}", NULL, 0, "info_nonfinite");
    assert_int_equal(r.rc, 1);
    cli_result_free(&r);
    r = run_cli("info {IN} --config {CFG}", extra, 1, "info_allow_nonfinite");
    assert_int_equal(r.rc, 0);
    cli_result_free(&r);
    free(g_in);
    g_in = NULL;
}

/* A failure after the masks were written (here: result.json cannot be
 * created because a directory is in its way) leaves none of the outputs. */
static void test_no_partial_outputs(void **state)
{
    (void)state;
    char *out = P("out_partial"), *blocker = tu_join(out, "result.json"), *inner = tu_join(blocker, "x");
    mkdir(out, 0700), mkdir(blocker, 0700);
    assert_int_equal(tu_write_file(inner, "x", 1), 0);
    g_in = NULL;
    char *cmd = tu_strdupf("segment --model %s --config %s --image %s", g_ck, g_cfg, g_img);
    /* run_cli adds --out out_<tag>: the tag names our directory */
    cli_result r = run_cli(cmd, (const char *const[]){"--point", "10,10"}, 2, "partial");
    if (r.rc == 0 || r.rc >= 126)
        fail_msg("blocked result.json: exit %d: %s", r.rc, r.err);
    tu_assert_contains(r.err, "result.json");
    assert_int_equal(count_files(r.out_dir), 1); /* only the blocker's own file */
    cli_result_free(&r);
    free(cmd), free(out), free(blocker), free(inner);
}

static void print_catalogue(void)
{
    printf("| # | case | input | how it is made | CLI | expected (CLI stderr) | expected (API message) |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < N_CASES; i++) {
        const bad_case *c = &CASES[i];
        printf("| %d | `%s` | %s | %s | `samc %s` | ", i + 1, c->id, c->input, c->made,
               c->cli ? c->cli : "segment ... --point 5,5 (x257)");
        for (int k = 0; k < 3 && c->cli_msg[k]; k++)
            printf("%s\"%s\"", k ? ", " : "", c->cli_msg[k]);
        printf(" | ");
        for (int k = 0; k < 3 && c->api_msg[k]; k++)
            printf("%s\"%s\"", k ? ", " : "", c->api_msg[k]);
        printf(" |\n");
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--list")) {
        print_catalogue();
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalogue),
        cmocka_unit_test(test_images_accepted),
        cmocka_unit_test(test_images_as_pillow),
        cmocka_unit_test(test_allow_nonfinite),
        cmocka_unit_test(test_no_partial_outputs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
