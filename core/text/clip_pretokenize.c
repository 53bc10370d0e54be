/* SPDX-License-Identifier: Apache-2.0 */
/* clip_pretokenize.c - re.findall of the CLIP pre-split pattern
 *
 *   <start_of_text>|<end_of_text>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+
 *
 * compiled by the regex module with IGNORECASE. At each position the
 * alternatives are tried in this order (the first that matches wins, each run
 * greedy); where none matches (whitespace, and the few code points IGNORECASE
 * removes from every class, such as U+0345) findall moves on one code point.
 */
#include "core/text/clip_internal.h"
#include "core/text/unicode_props.h"

static const char *const LITERALS[] = {"<start_of_text>", "<end_of_text>", "'s", "'t", "'re", "'ve", "'m", "'ll",
                                       "'d"};

/* Length of literal `lit` matched case-insensitively at s[i], or 0. */
static size_t literal_at(const uint32_t *s, size_t n, size_t i, const char *lit)
{
    size_t k = 0;
    for (; lit[k]; k++)
        if (i + k >= n || !samc__rx_literal_ic(s[i + k], (unsigned char)lit[k]))
            return 0;
    return k;
}

static size_t run(const uint32_t *s, size_t n, size_t i, bool (*in)(uint32_t))
{
    size_t k = i;
    while (k < n && in(s[k]))
        k++;
    return k - i;
}

static size_t match_at(const uint32_t *s, size_t n, size_t i)
{
    for (size_t l = 0; l < sizeof LITERALS / sizeof LITERALS[0]; l++) {
        size_t m = literal_at(s, n, i, LITERALS[l]);
        if (m)
            return m;
    }
    if (samc__rx_letter_ic(s[i]))
        return run(s, n, i, samc__rx_letter_ic);
    if (samc__rx_number_ic(s[i]))
        return 1;
    return run(s, n, i, samc__rx_other_ic);
}

bool samc__clip_next_token(const uint32_t *s, size_t n, size_t *pos, size_t *start, size_t *len)
{
    for (size_t i = *pos; i < n; i++) {
        size_t m = match_at(s, n, i);
        if (m) {
            *start = i;
            *len = m;
            *pos = i + m;
            return true;
        }
    }
    *pos = n;
    return false;
}
