/* SPDX-License-Identifier: Apache-2.0 */
/* clip_tokenizer.h - the SAM 3 text tokenizer (sam3/model/tokenizer_ve.py,
 * SimpleTokenizer, an OpenAI CLIP copy), reproduced exactly.
 *
 * encode(text) = SimpleTokenizer(bpe_path)(text, context_length): clean the
 * text (ftfy.fix_text, html.unescape twice, whitespace collapse, strip,
 * str.lower), split it with the CLIP pattern, byte-level BPE with "</w>",
 * then [start] + ids + [end] cut to the context (the end token forced into
 * the last slot) and padded with 0. docs/tokenizer.md lists every rule, the
 * Unicode versions and what of ftfy is not reproduced.
 *
 * A loaded tokenizer is read-only: encode may run on it from several threads.
 */
#ifndef SAMC_TEXT_CLIP_TOKENIZER_H
#define SAMC_TEXT_CLIP_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "samc_status.h"

#define SAMC_CLIP_VOCAB_SIZE 49408
#define SAMC_CLIP_SOT 49406 /* <start_of_text> */
#define SAMC_CLIP_EOT 49407 /* <end_of_text> */
#define SAMC_CLIP_CONTEXT_SAM3 32

typedef struct samc_clip_tokenizer samc_clip_tokenizer;

/* Load the official vocabulary, bpe_simple_vocab_16e6.txt.gz, from a file or
 * from its gzip bytes (the SAM 3 parity dump carries them as
 * /model/bpe_vocab_gz). Missing, truncated or corrupt files, bad UTF-8 and a
 * vocabulary without the 48,894 merges SAM 3 uses are refused with a message. */
samc_status samc_clip_tokenizer_load(const char *path, samc_clip_tokenizer **out, samc_error *err);
samc_status samc_clip_tokenizer_load_gz_mem(const void *gz, size_t n, samc_clip_tokenizer **out, samc_error *err);
void samc_clip_tokenizer_free(samc_clip_tokenizer *tok);

/* Which ftfy release to reproduce: "6.1.1" (default: the version sam3's
 * pyproject.toml pins) or "6.3.1". They differ only on some mojibake. */
samc_status samc_clip_tokenizer_set_ftfy(samc_clip_tokenizer *tok, const char *version, samc_error *err);

/* Tokenize UTF-8 text into ids[0..context_len): *n_tokens receives the number
 * of slots in use (start and end included; the rest are 0) and *truncated
 * whether the text did not fit (either may be NULL). Note that id 0 is also
 * the token "!" at the start of a punctuation run, and the official model
 * builds its padding mask as id == 0: a caller mirroring it masks that token
 * too. Surrogates written as three-byte sequences (Python's "surrogatepass")
 * are accepted; other invalid UTF-8 and texts over 1 MiB are refused. */
samc_status samc_clip_tokenizer_encode(const samc_clip_tokenizer *tok, const char *text, int context_len,
                                       int64_t *ids, int *n_tokens, bool *truncated, samc_error *err);
/* The same for `len` bytes that may contain NUL. */
samc_status samc_clip_tokenizer_encode_n(const samc_clip_tokenizer *tok, const char *text, size_t len,
                                         int context_len, int64_t *ids, int *n_tokens, bool *truncated,
                                         samc_error *err);

/* The cleaned text the ids are made from (NUL-terminated UTF-8, malloc'd),
 * for diagnosis; *cleaned_len excludes the NUL (may be NULL). */
samc_status samc_clip_tokenizer_clean(const samc_clip_tokenizer *tok, const char *text, size_t len, char **cleaned,
                                      size_t *cleaned_len, samc_error *err);

#endif
