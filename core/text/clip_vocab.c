/* SPDX-License-Identifier: Apache-2.0 */
/* clip_vocab.c - load bpe_simple_vocab_16e6.txt.gz as SimpleTokenizer.__init__
 * does: gunzip, decode UTF-8, split at "\n", merges = lines 1 .. 48894, each
 * split on whitespace; vocabulary = 256 byte characters, the same with
 * "</w>", one joined string per merge, <start_of_text>, <end_of_text>.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/text/clip_internal.h"
#include "core/text/unicode_props.h"

#define N_MERGES (49152 - 256 - 2) /* merges[1 : 49152 - 256 - 2 + 1] */
#define MAX_GZ_INPUT ((size_t)256 << 20)
#define MAX_VOCAB_TEXT ((size_t)64 << 20) /* the official file inflates to 1.7 MB */

/* ---- gzip --------------------------------------------------------------------- */

/* Inflate every gzip member of gz (Python's gzip reads concatenated members
 * and skips zero padding between them). */
static samc_status gunzip(const uint8_t *gz, size_t n, samc__bstr *out, samc_error *err)
{
    if (n < 2 || gz[0] != 0x1F || gz[1] != 0x8B)
        return samc_fail(err, SAMC_ERR_FORMAT, "not a gzip file (no 1f 8b magic)");
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        return samc_fail(err, SAMC_ERR_NOMEM, "zlib: inflateInit2 failed");
    samc_status st = SAMC_OK;
    size_t pos = 0;
    uint8_t chunk[1 << 16];
    while (!st && pos < n) {
        zs.next_in = (Bytef *)(gz + pos);
        zs.avail_in = (uInt)(n - pos); /* n <= MAX_GZ_INPUT fits */
        int rc;
        do {
            zs.next_out = chunk;
            zs.avail_out = sizeof chunk;
            rc = inflate(&zs, Z_NO_FLUSH);
            samc__bstr_append(out, chunk, sizeof chunk - zs.avail_out);
            if (out->n > MAX_VOCAB_TEXT)
                st = samc_fail(err, SAMC_ERR_FORMAT, "gzip data inflates to more than %zu MiB", MAX_VOCAB_TEXT >> 20);
            else if (out->oom)
                st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory inflating the vocabulary");
        } while (!st && rc == Z_OK);
        if (st)
            break;
        if (rc == Z_BUF_ERROR || (rc == Z_OK && zs.avail_in == 0))
            st = samc_fail(err, SAMC_ERR_FORMAT, "gzip data is truncated (ends before the end of stream)");
        else if (rc != Z_STREAM_END)
            st = samc_fail(err, SAMC_ERR_FORMAT, "corrupt gzip data (zlib: %s)", zs.msg ? zs.msg : "error");
        if (st)
            break;
        pos = (size_t)(zs.next_in - gz);
        while (pos < n && gz[pos] == 0)
            pos++;
        if (pos < n && (n - pos < 2 || gz[pos] != 0x1F || gz[pos + 1] != 0x8B))
            st = samc_fail(err, SAMC_ERR_FORMAT, "trailing bytes after the gzip data at offset %zu", pos);
        else if (pos < n)
            inflateReset(&zs);
    }
    inflateEnd(&zs);
    return st;
}

/* ---- string -> id map (the encoder dict: the last index of a string wins) ---- */

typedef struct strmap {
    samc__bstr arena;    /* every vocabulary string, back to back */
    uint32_t *off, *len; /* of vocabulary entry i in arena */
    uint32_t n;          /* entries */
    uint32_t *slot;      /* entry index + 1; 0 = empty */
    size_t cap;          /* power of two */
} strmap;

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h;
}

/* Slot of string p[0..n): where it is, or the empty slot where it would go. */
static size_t map_slot(const strmap *m, const uint8_t *p, size_t n)
{
    size_t i = (size_t)fnv1a(p, n) & (m->cap - 1);
    while (m->slot[i]) {
        uint32_t e = m->slot[i] - 1;
        if (m->len[e] == n && !memcmp(m->arena.v + m->off[e], p, n))
            return i;
        i = (i + 1) & (m->cap - 1);
    }
    return i;
}

/* Append the next vocabulary entry, p[0..n) (the arena may move: p must not
 * point into it); it takes the string's slot, so the last index wins. */
