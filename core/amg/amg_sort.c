/* SPDX-License-Identifier: Apache-2.0 */
/* amg_sort.c - libstdc++'s std::sort (GCC 12, bits/stl_algo.h and
 * bits/stl_heap.h) on (value, index) pairs, written out step for step so
 * that ties land where torch 1.13 puts them, and the stable variant (see
 * amg_sort.h). Function names follow the libstdc++ ones to make the
 * comparison easy. */
#include "core/amg/amg_sort.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/base/error.h"

typedef struct pair {
    float v;
    int64_t i;
} pair;

enum { S_THRESHOLD = 16 };

/* KeyValueCompDesc: NaN sorts first, then larger values. */
static bool comp(pair a, pair b)
{
    return (isnan(a.v) && !isnan(b.v)) || a.v > b.v;
}

static void swap(pair *a, pair *b)
{
    const pair t = *a;
    *a = *b;
    *b = t;
}

/* ---- heap (the depth-limit fallback: __partial_sort(first, last, last)) -- */

static void push_heap(pair *first, int64_t hole, int64_t top, pair value)
{
    int64_t parent = (hole - 1) / 2;
    while (hole > top && comp(first[parent], value)) {
        first[hole] = first[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    first[hole] = value;
}

static void adjust_heap(pair *first, int64_t hole, int64_t len, pair value)
{
    const int64_t top = hole;
    int64_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (comp(first[child], first[child - 1]))
            child--;
        first[hole] = first[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        first[hole] = first[child - 1];
        hole = child - 1;
    }
    push_heap(first, hole, top, value);
}

static void heap_sort(pair *first, int64_t len)
{
    if (len < 2)
        return;
    for (int64_t parent = (len - 2) / 2;; parent--) { /* __make_heap */
        adjust_heap(first, parent, len, first[parent]);
        if (parent == 0)
            break;
    }
    for (int64_t last = len - 1; last > 0; last--) { /* __sort_heap via __pop_heap */
        const pair value = first[last];
        first[last] = first[0];
        adjust_heap(first, 0, last, value);
    }
}

/* ---- quicksort part ------------------------------------------------------ */

static void move_median_to_first(pair *result, pair *a, pair *b, pair *c)
{
    if (comp(*a, *b)) {
        if (comp(*b, *c))
            swap(result, b);
        else if (comp(*a, *c))
            swap(result, c);
        else
            swap(result, a);
    } else if (comp(*a, *c))
        swap(result, a);
    else if (comp(*b, *c))
        swap(result, c);
    else
        swap(result, b);
}

static pair *unguarded_partition(pair *first, pair *last, const pair *pivot)
{
    for (;;) {
        while (comp(*first, *pivot))
            ++first;
        --last;
        while (comp(*pivot, *last))
            --last;
        if (!(first < last))
            return first;
        swap(first, last);
        ++first;
    }
}

static void introsort_loop(pair *first, pair *last, int64_t depth_limit)
{
    while (last - first > S_THRESHOLD) {
        if (depth_limit == 0) {
            heap_sort(first, last - first);
            return;
        }
        --depth_limit;
        pair *mid = first + (last - first) / 2;
        move_median_to_first(first, first + 1, mid, last - 1);
        pair *cut = unguarded_partition(first + 1, last, first);
        introsort_loop(cut, last, depth_limit);
        last = cut;
    }
}

/* ---- final insertion sort ------------------------------------------------ */

static void unguarded_linear_insert(pair *last)
{
    const pair val = *last;
    pair *next = last - 1;
    while (comp(val, *next)) {
        *last = *next;
        last = next;
        --next;
    }
    *last = val;
}

static void insertion_sort(pair *first, pair *last)
{
    if (first == last)
        return;
    for (pair *i = first + 1; i != last; ++i) {
        if (comp(*i, *first)) {
            const pair val = *i;
            for (pair *p = i; p != first; --p) /* move_backward(first, i, i + 1) */
                *p = *(p - 1);
            *first = val;
        } else
            unguarded_linear_insert(i);
    }
}

static void final_insertion_sort(pair *first, pair *last)
{
    if (last - first > S_THRESHOLD) {
        insertion_sort(first, first + S_THRESHOLD);
        for (pair *i = first + S_THRESHOLD; i != last; ++i)
            unguarded_linear_insert(i);
    } else
        insertion_sort(first, last);
}

/* std::__lg: floor(log2(n)) for n >= 1. */
static int64_t lg(int64_t n)
{
    int64_t k = 0;
    while (n > 1) {
        n >>= 1;
        k++;
    }
    return k;
}

static samc_status pairs_alloc(const float *keys, int64_t n, pair **out, samc_error *err)
{
    *out = NULL;
    if (n < 0)
        return samc_fail(err, SAMC_ERR_ARG, "argsort: negative length %lld", (long long)n);
    if (n == 0)
        return SAMC_OK;
    pair *p = malloc((size_t)n * sizeof *p);
    if (!p)
        return samc_fail(err, SAMC_ERR_NOMEM, "argsort: %lld scores", (long long)n);
    for (int64_t k = 0; k < n; k++)
        p[k] = (pair){keys[k], k};
    *out = p;
    return SAMC_OK;
}

static void pairs_free(pair *p, int64_t n, int64_t *order)
{
    for (int64_t k = 0; k < n; k++)
        order[k] = p[k].i;
    free(p);
}

/* comp, then the original index: a total order, so qsort's result is the
 * stable one. */
static int cmp_stable(const void *pa, const void *pb)
{
    const pair *a = pa, *b = pb;
    if (comp(*a, *b))
        return -1;
    if (comp(*b, *a))
        return 1;
    return (a->i > b->i) - (a->i < b->i);
}

samc_status samc_amg_argsort_desc_stable(const float *keys, int64_t n, int64_t *order,
                                         samc_error *err)
{
    pair *p = NULL;
    samc_status st = pairs_alloc(keys, n, &p, err);
    if (st || !p)
        return st;
    qsort(p, (size_t)n, sizeof *p, cmp_stable);
    pairs_free(p, n, order);
    return SAMC_OK;
}

samc_status samc_amg_argsort_desc(const float *keys, int64_t n, int64_t *order, samc_error *err)
{
    pair *p = NULL;
    samc_status st = pairs_alloc(keys, n, &p, err);
    if (st || !p)
        return st;
    introsort_loop(p, p + n, lg(n) * 2);
    final_insertion_sort(p, p + n);
    pairs_free(p, n, order);
    return SAMC_OK;
}
