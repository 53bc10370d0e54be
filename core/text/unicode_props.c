/* SPDX-License-Identifier: Apache-2.0 */
/* unicode_props.c - Unicode predicates of the official tokenizer on top of
 * libutf8proc (see unicode_props.h for the two views). */
#include "core/text/unicode_props.h"

#include <stdlib.h>
#include <utf8proc.h>

#define IN(tab, c) samc__in_ranges(tab, tab##_n, (c))

static utf8proc_category_t cat(uint32_t c)
{
    return c > 0x10FFFF ? UTF8PROC_CATEGORY_CN : utf8proc_category((utf8proc_int32_t)c);
}

static bool is_letter_cat(utf8proc_category_t k)
{
    return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO;
}

static bool is_number_cat(utf8proc_category_t k)
{
    return k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO;
}

/* ---- Python view ------------------------------------------------------------ */

bool samc__py_assigned(uint32_t c)
{
    return c <= 0x10FFFF && !IN(samc__py_unassigned, c);
}

/* Python's _PyUnicode_IsWhitespace: category Zs or bidirectional class WS, B
 * or S (this also takes U+001C..U+001F, which Unicode's White_Space does not). */
bool samc__py_isspace(uint32_t c)
{
    if (!samc__py_assigned(c))
        return false;
    const utf8proc_property_t *p = utf8proc_get_property((utf8proc_int32_t)c);
    return p->category == UTF8PROC_CATEGORY_ZS || p->bidi_class == UTF8PROC_BIDI_CLASS_WS ||
           p->bidi_class == UTF8PROC_BIDI_CLASS_B || p->bidi_class == UTF8PROC_BIDI_CLASS_S;
}

/* isalpha (L*) or isdecimal/isdigit/isnumeric: every code point with a
 * numeric value is N* or already a letter (CJK numerals are Lo). */
bool samc__py_isalnum(uint32_t c)
{
    utf8proc_category_t k = cat(c);
    return samc__py_assigned(c) && (is_letter_cat(k) || is_number_cat(k));
}

bool samc__py_isword(uint32_t c)
{
    return c == '_' || samc__py_isalnum(c);
}

bool samc__py_isdecimal(uint32_t c)
{
    return samc__py_assigned(c) && cat(c) == UTF8PROC_CATEGORY_ND;
}

/* Full lower-case mapping: the simple mapping, except U+0130, the only
 * unconditional multi-character lower-case mapping of SpecialCasing.txt. */
int samc__py_lower(uint32_t c, uint32_t out[2])
{
    if (c == 0x130) {
        out[0] = 0x69;
        out[1] = 0x307;
        return 2;
    }
    out[0] = samc__py_assigned(c) ? (uint32_t)utf8proc_tolower((utf8proc_int32_t)c) : c;
    return 1;
}

/* U+03A3 is final (U+03C2) when preceded by a cased letter and not followed
 * by one, case-ignorable code points skipped on both sides (Python's
 * handle_capital_sigma). The tables hold Python's Cased and Case_Ignorable
 * (a code point in both counts as case-ignorable, as in the skip loops). */
static bool final_sigma(const uint32_t *s, size_t n, size_t i)
{
    size_t j = i;
    while (j > 0 && IN(samc__py_case_ignorable, s[j - 1]))
        j--;
    if (j == 0 || !IN(samc__py_cased_no_ignorable, s[j - 1]))
        return false;
    j = i + 1;
    while (j < n && IN(samc__py_case_ignorable, s[j]))
        j++;
    return j == n || !IN(samc__py_cased_no_ignorable, s[j]);
}

void samc__py_lower_str(const samc__ustr *in, samc__ustr *out)
{
    out->n = 0;
    samc__ustr_reserve(out, in->n);
    for (size_t i = 0; i < in->n; i++) {
        uint32_t m[2];
        if (in->v[i] == 0x3A3) {
            samc__ustr_push(out, final_sigma(in->v, in->n, i) ? 0x3C2 : 0x3C3);
            continue;
        }
        int k = samc__py_lower(in->v[i], m);
        samc__ustr_append(out, m, (size_t)k);
    }
}

