/* SPDX-License-Identifier: Apache-2.0 */
/* test_tokenizer.c - the SAM 3 text tokenizer (core/text/) against the
 * official one.
 *
 *   - tests/data/tokenizer/corpus.jsonl: ~2,600 texts with the ids of the
 *     official SimpleTokenizer (tools/make_tokenizer_corpus.py), under ftfy
 *     6.1.1 ("ids") and 6.3.1 ("ids_ftfy_6.3.1" where different); every one
 *     must match, and a mismatch prints the text, both cleaned texts and both
 *     id lists.
 *   - tests/data/tokenizer/unicode_props.txt: Python's and the regex
 *     module's view of all 1,114,112 code points, against samc's predicates.
 *   - known vectors, context lengths, and bad input (vocabulary files and
 *     texts), each with the status and message expected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include <zlib.h>

#include "core/base/error.h"
#include "core/text/clip_tokenizer.h"
#include "core/text/unicode_props.h"
#include "util/testutil.h"

#define CTX SAMC_CLIP_CONTEXT_SAM3

static samc_clip_tokenizer *g_tok;    /* ftfy 6.1.1 (default) */
static samc_clip_tokenizer *g_tok631; /* ftfy 6.3.1 */
static char *g_vocab;                 /* path of the committed vocabulary */
static char *g_tmp;

static int setup(void **state)
{
    (void)state;
    samc_error err = {0};
    g_vocab = tu_src_path("tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz");
    g_tmp = tu_mkdtemp("tokenizer");
    if (samc_clip_tokenizer_load(g_vocab, &g_tok, &err) || samc_clip_tokenizer_load(g_vocab, &g_tok631, &err) ||
        samc_clip_tokenizer_set_ftfy(g_tok631, "6.3.1", &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    samc_clip_tokenizer_free(g_tok);
    samc_clip_tokenizer_free(g_tok631);
    tu_rmtree(g_tmp);
    free(g_tmp);
    free(g_vocab);
    return 0;
}

static void print_ids(const char *label, const int64_t *ids, int n)
{
    fprintf(stderr, "  %s:", label);
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %lld", (long long)ids[i]);
    fprintf(stderr, "\n");
}

/* Encode a C string and compare with `want` (n ids, the rest 0). */
static void expect_ids(const char *text, const int64_t *want, int n)
{
    int64_t ids[CTX], full[CTX] = {0};
    memcpy(full, want, sizeof *want * (size_t)n);
    samc_error err = {0};
    int nt = -1;
    bool cut = true;
    assert_int_equal(samc_clip_tokenizer_encode(g_tok, text, CTX, ids, &nt, &cut, &err), SAMC_OK);
    if (memcmp(ids, full, sizeof ids)) {
        fprintf(stderr, "text '%s'\n", text);
        print_ids("official", full, CTX);
        print_ids("samc", ids, CTX);
        fail();
    }
    assert_false(cut);
}

static void test_known_vectors(void **state)
{
    (void)state;
    /* SAM3_REFERENCE_NOTES.md 1.5 and 4.2 item 2 */
    expect_ids("a dog", (const int64_t[]){49406, 320, 1929, 49407}, 4);
    expect_ids("route 66", (const int64_t[]){49406, 5261, 277, 277, 49407}, 5);
    expect_ids("player in red!", (const int64_t[]){49406, 2477, 530, 736, 256, 49407}, 6);
    expect_ids("wow!~", (const int64_t[]){49406, 2781, 0, 349, 49407}, 5); /* the "!" is id 0 */
    expect_ids("!?", (const int64_t[]){49406, 6004, 49407}, 3);
    expect_ids("", (const int64_t[]){49406, 49407}, 2);
}

/* ---- corpus ---------------------------------------------------------------------- */

static uint8_t *unhex(const char *hx, size_t *n)
{
    size_t len = strlen(hx) / 2;
    uint8_t *b = malloc(len + 1);
    assert_non_null(b);
    for (size_t i = 0; i < len; i++) {
        unsigned v;
        assert_int_equal(sscanf(hx + 2 * i, "%2x", &v), 1);
        b[i] = (uint8_t)v;
    }
    *n = len;
    return b;
}

static void report(const cJSON *rec, int line, const char *version, const samc_clip_tokenizer *tok,
                   const uint8_t *text, size_t n, const int64_t *want, const int64_t *got, const char *msg)
{
    char *js = cJSON_PrintUnformatted(cJSON_GetObjectItem(rec, "text"));
    const cJSON *clean = cJSON_GetObjectItem(rec, "clean");
    char *cs = clean ? cJSON_PrintUnformatted(clean) : NULL;
    char *ours = NULL;
    samc_error err = {0};
    samc_clip_tokenizer_clean(tok, (const char *)text, n, &ours, NULL, &err);
    fprintf(stderr, "corpus line %d (%s, ftfy %s): %s\n  text: %s\n  official clean: %s\n  samc clean:     \"%s\"\n",
            line, cJSON_GetStringValue(cJSON_GetObjectItem(rec, "cat")), version, msg, js, cs ? cs : "(error)",
            ours ? ours : err.msg);
    if (want)
        print_ids("official", want, CTX);
    if (got)
        print_ids("samc    ", got, CTX);
    free(js);
    free(cs);
    free(ours);
}

/* One record against one tokenizer; the expectation is key (ids) or
 * error key. Returns true when it matches. */
static bool check_record(const cJSON *rec, int line, const samc_clip_tokenizer *tok, const char *version,
                         const char *ids_key, const char *err_key, int *shown)
{
    size_t n;
    uint8_t *text = unhex(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "hex")), &n);
    const cJSON *want_ids = cJSON_GetObjectItem(rec, ids_key);
    if (!want_ids && !cJSON_GetObjectItem(rec, err_key))
        want_ids = cJSON_GetObjectItem(rec, "ids");
    int64_t want[CTX] = {0}, got[CTX];
    int i = 0;
    for (const cJSON *v = want_ids ? want_ids->child : NULL; v && i < CTX; v = v->next)
        want[i++] = (int64_t)v->valuedouble;
    samc_error err = {0};
    samc_status st = samc_clip_tokenizer_encode_n(tok, (const char *)text, n, CTX, got, NULL, NULL, &err);
    bool ok;
    if (!want_ids) { /* the official code raises: samc must refuse */
        ok = st != SAMC_OK;
        if (!ok && (*shown)++ < 5)
            report(rec, line, version, tok, text, n, NULL, got, "official raises, samc accepted");
    } else {
        ok = st == SAMC_OK && !memcmp(want, got, sizeof want);
        if (!ok && (*shown)++ < 5)
            report(rec, line, version, tok, text, n, want, st ? NULL : got, st ? err.msg : "ids differ");
    }
    free(text);
    return ok;
}

