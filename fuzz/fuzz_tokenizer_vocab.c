/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_tokenizer_vocab.c - loading the CLIP BPE vocabulary
 * (core/text/clip_vocab.c), then tokenizing with what was loaded.
 *
 * Input: byte 0 picks the mode.
 *   even: the rest is the gzip file, given to samc_clip_tokenizer_load_gz_mem
 *         (gzip framing, members, CRC, UTF-8, line count);
 *   odd:  the rest edits the official vocabulary text (inflated once from the
 *         committed file): its first line is a line number k, the following
 *         lines replace lines k, k+1, ... (odd merges: three parts, empty,
 *         duplicates, non-ASCII, whitespace); the result is loaded as text.
 * A loaded vocabulary must tokenize a few fixed texts into ids below its
 * size with [start] first and [end] last.
 * Seeds: fuzz/seeds/tokenizer_vocab/ (tools/make_tokenizer_corpus.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/text/clip_internal.h"
#include "fuzz_common.h"

#ifndef SAMC_TOKENIZER_VOCAB
#error "SAMC_TOKENIZER_VOCAB (path of bpe_simple_vocab_16e6.txt.gz) must be defined"
#endif

#define KEEP_LINES 48895 /* the header and the merges SAM 3 reads */

static uint8_t *g_text; /* official text, first KEEP_LINES lines */
static size_t g_len;
static size_t g_line_off[KEEP_LINES + 1];

static void load_official(void)
{
    samc_mapped_file mf;
    samc_error err = {0};
    if (samc_file_map(SAMC_TOKENIZER_VOCAB, &mf, &err))
        abort();
    z_stream zs = {0};
    size_t cap = 4u << 20;
    g_text = malloc(cap);
    if (!g_text || inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        abort();
    zs.next_in = (Bytef *)mf.data;
    zs.avail_in = (uInt)mf.size;
    zs.next_out = g_text;
    zs.avail_out = (uInt)cap;
    if (inflate(&zs, Z_FINISH) != Z_STREAM_END)
        abort();
    size_t total = zs.total_out, line = 0;
    inflateEnd(&zs);
    samc_file_unmap(&mf);
    g_line_off[0] = 0;
    for (size_t i = 0; i < total && line < KEEP_LINES; i++)
        if (g_text[i] == '\n')
            g_line_off[++line] = i + 1;
    g_len = g_line_off[KEEP_LINES];
}

static void exercise(const samc_clip_tokenizer *t)
{
    static const char *const texts[] = {"a dog", "wow!~ route 66", "ÀÉÎ 日本 👍🏽", "<start_of_text>x"};
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        int64_t ids[32];
        int n = 0;
        samc_error err = {0};
        if (samc_clip_tokenizer_encode(t, texts[k], 32, ids, &n, NULL, &err)) {
            fprintf(stderr, "fuzz invariant: a loaded vocabulary fails to tokenize: %s\n", err.msg);
            abort();
        }
        for (int i = 0; i < n; i++)
            if (ids[i] < 0 || ids[i] >= SAMC_CLIP_VOCAB_SIZE || ids[0] != SAMC_CLIP_SOT || ids[n - 1] != SAMC_CLIP_EOT) {
                fprintf(stderr, "fuzz invariant: id %lld at %d of %d\n", (long long)ids[i], i, n);
                abort();
            }
    }
}

/* Official text with lines k.. replaced by the payload's lines. */
static uint8_t *edited(const uint8_t *p, size_t n, size_t *out_n)
{
    const uint8_t *nl = memchr(p, '\n', n);
    size_t head = nl ? (size_t)(nl - p) : n;
    unsigned long k = 0;
    for (size_t i = 0; i < head && i < 6; i++)
        k = k * 10 + (unsigned long)(p[i] >= '0' && p[i] <= '9' ? p[i] - '0' : 0);
    k = 1 + k % (KEEP_LINES - 1);
    const uint8_t *body = nl ? nl + 1 : p + n;
    size_t blen = (size_t)(p + n - body), lines = 0;
    for (size_t i = 0; i < blen; i++)
        lines += body[i] == '\n';
    size_t end_line = k + lines + 1 < KEEP_LINES ? k + lines + 1 : KEEP_LINES;
    size_t a = g_line_off[k], b = g_line_off[end_line];
    uint8_t *out = malloc(g_len - (b - a) + blen + 1);
    if (!out)
        abort();
    memcpy(out, g_text, a);
    memcpy(out + a, body, blen);
    size_t m = a + blen;
    if (!blen || body[blen - 1] != '\n')
        out[m++] = '\n';
    memcpy(out + m, g_text + b, g_len - b);
    *out_n = m + g_len - b;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_text)
        load_official();
    if (size < 1 || size > (1 << 16))
        return 0;
    samc_clip_tokenizer *t = NULL;
    samc_error err = {0};
    samc_status st;
    if (data[0] % 2 == 0) {
        st = samc_clip_tokenizer_load_gz_mem(data + 1, size - 1, &t, &err);
        fuzz_check_error(st, &err, "clip vocabulary", "samc_clip_tokenizer_load_gz_mem");
    } else {
        size_t n;
        uint8_t *text = edited(data + 1, size - 1, &n);
        st = samc__clip_load_text(text, n, &t, &err);
        fuzz_check_error(st, &err, NULL, "samc__clip_load_text");
        free(text);
    }
    if (!st)
        exercise(t);
    samc_clip_tokenizer_free(t);
    return 0;
}
