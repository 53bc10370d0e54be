/* SPDX-License-Identifier: Apache-2.0 */
/* ftfy_encoding.c - ftfy's fix_encoding: re-read mojibake through the
 * single-byte codecs of the profile (ftfy/__init__.py
 * _fix_encoding_one_step_and_explain), with the byte-level transcoders of
 * ftfy/fixes.py (restore_byte_a0, replace_lossy_sequences) and the
 * utf-8-variants codec (ftfy/bad_codecs/utf8_variants.py).
 */
#include <string.h>

#include "core/text/ftfy_profile.h"

/* ---- byte patterns ------------------------------------------------------------
 * The bytes regexes of chardata.py / fixes.py are alternations of fixed-length
 * sequences of byte classes; re.sub takes, left to right, the first
 * alternative that matches. A class is written as (lo, hi) byte pairs. */
typedef struct bseq {
    const char *cls[6];
    int n;
} bseq;

#define SP "\x20\x20"
#define QM "\x3f\x3f" /* '?' (spelled out: "??" starts C trigraphs) */
#define CONT "\x80\xbf"
#define SUB "\x1a\x1a"

/* ALTERED_UTF8_RE: UTF-8 with a space where byte A0 belonged. */
static const bseq ALTERED[] = {
    {{"\xc2\xc3\xc5\xc5\xce\xce\xd0\xd0\xd9\xd9", SP}, 2},
    {{"\xe2\xe3", SP, "\x80\x84\x86\x9f\xa1\xbf"}, 3},
    {{"\xe0\xe3", "\x80\x84\x86\x9f\xa1\xbf", SP}, 3},
    {{"\xf0\xf0", SP, CONT, CONT}, 4},
    {{"\xf0\xf0", CONT, SP, CONT}, 4},
    {{"\xf0\xf0", CONT, CONT, SP}, 4},
};

/* LOSSY_UTF8_RE: UTF-8 (or CESU-8) with bytes lost to 0x1A or '?'. */
static const bseq LOSSY[] = {
    {{"\xc2\xdf", SUB}, 2},
    {{"\xc2\xc3", QM}, 2},
    {{"\xed\xed", "\xa0\xaf", SUB QM, "\xed\xed", "\xb0\xbf", SUB QM CONT}, 6},
    {{"\xed\xed", "\xa0\xaf", SUB QM CONT, "\xed\xed", "\xb0\xbf", SUB QM}, 6},
    {{"\xe0\xef", SUB QM, SUB CONT}, 3},
    {{"\xe0\xef", SUB CONT, SUB QM}, 3},
    {{"\xf0\xf4", SUB QM, SUB CONT, SUB CONT}, 4},
    {{"\xf0\xf4", SUB CONT, SUB QM, SUB CONT}, 4},
    {{"\xf0\xf4", SUB CONT, SUB CONT, SUB QM}, 4},
    {{SUB}, 1},
};

static bool bclass_has(const char *cls, uint8_t b)
{
    for (const unsigned char *p = (const unsigned char *)cls; p[0]; p += 2)
        if (b >= p[0] && b <= p[1])
            return true;
    return false;
}

/* Index of the first alternative matching at s[i], or -1. */
static int bseq_at(const bseq *alts, int n_alts, const uint8_t *s, size_t n, size_t i)
{
    for (int a = 0; a < n_alts; a++) {
        const bseq *q = &alts[a];
        if (n - i < (size_t)q->n)
            continue;
        int k = 0;
        while (k < q->n && bclass_has(q->cls[k], s[i + (size_t)k]))
            k++;
        if (k == q->n)
            return a;
    }
    return -1;
}

#define N_ALTERED ((int)(sizeof ALTERED / sizeof ALTERED[0]))
#define N_LOSSY ((int)(sizeof LOSSY / sizeof LOSSY[0]))

static bool altered_search(const samc__bstr *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (bseq_at(ALTERED, N_ALTERED, b->v, b->n, i) >= 0)
            return true;
    return false;
}

/* A_GRAVE_WORD_RE = b"\xc3 (?! |quele|quela|quilo|s )" */
static bool a_grave_word(const uint8_t *s, size_t n, size_t i)
{
    if (n - i < 2 || s[i] != 0xC3 || s[i + 1] != ' ')
        return false;
    static const char *const no[] = {" ", "quele", "quela", "quilo", "s "};
    for (size_t k = 0; k < sizeof no / sizeof no[0]; k++) {
        size_t m = strlen(no[k]);
        if (n - i - 2 >= m && !memcmp(s + i + 2, no[k], m))
            return false;
    }
    return true;
}

/* fixes.restore_byte_a0: "\xc3 " as a word gets its A0 back (keeping the
 * space), then every ALTERED_UTF8_RE match has its spaces turned into A0. */
