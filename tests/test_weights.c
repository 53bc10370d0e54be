/* SPDX-License-Identifier: Apache-2.0 */
/* test_weights.c - the weight store and the three loaders on good inputs.
 *
 * Fixtures (committed; fixtures/README.md says how they were made):
 *   fixtures/ckpt/tiny_c_f32.{pt,safetensors}    float32 weights of tiny_c_sam21_s160.h5
 *   fixtures/ckpt/tiny_c_f16.{pt,safetensors}    the same rounded to float16
 *   fixtures/ckpt/tiny_c_bf16.{pt,safetensors}   the same rounded to bfloat16
 *   fixtures/ckpt/tiny_c_f32_noncontig.pt        float32, saved as strided/offset views
 *   fixtures/demo/tiny_d_demo.pt                 weights of tiny_d_sam21_s192_demo.h5
 *   fixtures/tiny_*.h5                           parity dumps (/weights)
 * The checks: every format loads; .pt, .safetensors and the dump's /weights
 * agree key for key, shape for shape and bit for bit; the float16/bfloat16
 * files equal the float32 values rounded (nearest even) to that type; the
 * non-contiguous checkpoint equals the float32 one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/io/weights.h"
#include "util/testutil.h"

/* Checkpoint sets: paths relative to the source dir, without extension;
 * NULL where a variant does not exist. */
typedef struct fixture_set {
    const char *f32;       /* .pt (+ .safetensors when has_st) */
    int has_st;
    const char *f16;       /* .pt + .safetensors */
    const char *bf16;      /* .pt + .safetensors */
    const char *noncontig; /* .pt */
    const char *dump;      /* .h5 whose /weights are the f32 weights */
} fixture_set;

static const fixture_set SETS[] = {
    {"fixtures/ckpt/tiny_c_f32", 1, "fixtures/ckpt/tiny_c_f16", "fixtures/ckpt/tiny_c_bf16",
     "fixtures/ckpt/tiny_c_f32_noncontig", "fixtures/tiny_c_sam21_s160.h5"},
    {"fixtures/demo/tiny_d_demo", 0, NULL, NULL, NULL, "fixtures/tiny_d_sam21_s192_demo.h5"},
};
#define NSETS (sizeof SETS / sizeof *SETS)

/* Every dump: entry count and total element count (fixtures/README.md). */
static const struct {
    const char *path;
    size_t entries;
    int64_t numel;
} DUMPS[] = {
    {"fixtures/tiny_a_sam21_s128.h5", 333, 859254},
    {"fixtures/tiny_b_sam20_s128.h5", 318, 791474},
    {"fixtures/tiny_c_sam21_s160.h5", 321, 622358},
    {"fixtures/tiny_d_sam21_s192_demo.h5", 393, 688870},
};

static char *fx(const char *rel, const char *ext)
{
    return tu_strdupf("%s/%s%s", tu_source_dir(), rel, ext ? ext : "");
}

static samc_weights *open_ok(const char *path)
{
    samc_error err;
    samc_error_clear(&err);
    samc_weights *w = NULL;
    samc_status st = samc_weights_open(path, &w, &err);
    if (st)
        print_error("cannot load %s: %s\n", path, err.msg);
    assert_int_equal(st, SAMC_OK);
    assert_non_null(w);
    assert_true(samc_weights_count(w) > 0);
    return w;
}

/* ------------------------------------------------------------------------ */
/* Independent reference conversions (not the library's)                    */
/* ------------------------------------------------------------------------ */

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* float16 bits -> value, computed arithmetically */
static float ref_half(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(m + 1024), e - 25);
    return s ? -v : v;
}

