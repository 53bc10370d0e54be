/* SPDX-License-Identifier: Apache-2.0 */
/* fpn_neck.c - FpnNeck.forward (backbones/image_encoder.py), fast body.
 * Lateral 1x1 convs as sgemm over pixel panels; the top-down x2 upsample
 * (nearest or bilinear, as ref/sam2/fpn_neck.c, same float steps) added in one
 * threaded pass; the sine position encoding built from its separable rows:
 * channel k of the y half depends only on the row, of the x half only on the
 * column, so H + W sin/cos evaluations fill a plane (bit-identical to
 * core/nn/position_encoding.c, which evaluates every pixel). */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

/* Linear taps of output index o for a x2 upsample, align_corners False. */
static void up2_taps(int o, int n, int *i0, int *i1, float *l0, float *l1)
{
    float src = 0.5f * ((float)o + 0.5f) - 0.5f;
    src = src < 0.0f ? 0.0f : src;
    *i0 = (int)src;
    *i1 = *i0 < n - 1 ? *i0 + 1 : *i0;
    *l1 = src - (float)*i0;
    *l0 = 1.0f - *l1;
}

/* lat = (lat + up2(prev)) [/ 2], plane by plane, threads over planes. */
static void add_up2(int nt, const float *prev, int64_t planes, int h, int w, float *lat, int bilinear,
                    int avg)
{
    const int H = 2 * h, W = 2 * w;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *p = prev + pl * h * w;
        float *l = lat + pl * H * W;
        for (int y = 0; y < H; y++) {
            float *ly = l + (int64_t)y * W;
            if (!bilinear) {
                const float *r = p + (int64_t)(y >> 1) * w;
                for (int x = 0; x < W; x++)
                    ly[x] = ly[x] + r[x >> 1];
            } else {
                int y0, y1, x0, x1;
                float hy0, hy1, wx0, wx1;
                up2_taps(y, h, &y0, &y1, &hy0, &hy1);
                const float *r0 = p + (int64_t)y0 * w, *r1 = p + (int64_t)y1 * w;
                for (int x = 0; x < W; x++) {
                    up2_taps(x, w, &x0, &x1, &wx0, &wx1);
                    const float t0 = r0[x0] * wx0 + r0[x1] * wx1;
                    const float t1 = r1[x0] * wx0 + r1[x1] * wx1;
                    ly[x] = ly[x] + (t0 * hy0 + t1 * hy1);
                }
            }
            if (avg)
                for (int x = 0; x < W; x++)
                    ly[x] = ly[x] / 2.0f;
        }
    }
}

/* PositionEmbeddingSine._pe's normalised coordinate (core/nn/position_encoding.c). */
static float embed_coord(const samc_sine_pe *pe, int i, int n)
{
    const float v = (float)(i + 1);
    if (!pe->normalize)
        return v;
    const float eps = 1e-6f;
    return v / ((float)n + eps) * pe->scale;
}

/* (d, H, W) sine PE of one image; tmp: H + W floats per thread. */
static samc_status sine_pe(samc_error *err, int nt, const samc_sine_pe *pe, int H, int W, float *out)
{
    if (pe->num_pos_feats < 4 || pe->num_pos_feats % 4 != 0)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED,
                         "sine pe: num_pos_feats %d is not a positive multiple of 4", pe->num_pos_feats);
    const int F = pe->num_pos_feats / 2;
    const int64_t hw = (int64_t)H * W;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int k = 0; k < F; k++) {
        const float e = (2.0f * (float)(k / 2)) / (float)F;
        const float dim_t = powf(pe->temperature, e);
        float *py = out + (int64_t)k * hw, *px = out + (int64_t)(F + k) * hw;
        for (int i = 0; i < H; i++) { /* y half: constant along each row */
            const float a = embed_coord(pe, i, H) / dim_t;
            const float v = (k % 2 == 0) ? sinf(a) : cosf(a);
            for (int j = 0; j < W; j++)
                py[(int64_t)i * W + j] = v;
        }
        for (int j = 0; j < W; j++) { /* x half: the same row everywhere */
            const float a = embed_coord(pe, j, W) / dim_t;
            px[j] = (k % 2 == 0) ? sinf(a) : cosf(a);
        }
        for (int i = 1; i < H; i++)
            memcpy(px + (int64_t)i * W, px, (size_t)W * sizeof *px);
    }
    return SAMC_OK;
}