static void map_add(strmap *m, const uint8_t *p, size_t n)
{
    m->off[m->n] = (uint32_t)m->arena.n;
    m->len[m->n] = (uint32_t)n;
    samc__bstr_append(&m->arena, p, n);
    if (m->arena.oom)
        return;
    m->slot[map_slot(m, p, n)] = m->n + 1;
    m->n++;
}

static int64_t map_get(const strmap *m, const uint8_t *p, size_t n)
{
    uint32_t s = m->slot[map_slot(m, p, n)];
    return s ? (int64_t)s - 1 : -1;
}

static void map_free(strmap *m)
{
    samc__bstr_free(&m->arena);
    free(m->off);
    free(m->len);
    free(m->slot);
}

/* ---- merge lines ----------------------------------------------------------------- */

/* Split one line on Python whitespace (str.split()) and join the parts into
 * `parts`; *cut is the length of the first part. Returns the number of parts.
 * Lines are almost always ASCII, split here without decoding. */
static size_t split_line(const uint8_t *line, size_t n, samc__ustr *cps, samc__bstr *parts, uint32_t *cut)
{
    size_t k = 0, i = 0;
    parts->n = 0;
    *cut = 0;
    while (i < n && line[i] < 0x80)
        i++;
    if (i == n) { /* ASCII */
        for (i = 0; i < n;) {
            while (i < n && samc__py_isspace(line[i]))
                i++;
            if (i < n && k++ == 1)
                *cut = (uint32_t)parts->n;
            while (i < n && !samc__py_isspace(line[i]))
                samc__bstr_push(parts, line[i++]);
        }
        return k;
    }
    cps->n = 0;
    samc__utf8_decode_strict(line, n, cps); /* validated before */
    for (i = 0; i < cps->n;) {
        while (i < cps->n && samc__py_isspace(cps->v[i]))
            i++;
        if (i < cps->n && k++ == 1)
            *cut = (uint32_t)parts->n;
        while (i < cps->n && !samc__py_isspace(cps->v[i]))
            samc__utf8_put(parts, cps->v[i++]);
    }
    return k;
}

/* ---- building the tables ------------------------------------------------------------ */

static void pair_put(samc_clip_tokenizer *t, uint32_t a, uint32_t b, int32_t rank, uint32_t merged)
{
    uint64_t key = ((uint64_t)a << 32) | b;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15u) >> 20) & (t->pair_cap - 1);
    while (t->pair_key[i] != SAMC__PAIR_EMPTY && t->pair_key[i] != key)
        i = (i + 1) & (t->pair_cap - 1);
    t->pair_key[i] = key;
    t->pair_rank[i] = rank; /* dict(zip(merges, range)): a repeated pair keeps its last rank */
    t->pair_merged[i] = merged;
}

bool samc__clip_pair(const samc_clip_tokenizer *t, uint32_t a, uint32_t b, int32_t *rank, uint32_t *merged)
{
    uint64_t key = ((uint64_t)a << 32) | b;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15u) >> 20) & (t->pair_cap - 1);
    while (t->pair_key[i] != SAMC__PAIR_EMPTY) {
        if (t->pair_key[i] == key) {
            *rank = t->pair_rank[i];
            *merged = t->pair_merged[i];
            return true;
        }
        i = (i + 1) & (t->pair_cap - 1);
    }
    return false;
}

static void put_char(samc__bstr *b, uint32_t c, bool eow)
{
    b->n = 0;
    samc__utf8_put(b, c);
    if (eow)
        samc__bstr_append(b, (const uint8_t *)"</w>", 4);
}

/* Vocabulary entries 0 .. 511: byte characters in bytes_to_unicode() order
 * (its dict order), then the same with "</w>". */
static void add_byte_entries(strmap *m, samc__bstr *tmp)
{
    for (int eow = 0; eow < 2; eow++)
        for (int pass = 0; pass < 2; pass++)
            for (int b = 0; b < 256; b++) {
                uint32_t c = samc__clip_byte_char((uint8_t)b);
                if ((c == (uint32_t)b) == (pass == 0)) { /* printable bytes first, in byte order */
                    put_char(tmp, c, eow);
                    map_add(m, tmp->v, tmp->n);
                }
            }
}

typedef struct merge_line {
    const uint8_t *p;
    size_t n;
} merge_line;

