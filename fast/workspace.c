/* SPDX-License-Identifier: Apache-2.0 */
/* workspace.c - the per-model arena of fast/ and its caches (see fast.h). */
#include <stdlib.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"
#include "fast/fast_ops.h"

typedef struct fast_ws {
    float *buf;
    size_t cap;                /* floats */
    void *cache[FAST_CACHE_N]; /* per-model constants (samc__fast_ws_cache) */
} fast_ws;

static void (*const cache_free[FAST_CACHE_N])(void *) = {
    [FAST_CACHE_DENSE_PE] = samc__fast_dense_pe_cache_free,
    [FAST_CACHE_ROPE] = samc__fast_rope_cache_free,
};

void samc__fast_ws_free(void *p)
{
    fast_ws *ws = p;
    if (!ws)
        return;
    for (int i = 0; i < FAST_CACHE_N; i++)
        if (ws->cache[i]) {
            cache_free[i](ws->cache[i]);
            free(ws->cache[i]);
        }
    free(ws->buf);
    free(ws);
}

static fast_ws *ws_of(samc_ctx *ctx)
{
    if (!ctx->scratch) {
        fast_ws *ws = calloc(1, sizeof *ws);
        if (!ws)
            return NULL;
        ctx->scratch = ws;
        ctx->scratch_free = samc__fast_ws_free;
    }
    return ctx->scratch;
}

static size_t round16(size_t n) { return (n + 15) & ~(size_t)15; } /* 64 bytes */

samc_status samc__fast_ws_get(samc_ctx *ctx, int n, const size_t *counts, float **out)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += round16(counts[i] ? counts[i] : 1);
    fast_ws *ws = ws_of(ctx);
    if (!ws)
        return samc_fail(ctx->err, SAMC_ERR_NOMEM, "fast: workspace");
    if (total > ws->cap) {
        free(ws->buf);
        ws->buf = aligned_alloc(64, total * sizeof(float));
        ws->cap = ws->buf ? total : 0;
        if (!ws->buf)
            return samc_fail(ctx->err, SAMC_ERR_NOMEM, "fast: workspace of %zu MiB", total * 4 >> 20);
    }
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        out[i] = ws->buf + off;
        off += round16(counts[i] ? counts[i] : 1);
    }
    return SAMC_OK;
}

void *samc__fast_ws_cache(samc_ctx *ctx, int slot, size_t size)
{
    fast_ws *ws = ws_of(ctx);
    if (!ws)
        return NULL;
    if (!ws->cache[slot])
        ws->cache[slot] = calloc(1, size);
    return ws->cache[slot];
}
