/* SPDX-License-Identifier: Apache-2.0 */
/* clip_internal.h - the loaded CLIP vocabulary and the steps of encode. */
#ifndef SAMC_TEXT_CLIP_INTERNAL_H
#define SAMC_TEXT_CLIP_INTERNAL_H

#include "core/text/clip_tokenizer.h"
#include "core/text/ftfy_profile.h"
#include "core/text/text_internal.h"

/* Symbols are vocabulary ids: every string the official code builds (byte
 * characters, "</w>" forms, merge results) is in its vocabulary, and its id is
 * the encoder's (the last index of that string), so BPE on ids is BPE on
 * strings. A merge rule (a, b) -> merged is kept in an open-addressing table. */
struct samc_clip_tokenizer {
    uint32_t byte_sym[256][2]; /* id of byte b's character, without / with "</w>" */
    uint64_t *pair_key;        /* (a << 32) | b; PAIR_EMPTY when free */
    int32_t *pair_rank;        /* merge rank (bpe_ranks: the last line wins) */
    uint32_t *pair_merged;     /* id of the merged symbol */
    size_t pair_cap;           /* power of two */
    uint32_t sot, eot, n_vocab;
    const samc__ftfy_profile *ftfy;
};

#define SAMC__PAIR_EMPTY UINT64_MAX

/* Build the tables from the inflated vocabulary text (what load_gz_mem does
 * after gunzip; the fuzz harness calls it on edited texts). */
samc_status samc__clip_load_text(const uint8_t *text, size_t n, samc_clip_tokenizer **out, samc_error *err);

bool samc__clip_pair(const samc_clip_tokenizer *t, uint32_t a, uint32_t b, int32_t *rank, uint32_t *merged);

/* Byte-level BPE of one pre-token given as UTF-8 bytes (SimpleTokenizer.bpe),
 * appending its ids; false on out-of-memory. */
bool samc__clip_bpe(const samc_clip_tokenizer *t, const uint8_t *bytes, size_t n, samc__ustr *ids);

/* The "lower" cleaning of tokenizer_ve.py, in place. */
samc_status samc__clip_clean(const samc__ftfy_profile *p, samc__ustr *text, samc_error *err);

/* re.findall of the pre-split pattern, one match at a time: the next match
 * at or after *pos is s[*start .. *start + *len); *pos moves past it. False
 * when none is left. */
bool samc__clip_next_token(const uint32_t *s, size_t n, size_t *pos, size_t *start, size_t *len);

/* bytes_to_unicode(): the character standing for byte b. */
uint32_t samc__clip_byte_char(uint8_t b);

#endif