/* float32 -> float16 bits, round to nearest even */
static uint16_t ref_to_half(float f)
{
    uint32_t x = f2u(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u)
        return (uint16_t)(sign | 0x7c00 | (x > 0x7f800000u ? 0x200 : 0));
    if (x >= 0x477ff000u) /* >= 65520 rounds to inf */
        return (uint16_t)(sign | 0x7c00);
    if (x < 0x38800000u) { /* half subnormal or zero */
        if (x < 0x33000000u)
            return sign;
        uint32_t e = x >> 23, m = (x & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e;
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = (((x >> 23) - 112) << 10) | ((x & 0x7fffffu) >> 13);
    uint32_t rem = x & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1)))
        r++;
    return (uint16_t)(sign | r);
}

/* float32 -> bfloat16 (as float32), round to nearest even */
static float ref_round_bf16(float f)
{
    uint32_t x = f2u(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return f;
    x += 0x7fffu + ((x >> 16) & 1u);
    return u2f(x & 0xffff0000u);
}

static float ref_round_half(float f) { return ref_half(ref_to_half(f)); }

static void test_reference_rounding(void **state)
{
    (void)state;
    /* sanity of the references themselves on hand-picked values */
    assert_true(ref_half(0x3c00) == 1.0f);
    assert_true(ref_half(0x0001) == ldexpf(1, -24));
    assert_true(ref_half(0x7bff) == 65504.0f);
    assert_int_equal(ref_to_half(1.0f), 0x3c00);
    assert_int_equal(ref_to_half(65519.0f), 0x7bff);
    assert_int_equal(ref_to_half(65520.0f), 0x7c00);
    assert_int_equal(ref_to_half(ldexpf(1, -25)), 0x0000);        /* tie to even: 0 */
    assert_int_equal(ref_to_half(ldexpf(3, -25)), 0x0002);        /* 1.5 ulp -> 2 */
    assert_int_equal(ref_to_half(1.0f + ldexpf(1, -11)), 0x3c00); /* tie to even */
    assert_int_equal(ref_to_half(1.0f + ldexpf(3, -11)), 0x3c02);
    assert_int_equal(ref_to_half(-2.0f), 0xc000);
    assert_true(ref_round_bf16(1.0f + ldexpf(1, -8)) == 1.0f);
    assert_true(ref_round_bf16(1.0f + ldexpf(3, -8)) == 1.0f + ldexpf(1, -6));
}

/* ------------------------------------------------------------------------ */
/* Store                                                                    */
/* ------------------------------------------------------------------------ */

static float *floats(int64_t n, float start)
{
    float *p = malloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        p[i] = start + (float)i;
    return p;
}

static void test_store_basics(void **state)
{
    (void)state;
    samc_weights *w = samc_weights_new("mem.pt");
    assert_non_null(w);
    assert_string_equal(samc_weights_source(w), "mem.pt");
    assert_int_equal(samc_weights_count(w), 0);
    assert_null(samc_weights_find(w, "a"));
    samc_error err;
    samc_error_clear(&err);
    int64_t s1[2] = {2, 3}, s0[1] = {0};
    assert_int_equal(samc_weights_add(w, "b.weight", 2, s1, floats(6, 0), &err), SAMC_OK);
    assert_int_equal(samc_weights_add(w, "a.bias", 0, NULL, floats(1, 9), &err), SAMC_OK);
    assert_int_equal(samc_weights_add(w, "empty", 1, s0, floats(0, 0), &err), SAMC_OK);
    assert_int_equal(samc_weights_count(w), 3);
    assert_string_equal(samc_weights_key(w, 0), "b.weight");
    assert_string_equal(samc_weights_key(w, 1), "a.bias");
    assert_null(samc_weights_key(w, 3));
    assert_null(samc_weights_at(w, 3));
    const samc_tensor *t = samc_weights_find(w, "a.bias");
    assert_non_null(t);
    assert_ptr_equal(t, samc_weights_at(w, 1));
    assert_int_equal(t->ndim, 0);
    assert_true(t->data[0] == 9.0f);
    /* duplicate: an error naming the source and key; the data is freed (ASan) */
    assert_int_equal(samc_weights_add(w, "b.weight", 2, s1, floats(6, 0), &err), SAMC_ERR_FORMAT);
    tu_assert_contains(err.msg, "mem.pt");
    tu_assert_contains(err.msg, "duplicate key 'b.weight'");
    /* bad rank and shape; data freed too */
    samc_error_clear(&err);
    int64_t s9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    assert_int_equal(samc_weights_add(w, "r9", 9, s9, floats(1, 0), &err), SAMC_ERR_UNSUPPORTED);
    tu_assert_contains(err.msg, "'r9'");
    samc_error_clear(&err);
    int64_t sn[1] = {-2};
    assert_int_equal(samc_weights_add(w, "neg", 1, sn, floats(1, 0), &err), SAMC_ERR_FORMAT);
    tu_assert_contains(err.msg, "'neg'");
    assert_int_equal(samc_weights_count(w), 3);
    samc_weights_set_format(w, SAMC_WEIGHTS_SAFETENSORS);
    assert_int_equal(samc_weights_get_format(w), SAMC_WEIGHTS_SAFETENSORS);
    samc_weights_free(w);
    samc_weights_free(NULL);
    /* NULL source */
    w = samc_weights_new(NULL);
    assert_string_equal(samc_weights_source(w), "");
    samc_weights_free(w);
}

static void test_store_many_keys(void **state)
{
    (void)state;
    samc_weights *w = samc_weights_new("many");
    samc_error err;
    samc_error_clear(&err);
    const int n = 20000;
    for (int i = 0; i < n; i++) {
        char k[64];
        snprintf(k, sizeof k, "layer.%d.weight", i);
        int64_t s[1] = {1};
        assert_int_equal(samc_weights_add(w, k, 1, s, floats(1, (float)i), &err), SAMC_OK);
    }
    assert_int_equal(samc_weights_count(w), (size_t)n);
    for (int i = 0; i < n; i += 7) {
        char k[64];
        snprintf(k, sizeof k, "layer.%d.weight", i);
        const samc_tensor *t = samc_weights_find(w, k);
        assert_non_null(t);
        assert_true(t->data[0] == (float)i);
        assert_string_equal(samc_weights_key(w, (size_t)i), k);
    }
    assert_null(samc_weights_find(w, "layer.20000.weight"));
    assert_null(samc_weights_find(w, "layer.1.weigh"));
    samc_weights_free(w);
}

static void test_expect(void **state)
{
    (void)state;
    samc_weights *w = samc_weights_new("ckpt.pt");
    samc_error err;
    samc_error_clear(&err);
    int64_t s[4] = {1, 96, 14, 14};
    assert_int_equal(samc_weights_add(w, "image_encoder.trunk.pos_embed", 4, s, floats(96 * 196, 0), &err),
                     SAMC_OK);
    const samc_tensor *t = NULL;
    assert_int_equal(samc_weights_expect(w, "image_encoder.trunk.pos_embed", 4, s, &t, &err), SAMC_OK);
    assert_non_null(t);
    assert_int_equal(samc_weights_expect(w, "image_encoder.trunk.pos_embed", 4, s, NULL, &err), SAMC_OK);
    int64_t want[4] = {1, 96, 7, 7};
    assert_int_equal(samc_weights_expect(w, "image_encoder.trunk.pos_embed", 4, want, &t, &err),
                     SAMC_ERR_SHAPE);
    assert_null(t);
    assert_string_equal(err.msg, "ckpt.pt: key 'image_encoder.trunk.pos_embed': expected shape "
                                 "(1,96,7,7), got (1,96,14,14)");
    samc_error_clear(&err);
    assert_int_equal(samc_weights_expect(w, "image_encoder.trunk.pos_embed", 3, want, &t, &err),
                     SAMC_ERR_SHAPE);
    tu_assert_contains(err.msg, "expected shape (1,96,7)");
    samc_error_clear(&err);
    assert_int_equal(samc_weights_expect(w, "no.such.key", 1, want, &t, &err), SAMC_ERR_KEY);
    assert_string_equal(err.msg, "ckpt.pt: missing key 'no.such.key'");
    samc_weights_free(w);
}

static void test_check_finite(void **state)
{
    (void)state;
    samc_weights *w = samc_weights_new("f.safetensors");
    samc_error err;
    samc_error_clear(&err);
    int64_t s[1] = {4};
    assert_int_equal(samc_weights_add(w, "ok", 1, s, floats(4, 0), &err), SAMC_OK);
    assert_int_equal(samc_weights_check_finite(w, &err), SAMC_OK);
    float *bad = floats(4, 0);
    bad[2] = NAN;
    assert_int_equal(samc_weights_add(w, "has.nan", 1, s, bad, &err), SAMC_OK);
    float *inf = floats(4, 0);
    inf[0] = -INFINITY;
    assert_int_equal(samc_weights_add(w, "has.inf", 1, s, inf, &err), SAMC_OK);
    assert_int_not_equal(samc_weights_check_finite(w, &err), SAMC_OK);
    tu_assert_contains(err.msg, "f.safetensors");
    tu_assert_contains(err.msg, "'has.nan'");
    tu_assert_contains(err.msg, "nan");
    tu_assert_contains(err.msg, "index 2");
    samc_weights_free(w);
}

/* ------------------------------------------------------------------------ */
/* Element conversion on known bit patterns (crafted safetensors)           */
/* ------------------------------------------------------------------------ */

static void test_half_bits(void **state)
{
    (void)state;
    static const uint16_t h[] = {0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x3555, 0x7bff,
                                 0xfbff, 0x7c00, 0xfc00, 0xc000, 0x8001, 0x1234};
    static const uint16_t bf[] = {0x0000, 0x8000, 0x0001, 0x007f, 0x0080, 0x3f80, 0x4049,
                                  0x7f7f, 0xff7f, 0x7f80, 0xff80, 0xc000, 0x8001, 0x1234};
    const size_t n = sizeof h / sizeof *h;
    char *dir = tu_mkdtemp("weights-bits");
    char *p = tu_join(dir, "bits.safetensors");
    char *json = tu_strdupf("{\"h\":{\"dtype\":\"F16\",\"shape\":[%zu],\"data_offsets\":[0,%zu]},"
                            "\"b\":{\"dtype\":\"BF16\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}}",
                            n, 2 * n, n, 2 * n, 4 * n);
    tu_buf b = {0};
    tu_buf_u64le(&b, strlen(json));
    tu_buf_str(&b, json);
    for (size_t i = 0; i < n; i++)
        tu_buf_u16le(&b, h[i]);
    for (size_t i = 0; i < n; i++)
        tu_buf_u16le(&b, bf[i]);
    assert_int_equal(tu_write_file(p, b.data, b.len), 0);
    samc_weights *w = open_ok(p);
    const samc_tensor *th = samc_weights_find(w, "h"), *tb = samc_weights_find(w, "b");
    assert_non_null(th);
    assert_non_null(tb);
    for (size_t i = 0; i < n; i++) {
        float want = ref_half(h[i]);
        if (f2u(th->data[i]) != f2u(want))
            print_error("f16 0x%04x: got %a want %a\n", h[i], (double)th->data[i], (double)want);
        assert_int_equal(f2u(th->data[i]), f2u(want));
        /* bfloat16 is the top half of a float32 */
        assert_int_equal(f2u(tb->data[i]), (uint32_t)bf[i] << 16);
    }
    assert_true(th->data[2] == ldexpf(1, -24));
    assert_true(isinf(th->data[9]) && th->data[9] > 0);
    assert_true(tb->data[5] == 1.0f);
    samc_weights_free(w);
    tu_buf_free(&b);
    free(json);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

/* ------------------------------------------------------------------------ */
/* Fixtures                                                                 */
/* ------------------------------------------------------------------------ */

typedef enum cmp_mode { CMP_EXACT, CMP_HALF, CMP_BF16 } cmp_mode;

/* `ref` (float32) against `got`: same keys, shapes, and values — bit for bit
 * (CMP_EXACT) or after rounding ref to float16/bfloat16. */
static void compare_stores(const samc_weights *ref, const samc_weights *got, cmp_mode mode)
{
    const char *rs = samc_weights_source(ref), *gs = samc_weights_source(got);
    if (samc_weights_count(ref) != samc_weights_count(got))
        print_error("%s has %zu tensors, %s has %zu\n", rs, samc_weights_count(ref), gs,
                    samc_weights_count(got));
    assert_int_equal(samc_weights_count(ref), samc_weights_count(got));
    for (size_t i = 0; i < samc_weights_count(ref); i++) {
        const char *k = samc_weights_key(ref, i);
        const samc_tensor *a = samc_weights_at(ref, i), *b = samc_weights_find(got, k);
        if (!b)
            print_error("key '%s' of %s is missing from %s\n", k, rs, gs);
        assert_non_null(b);
        if (!samc_tensor_same_shape(a, b)) {
            char sa[128], sb[128];
            print_error("key '%s': %s %s vs %s %s\n", k, rs, samc_shape_str(a->ndim, a->shape, sa, 128), gs,
                        samc_shape_str(b->ndim, b->shape, sb, 128));
        }
        assert_true(samc_tensor_same_shape(a, b));
        int64_t n = samc_numel(a);
        if (mode == CMP_EXACT) {
            if (n && memcmp(a->data, b->data, (size_t)n * sizeof(float)) != 0)
                print_error("key '%s': %s and %s differ\n", k, rs, gs);
            assert_true(n == 0 || memcmp(a->data, b->data, (size_t)n * sizeof(float)) == 0);
            continue;
        }
        for (int64_t j = 0; j < n; j++) {
            float want = mode == CMP_HALF ? ref_round_half(a->data[j]) : ref_round_bf16(a->data[j]);
            if (f2u(want) != f2u(b->data[j])) {
                print_error("key '%s'[%lld]: %s %a rounds to %a, %s has %a\n", k, (long long)j, rs,
                            (double)a->data[j], (double)want, gs, (double)b->data[j]);
                fail();
            }
        }
    }
}

static void test_fixtures_formats_agree(void **state)
{
    (void)state;
    for (size_t s = 0; s < NSETS; s++) {
        char *pt = fx(SETS[s].f32, ".pt");
        char *h5 = fx(SETS[s].dump, NULL);
        samc_weights *wp = open_ok(pt), *wh = open_ok(h5);
        assert_int_equal(samc_weights_get_format(wp), SAMC_WEIGHTS_PT);
        assert_int_equal(samc_weights_get_format(wh), SAMC_WEIGHTS_H5);
        compare_stores(wp, wh, CMP_EXACT);
        compare_stores(wh, wp, CMP_EXACT);
        assert_int_equal(samc_weights_check_finite(wp, NULL), SAMC_OK);
        if (SETS[s].has_st) {
            char *st = fx(SETS[s].f32, ".safetensors");
            samc_weights *ws = open_ok(st);
            assert_int_equal(samc_weights_get_format(ws), SAMC_WEIGHTS_SAFETENSORS);
            compare_stores(wp, ws, CMP_EXACT);
            compare_stores(ws, wp, CMP_EXACT);
            samc_weights_free(ws);
            free(st);
        }
        samc_weights_free(wp);
        samc_weights_free(wh);
        free(pt);
        free(h5);
    }
}

static void test_fixtures_dumps(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof DUMPS / sizeof *DUMPS; i++) {
        char *p = fx(DUMPS[i].path, NULL);
        samc_weights *w = open_ok(p);
        int64_t total = 0;
        for (size_t k = 0; k < samc_weights_count(w); k++)
            total += samc_numel(samc_weights_at(w, k));
        if (samc_weights_count(w) != DUMPS[i].entries || total != DUMPS[i].numel)
            print_error("%s: %zu entries, %lld weights\n", p, samc_weights_count(w), (long long)total);
        assert_int_equal(samc_weights_count(w), DUMPS[i].entries);
        assert_int_equal(total, DUMPS[i].numel);
        assert_int_equal(samc_weights_check_finite(w, NULL), SAMC_OK);
        samc_weights_free(w);
        free(p);
    }
}

static void check_low_precision(int bf16)
{
    int done = 0;
    for (size_t s = 0; s < NSETS; s++) {
        const char *low = bf16 ? SETS[s].bf16 : SETS[s].f16;
        if (!low)
            continue;
        char *ref = fx(SETS[s].f32, ".pt");
        char *pt = fx(low, ".pt");
        char *st = fx(low, ".safetensors");
        samc_weights *wr = open_ok(ref), *wp = open_ok(pt), *ws = open_ok(st);
        compare_stores(wr, wp, bf16 ? CMP_BF16 : CMP_HALF);
        compare_stores(wp, ws, CMP_EXACT);
        compare_stores(ws, wp, CMP_EXACT);
        samc_weights_free(wr);
        samc_weights_free(wp);
        samc_weights_free(ws);
        free(ref);
        free(pt);
        free(st);
        done++;
    }
    assert_true(done > 0);
}

static void test_fixtures_fp16(void **state)
{
    (void)state;
    check_low_precision(0);
}

static void test_fixtures_bf16(void **state)
{
    (void)state;
    check_low_precision(1);
}

static void test_fixtures_noncontig(void **state)
{
    (void)state;
    int done = 0;
    for (size_t s = 0; s < NSETS; s++) {
        if (!SETS[s].noncontig)
            continue;
        char *ref = fx(SETS[s].f32, ".pt");
        char *nc = fx(SETS[s].noncontig, ".pt");
        samc_weights *wr = open_ok(ref), *wn = open_ok(nc);
        compare_stores(wr, wn, CMP_EXACT);
        /* same keys in the same (state_dict) order */
        for (size_t i = 0; i < samc_weights_count(wr); i++)
            assert_string_equal(samc_weights_key(wr, i), samc_weights_key(wn, i));
        samc_weights_free(wr);
        samc_weights_free(wn);
        free(ref);
        free(nc);
        done++;
    }
    assert_true(done > 0);
}

/* Detection is by content: files renamed to a wrong extension still load. */
static void test_detect_by_content(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("weights-detect");
    char *pt = fx(SETS[0].f32, ".pt");
    char *st = fx(SETS[0].f32, ".safetensors");
    char *h5 = fx(SETS[0].dump, NULL);
    const char *src[3] = {pt, st, h5};
    const samc_weights_format want[3] = {SAMC_WEIGHTS_PT, SAMC_WEIGHTS_SAFETENSORS, SAMC_WEIGHTS_H5};
    const char *wrong_ext[3] = {"w.safetensors", "w.h5", "w.pt"};
    for (int i = 0; i < 3; i++) {
        samc_error err;
        samc_error_clear(&err);
        samc_weights_format f = SAMC_WEIGHTS_UNKNOWN;
        assert_int_equal(samc_weights_detect(src[i], &f, &err), SAMC_OK);
        assert_int_equal(f, want[i]);
        char *p = tu_join(dir, wrong_ext[i]);
        assert_int_equal(tu_copy_prefix(src[i], p, (size_t)tu_file_size(src[i])), 0);
        samc_weights *w = open_ok(p);
        assert_int_equal(samc_weights_get_format(w), want[i]);
        assert_string_equal(samc_weights_source(w), p);
        samc_weights_free(w);
        free(p);
    }
    free(pt);
    free(st);
    free(h5);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_rounding),
        cmocka_unit_test(test_store_basics),
        cmocka_unit_test(test_store_many_keys),
        cmocka_unit_test(test_expect),
        cmocka_unit_test(test_check_finite),
        cmocka_unit_test(test_half_bits),
        cmocka_unit_test(test_fixtures_formats_agree),
        cmocka_unit_test(test_fixtures_dumps),
        cmocka_unit_test(test_fixtures_fp16),
        cmocka_unit_test(test_fixtures_bf16),
        cmocka_unit_test(test_fixtures_noncontig),
        cmocka_unit_test(test_detect_by_content),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
