/* SPDX-License-Identifier: Apache-2.0 */
/* ftfy_badness.c - ftfy's mojibake detectors on the profile's tables:
 * badness.is_bad (BADNESS_RE.search), chardata.UTF8_DETECTOR_RE and
 * fixes.decode_inconsistent_utf8.
 */
#include "core/text/ftfy_profile.h"
#include "core/text/unicode_props.h"

/* decode_inconsistent_utf8 calls fix_encoding on each shorter match, which
 * may call it again on a shorter part. Each level is strictly shorter; real
 * text nests one or two levels. Python would stop with RecursionError near
 * 150 levels; samc stops at this depth with an error. */
#define MAX_NESTING 64

bool samc__ftfy_class_has(const samc__ftfy_profile *p, uint16_t cls, uint32_t c)
{
    const samc__cpclass *k = &p->classes[cls];
    bool in = samc__in_ranges(k->r, k->n, c) || ((k->flags & SAMC__CLS_SPACE) && samc__py_isspace(c)) ||
              ((k->flags & SAMC__CLS_WORD) && samc__py_isword(c)) ||
              ((k->flags & SAMC__CLS_DIGIT) && samc__py_isdecimal(c));
    return (k->flags & SAMC__CLS_NEGATE) ? !in : in;
}

/* Does the element sequence e[0..ne) match at s[i]? Only `\s?` branches, and
 * it is tried with the character first, as Python's greedy `?` is. */
static bool seq_match(const samc__ftfy_profile *p, const samc__rx_elem *e, int ne, const uint32_t *s, size_t n,
                      size_t i)
{
    for (; ne > 0; e++, ne--) {
        switch (e->op) {
        case SAMC__RX_BEGIN:
            if (i != 0)
                return false;
            break;
        case SAMC__RX_OPTIONAL:
            if (i < n && samc__ftfy_class_has(p, e->cls, s[i]) && seq_match(p, e + 1, ne - 1, s, n, i + 1))
                return true;
            break; /* without it */
        default:
            if (i >= n || !samc__ftfy_class_has(p, e->cls, s[i]))
                return false;
            i++;
        }
    }
    return true;
}

bool samc__ftfy_is_bad(const samc__ftfy_profile *p, const uint32_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (uint16_t a = 0; a < p->n_alts; a++)
            if (seq_match(p, p->elems + p->alts[a].first, p->alts[a].count, s, n, i))
                return true;
    return false;
}

/* Length of one detector unit ([f2][c] | [f3][c]{2} | [f4][c]{3}, the first
 * alternative that fits) at s[i], or 0. */
static size_t unit_at(const samc__ftfy_profile *p, const uint32_t *s, size_t n, size_t i)
{
    for (size_t a = 0; a < 3; a++) {
        size_t need = a + 1;
        if (i >= n || n - i - 1 < need || !samc__ftfy_class_has(p, p->det_first[a], s[i]))
            continue;
        size_t k = 1;
        while (k <= need && samc__ftfy_class_has(p, p->det_cont, s[i + k]))
            k++;
        if (k > need)
            return need + 1;
    }
    return 0;
}

/* A detector match at s[i]: end index in *end. The repetition is greedy and
 * nothing follows it in the pattern, so it takes units while one fits. */
static bool detector_at(const samc__ftfy_profile *p, const uint32_t *s, size_t n, size_t i, size_t *end)
{
    if (i > 0 && samc__ftfy_class_has(p, p->det_strict, s[i - 1]))
        return false;
    size_t u = unit_at(p, s, n, i);
    if (!u)
        return false;
    size_t e = i + u;
    while ((u = unit_at(p, s, n, e)) != 0)
        e += u;
    *end = e;
    return true;
}

bool samc__ftfy_detector_search(const samc__ftfy_profile *p, const uint32_t *s, size_t n)
{
    size_t e;
    for (size_t i = 0; i < n; i++)
        if (detector_at(p, s, n, i, &e))
            return true;
    return false;
}

/* UTF8_DETECTOR_RE.sub(fix_embedded_mojibake, text): every match shorter than
 * the text that is_bad calls bad goes through fix_encoding on its own. */
void samc__ftfy_decode_inconsistent(samc__ftfy *f, samc__ustr *t)
{
    if (++f->depth > MAX_NESTING) {
        f->st = samc_fail(f->err, SAMC_ERR_UNSUPPORTED,
                          "clip tokenizer: ftfy's decode_inconsistent_utf8 nests deeper than %d levels",
                          MAX_NESTING);
        f->depth--;
        return;
    }
    samc__ustr out = {0}, sub = {0};
    size_t last = 0, e;
    for (size_t i = 0; i < t->n && !f->st;) {
        if (!detector_at(f->p, t->v, t->n, i, &e)) {
            i++;
            continue;
        }
        samc__ustr_append(&out, t->v + last, i - last);
        sub.n = 0;
        samc__ustr_append(&sub, t->v + i, e - i);
        if (e - i < t->n && samc__ftfy_is_bad(f->p, sub.v, sub.n))
            samc__ftfy_fix_encoding(f, &sub);
        samc__ustr_append(&out, sub.v, sub.n);
        i = last = e;
    }
    samc__ustr_append(&out, t->v + last, t->n - last);
    if (out.oom || sub.oom)
        samc__ftfy_oom(f);
    if (!f->st)
        samc__ustr_swap(t, &out);
    samc__ustr_free(&out);
    samc__ustr_free(&sub);
    f->depth--;
}