static void test_corpus(void **state)
{
    (void)state;
    char *path = tu_src_path("tests/data/tokenizer/corpus.jsonl");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *buf = NULL;
    size_t cap = 0;
    int line = 0, total = 0, bad611 = 0, bad631 = 0, shown = 0;
    while (getline(&buf, &cap, f) > 0) {
        line++;
        cJSON *rec = cJSON_Parse(buf);
        assert_non_null(rec);
        total++;
        bad611 += !check_record(rec, line, g_tok, "6.1.1", "ids", "error", &shown);
        bad631 += !check_record(rec, line, g_tok631, "6.3.1", "ids_ftfy_6.3.1", "error_ftfy_6.3.1", &shown);
        cJSON_Delete(rec);
    }
    free(buf);
    fclose(f);
    free(path);
    printf("corpus: %d texts; ftfy 6.1.1: %d match, ftfy 6.3.1: %d match\n", total, total - bad611, total - bad631);
    assert_true(total >= 1500);
    assert_int_equal(bad611, 0);
    assert_int_equal(bad631, 0);
}

/* ---- Unicode properties on every code point ------------------------------------------ */

typedef bool (*cp_pred)(uint32_t);

static cp_pred pred_named(const char *name)
{
    static const struct {
        const char *name;
        cp_pred fn;
    } preds[] = {{"py_isspace", samc__py_isspace},       {"py_isalnum", samc__py_isalnum},
                 {"py_isdecimal", samc__py_isdecimal},   {"rx_space", samc__rx_space},
                 {"rx_letter_ic", samc__rx_letter_ic},   {"rx_number_ic", samc__rx_number_ic},
                 {"rx_other_ic", samc__rx_other_ic}};
    for (size_t i = 0; i < sizeof preds / sizeof preds[0]; i++)
        if (!strcmp(preds[i].name, name))
            return preds[i].fn;
    return NULL;
}

