/* SPDX-License-Identifier: Apache-2.0 */
/* utf8.c - UTF-8 decoding as Python does it (strict, and "surrogatepass"
 * for the caller's text) and encoding. */
#include "core/text/text_internal.h"

/* Length of the well-formed sequence at s[0..avail) (1..4), or 0 when it is
 * malformed: the table of Unicode 15, section 3.9, which is what Python's
 * strict decoder accepts. With `surrogates`, ED A0..BF 80..BF is also
 * accepted (a surrogate code point). */
static int seq_len(const uint8_t *s, size_t avail, bool surrogates, uint32_t *cp)
{
    uint8_t b0 = s[0];
    if (b0 < 0x80) {
        *cp = b0;
        return 1;
    }
    int n;
    uint8_t lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (b0 >= 0xC2 && b0 <= 0xDF)
        n = 2;
    else if (b0 >= 0xE0 && b0 <= 0xEF) {
        n = 3;
        if (b0 == 0xE0)
            lo = 0xA0;
        else if (b0 == 0xED && !surrogates)
            hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        n = 4;
        if (b0 == 0xF0)
            lo = 0x90;
        else if (b0 == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (avail < (size_t)n || s[1] < lo || s[1] > hi)
        return 0;
    uint32_t c = b0 & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    *cp = c;
    return n;
}

samc_status samc__utf8_decode_text(const char *s, size_t len, samc__ustr *out, samc_error *err)
{
    const uint8_t *p = (const uint8_t *)s;
    if (!samc__ustr_reserve(out, len))
        return samc_fail(err, SAMC_ERR_NOMEM, "clip tokenizer: out of memory decoding %zu bytes of text", len);
    for (size_t i = 0; i < len;) {
        uint32_t c;
        int n = seq_len(p + i, len - i, true, &c);
        if (n == 0)
            return samc_fail(err, SAMC_ERR_ARG,
                             "clip tokenizer: text is not valid UTF-8 at byte %zu (0x%02X); the official "
                             "tokenizer takes a Python str, which has no undecodable bytes",
                             i, p[i]);
        out->v[out->n++] = c;
        i += (size_t)n;
    }
    return SAMC_OK;
}

bool samc__utf8_decode_strict(const uint8_t *s, size_t len, samc__ustr *out)
{
    if (!samc__ustr_reserve(out, len))
        return false;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        int n = seq_len(s + i, len - i, false, &c);
        if (n == 0)
            return false;
        out->v[out->n++] = c;
        i += (size_t)n;
    }
    return true;
}

bool samc__utf8_valid(const uint8_t *s, size_t len, size_t *bad)
{
    for (size_t i = 0; i < len;) {
        uint32_t c;
        int n = seq_len(s + i, len - i, false, &c);
        if (n == 0) {
            *bad = i;
            return false;
        }
        i += (size_t)n;
    }
    return true;
}

void samc__utf8_put(samc__bstr *b, uint32_t c)
{
    uint8_t u[4];
    size_t n;
    if (c < 0x80) {
        u[0] = (uint8_t)c;
        n = 1;
    } else if (c < 0x800) {
        u[0] = (uint8_t)(0xC0 | (c >> 6));
        u[1] = (uint8_t)(0x80 | (c & 0x3F));
        n = 2;
    } else if (c < 0x10000) {
        u[0] = (uint8_t)(0xE0 | (c >> 12));
        u[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        u[2] = (uint8_t)(0x80 | (c & 0x3F));
        n = 3;
    } else {
        u[0] = (uint8_t)(0xF0 | (c >> 18));
        u[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
        u[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        u[3] = (uint8_t)(0x80 | (c & 0x3F));
        n = 4;
    }
    samc__bstr_append(b, u, n);
}
