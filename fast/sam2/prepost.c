/* prepost.c - SAM2Transforms: preprocess (ToTensor, antialiased Resize,
 * Normalize) and the resize of postprocess_masks, fast bodies.
 *
 * preprocess: the three colour planes are resampled in parallel by the
 * shared torch-exact kernel (core/resize_bilinear.c); conversion and
 * normalisation are vectorised (a true division, as torch).
 * postprocess: the plain bilinear resize re-implemented with threads over
 * output rows; the arithmetic is core/resize_bilinear.c's, step for step
 * (double source index, fma contractions of the generic kernel, the
 * channels-last kernel's double sum for C == 1), so results are identical. */
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/base/error.h"
#include <string.h>

#include "core/models/sam2/sam2_transforms.h"
#include "core/nn/resize_bilinear.h"
#include "fast/fast.h"
#include "fast/sam2/fast_sam2.h"
#include "fast/simd.h"

static const float k_mean[3] = {0.485f, 0.456f, 0.406f};
static const float k_std[3] = {0.229f, 0.224f, 0.225f};

samc_status samc_fast_preprocess(samc_ctx *ctx, const uint8_t *img, int h, int w, int size, samc_tensor *out)
{
    if (!img || h < 1 || w < 1 || size < 1)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "preprocess: empty image (%dx%d) or size %d", w, h, size);
    if (out->ndim != 4 || out->shape[0] != 1 || out->shape[1] != 3 || out->shape[2] != size || out->shape[3] != size)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "preprocess: output must be (1,3,%d,%d)", size, size);
    const int nt = samc__fast_threads(ctx);
    const int64_t hw = (int64_t)h * w, S2 = (int64_t)size * size;
    const size_t counts[1] = {(size_t)(3 * hw)};
    float *chw;
    samc_status st = samc__fast_ws_get(ctx, 1, counts, &chw);
    if (st)
        return st;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t p0 = 0; p0 < hw; p0 += 4096) {
        const int64_t p1 = p0 + 4096 < hw ? p0 + 4096 : hw;
        for (int64_t p = p0; p < p1; p++)
            for (int c = 0; c < 3; c++)
                chw[c * hw + p] = (float)img[p * 3 + c] / 255.0f;
    }
    samc_status sts[3] = {SAMC_OK, SAMC_OK, SAMC_OK};
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int c = 0; c < 3; c++)
        sts[c] = samc_resize_bilinear_aa(chw + c * hw, 1, h, w, size, size, out->data + c * S2);
    for (int c = 0; c < 3; c++)
        if (sts[c])
            return sts[c];
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int r = 0; r < 3 * size; r++) {
        const int c = r / size;
        float *x = out->data + (int64_t)r * size;
        const vf m = vset1(k_mean[c]), s = vset1(k_std[c]);
        int i = 0;
        for (; i + VL <= size; i += VL)
            vstore(x + i, vdiv(vsub(vload(x + i), m), s));
        for (; i < size; i++)
            x[i] = (x[i] - k_mean[c]) / k_std[c];
    }
    return SAMC_OK;
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
    const size_t counts[1] = {(size_t)(H + W) * sizeof(samc_lin_tap) / sizeof(float) + 1};
    float *tb;
    samc_status st = samc__fast_ws_get(ctx, 1, counts, &tb);
    if (st)
        return st;
    samc_lin_tap *th = (samc_lin_tap *)tb, *tw = th + H;
    samc_bilinear_taps(h, H, th);
    samc_bilinear_taps(w, W, tw);
    const bool channels_last = c == 1 || (h == 1 && w == 1);
    const int64_t rows = lowres->shape[0] * c * (int64_t)H;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t p = r / H;
        const int i = (int)(r % H);
        const float *x = lowres->data + p * h * w;
        float *y = out->data + r * W;
        const float *r0 = x + (int64_t)th[i].i0 * w, *r1 = x + (int64_t)th[i].i1 * w;
        const float h0 = th[i].l0, h1 = th[i].l1;
        if (channels_last) {
            for (int j = 0; j < W; j++) {
                const samc_lin_tap *t = &tw[j];
                const float w00 = h0 * t->l0, w01 = h0 * t->l1, w10 = h1 * t->l0, w11 = h1 * t->l1;
                const double acc = (double)r0[t->i0] * w00 + (double)r0[t->i1] * w01 +
                                   (double)r1[t->i0] * w10 + (double)r1[t->i1] * w11;
                y[j] = (float)acc;
            }
        } else {
            for (int j = 0; j < W; j++) {
                const samc_lin_tap *t = &tw[j];
                const float t0 = fmaf(r0[t->i0], t->l0, r0[t->i1] * t->l1);
                const float t1 = fmaf(r1[t->i0], t->l0, r1[t->i1] * t->l1);
                y[j] = fmaf(t0, h0, t1 * h1);
            }
        }
    }
    return SAMC_OK;
}

/* The video loader's transform: the shared PIL-exact code
 * (core/models/sam2/sam2_transforms.c); one frame is small work next to
 * the encoder that follows. */
samc_status samc_fast_preprocess_frame(samc_ctx *ctx, const uint8_t *img, int h, int w, int size, samc_tensor *out)
{
    if (!img || h < 1 || w < 1 || size < 1)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "frame preprocess: empty frame (%dx%d) or size %d", w, h, size);
    return samc_sam2_frame_to_tensor(img, h, w, size, out, ctx->err);
}