/* Read "set NAME COUNT" and its ranges; compare on all code points. */
static int check_set(FILE *f, const char *name, int count)
{
    uint8_t *want = calloc(0x110000, 1);
    assert_non_null(want);
    for (int i = 0; i < count; i++) {
        unsigned lo, hi;
        assert_int_equal(fscanf(f, " %x-%x", &lo, &hi), 2);
        for (unsigned c = lo; c <= hi && c < 0x110000; c++)
            want[c] = 1;
    }
    cp_pred fn = pred_named(name);
    assert_non_null(fn);
    int bad = 0;
    for (uint32_t c = 0; c < 0x110000; c++)
        if (fn(c) != (bool)want[c] && bad++ < 5)
            fprintf(stderr, "%s(U+%04X): python %d, samc %d\n", name, c, want[c], !want[c]);
    free(want);
    return bad;
}

/* "lower CP: CPS", "ccc CP N", "nfc CP: NFC / NFD" lines: the expected
 * value for listed code points, identity / 0 for all others. */
typedef struct props {
    uint32_t (*lower)[3]; /* count, cp, cp */
    uint8_t *ccc;
    uint32_t (*nfc)[4]; /* count, up to 3 */
    uint8_t *has_nfc;
} props;

static void parse_cps(const char *s, uint32_t *out, int max, uint32_t *count)
{
    *count = 0;
    char *end;
    for (unsigned long v = strtoul(s, &end, 16); end != s && (int)*count < max; v = strtoul(s, &end, 16)) {
        out[(*count)++] = (uint32_t)v;
        s = end;
    }
}

static int check_maps(const props *p)
{
    int bad = 0;
    for (uint32_t c = 0; c < 0x110000; c++) {
        if (c >= 0xD800 && c <= 0xDFFF)
            continue;
        uint32_t m[2];
        int k = samc__py_lower(c, m);
        uint32_t wn = p->lower[c][0] ? p->lower[c][0] : 1, w0 = p->lower[c][0] ? p->lower[c][1] : c;
        if (((uint32_t)k != wn || m[0] != w0 || (k == 2 && m[1] != p->lower[c][2])) && bad++ < 5)
            fprintf(stderr, "lower(U+%04X): samc U+%04X (%d code points)\n", c, m[0], k);
        if (samc__py_assigned(c) && utf8proc_get_property((int32_t)c)->combining_class != p->ccc[c] && bad++ < 5)
            fprintf(stderr, "ccc(U+%04X): python %d, utf8proc %d\n", c, p->ccc[c],
                    utf8proc_get_property((int32_t)c)->combining_class);
        if (c >= 0xAC00 && c <= 0xD7A3)
            continue;
        samc__ustr s = {0};
        samc__ustr_push(&s, c);
        assert_true(samc__py_nfc(&s));
        uint32_t wn2 = p->has_nfc[c] ? p->nfc[c][0] : 1;
        bool same = s.n == wn2;
        for (size_t i = 0; same && i < s.n; i++)
            same = s.v[i] == (p->has_nfc[c] ? p->nfc[c][1 + i] : c);
        if (!same && bad++ < 5)
            fprintf(stderr, "NFC(U+%04X): samc gives %zu code points starting U+%04X\n", c, s.n, s.v[0]);
        samc__ustr_free(&s);
    }
    return bad;
}

