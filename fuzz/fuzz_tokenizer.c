/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_tokenizer.c - the SAM 3 text tokenizer on arbitrary text
 * (core/text/: UTF-8 decoding, ftfy.fix_text, html.unescape, the pre-split
 * pattern, BPE). The vocabulary is the committed official one, loaded once.
 *
 * Input: byte 0 picks the ftfy version (bit 0: 6.3.1) and the context length
 * (bits 1-7: 1..127, 0 meaning SAM 3's 32); the rest is the text. Checked on
 * every input: a failure has a message; a success fills exactly the slots it
 * reports ([start] .. [end], every id in the vocabulary, zeros after), and
 * the cleaned text is well-formed UTF-8 without surrogates.
 * Seeds: fuzz/seeds/tokenizer/ (tools/make_tokenizer_corpus.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text/clip_tokenizer.h"
#include "core/text/text_internal.h"
#include "fuzz_common.h"

#ifndef SAMC_TOKENIZER_VOCAB
#error "SAMC_TOKENIZER_VOCAB (path of bpe_simple_vocab_16e6.txt.gz) must be defined"
#endif

static samc_clip_tokenizer *tok[2];

static void invariant(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz invariant: %s\n", what);
        abort();
    }
}

static void check_ids(const int64_t *ids, int ctx, int n, bool cut)
{
    invariant(n >= 1 && n <= ctx, "n_tokens within the context");
    invariant(!cut || n == ctx, "a cut text fills the context");
    invariant(ctx == 1 || ids[0] == SAMC_CLIP_SOT, "start token first");
    invariant(ids[n - 1] == SAMC_CLIP_EOT, "end token last");
    for (int i = 0; i < ctx; i++)
        invariant(ids[i] >= 0 && ids[i] < SAMC_CLIP_VOCAB_SIZE && (i < n || ids[i] == 0), "ids in range, zero pad");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samc_error err = {0};
    if (!tok[0]) {
        if (samc_clip_tokenizer_load(SAMC_TOKENIZER_VOCAB, &tok[0], &err) ||
            samc_clip_tokenizer_load(SAMC_TOKENIZER_VOCAB, &tok[1], &err) ||
            samc_clip_tokenizer_set_ftfy(tok[1], "6.3.1", &err)) {
            fprintf(stderr, "fuzz_tokenizer: %s\n", err.msg);
            abort();
        }
    }
    if (size < 1 || size > (1 << 16))
        return 0;
    const samc_clip_tokenizer *t = tok[data[0] & 1];
    int ctx = data[0] >> 1 ? data[0] >> 1 : SAMC_CLIP_CONTEXT_SAM3;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    int64_t ids[128];
    int n = -1;
    bool cut = false;
    samc_status st = samc_clip_tokenizer_encode_n(t, text, len, ctx, ids, &n, &cut, &err);
    fuzz_check_error(st, &err, NULL, "samc_clip_tokenizer_encode_n");
    if (!st)
        check_ids(ids, ctx, n, cut);
    char *clean = NULL;
    size_t clen = 0;
    samc_error_clear(&err);
    st = samc_clip_tokenizer_clean(t, text, len, &clean, &clen, &err);
    fuzz_check_error(st, &err, NULL, "samc_clip_tokenizer_clean");
    if (!st) {
        size_t bad;
        invariant(samc__utf8_valid((const uint8_t *)clean, clen, &bad), "cleaned text is strict UTF-8");
        invariant(clean[clen] == 0, "cleaned text terminated");
    }
    free(clean);
    return 0;
}
