/* SPDX-License-Identifier: Apache-2.0 */
/* resize.c - the antialiased bilinear resize (F.interpolate(antialias=True),
 * core/nn/resize_bilinear.c) with threads: the horizontal pass over source
 * rows, the vertical pass over output rows, each output row computed
 * across its whole width at once (SIMD) instead of column by column down a
 * plane. Every element takes the float steps of samc_aa_dot, so results
 * are those of the core kernel, bit for bit. */
#include <string.h>

#include "core/base/error.h"
#include "core/nn/resize_bilinear.h"
#include "fast/fast.h"
#include "fast/isa.h"

size_t samc__fast_resize_aa_scratch(int64_t planes, int h, int w, int H, int W)
{
    return h != H && w != W ? (size_t)(planes * h * W) : 0;
}

/* Output row i of one plane: y = sum_k w_k x[xmin + k] over rows of x
 * (row length W), in samc_aa_dot's order (the level's kernel). */
static void vertical_row(const float *x, int W, const samc_aa_taps *t, int i, float *y)
{
    samc__fast_isa()->aa_column_dot(x + (int64_t)t->xmin[i] * W, W, t->w + (int64_t)i * t->stride, t->n[i], y);
}

static void horizontal(int nt, const float *x, int64_t rows, int w, const samc_aa_taps *t, int W, float *y)
{
    const fast_isa *isa = samc__fast_isa();
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < rows; r++)
        isa->aa_row(x + r * w, t->xmin, t->n, t->w, t->stride, W, y + r * W);
}

static void vertical(int nt, const float *x, int64_t planes, int h, int H, int W, const samc_aa_taps *t, float *y)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < planes * H; r++) {
        const int64_t p = r / H;
        vertical_row(x + p * h * W, W, t, (int)(r % H), y + r * W);
    }
}

samc_status samc__fast_resize_aa(int nt, const float *in, int64_t planes, int h, int w, int H, int W, float *out,
                                 float *scratch)
{
    if (planes < 0 || h < 1 || w < 1 || H < 1 || W < 1)
        return samc_fail(NULL, SAMC_ERR_ARG, "resize_bilinear_aa: bad sizes (%d,%d) -> (%d,%d)", h, w, H, W);
    if (h == H && w == W) {
        memcpy(out, in, (size_t)(planes * h * w) * sizeof *out);
        return SAMC_OK;
    }
    samc_aa_taps th = {0}, tw = {0};
    samc_status st = SAMC_OK;
    if ((w != W && (st = samc_aa_taps_make(w, W, &tw))) || (h != H && (st = samc_aa_taps_make(h, H, &th)))) {
        samc_aa_taps_free(&tw);
        return st;
    }
    if (h == H) {
        horizontal(nt, in, planes * h, w, &tw, W, out);
    } else if (w == W) {
        vertical(nt, in, planes, h, H, W, &th, out);
    } else {
        horizontal(nt, in, planes * h, w, &tw, W, scratch);
        vertical(nt, scratch, planes, h, H, W, &th, out);
    }
    samc_aa_taps_free(&tw);
    samc_aa_taps_free(&th);
    return SAMC_OK;
}