static void test_unicode_props(void **state)
{
    (void)state;
    char *path = tu_src_path("tests/data/tokenizer/unicode_props.txt");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    props p = {calloc(0x110000, sizeof *p.lower), calloc(0x110000, 1), calloc(0x110000, sizeof *p.nfc),
               calloc(0x110000, 1)};
    assert_true(p.lower && p.ccc && p.nfc && p.has_nfc);
    char line[512], name[64];
    int bad = 0, sets = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned cp, v;
        int count;
        if (sscanf(line, "set %63s %d", name, &count) == 2) {
            bad += check_set(f, name, count);
            sets++;
        } else if (sscanf(line, "lower %x:", &cp) == 1) {
            parse_cps(strchr(line, ':') + 1, &p.lower[cp][1], 2, &p.lower[cp][0]);
        } else if (sscanf(line, "ccc %x %u", &cp, &v) == 2) {
            p.ccc[cp] = (uint8_t)v;
        } else if (sscanf(line, "nfc %x:", &cp) == 1) {
            parse_cps(strchr(line, ':') + 1, &p.nfc[cp][1], 3, &p.nfc[cp][0]);
            p.has_nfc[cp] = 1;
        }
    }
    fclose(f);
    free(path);
    assert_int_equal(sets, 7);
    bad += check_maps(&p);
    free(p.lower);
    free(p.ccc);
    free(p.nfc);
    free(p.has_nfc);
    printf("unicode: utf8proc %s (Unicode %s), tables for Python's unicodedata %s and regex's Unicode %s\n",
           utf8proc_version(), utf8proc_unicode_version(), samc__py_unidata_version, samc__rx_unidata_version);
    assert_int_equal(bad, 0);
}

/* ---- context lengths ------------------------------------------------------------------- */

static void test_context(void **state)
{
    (void)state;
    int64_t ids[40];
    int n;
    bool cut;
    samc_error err = {0};
    /* 40 words, one token each: [start] + 30 words + [end] at 32 */
    char text[256] = "";
    for (int i = 0; i < 40; i++)
        strcat(text, "dog ");
    assert_int_equal(samc_clip_tokenizer_encode(g_tok, text, 32, ids, &n, &cut, &err), SAMC_OK);
    assert_int_equal(n, 32);
    assert_true(cut);
    assert_int_equal(ids[0], SAMC_CLIP_SOT);
    assert_int_equal(ids[30], 1929); /* "dog</w>" */
    assert_int_equal(ids[31], SAMC_CLIP_EOT);
    /* 30 tokens fit exactly: 32 slots, no cut; 31 tokens: cut */
    text[0] = '\0';
    for (int i = 0; i < 30; i++)
        strcat(text, "dog ");
    assert_int_equal(samc_clip_tokenizer_encode(g_tok, text, 32, ids, &n, &cut, &err), SAMC_OK);
    assert_int_equal(n, 32);
    assert_false(cut);
    strcat(text, "dog");
    assert_int_equal(samc_clip_tokenizer_encode(g_tok, text, 32, ids, &n, &cut, &err), SAMC_OK);
    assert_true(cut);
    /* context 1: [end]; context 2 with a word: [start, end] cut */
    assert_int_equal(samc_clip_tokenizer_encode(g_tok, "dog", 1, ids, &n, &cut, &err), SAMC_OK);
    assert_int_equal(ids[0], SAMC_CLIP_EOT);
    assert_int_equal(n, 1);
    assert_true(cut);
    assert_int_equal(samc_clip_tokenizer_encode(g_tok, "dog", 2, ids, &n, &cut, &err), SAMC_OK);
    assert_int_equal(ids[0], SAMC_CLIP_SOT);
    assert_int_equal(ids[1], SAMC_CLIP_EOT);
    assert_true(cut);
    /* 77 (CLIP's default) pads with zeros */
    int64_t big[77];
    assert_int_equal(samc_clip_tokenizer_encode(g_tok, "a dog", 77, big, &n, &cut, &err), SAMC_OK);
    assert_int_equal(n, 4);
    assert_int_equal(big[76], 0);
    /* embedded NUL: ftfy removes it, so "a\0dog" is "adog" */
    assert_int_equal(samc_clip_tokenizer_encode_n(g_tok, "a\0dog", 5, 32, ids, &n, NULL, &err), SAMC_OK);
    int64_t adog[32];
    assert_int_equal(samc_clip_tokenizer_encode(g_tok, "adog", 32, adog, NULL, NULL, &err), SAMC_OK);
    assert_memory_equal(ids, adog, sizeof adog);
}

/* ---- bad input ----------------------------------------------------------------------------- */

static void expect_load_fail(const char *path, samc_status want, const char *sub)
{
    samc_clip_tokenizer *t = (samc_clip_tokenizer *)1;
    samc_error err = {0};
    samc_status st = samc_clip_tokenizer_load(path, &t, &err);
    if (st != want || !strstr(err.msg, sub))
        fprintf(stderr, "load %s: status %s, message '%s' (want %s, '%s')\n", path ? path : "(null)",
                samc_status_name(st), err.msg, samc_status_name(want), sub);
    assert_int_equal(st, want);
    assert_null(t);
    tu_assert_contains(err.msg, sub);
}

