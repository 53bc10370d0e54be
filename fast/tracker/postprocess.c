/* SPDX-License-Identifier: Apache-2.0 */
/* postprocess.c - the resize of SAM2Transforms.postprocess_masks, fast body:
 * the plain bilinear resize re-implemented with threads over output rows;
 * the arithmetic is core/nn/resize_bilinear.c's, step for step (double
 * source index, fma contractions of the generic kernel, the channels-last
 * kernel's double sum for C == 1), so results are identical. */
#include <math.h>
#include <omp.h>
#include <stdbool.h>

#include "core/base/error.h"
#include "core/nn/resize_bilinear.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

/* One plane's rows [r0, r1) of the output: the rows of hr (h x W, each
 * source row already interpolated along x) blended along y; the float steps
 * of the per-pixel form fmaf(fmaf(r0[x0], l0, r0[x1] * l1), h0, t1 * h1). */
static void blend_rows(const float *hr, int W, const samc_lin_tap *th, int r0, int r1, float *out)
{
    for (int i = r0; i < r1; i++) {
        samc__fast_lerp_rows(hr + (int64_t)th[i].i0 * W, hr + (int64_t)th[i].i1 * W, th[i].l0, th[i].l1, W,
                             out + (int64_t)i * W);
    }
}

samc_status samc_fast_postprocess(samc_ctx *ctx, const samc_tensor *lowres, int H, int W, samc_tensor *out)
{
    if (lowres->ndim != 4 || out->ndim != 4 || out->shape[0] != lowres->shape[0] ||
        out->shape[1] != lowres->shape[1] || out->shape[2] != H || out->shape[3] != W)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "postprocess: want (N,C,h,w) -> (N,C,%d,%d)", H, W);
    const int c = (int)lowres->shape[1], h = (int)lowres->shape[2], w = (int)lowres->shape[3];
    if (c < 1 || h < 1 || w < 1 || H < 1 || W < 1)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "resize_bilinear: bad sizes (%d,%d,%d) -> (%d,%d)", c, h, w, H, W);
    const int nt = samc__fast_threads(ctx);
    const bool channels_last = c == 1 || (h == 1 && w == 1);
    const int64_t planes = lowres->shape[0] * c, rows = planes * (int64_t)H;
    /* separable (not channels_last): every source row interpolated along x
     * once (h rows, not H), then the output rows blended from two of them */
    const size_t counts[2] = {(size_t)(H + W) * sizeof(samc_lin_tap) / sizeof(float) + 1,
                              channels_last ? 1 : (size_t)planes * h * W};
    float *buf[2];
    samc_status st = samc__fast_ws_get(ctx, 2, counts, buf);
    if (st)
        return st;
    samc_lin_tap *th = (samc_lin_tap *)buf[0], *tw = th + H;
    samc_bilinear_taps(h, H, th);
    samc_bilinear_taps(w, W, tw);
    if (!channels_last) {
        float *hr = buf[1];
        const int64_t blk = 64; /* output rows per task */
        const int64_t nb = (H + blk - 1) / blk;
#pragma omp parallel num_threads(nt) if (planes * (int64_t)H * W > 65536)
        {
#pragma omp for schedule(static)
            for (int64_t r = 0; r < planes * h; r++)
                samc__fast_lerp_taps(lowres->data + r * w, tw, W, hr + r * W);
#pragma omp for schedule(static)
            for (int64_t t = 0; t < planes * nb; t++) {
                const int64_t p = t / nb, i0 = (t % nb) * blk;
                blend_rows(hr + p * h * W, W, th, (int)i0, (int)(i0 + blk < H ? i0 + blk : H),
                           out->data + p * H * W);
            }
        }
        return SAMC_OK;
    }
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t p = r / H;
        const int i = (int)(r % H);
        const float *x = lowres->data + p * h * w;
        float *y = out->data + r * W;
        const float *r0 = x + (int64_t)th[i].i0 * w, *r1 = x + (int64_t)th[i].i1 * w;
        const float h0 = th[i].l0, h1 = th[i].l1;
        for (int j = 0; j < W; j++) {
            const samc_lin_tap *t = &tw[j];
            const float w00 = h0 * t->l0, w01 = h0 * t->l1, w10 = h1 * t->l0, w11 = h1 * t->l1;
            const double acc = (double)r0[t->i0] * w00 + (double)r0[t->i1] * w01 + (double)r1[t->i0] * w10 +
                               (double)r1[t->i1] * w11;
            y[j] = (float)acc;
        }
    }
    return SAMC_OK;
}