/* Lines 1 .. N_MERGES of the text, or an error naming how many there are. */
static samc_status find_lines(const samc__bstr *text, merge_line *lines, samc_error *err)
{
    size_t i = 0, line = 0;
    while (line <= N_MERGES) {
        const uint8_t *nl = i < text->n ? memchr(text->v + i, '\n', text->n - i) : NULL;
        size_t end = nl ? (size_t)(nl - text->v) : text->n;
        if (line >= 1)
            lines[line - 1] = (merge_line){text->v + i, end - i};
        line++;
        if (!nl)
            break;
        i = end + 1;
    }
    if (line <= N_MERGES)
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "the vocabulary has %zu lines; SAM 3's tokenizer needs a header and %d merges (the "
                         "official bpe_simple_vocab_16e6.txt.gz has 262,146 lines)",
                         line, N_MERGES);
    return SAMC_OK;
}

/* Scratch of one build. */
typedef struct builder {
    merge_line *lines;
    uint32_t *cut;    /* length of the first part of merge r */
    uint8_t *npairs;  /* 1 when merge r has exactly two parts */
    strmap m;
    samc__ustr cps;
    samc__bstr parts, tmp;
} builder;

#define N_VOCAB (512 + N_MERGES + 2)

static bool alloc_tables(samc_clip_tokenizer *t, builder *b)
{
    b->lines = malloc(sizeof *b->lines * N_MERGES);
    b->cut = malloc(sizeof *b->cut * N_MERGES);
    b->npairs = malloc(N_MERGES);
    b->m.cap = 1u << 17; /* > 2.5 x N_VOCAB */
    b->m.off = malloc(sizeof *b->m.off * N_VOCAB);
    b->m.len = malloc(sizeof *b->m.len * N_VOCAB);
    b->m.slot = calloc(b->m.cap, sizeof *b->m.slot);
    t->pair_cap = 1u << 17;
    t->pair_key = malloc(sizeof *t->pair_key * t->pair_cap);
    t->pair_rank = malloc(sizeof *t->pair_rank * t->pair_cap);
    t->pair_merged = malloc(sizeof *t->pair_merged * t->pair_cap);
    if (!b->lines || !b->cut || !b->npairs || !b->m.off || !b->m.len || !b->m.slot || !t->pair_key || !t->pair_rank || !t->pair_merged)
        return false;
    memset(t->pair_key, 0xFF, sizeof *t->pair_key * t->pair_cap);
    return true;
}

/* The vocabulary list, in order: bytes, bytes + "</w>", merges (each line's
 * parts joined), specials. */
static void add_entries(builder *b)
{
    add_byte_entries(&b->m, &b->tmp);
    for (size_t r = 0; r < N_MERGES; r++) {
        b->npairs[r] = split_line(b->lines[r].p, b->lines[r].n, &b->cps, &b->parts, &b->cut[r]) == 2;
        map_add(&b->m, b->parts.v ? b->parts.v : (const uint8_t *)"", b->parts.n);
    }
    map_add(&b->m, (const uint8_t *)"<start_of_text>", 15);
    map_add(&b->m, (const uint8_t *)"<end_of_text>", 13);
}

/* bpe_ranks as id pairs: (id(a), id(b)) -> (rank, id(a + b)); a tuple that
 * is not a pair never matches in bpe(). */
static void add_rules(samc_clip_tokenizer *t, builder *b)
{
    const strmap *m = &b->m;
    for (size_t r = 0; r < N_MERGES && !m->arena.oom; r++) {
        if (!b->npairs[r])
            continue;
        const uint8_t *p = m->arena.v + m->off[512 + r];
        uint32_t len = m->len[512 + r], cut = b->cut[r];
        int64_t x = map_get(m, p, cut), y = map_get(m, p + cut, len - cut), j = map_get(m, p, len);
        if (x >= 0 && y >= 0 && j >= 0)
            pair_put(t, (uint32_t)x, (uint32_t)y, (int32_t)r, (uint32_t)j);
    }
    for (int c = 0; c < 256; c++)
        for (int eow = 0; eow < 2; eow++) {
            put_char(&b->tmp, samc__clip_byte_char((uint8_t)c), eow);
            t->byte_sym[c][eow] = (uint32_t)map_get(m, b->tmp.v, b->tmp.n);
        }
    t->sot = (uint32_t)map_get(m, (const uint8_t *)"<start_of_text>", 15);
    t->eot = (uint32_t)map_get(m, (const uint8_t *)"<end_of_text>", 13);
    t->n_vocab = N_VOCAB;
}