/* gzip `text` as one member (malloc'd bytes, *out_n long). */
static uint8_t *gz_bytes(const void *text, size_t n, size_t *out_n)
{
    z_stream zs = {0};
    assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&zs, (uLong)n) + 64;
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    zs.next_in = (Bytef *)text;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *out_n = zs.total_out;
    deflateEnd(&zs);
    return out;
}

/* gzip `text` into a file of the temp dir; returns its path. */
static char *write_gz(const char *name, const void *text, size_t n)
{
    size_t m;
    uint8_t *gz = gz_bytes(text, n, &m);
    char *path = tu_join(g_tmp, name);
    assert_int_equal(tu_write_file(path, gz, m), 0);
    free(gz);
    return path;
}

static void test_bad_vocab(void **state)
{
    (void)state;
    uint8_t *gz;
    size_t n;
    assert_int_equal(tu_read_file(g_vocab, &gz, &n), 0);
    char *p;
    expect_load_fail("/nonexistent/vocab.txt.gz", SAMC_ERR_IO, "/nonexistent/vocab.txt.gz");
    expect_load_fail(g_tmp, SAMC_ERR_IO, g_tmp); /* a directory */
    p = tu_join(g_tmp, "empty.gz");
    tu_write_file(p, "", 0);
    expect_load_fail(p, SAMC_ERR_FORMAT, "not a gzip file");
    free(p);
    p = tu_join(g_tmp, "truncated.gz");
    tu_write_file(p, gz, n / 2);
    expect_load_fail(p, SAMC_ERR_FORMAT, "truncated");
    free(p);
    p = tu_join(g_tmp, "corrupt.gz");
    uint8_t *c = malloc(n);
    memcpy(c, gz, n);
    for (size_t i = n / 3; i < n / 3 + 64; i++)
        c[i] ^= 0x5A;
    tu_write_file(p, c, n);
    expect_load_fail(p, SAMC_ERR_FORMAT, "corrupt gzip data");
    free(p);
    memcpy(c, gz, n);
    c[n - 6] ^= 1; /* the CRC-32 of the trailer */
    p = tu_join(g_tmp, "badcrc.gz");
    tu_write_file(p, c, n);
    expect_load_fail(p, SAMC_ERR_FORMAT, "corrupt gzip data");
    free(p);
    uint8_t *two = malloc(n + 3);
    memcpy(two, gz, n);
    memcpy(two + n, "xyz", 3);
    p = tu_join(g_tmp, "trailing.gz");
    tu_write_file(p, two, n + 3);
    expect_load_fail(p, SAMC_ERR_FORMAT, "trailing bytes");
    free(p);
    free(two);
    p = write_gz("short.gz", "#version: 0.2\ni n\nt h\n", 22);
    expect_load_fail(p, SAMC_ERR_FORMAT, "the vocabulary has 4 lines");
    free(p);
    p = write_gz("badutf8.gz", "#version\xff\n", 10);
    expect_load_fail(p, SAMC_ERR_FORMAT, "not valid UTF-8");
    free(p);
    p = tu_join(g_tmp, "plain.txt");
    tu_write_file(p, "#version: 0.2\n", 14);
    expect_load_fail(p, SAMC_ERR_FORMAT, "not a gzip file");
    free(p);
    expect_load_fail(NULL, SAMC_ERR_ARG, "NULL path");
    samc_error err = {0};
    assert_int_equal(samc_clip_tokenizer_load_gz_mem(NULL, 5, &(samc_clip_tokenizer *){NULL}, &err), SAMC_ERR_ARG);
    samc_error_clear(&err);
    assert_int_equal(samc_clip_tokenizer_load_gz_mem(gz, n, NULL, &err), SAMC_ERR_ARG);
    samc_error_clear(&err);
    assert_int_equal(samc_clip_tokenizer_set_ftfy(g_tok631, "5.5", &err), SAMC_ERR_ARG);
    tu_assert_contains(err.msg, "6.1.1");
    /* Concatenated gzip members with zero padding between them are one text
     * to Python's gzip, and to samc. */
    size_t m;
    uint8_t *empty = gz_bytes("", 0, &m);
    uint8_t *cat = malloc(n + 3 + m);
    memcpy(cat, gz, n);
    memset(cat + n, 0, 3);
    memcpy(cat + n + 3, empty, m);
    samc_clip_tokenizer *t = NULL;
    samc_error_clear(&err);
    assert_int_equal(samc_clip_tokenizer_load_gz_mem(cat, n + 3 + m, &t, &err), SAMC_OK);
    int64_t ids[CTX];
    assert_int_equal(samc_clip_tokenizer_encode(t, "a dog", CTX, ids, NULL, NULL, &err), SAMC_OK);
    assert_int_equal(ids[2], 1929);
    samc_clip_tokenizer_free(t);
    free(cat);
    free(empty);
    free(c);
    free(gz);
}

