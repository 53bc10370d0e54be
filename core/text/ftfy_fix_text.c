/* SPDX-License-Identifier: Apache-2.0 */
/* ftfy_fix_text.c - ftfy.fix_text with the default TextFixerConfig, the
 * driver and the character-level fixers (ftfy/__init__.py fix_text,
 * fix_and_explain; ftfy/fixes.py).
 *
 * fix_text cuts the text after every "\n" (and every 1,000,000 code points)
 * and fixes each segment until it stops changing. Once a segment contains
 * '<', unescape_html ("auto") is off for it and for every later segment: the
 * official code replaces its config variable inside the loop.
 */
#include <stdlib.h>

#include "core/text/ftfy_profile.h"
#include "core/text/html_unescape.h"
#include "core/text/unicode_props.h"

#define MAX_DECODE_LENGTH 1000000 /* TextFixerConfig.max_decode_length */

int samc__ftfy_max_rounds(size_t n)
{
    size_t r = SAMC__FTFY_ROUND_BUDGET / (n + 1);
    return r < 64 ? 64 : r > 1000000 ? 1000000 : (int)r;
}

void samc__ftfy_oom(samc__ftfy *f)
{
    if (!f->st)
        f->st = samc_fail(f->err, SAMC_ERR_NOMEM, "clip tokenizer: out of memory in ftfy.fix_text");
}

/* Map every code point through `fn` (a translate table); fn appends the
 * replacement of c to out. */
static void translate(samc__ustr *t, void (*fn)(uint32_t c, samc__ustr *out))
{
    samc__ustr out = {0};
    samc__ustr_reserve(&out, t->n);
    for (size_t i = 0; i < t->n; i++)
        fn(t->v[i], &out);
    if (out.oom)
        t->oom = true;
    else
        samc__ustr_swap(t, &out);
    samc__ustr_free(&out);
}

static void put_mapped(const samc__cpmap *tab, size_t n, uint32_t c, samc__ustr *out)
{
    const samc__cpmap *m = c >= 0x80 ? samc__cpmap_find(tab, n, c) : NULL;
    if (m)
        samc__ustr_append(out, m->to, m->n);
    else
        samc__ustr_push(out, c);
}

static void tr_ligature(uint32_t c, samc__ustr *out)
{
    put_mapped(samc__ftfy_ligatures, samc__ftfy_n_ligatures, c, out);
}

static void tr_width(uint32_t c, samc__ustr *out)
{
    put_mapped(samc__ftfy_width, samc__ftfy_n_width, c, out);
}

/* uncurl_quotes */
static void tr_quote(uint32_t c, samc__ustr *out)
{
    if (samc__in_ranges(samc__ftfy_double_quote, samc__ftfy_n_double_quote, c))
        c = '"';
    else if (samc__in_ranges(samc__ftfy_single_quote, samc__ftfy_n_single_quote, c))
        c = '\'';
    samc__ustr_push(out, c);
}

/* remove_control_chars */
static void tr_control(uint32_t c, samc__ustr *out)
{
    if (!samc__in_ranges(samc__ftfy_control, samc__ftfy_n_control, c))
        samc__ustr_push(out, c);
}

/* fix_line_breaks: "\r\n", then "\r", U+2028, U+2029, U+0085 -> "\n". The
 * chained str.replace calls equal one pass that reads "\r\n" as one break. */
static void fix_line_breaks(samc__ustr *t)
{
    size_t o = 0;
    for (size_t i = 0; i < t->n; i++) {
        uint32_t c = t->v[i];
        if (c == '\r' && i + 1 < t->n && t->v[i + 1] == '\n')
            i++;
        if (c == '\r' || c == 0x2028 || c == 0x2029 || c == 0x85)
            c = '\n';
        t->v[o++] = c;
    }
    t->n = o;
}

/* fix_surrogates: pairs become their code point, lone surrogates U+FFFD. */
static void fix_surrogates(samc__ustr *t)
{
    size_t o = 0;
    for (size_t i = 0; i < t->n; i++) {
        uint32_t c = t->v[i];
        if (c >= 0xD800 && c <= 0xDBFF && i + 1 < t->n && t->v[i + 1] >= 0xDC00 && t->v[i + 1] <= 0xDFFF) {
            c = 0x10000 + (c - 0xD800) * 0x400 + (t->v[i + 1] - 0xDC00);
            i++;
        } else if (c >= 0xD800 && c <= 0xDFFF)
            c = 0xFFFD;
        t->v[o++] = c;
    }
    t->n = o;
}

/* remove_terminal_escapes: ANSI_RE = "\033\[((?:\d|;)*)([a-zA-Z])" -> "".
 * \d is Python's (any decimal digit); the two classes are disjoint, so the
 * greedy run needs no backtracking. */
static void remove_terminal_escapes(samc__ustr *t)
{
    size_t o = 0;
    for (size_t i = 0; i < t->n;) {
        if (t->v[i] == 0x1B && i + 1 < t->n && t->v[i + 1] == '[') {
            size_t k = i + 2;
            while (k < t->n && (t->v[k] == ';' || samc__py_isdecimal(t->v[k])))
                k++;
            uint32_t c = k < t->n ? t->v[k] : 0;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
                i = k + 1;
                continue;
            }
        }
        t->v[o++] = t->v[i++];
    }
    t->n = o;
}

