/* SPDX-License-Identifier: Apache-2.0 */
/* clip_tokenizer.c - SimpleTokenizer.__call__(text, context_length). */
#include <stdlib.h>
#include <string.h>

#include "core/text/clip_internal.h"

/* A pre-token that is exactly a special token comes from bpe()'s cache as
 * itself, and maps to its id; a case variant ("<ſtart_of_text>") is split by
 * the pattern the same way but goes through BPE like any other word. */
static bool is_ascii(const uint32_t *s, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (n != k)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] != (unsigned char)lit[i])
            return false;
    return true;
}

/* Ids of the cleaned text, stopping once `limit` are known (the rest would be
 * cut off by the context). */
static bool tokenize(const samc_clip_tokenizer *tok, const samc__ustr *t, size_t limit, samc__ustr *ids)
{
    samc__bstr bytes = {0};
    size_t pos = 0, start, len;
    bool ok = true;
    while (ok && ids->n < limit && samc__clip_next_token(t->v, t->n, &pos, &start, &len)) {
        const uint32_t *w = t->v + start;
        if (is_ascii(w, len, "<start_of_text>") || is_ascii(w, len, "<end_of_text>")) {
            samc__ustr_push(ids, w[1] == 's' ? tok->sot : tok->eot);
            continue;
        }
        bytes.n = 0;
        for (size_t i = 0; i < len; i++)
            samc__utf8_put(&bytes, w[i]);
        ok = !bytes.oom && samc__clip_bpe(tok, bytes.v, bytes.n, ids);
    }
    samc__bstr_free(&bytes);
    return ok && !ids->oom;
}

static samc_status decode_and_clean(const samc_clip_tokenizer *tok, const char *text, size_t len, samc__ustr *t,
                                    samc_error *err)
{
    if (len > SAMC_CLIP_MAX_TEXT_BYTES)
        return samc_fail(err, SAMC_ERR_ARG, "clip tokenizer: text of %zu bytes is longer than samc's limit of %zu",
                         len, SAMC_CLIP_MAX_TEXT_BYTES);
    samc_status st = samc__utf8_decode_text(text, len, t, err);
    return st ? st : samc__clip_clean(tok->ftfy, t, err);
}

samc_status samc_clip_tokenizer_encode_n(const samc_clip_tokenizer *tok, const char *text, size_t len,
                                         int context_len, int64_t *ids, int *n_tokens, bool *truncated,
                                         samc_error *err)
{
    if (n_tokens)
        *n_tokens = 0;
    if (truncated)
        *truncated = false;
    if (!tok || !text || !ids)
        return samc_fail(err, SAMC_ERR_ARG, "clip tokenizer: NULL %s", !tok ? "tokenizer" : !text ? "text" : "ids");
    if (context_len < 1)
        return samc_fail(err, SAMC_ERR_ARG, "clip tokenizer: context length %d (must be at least 1)", context_len);
    memset(ids, 0, sizeof *ids * (size_t)context_len);
    samc__ustr t = {0}, out = {0};
    samc_status st = decode_and_clean(tok, text, len, &t, err);
    size_t ctx = (size_t)context_len;
    if (!st && !tokenize(tok, &t, ctx - 1, &out))
        st = samc_fail(err, SAMC_ERR_NOMEM, "clip tokenizer: out of memory");
    if (!st) {
        bool cut = out.n >= ctx - 1; /* [start] + ids + [end] is longer than the context */
        size_t k = cut ? ctx - 1 : out.n;
        ids[0] = tok->sot;
        for (size_t i = 0; i < k; i++)
            ids[i + 1] = out.v[i];
        ids[cut ? ctx - 1 : k + 1] = tok->eot; /* with cut, the end token replaces the last slot */
        if (n_tokens)
            *n_tokens = (int)(cut ? ctx : k + 2);
        if (truncated)
            *truncated = cut;
    }
    samc__ustr_free(&t);
    samc__ustr_free(&out);
    return st;
}

samc_status samc_clip_tokenizer_encode(const samc_clip_tokenizer *tok, const char *text, int context_len,
                                       int64_t *ids, int *n_tokens, bool *truncated, samc_error *err)
{
    return samc_clip_tokenizer_encode_n(tok, text, text ? strlen(text) : 0, context_len, ids, n_tokens, truncated,
                                        err);
}

samc_status samc_clip_tokenizer_clean(const samc_clip_tokenizer *tok, const char *text, size_t len, char **cleaned,
                                      size_t *cleaned_len, samc_error *err)
{
    if (cleaned)
        *cleaned = NULL;
    if (!tok || !text || !cleaned)
        return samc_fail(err, SAMC_ERR_ARG, "clip tokenizer: NULL %s",
                         !tok ? "tokenizer" : !text ? "text" : "output pointer");
    samc__ustr t = {0};
    samc__bstr b = {0};
    samc_status st = decode_and_clean(tok, text, len, &t, err);
    for (size_t i = 0; !st && i < t.n; i++)
        samc__utf8_put(&b, t.v[i]);
    samc__bstr_push(&b, 0);
    if (!st && b.oom)
        st = samc_fail(err, SAMC_ERR_NOMEM, "clip tokenizer: out of memory");
    if (!st) {
        *cleaned = (char *)b.v;
        if (cleaned_len)
            *cleaned_len = b.n - 1;
        b.v = NULL;
    }
    samc__ustr_free(&t);
    samc__bstr_free(&b);
    return st;
}