static void restore_byte_a0(const samc__bstr *in, samc__bstr *out)
{
    samc__bstr tmp = {0};
    for (size_t i = 0; i < in->n; i++) {
        samc__bstr_push(&tmp, in->v[i]);
        if (a_grave_word(in->v, in->n, i))
            samc__bstr_push(&tmp, 0xA0); /* "\xc3 " -> "\xc3\xa0 " */
    }
    out->n = 0;
    for (size_t i = 0; i < tmp.n;) {
        int a = bseq_at(ALTERED, N_ALTERED, tmp.v, tmp.n, i);
        size_t len = a >= 0 ? (size_t)ALTERED[a].n : 1;
        for (size_t k = 0; k < len; k++)
            samc__bstr_push(out, a >= 0 && tmp.v[i + k] == ' ' ? 0xA0 : tmp.v[i + k]);
        i += len;
    }
    if (tmp.oom)
        out->oom = true;
    samc__bstr_free(&tmp);
}

/* fixes.replace_lossy_sequences: each LOSSY_UTF8_RE match -> EF BF BD. */
static void replace_lossy(const samc__bstr *in, samc__bstr *out)
{
    static const uint8_t fffd[3] = {0xEF, 0xBF, 0xBD};
    out->n = 0;
    for (size_t i = 0; i < in->n;) {
        int a = bseq_at(LOSSY, N_LOSSY, in->v, in->n, i);
        if (a >= 0) {
            samc__bstr_append(out, fffd, 3);
            i += (size_t)LOSSY[a].n;
        } else
            samc__bstr_push(out, in->v[i++]);
    }
}

/* ---- utf-8-variants (CESU-8 and Java's C0 80 for U+0000) ------------------------
 * The codec alternates Python's strict UTF-8 decoder with special handling at
 * each match of NULL_EXPR | CESU8_EXPR | SURROGATE_EXPR. Their "$" matches at
 * the end of the input and also just before a final "\n" (Python's re). */
static bool at_end(size_t n, const uint8_t *s, size_t k)
{
    return k == n || (k + 1 == n && s[k] == '\n');
}

/* One "([lo-hi]|$)" group at *k: advance over a byte in range, else accept $. */
static bool group(const uint8_t *s, size_t n, size_t *k, uint8_t lo, uint8_t hi)
{
    if (*k < n && s[*k] >= lo && s[*k] <= hi) {
        (*k)++;
        return true;
    }
    return at_end(n, s, *k);
}

static bool cesu8_at(const uint8_t *s, size_t n, size_t i)
{
    size_t k = i + 1;
    return s[i] == 0xED && group(s, n, &k, 0xA0, 0xAF) && group(s, n, &k, 0x80, 0xBF) &&
           group(s, n, &k, 0xED, 0xED) && group(s, n, &k, 0xB0, 0xBF) && group(s, n, &k, 0x80, 0xBF);
}

static bool special_at(const uint8_t *s, size_t n, size_t i)
{
    size_t k = i + 1;
    if (s[i] == 0xC0)
        return group(s, n, &k, 0x80, 0x80);
    if (s[i] != 0xED)
        return false;
    if (cesu8_at(s, n, i))
        return true;
    k = i + 1;
    return group(s, n, &k, 0xA0, 0xBF) && group(s, n, &k, 0x80, 0xBF);
}

static bool decode_utf8_variants(const uint8_t *s, size_t n, samc__ustr *out)
{
    size_t pos = 0;
    while (pos < n) {
        size_t m = pos;
        while (m < n && !special_at(s, n, m))
            m++;
        if (m > pos || m == n) { /* plain UTF-8 up to the next special sequence */
            if (!samc__utf8_decode_strict(s + pos, m - pos, out))
                return false;
            pos = m;
            continue;
        }
        if (s[pos] == 0xC0) { /* Java's NUL: C0 80 (or C0 before a final "\n") */
            if (n - pos < 2)
                return false;
            samc__ustr_push(out, 0);
            pos += 2;
        } else if (n - pos < 6) {
            return samc__utf8_decode_strict(s + pos, n - pos, out);
        } else if (cesu8_at(s, n, pos)) {
            const uint8_t *b = s + pos;
            uint32_t cp = ((uint32_t)(b[1] & 0x0F) << 16) + ((uint32_t)(b[2] & 0x3F) << 10) +
                          ((uint32_t)(b[4] & 0x0F) << 6) + (b[5] & 0x3F) + 0x10000;
            samc__ustr_push(out, cp);
            pos += 6;
        } else { /* ED + two bytes, decoded as an ordinary three-byte sequence */
            if (!samc__utf8_decode_strict(s + pos, 3, out))
                return false;
            pos += 3;
        }
    }
    return !out->oom;
}

/* ---- the single-byte codecs ------------------------------------------------------ */

static int encode_char(const samc__charmap *cm, uint32_t c)
{
    size_t lo = 0, hi = cm->n_encode;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < cm->encode[mid].cp)
            hi = mid;
        else if (c > cm->encode[mid].cp)
            lo = mid + 1;
        else
            return cm->encode[mid].byte;
    }
    return -1;
}

/* chardata.possible_encoding */
static bool possible_encoding(const samc__charmap *cm, const samc__ustr *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (encode_char(cm, t->v[i]) < 0)
            return false;
    return true;
}

