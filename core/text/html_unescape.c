/* SPDX-License-Identifier: Apache-2.0 */
/* html_unescape.c - Python's html.unescape on UTF-32 text.
 *
 * The module's pattern is
 *   &(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)
 * applied left to right without overlap; each alternative is greedy and the
 * three are tried in order, so a hand-written scanner gives the same matches.
 */
#include "core/text/html_unescape.h"

/* Python 3.11's default limit on the digits int() converts (sys.int_info). */
#define PY_INT_MAX_STR_DIGITS 4300

static int hexval(uint32_t c)
{
    if (c >= '0' && c <= '9')
        return (int)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (int)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F')
        return (int)(c - 'A' + 10);
    return -1;
}

/* _replace_charref for a number; `num` saturates above 0x10FFFF. */
static void put_number(samc__ustr *out, uint32_t num)
{
    const samc__cpmap *m = samc__cpmap_find(samc__html_invalid_charrefs, samc__html_n_invalid_charrefs, num);
    if (m)
        samc__ustr_append(out, m->to, m->n);
    else if ((num >= 0xD800 && num <= 0xDFFF) || num > 0x10FFFF)
        samc__ustr_push(out, 0xFFFD);
    else if (!samc__in_ranges(samc__html_invalid_codepoints, samc__html_n_invalid_codepoints, num))
        samc__ustr_push(out, num);
}

/* A numeric reference at s[i] == '#' (after the '&'); returns the index after
 * it, or 0 when neither numeric alternative matches. */
static size_t numeric_ref(const uint32_t *s, size_t n, size_t i, samc__ustr *out, samc_error *err, samc_status *st)
{
    size_t k = i + 1;
    int base = 10;
    if (k < n && (s[k] == 'x' || s[k] == 'X') && k + 1 < n && hexval(s[k + 1]) >= 0) {
        base = 16;
        k++;
    } else if (k >= n || s[k] < '0' || s[k] > '9')
        return 0;
    uint32_t num = 0;
    size_t digits = 0;
    for (; k < n && (base == 16 ? hexval(s[k]) >= 0 : (s[k] >= '0' && s[k] <= '9')); k++, digits++) {
        num = num * (uint32_t)base + (uint32_t)hexval(s[k]);
        if (num > 0x10FFFF)
            num = 0x110000; /* saturate: only "> 0x10FFFF" matters */
    }
    if (base == 10 && digits > PY_INT_MAX_STR_DIGITS) {
        *st = samc_fail(err, SAMC_ERR_ARG,
                        "clip tokenizer: a decimal character reference has %zu digits; Python's int() "
                        "refuses more than %d, so the official html.unescape raises ValueError",
                        digits, PY_INT_MAX_STR_DIGITS);
        return 0;
    }
    if (k < n && s[k] == ';')
        k++;
    put_number(out, num);
    return k;
}

static bool name_char(uint32_t c)
{
    return c != '\t' && c != '\n' && c != '\f' && c != ' ' && c != '<' && c != '&' && c != '#' && c != ';';
}

/* A named reference starting at s[i] (after the '&'); returns the index after
 * it, or 0 when no name character follows. */
static size_t named_ref(const uint32_t *s, size_t n, size_t i, samc__ustr *out)
{
    size_t k = i;
    while (k < n && k - i < 32 && name_char(s[k]))
        k++;
    if (k == i)
        return 0;
    if (k < n && s[k] == ';')
        k++;
    size_t len = k - i;
    const samc__entity *e = samc__entity_find(samc__html5_entities, samc__html5_n_entities, s + i, len);
    if (e) {
        samc__ustr_append(out, e->cp, e->n);
        return k;
    }
    for (size_t x = len - 1; x >= 2 && x < len; x--) { /* longest known prefix, >= 2 chars */
        e = samc__entity_find(samc__html5_entities, samc__html5_n_entities, s + i, x);
        if (e) {
            samc__ustr_append(out, e->cp, e->n);
            samc__ustr_append(out, s + i + x, len - x);
            return k;
        }
    }
    samc__ustr_push(out, '&');
    samc__ustr_append(out, s + i, len);
    return k;
}

samc_status samc__html_unescape(const samc__ustr *in, samc__ustr *out, samc_error *err)
{
    const uint32_t *s = in->v;
    size_t n = in->n;
    samc_status st = SAMC_OK;
    out->n = 0;
    samc__ustr_reserve(out, n);
    for (size_t i = 0; i < n && !st;) {
        if (s[i] != '&') {
            samc__ustr_push(out, s[i++]);
            continue;
        }
        size_t end = (i + 1 < n && s[i + 1] == '#') ? numeric_ref(s, n, i + 1, out, err, &st)
                                                    : named_ref(s, n, i + 1, out);
        if (end == 0) { /* no reference here: keep the '&' and go on */
            samc__ustr_push(out, '&');
            i++;
        } else
            i = end;
    }
    if (!st && out->oom)
        st = samc_fail(err, SAMC_ERR_NOMEM, "clip tokenizer: out of memory in html.unescape");
    return st;
}