/* NFC of s[a..b) by utf8proc (through UTF-8, its input form), appended. */
static bool nfc_run(const uint32_t *s, size_t n, samc__ustr *out)
{
    samc__bstr u = {0};
    for (size_t i = 0; i < n; i++)
        samc__utf8_put(&u, s[i]);
    if (u.oom)
        return false;
    utf8proc_uint8_t *dst = NULL;
    utf8proc_ssize_t m = utf8proc_map(u.v, (utf8proc_ssize_t)u.n, &dst, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    samc__bstr_free(&u);
    if (m < 0)
        return false;
    bool ok = samc__utf8_decode_strict(dst, (size_t)m, out);
    free(dst);
    return ok;
}

/* A code point unassigned in Python's Unicode is, to Python's NFC, a starter
 * (combining class 0) without decomposition that composes with nothing, so
 * normalisation never reaches across it: the text is normalised between such
 * code points and they are kept as they are, whatever utf8proc's newer
 * Unicode says about them. Surrogates cannot reach here (ftfy's
 * fix_surrogates runs first) but are kept the same way.
 * U+11A7 (TBase of the Hangul algorithm, not itself a trailing consonant) is
 * such a starter too, but utf8proc 2.8 composes it into a preceding LV
 * syllable, dropping it ("가" U+11A7 -> "가"); Python keeps it. */
static bool nfc_boundary(uint32_t c)
{
    return c == 0x11A7 || !samc__py_assigned(c) || (c >= 0xD800 && c <= 0xDFFF);
}

bool samc__py_nfc(samc__ustr *s)
{
    /* Below U+0300 every code point is a starter that NFC keeps and that is
     * never the second of a composition: skip that prefix, less its last
     * code point, which may compose with what follows ("e" + U+0301). */
    size_t i = 0;
    while (i < s->n && s->v[i] < 0x300)
        i++;
    if (i == s->n)
        return true;
    if (i > 0)
        i--;
    samc__ustr out = {0};
    samc__ustr_append(&out, s->v, i);
    bool ok = !out.oom;
    while (ok && i < s->n) {
        size_t j = i;
        while (j < s->n && !nfc_boundary(s->v[j]))
            j++;
        ok = nfc_run(s->v + i, j - i, &out);
        if (ok && j < s->n)
            samc__ustr_push(&out, s->v[j++]);
        i = j;
        ok = ok && !out.oom;
    }
    if (ok)
        samc__ustr_swap(s, &out);
    samc__ustr_free(&out);
    return ok;
}

/* ---- regex-module view ------------------------------------------------------ */

/* Unicode's White_Space, which the regex module uses for \s: Python's
 * whitespace less U+001C..U+001F (checked on all code points by the test). */
bool samc__rx_space(uint32_t c)
{
    return !(c >= 0x1C && c <= 0x1F) && samc__py_isspace(c);
}

static bool rx_cat(uint32_t c, bool (*pred)(utf8proc_category_t))
{
    return c <= 0x10FFFF && !IN(samc__rx_unassigned, c) && pred(cat(c));
}

bool samc__rx_letter_ic(uint32_t c)
{
    if (IN(samc__rx_ic_letter_add, c))
        return true;
    return rx_cat(c, is_letter_cat) && !IN(samc__rx_ic_letter_drop, c);
}

bool samc__rx_number_ic(uint32_t c)
{
    if (IN(samc__rx_ic_number_add, c))
        return true;
    return rx_cat(c, is_number_cat) && !IN(samc__rx_ic_number_drop, c);
}

bool samc__rx_other_ic(uint32_t c)
{
    if (IN(samc__rx_ic_other_add, c))
        return true;
    bool plain = !rx_cat(c, is_letter_cat) && !rx_cat(c, is_number_cat) && !samc__rx_space(c);
    return plain && !IN(samc__rx_ic_other_drop, c);
}

bool samc__rx_literal_ic(uint32_t c, uint32_t lit)
{
    if (c == lit)
        return true;
    for (size_t i = 0; i < samc__rx_ic_literals_n; i++)
        if (samc__rx_ic_literals[i].lit == lit && samc__rx_ic_literals[i].cp == c)
            return true;
    return false;
}