static void encode(const samc__charmap *cm, const samc__ustr *t, samc__bstr *out)
{
    out->n = 0;
    for (size_t i = 0; i < t->n; i++)
        samc__bstr_push(out, (uint8_t)encode_char(cm, t->v[i]));
}

bool samc__cp1252_strict(uint8_t b, uint32_t *cp)
{
    *cp = samc__cp1252_table[b];
    return *cp != 0xFFFFFFFFu;
}

/* ---- fix_encoding ------------------------------------------------------------------- */

/* Try one codec: encode, transcode, decode as UTF-8. True (with `fixed`)
 * when the bytes decode. */
static bool try_charmap(samc__ftfy *f, const samc__charmap *cm, const samc__ustr *t, samc__ustr *fixed)
{
    samc__bstr b = {0}, tmp = {0};
    encode(cm, t, &b);
    bool macroman = !strcmp(cm->name, "macroman");
    if (!(f->p->restore_a0_skips_macroman && macroman) && altered_search(&b)) {
        restore_byte_a0(&b, &tmp);
        if (!samc__bstr_eq(&tmp, &b))
            samc__bstr_swap(&b, &tmp);
    }
    if (cm->sloppy) {
        replace_lossy(&b, &tmp);
        samc__bstr_swap(&b, &tmp);
    }
    bool variants = b.n && (memchr(b.v, 0xED, b.n) || memchr(b.v, 0xC0, b.n));
    fixed->n = 0;
    bool ok = !b.oom && !tmp.oom &&
              (variants ? decode_utf8_variants(b.v, b.n, fixed) : samc__utf8_decode_strict(b.v, b.n, fixed));
    if (b.oom || tmp.oom || fixed->oom)
        samc__ftfy_oom(f);
    samc__bstr_free(&b);
    samc__bstr_free(&tmp);
    return ok && !f->st;
}

static bool all_ascii(const samc__ustr *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i] > 0x7F)
            return false;
    return true;
}

/* latin-1 -> windows-1252 (strict: fails on 81, 8D, 8F, 90, 9D). */
static bool latin1_to_cp1252(const samc__ustr *t, samc__ustr *out)
{
    out->n = 0;
    for (size_t i = 0; i < t->n; i++) {
        uint32_t c = t->v[i];
        if (c >= 0x80 && c <= 0x9F && !samc__cp1252_strict((uint8_t)c, &c))
            return false;
        samc__ustr_push(out, c);
    }
    return !out->oom;
}

/* _fix_encoding_one_step_and_explain; the result replaces *t. */
static void one_step(samc__ftfy *f, samc__ustr *t)
{
    if (t->n == 0 || all_ascii(t) || !samc__ftfy_is_bad(f->p, t->v, t->n))
        return;
    samc__ustr fixed = {0};
    bool latin1 = false;
    for (uint16_t i = 0; i < f->p->n_charmaps && !f->st; i++) {
        const samc__charmap *cm = &f->p->charmaps[i];
        if (!possible_encoding(cm, t))
            continue;
        latin1 |= !strcmp(cm->name, "latin-1");
        if (try_charmap(f, cm, t, &fixed)) {
            samc__ustr_swap(t, &fixed);
            goto done;
        }
    }
    if (!f->st && samc__ftfy_detector_search(f->p, t->v, t->n)) {
        samc__ustr_copy(&fixed, t);
        samc__ftfy_decode_inconsistent(f, &fixed);
        if (!f->st && !samc__ustr_eq(&fixed, t)) {
            samc__ustr_swap(t, &fixed);
            goto done;
        }
    }
    /* ftfy then asks whether "windows-1252" is among the possible codecs, but
     * its list names "sloppy-windows-1252", so that test is always false and
     * Latin-1 text is re-read as strict windows-1252. */
    if (!f->st && latin1 && latin1_to_cp1252(t, &fixed) && !samc__ustr_eq(&fixed, t)) {
        samc__ustr_swap(t, &fixed);
        goto done;
    }
    if (!f->st)
        samc__ftfy_fix_c1(t);
done:
    if (fixed.oom)
        samc__ftfy_oom(f);
    samc__ustr_free(&fixed);
}

void samc__ftfy_fix_encoding(samc__ftfy *f, samc__ustr *t)
{
    samc__ustr prev = {0};
    int max_rounds = samc__ftfy_max_rounds(t->n);
    for (int round = 0; !f->st; round++) {
        if (round == max_rounds) {
            f->st = samc_fail(f->err, SAMC_ERR_UNSUPPORTED,
                              "clip tokenizer: ftfy's fix_encoding still changes %zu code points after %d "
                              "rounds (samc's work bound, docs/tokenizer.md)",
                              t->n, max_rounds);
            break;
        }
        samc__ustr_copy(&prev, t);
        one_step(f, t);
        if (prev.oom || t->oom)
            samc__ftfy_oom(f);
        if (samc__ustr_eq(&prev, t))
            break;
    }
    samc__ustr_free(&prev);
}