static samc_status build(samc_clip_tokenizer *t, const samc__bstr *text, samc_error *err)
{
    builder b = {0};
    samc_status st = SAMC_OK;
    if (!alloc_tables(t, &b))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory building the vocabulary");
    if (!st)
        st = find_lines(text, b.lines, err);
    if (!st) {
        add_entries(&b);
        add_rules(t, &b);
        if (b.m.arena.oom || b.cps.oom || b.parts.oom || b.tmp.oom)
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory building the vocabulary");
    }
    free(b.lines);
    free(b.cut);
    free(b.npairs);
    map_free(&b.m);
    samc__ustr_free(&b.cps);
    samc__bstr_free(&b.parts);
    samc__bstr_free(&b.tmp);
    return st;
}

/* ---- public ------------------------------------------------------------------------------ */

samc_status samc__clip_load_text(const uint8_t *text, size_t n, samc_clip_tokenizer **out, samc_error *err)
{
    *out = NULL;
    size_t bad = 0;
    if (!samc__utf8_valid(text, n, &bad))
        return samc_fail(err, SAMC_ERR_FORMAT, "the vocabulary text is not valid UTF-8 (byte %zu)", bad);
    samc_clip_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    t->ftfy = &samc__ftfy_profile_6_1_1;
    samc__bstr view = {(uint8_t *)text, n, n, false}; /* read-only view */
    samc_status st = build(t, &view, err);
    if (st) {
        samc_clip_tokenizer_free(t);
        return st;
    }
    *out = t;
    return SAMC_OK;
}

samc_status samc_clip_tokenizer_load_gz_mem(const void *gz, size_t n, samc_clip_tokenizer **out, samc_error *err)
{
    if (out)
        *out = NULL;
    if (!gz || !out)
        return samc_fail(err, SAMC_ERR_ARG, "clip tokenizer: NULL %s", !gz ? "vocabulary bytes" : "output pointer");
    samc_status st = SAMC_OK;
    if (n > MAX_GZ_INPUT)
        st = samc_fail(err, SAMC_ERR_FORMAT, "%zu bytes of gzip data is more than %zu MiB", n, MAX_GZ_INPUT >> 20);
    samc__bstr text = {0};
    if (!st)
        st = gunzip(gz, n, &text, err);
    if (!st)
        st = samc__clip_load_text(text.v, text.n, out, err);
    samc__bstr_free(&text);
    if (st)
        samc_error_prefix(err, "clip vocabulary");
    return st;
}

samc_status samc_clip_tokenizer_load(const char *path, samc_clip_tokenizer **out, samc_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return samc_fail(err, SAMC_ERR_ARG, "clip tokenizer: NULL %s", !path ? "path" : "output pointer");
    samc_mapped_file mf;
    samc_status st = samc_check_regular(path, err);
    if (!st)
        st = samc_file_map(path, &mf, err);
    if (st)
        return st;
    st = samc_clip_tokenizer_load_gz_mem(mf.data ? (const void *)mf.data : "", mf.size, out, err);
    samc_file_unmap(&mf);
    if (st)
        samc_error_prefix(err, "%s", path);
    return st;
}

void samc_clip_tokenizer_free(samc_clip_tokenizer *t)
{
    if (!t)
        return;
    free(t->pair_key);
    free(t->pair_rank);
    free(t->pair_merged);
    free(t);
}

samc_status samc_clip_tokenizer_set_ftfy(samc_clip_tokenizer *t, const char *version, samc_error *err)
{
    if (!t || !version)
        return samc_fail(err, SAMC_ERR_ARG, "clip tokenizer: NULL %s", !t ? "tokenizer" : "ftfy version");
    if (!strcmp(version, samc__ftfy_profile_6_1_1.version))
        t->ftfy = &samc__ftfy_profile_6_1_1;
    else if (!strcmp(version, samc__ftfy_profile_6_3_1.version))
        t->ftfy = &samc__ftfy_profile_6_3_1;
    else
        return samc_fail(err, SAMC_ERR_ARG, "clip tokenizer: ftfy version '%.32s' is not one samc reproduces (6.1.1, 6.3.1)",
                         version);
    return SAMC_OK;
}
