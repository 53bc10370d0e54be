/* SPDX-License-Identifier: Apache-2.0 */
/* clip_bpe.c - SimpleTokenizer.bpe on vocabulary ids.
 *
 * The official loop: take the adjacent pair with the lowest merge rank, merge
 * every occurrence of it left to right (without overlap), repeat until no
 * adjacent pair has a rank. Done literally that is quadratic in the word
 * length; here every adjacent pair sits in a heap ordered by (rank, position)
 * and one round pops all entries of the lowest rank in position order. Pairs
 * created by a round are pushed only after it, so a lower-ranked new pair
 * cannot cut into the round, exactly as in the official loop; entries made
 * stale by a merge are recognised and dropped. O(n log n) per word.
 */
#include <stdlib.h>

#include "core/text/clip_internal.h"

uint32_t samc__clip_byte_char(uint8_t b)
{
    /* bytes_to_unicode(): '!'..'~', U+00A1..U+00AC and U+00AE..U+00FF stand
     * for themselves; the other 68 bytes map to U+0100.. in byte order. */
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)
        return b;
    uint32_t n = b <= 0x20 ? b : b <= 0xA0 ? (uint32_t)b - 0x7F + 0x21 : 0x21 + 0x22;
    return 0x100 + n;
}

typedef struct entry {
    int32_t rank;
    uint32_t pos;   /* index of the left symbol */
    uint32_t a, b;  /* the pair as it was when pushed */
} entry;

typedef struct heap {
    entry *v;
    size_t n, cap;
    bool oom;
} heap;

static bool less(const entry *x, const entry *y)
{
    return x->rank != y->rank ? x->rank < y->rank : x->pos < y->pos;
}

static void heap_push(heap *h, entry e)
{
    if (h->oom)
        return;
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 64;
        entry *v = realloc(h->v, nc * sizeof *v);
        if (!v) {
            h->oom = true;
            return;
        }
        h->v = v;
        h->cap = nc;
    }
    size_t i = h->n++;
    while (i > 0 && less(&e, &h->v[(i - 1) / 2])) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = e;
}

static entry heap_pop(heap *h)
{
    entry top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && less(&h->v[c + 1], &h->v[c]))
            c++;
        if (!less(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

#define NONE UINT32_MAX

typedef struct word {
    uint32_t *id, *next, *prev;
} word;

/* Push the pair starting at symbol i, if it has a rank. */
static void push_pair(const samc_clip_tokenizer *t, const word *w, heap *h, uint32_t i)
{
    int32_t rank;
    uint32_t merged;
    if (i != NONE && w->next[i] != NONE && samc__clip_pair(t, w->id[i], w->id[w->next[i]], &rank, &merged))
        heap_push(h, (entry){rank, i, w->id[i], w->id[w->next[i]]});
}

/* Merge rounds until no ranked pair is left. `touched` collects the symbols
 * whose right-hand pair changed in a round. */
static void merge_all(const samc_clip_tokenizer *t, word *w, heap *h, samc__ustr *touched)
{
    while (h->n && !h->oom && !touched->oom) {
        int32_t rank = h->v[0].rank;
        touched->n = 0;
        while (h->n && h->v[0].rank == rank) {
            entry e = heap_pop(h);
            uint32_t j = w->next[e.pos];
            if (w->id[e.pos] != e.a || j == NONE || w->id[j] != e.b)
                continue; /* stale: a symbol of this pair has been merged */
            int32_t r;
            uint32_t merged;
            samc__clip_pair(t, e.a, e.b, &r, &merged);
            w->id[e.pos] = merged;
            w->id[j] = NONE; /* dead: entries at j fail the id test */
            w->next[e.pos] = w->next[j];
            if (w->next[j] != NONE)
                w->prev[w->next[j]] = e.pos;
            samc__ustr_push(touched, w->prev[e.pos]);
            samc__ustr_push(touched, e.pos);
        }
        for (size_t k = 0; k < touched->n; k++) /* new pairs join after the round */
            push_pair(t, w, h, touched->v[k]);
    }
}

bool samc__clip_bpe(const samc_clip_tokenizer *t, const uint8_t *bytes, size_t n, samc__ustr *ids)
{
    if (n == 0)
        return true;
    if (n > UINT32_MAX - 1)
        return false;
    word w = {malloc(n * sizeof *w.id), malloc(n * sizeof *w.next), malloc(n * sizeof *w.prev)};
    heap h = {0};
    samc__ustr touched = {0};
    bool ok = w.id && w.next && w.prev;
    if (ok) {
        for (size_t i = 0; i < n; i++) {
            w.id[i] = t->byte_sym[bytes[i]][i + 1 == n]; /* "</w>" on the last symbol */
            w.next[i] = i + 1 < n ? (uint32_t)(i + 1) : NONE;
            w.prev[i] = i > 0 ? (uint32_t)(i - 1) : NONE;
        }
        for (size_t i = 0; i + 1 < n; i++)
            push_pair(t, &w, &h, (uint32_t)i);
        merge_all(t, &w, &h, &touched);
        ok = !h.oom && !touched.oom;
        for (uint32_t i = 0; ok && i != NONE; i = w.next[i])
            samc__ustr_push(ids, w.id[i]);
        ok = ok && !ids->oom;
    }
    free(w.id);
    free(w.next);
    free(w.prev);
    free(h.v);
    samc__ustr_free(&touched);
    return ok;
}