bool samc__ftfy_fix_c1(samc__ustr *t)
{
    bool changed = false;
    for (size_t i = 0; i < t->n; i++) {
        uint32_t c = t->v[i], m;
        /* sloppy-windows-1252: windows-1252 where defined, else the same code point */
        if (c >= 0x80 && c <= 0x9F && samc__cp1252_strict((uint8_t)c, &m) && m != c) {
            t->v[i] = m;
            changed = true;
        }
    }
    return changed;
}

/* fixes.unescape_html: HTML_ENTITY_RE = &#?[0-9A-Za-z]{1,24}; with ftfy's
 * entity table (html5 names with ';' plus upper-cased ones); a numeric
 * reference is decoded by html.unescape and kept as it is unless that
 * consumed the ';'. */
static bool ascii_alnum(uint32_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* "&#...;": html.unescape of the match, used only when it consumed the ';'
 * (at most 24 digits, so html.unescape cannot fail here). */
static bool numeric_entity(const uint32_t *m, size_t len, samc__ustr *out)
{
    samc__ustr in = {0}, un = {0};
    samc__ustr_append(&in, m, len);
    bool ok = samc__html_unescape(&in, &un, NULL) == SAMC_OK && !samc__ustr_has(un.v, un.n, ';');
    if (ok)
        samc__ustr_append(out, un.v, un.n);
    if (in.oom || un.oom)
        out->oom = true;
    samc__ustr_free(&in);
    samc__ustr_free(&un);
    return ok;
}

/* _unescape_fixup for the match m[0..len) ("&...;"). */
static void entity_replacement(const uint32_t *m, size_t len, samc__ustr *out)
{
    const samc__entity *e = samc__entity_find(samc__html5_entities, samc__html5_n_entities, m + 1, len - 1);
    if (!e)
        e = samc__entity_find(samc__ftfy_upper_entities, samc__ftfy_n_upper_entities, m + 1, len - 1);
    if (e)
        samc__ustr_append(out, e->cp, e->n);
    else if (m[1] != '#' || !numeric_entity(m, len, out))
        samc__ustr_append(out, m, len);
}

static void unescape_html(samc__ustr *t)
{
    if (!samc__ustr_has(t->v, t->n, '&'))
        return;
    samc__ustr out = {0};
    for (size_t i = 0; i < t->n;) {
        if (t->v[i] == '&') {
            size_t k = i + 1 + (i + 1 < t->n && t->v[i + 1] == '#');
            size_t r = 0;
            while (k + r < t->n && r < 24 && ascii_alnum(t->v[k + r]))
                r++;
            if (r >= 1 && k + r < t->n && t->v[k + r] == ';') {
                entity_replacement(t->v + i, k + r + 1 - i, &out);
                i = k + r + 1;
                continue;
            }
        }
        samc__ustr_push(&out, t->v[i++]);
    }
    if (out.oom)
        t->oom = true;
    else
        samc__ustr_swap(t, &out);
    samc__ustr_free(&out);
}

/* fix_and_explain: one segment until it stops changing. */
static void fix_segment(samc__ftfy *f, samc__ustr *t, bool unescape)
{
    samc__ustr orig = {0};
    int max_rounds = samc__ftfy_max_rounds(t->n);
    for (int round = 0;; round++) {
        if (round == max_rounds) {
            f->st = samc_fail(f->err, SAMC_ERR_UNSUPPORTED,
                              "clip tokenizer: ftfy.fix_text still changes a line of %zu code points after %d "
                              "rounds (samc's work bound, docs/tokenizer.md)",
                              t->n, max_rounds);
            break;
        }
        samc__ustr_copy(&orig, t);
        if (unescape)
            unescape_html(t);
        samc__ftfy_fix_encoding(f, t);
        samc__ftfy_fix_c1(t);
        translate(t, tr_ligature);
        translate(t, tr_width);
        translate(t, tr_quote);
        fix_line_breaks(t);
        fix_surrogates(t);
        remove_terminal_escapes(t);
        translate(t, tr_control);
        if (!t->oom && !orig.oom && !samc__py_nfc(t))
            t->oom = true;
        if (t->oom || orig.oom)
            samc__ftfy_oom(f);
        if (f->st || samc__ustr_eq(&orig, t))
            break;
    }
    samc__ustr_free(&orig);
}

samc_status samc__ftfy_fix_text(const samc__ftfy_profile *p, samc__ustr *text, samc_error *err)
{
    samc__ftfy f = {.p = p, .err = err};
    samc__ustr out = {0}, seg = {0};
    bool unescape = true;
    for (size_t pos = 0; pos < text->n && !f.st;) {
        size_t brk = pos;
        while (brk < text->n && text->v[brk] != '\n')
            brk++;
        brk = brk < text->n ? brk + 1 : text->n;
        if (brk - pos > MAX_DECODE_LENGTH)
            brk = pos + MAX_DECODE_LENGTH;
        seg.n = 0;
        samc__ustr_append(&seg, text->v + pos, brk - pos);
        if (unescape && samc__ustr_has(seg.v, seg.n, '<'))
            unescape = false;
        fix_segment(&f, &seg, unescape);
        samc__ustr_append(&out, seg.v, seg.n);
        if (out.oom || seg.oom)
            samc__ftfy_oom(&f);
        pos = brk;
    }
    if (!f.st)
        samc__ustr_swap(text, &out);
    samc__ustr_free(&out);
    samc__ustr_free(&seg);
    return f.st;
}