static int shape4_is(const samc_tensor *t, int64_t a, int64_t b, int64_t c, int64_t d)
{
    return t->ndim == 4 && t->shape[0] == a && t->shape[1] == b && t->shape[2] == c && t->shape[3] == d;
}

samc_status samc_fast_fpn_neck(samc_ctx *ctx, const samc_fpn_neck *neck, const samc_tensor *xs,
                               samc_tensor *out, samc_tensor *pos)
{
    const int n = neck->n_levels;
    if (n < 1 || n > SAMC_FPN_MAX_LEVELS)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "fpn_neck: %d levels", n);
    const int nt = samc__fast_threads(ctx);
    size_t col = 0;
    for (int i = 0; i < n; i++) {
        const samc_conv2d *cv = &neck->convs[n - 1 - i];
        const samc_tensor *x = &xs[i];
        if (x->ndim != 4 || x->shape[0] != xs[0].shape[0] || x->shape[1] != cv->cin ||
            cv->cout != neck->d_model || neck->pe.num_pos_feats != neck->d_model)
            return samc_fail(ctx->err, SAMC_ERR_SHAPE, "fpn_neck: level %d input is not (B,%d,H,W)", i, cv->cin);
        const int Ho = samc_conv2d_out_dim((int)x->shape[2], cv->kh, cv->stride, cv->pad);
        const int Wo = samc_conv2d_out_dim((int)x->shape[3], cv->kw, cv->stride, cv->pad);
        if (Ho < 1 || Wo < 1 || !shape4_is(&out[i], x->shape[0], neck->d_model, Ho, Wo) ||
            !shape4_is(&pos[i], x->shape[0], neck->d_model, Ho, Wo))
            return samc_fail(ctx->err, SAMC_ERR_SHAPE, "fpn_neck: level %d out/pos are not (B,%d,%d,%d)", i,
                             neck->d_model, Ho, Wo);
        const size_t c = samc__fast_conv2d_scratch(cv, (int)x->shape[2], (int)x->shape[3], nt);
        col = c > col ? c : col;
    }
    float *colbuf = NULL;
    const size_t counts[1] = {col};
    samc_status st = samc__fast_ws_get(ctx, 1, counts, &colbuf);
    if (st)
        return st;
    for (int i = n - 1; i >= 0; i--) {
        const samc_tensor *x = &xs[i];
        samc_tensor *o = &out[i];
        const int B = (int)o->shape[0], C = (int)o->shape[1], H = (int)o->shape[2], W = (int)o->shape[3];
        const int64_t per_in = x->shape[1] * x->shape[2] * x->shape[3], per_out = (int64_t)C * H * W;
        for (int b = 0; b < B; b++)
            samc__fast_conv2d(nt, &neck->convs[n - 1 - i], x->data + b * per_in, (int)x->shape[2], (int)x->shape[3],
                        o->data + b * per_out, colbuf);
        if (neck->top_down[i] && i < n - 1) {
            const samc_tensor *prev = &out[i + 1];
            if (2 * prev->shape[2] != H || 2 * prev->shape[3] != W)
                return samc_fail(ctx->err, SAMC_ERR_UNSUPPORTED,
                                 "fpn_neck: level %d is %dx%d but the upsampled level %d is %lldx%lld "
                                 "(the official sum fails to broadcast)",
                                 i, H, W, i + 1, (long long)(2 * prev->shape[2]), (long long)(2 * prev->shape[3]));
            add_up2(nt, prev->data, (int64_t)B * C, H / 2, W / 2, o->data, neck->interp_bilinear, neck->fuse_avg);
        }
        if ((st = sine_pe(ctx->err, nt, &neck->pe, H, W, pos[i].data)))
            return st;
        for (int b = 1; b < B; b++)
            memcpy(pos[i].data + b * per_out, pos[i].data, (size_t)per_out * sizeof(float));
    }
    return SAMC_OK;
}