static void expect_encode_fail(const char *text, size_t len, int ctx, samc_status want, const char *sub)
{
    int64_t ids[64];
    samc_error err = {0};
    int n = 7;
    samc_status st = samc_clip_tokenizer_encode_n(g_tok, text, len, ctx, ids, &n, NULL, &err);
    if (st != want || !strstr(err.msg, sub))
        fprintf(stderr, "encode: status %s, '%s' (want %s, '%s')\n", samc_status_name(st), err.msg,
                samc_status_name(want), sub);
    assert_int_equal(st, want);
    assert_int_equal(n, 0);
    tu_assert_contains(err.msg, sub);
}

static void test_bad_text(void **state)
{
    (void)state;
    expect_encode_fail("a\xff", 2, 32, SAMC_ERR_ARG, "not valid UTF-8 at byte 1");
    expect_encode_fail("\xc0\x80", 2, 32, SAMC_ERR_ARG, "at byte 0");       /* overlong NUL */
    expect_encode_fail("ab\xe2\x82", 4, 32, SAMC_ERR_ARG, "at byte 2");     /* truncated */
    expect_encode_fail("\xf4\x90\x80\x80", 4, 32, SAMC_ERR_ARG, "at byte 0"); /* > U+10FFFF */
    expect_encode_fail("\xed\xa0\x80\xed\xb0", 5, 32, SAMC_ERR_ARG, "at byte 3");
    expect_encode_fail("dog", 3, 0, SAMC_ERR_ARG, "context length 0");
    expect_encode_fail("dog", 3, -5, SAMC_ERR_ARG, "context length -5");
    size_t big = ((size_t)1 << 20) + 1;
    char *huge = malloc(big);
    memset(huge, 'a', big);
    expect_encode_fail(huge, big, 32, SAMC_ERR_ARG, "longer than samc's limit");
    /* A decimal reference of 4301 digits: Python's int() raises ValueError */
    char *ref = calloc(1, 4400);
    strcpy(ref, "&#");
    memset(ref + 2, '1', 4301);
    strcat(ref, ";");
    expect_encode_fail(ref, strlen(ref), 32, SAMC_ERR_ARG, "ValueError");
    free(ref);
    int64_t ids[32];
    samc_error err = {0};
    assert_int_equal(samc_clip_tokenizer_encode(NULL, "x", 32, ids, NULL, NULL, &err), SAMC_ERR_ARG);
    samc_error_clear(&err);
    assert_int_equal(samc_clip_tokenizer_encode(g_tok, NULL, 32, ids, NULL, NULL, &err), SAMC_ERR_ARG);
    samc_error_clear(&err);
    assert_int_equal(samc_clip_tokenizer_encode(g_tok, "x", 32, NULL, NULL, NULL, &err), SAMC_ERR_ARG);
    /* A megabyte of one letter: one word, linear-time BPE (a second or less). */
    memset(huge, 'a', big - 1);
    samc_error_clear(&err);
    bool cut = false;
    assert_int_equal(samc_clip_tokenizer_encode_n(g_tok, huge, big - 1, 32, ids, NULL, &cut, &err), SAMC_OK);
    assert_true(cut);
    free(huge);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_vectors), cmocka_unit_test(test_corpus),   cmocka_unit_test(test_unicode_props),
        cmocka_unit_test(test_context),       cmocka_unit_test(test_bad_vocab), cmocka_unit_test(test_bad_text),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
