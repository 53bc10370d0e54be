/* SPDX-License-Identifier: Apache-2.0 */
/* text_clean.c - the "lower" cleaning of tokenizer_ve.py:
 *
 *   whitespace_clean(basic_clean(text)).lower()
 *   basic_clean(t)      = html.unescape(html.unescape(ftfy.fix_text(t))).strip()
 *   whitespace_clean(t) = regex.sub(r"\s+", " ", t).strip()
 *
 * \s is the regex module's (Unicode White_Space); str.strip() uses Python's
 * str.isspace, which also counts U+001C..U+001F.
 */
#include "core/text/clip_internal.h"
#include "core/text/html_unescape.h"
#include "core/text/unicode_props.h"

static void strip(samc__ustr *t)
{
    size_t a = 0, b = t->n;
    while (a < b && samc__py_isspace(t->v[a]))
        a++;
    while (b > a && samc__py_isspace(t->v[b - 1]))
        b--;
    for (size_t i = a; i < b; i++)
        t->v[i - a] = t->v[i];
    t->n = b - a;
}

static void collapse_space(samc__ustr *t)
{
    size_t o = 0;
    for (size_t i = 0; i < t->n;) {
        if (samc__rx_space(t->v[i])) {
            while (i < t->n && samc__rx_space(t->v[i]))
                i++;
            t->v[o++] = ' ';
        } else
            t->v[o++] = t->v[i++];
    }
    t->n = o;
}

samc_status samc__clip_clean(const samc__ftfy_profile *p, samc__ustr *text, samc_error *err)
{
    samc__ustr tmp = {0};
    samc_status st = samc__ftfy_fix_text(p, text, err);
    if (!st)
        st = samc__html_unescape(text, &tmp, err);
    if (!st)
        st = samc__html_unescape(&tmp, text, err);
    if (!st) {
        strip(text);
        collapse_space(text);
        strip(text);
        samc__py_lower_str(text, &tmp);
        if (tmp.oom)
            st = samc_fail(err, SAMC_ERR_NOMEM, "clip tokenizer: out of memory");
        else
            samc__ustr_swap(text, &tmp);
    }
    samc__ustr_free(&tmp);
    return st;
}
