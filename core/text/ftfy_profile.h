/* SPDX-License-Identifier: Apache-2.0 */
/* ftfy_profile.h - ftfy.fix_text as the official tokenizer calls it
 * (TextFixerConfig defaults), and the data of one ftfy version.
 *
 * The code of fix_text is the same in ftfy 6.1.1 (the version sam3's
 * pyproject.toml pins) and 6.3.1; what differs is data: the mojibake
 * heuristic (badness.BADNESS_RE), the UTF-8 detector's character classes,
 * the list of single-byte codecs, and one line of code (6.2+ skips
 * restore_byte_a0 for MacRoman), all held in a samc__ftfy_profile generated
 * by tools/gen_text_tables.py.
 */
#ifndef SAMC_TEXT_FTFY_PROFILE_H
#define SAMC_TEXT_FTFY_PROFILE_H

#include "core/text/text_internal.h"

/* A character class of Python's re: ranges, optionally negated, plus the
 * Unicode categories \s, \w, \d (Python's view, unicode_props.h). */
enum { SAMC__CLS_NEGATE = 1, SAMC__CLS_SPACE = 2, SAMC__CLS_WORD = 4, SAMC__CLS_DIGIT = 8 };
typedef struct samc__cpclass {
    const samc__cprange *r;
    uint16_t n;
    uint8_t flags;
} samc__cpclass;

/* BADNESS_RE is one alternation of short sequences; each element is one
 * class, an optional class (`\s?`) or `^`. */
enum { SAMC__RX_CLASS, SAMC__RX_OPTIONAL, SAMC__RX_BEGIN };
typedef struct samc__rx_elem {
    uint8_t op;
    uint16_t cls;
} samc__rx_elem;
typedef struct samc__rx_alt {
    uint16_t first, count; /* into samc__ftfy_profile.elems */
} samc__rx_alt;

/* A single-byte codec as ftfy uses it: decode[byte] -> code point, and the
 * encoder as Python's codec builds it (sorted by code point; a code point
 * absent from it cannot be encoded, which is what possible_encoding tests). */
typedef struct samc__cpbyte {
    uint32_t cp;
    uint8_t byte;
} samc__cpbyte;
typedef struct samc__charmap {
    const char *name;
    const uint32_t *decode;
    const samc__cpbyte *encode;
    uint16_t n_encode;
    bool sloppy; /* a "sloppy-" codec: replace_lossy_sequences applies */
} samc__charmap;

typedef struct samc__ftfy_profile {
    const char *version;
    const samc__cpclass *classes;
    uint16_t n_classes;
    const samc__rx_elem *elems;
    const samc__rx_alt *alts;
    uint16_t n_alts;
    /* UTF8_DETECTOR_RE: (?<![strict]) ([f2][cont] | [f3][cont]{2} | [f4][cont]{3})+ */
    uint16_t det_strict, det_first[3], det_cont;
    const samc__charmap *charmaps; /* chardata.CHARMAP_ENCODINGS, in order */
    uint16_t n_charmaps;
    bool restore_a0_skips_macroman;
} samc__ftfy_profile;

extern const samc__ftfy_profile samc__ftfy_profile_6_1_1, samc__ftfy_profile_6_3_1;

/* ftfy.fix_text(text) in place. Fails only on out-of-memory, or (never seen)
 * when a fix loop does not settle within its bound (docs/tokenizer.md). */
samc_status samc__ftfy_fix_text(const samc__ftfy_profile *p, samc__ustr *text, samc_error *err);

/* ---- shared by the ftfy_*.c files ------------------------------------------- */

typedef struct samc__ftfy {
    const samc__ftfy_profile *p;
    samc_error *err;
    samc_status st;
    int depth; /* nesting of fix_encoding through decode_inconsistent_utf8 */
} samc__ftfy;

/* fix_encoding (the loop of _fix_encoding_one_step_and_explain), in place. */
void samc__ftfy_fix_encoding(samc__ftfy *f, samc__ustr *text);
/* badness.is_bad */
bool samc__ftfy_is_bad(const samc__ftfy_profile *p, const uint32_t *s, size_t n);
bool samc__ftfy_class_has(const samc__ftfy_profile *p, uint16_t cls, uint32_t c);
/* UTF8_DETECTOR_RE.search, and fixes.decode_inconsistent_utf8 */
bool samc__ftfy_detector_search(const samc__ftfy_profile *p, const uint32_t *s, size_t n);
void samc__ftfy_decode_inconsistent(samc__ftfy *f, samc__ustr *text);
/* fixes.fix_c1_controls; true when something changed */
bool samc__ftfy_fix_c1(samc__ustr *text);
/* Python's strict windows-1252 decode of one byte; false where undefined. */
bool samc__cp1252_strict(uint8_t b, uint32_t *cp);
/* fix_and_explain and fix_encoding repeat until the text stops changing.
 * Every round that changes it is a real fix (one more level of "&amp;amp;",
 * one more layer of mojibake) and almost every one shortens the text, so a
 * line of n code points needs at most about n rounds. Python has no bound;
 * samc allows max(64, 2^26 / (n + 1)) rounds per line, which is more than a
 * line can use up to about 8,000 code points and 64 for a 1 MiB line, and
 * reports SAMC_ERR_UNSUPPORTED beyond (docs/tokenizer.md). */
#define SAMC__FTFY_ROUND_BUDGET ((size_t)1 << 26)
int samc__ftfy_max_rounds(size_t n);
/* Record an out-of-memory failure once. */
void samc__ftfy_oom(samc__ftfy *f);

/* Generated, the same in every supported ftfy version (ftfy_tables_common.c). */
extern const samc__entity samc__ftfy_upper_entities[];
extern const size_t samc__ftfy_n_upper_entities;
extern const samc__cpmap samc__ftfy_ligatures[], samc__ftfy_width[];
extern const size_t samc__ftfy_n_ligatures, samc__ftfy_n_width;
extern const samc__cprange samc__ftfy_control[], samc__ftfy_single_quote[], samc__ftfy_double_quote[];
extern const size_t samc__ftfy_n_control, samc__ftfy_n_single_quote, samc__ftfy_n_double_quote;
extern const uint32_t samc__cp1252_table[256]; /* 0xFFFFFFFF where undefined */

#endif
