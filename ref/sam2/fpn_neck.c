/* SPDX-License-Identifier: Apache-2.0 */
/* fpn_neck.c - FpnNeck.forward (sam2/modeling/backbones/image_encoder.py).
 *
 * xs[i] is the trunk output of level i, high -> low resolution. The loop runs
 * from the lowest resolution up. Each level gets a lateral conv, with the
 * conv index reversed (convs[n-1-i] takes xs[i]). Only levels in
 * fpn_top_down_levels add the nearest x2 upsampled previous output. A level
 * outside that list *resets* the running prev_features to its own lateral, so
 * the next level up sees that one, not the chain below it.
 */
#include <stdint.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/position_encoding.h"
#include "ref/prims.h"
#include "ref/ref_ops.h"

/* F.interpolate(prev, scale_factor=2.0, mode="nearest"): PyTorch's
 * nearest_idx takes source index dst >> 1, a plain 2x2 repeat. Adds into lat
 * (B*C planes of 2h x 2w). */
static void add_up2_nearest(const float *prev, int64_t planes, int h, int w, float *lat)
{
    const int H = 2 * h, W = 2 * w;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *p = prev + pl * h * w;
        float *l = lat + pl * H * W;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                l[(int64_t)y * W + x] = l[(int64_t)y * W + x] + p[(int64_t)(y >> 1) * w + (x >> 1)];
    }
}

/* Linear taps of output index o for a x2 upsample, align_corners False
 * (area_pixel_compute_source_index with scale 1/2, clamped below at 0;
 * upper neighbour clamped to n-1). Every value is exact in float. */
static void up2_taps(int o, int n, int *i0, int *i1, float *l0, float *l1)
{
    float src = 0.5f * ((float)o + 0.5f) - 0.5f;
    src = src < 0.0f ? 0.0f : src;
    *i0 = (int)src;
    *i1 = *i0 < n - 1 ? *i0 + 1 : *i0;
    *l1 = src - (float)*i0;
    *l0 = 1.0f - *l1;
}

/* F.interpolate(prev, scale_factor=2.0, mode="bilinear", align_corners=False,
 * antialias=False), evaluated as PyTorch's separable kernel does: the two
 * rows interpolated along W, then combined along H. Adds into lat. */
static void add_up2_bilinear(const float *prev, int64_t planes, int h, int w, float *lat)
{
    const int H = 2 * h, W = 2 * w;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *p = prev + pl * h * w;
        float *l = lat + pl * H * W;
        for (int y = 0; y < H; y++) {
            int y0, y1, x0, x1;
            float hy0, hy1, wx0, wx1;
            up2_taps(y, h, &y0, &y1, &hy0, &hy1);
            for (int x = 0; x < W; x++) {
                up2_taps(x, w, &x0, &x1, &wx0, &wx1);
                const float *r0 = p + (int64_t)y0 * w, *r1 = p + (int64_t)y1 * w;
                const float t0 = r0[x0] * wx0 + r0[x1] * wx1;
                const float t1 = r1[x0] * wx0 + r1[x1] * wx1;
                l[(int64_t)y * W + x] = l[(int64_t)y * W + x] + (t0 * hy0 + t1 * hy1);
            }
        }
    }
}

static bool shape4_is(const samc_tensor *t, int64_t a, int64_t b, int64_t c, int64_t d)
{
    return t->ndim == 4 && t->shape[0] == a && t->shape[1] == b && t->shape[2] == c &&
           t->shape[3] == d;
}

/* Shapes of level i: xs[i] (B, convs[n-1-i].cin, H, W); out[i] and pos[i]
 * (B, d_model, H', W') with H', W' the conv's output size. */
static samc_status check_level(samc_error *err, const samc_fpn_neck *neck, int i, const samc_tensor *xs,
                               const samc_tensor *out, const samc_tensor *pos)
{
    const samc_conv2d *cv = &neck->convs[neck->n_levels - 1 - i];
    const samc_tensor *x = &xs[i];
    if (x->ndim != 4 || x->shape[0] != xs[0].shape[0] || x->shape[1] != cv->cin ||
        cv->cout != neck->d_model || neck->pe.num_pos_feats != neck->d_model)
        return samc_fail(err, SAMC_ERR_SHAPE, "fpn_neck: level %d input is not (B,%d,H,W)", i,
                         cv->cin);
    const int Ho = samc_conv2d_out_dim((int)x->shape[2], cv->kh, cv->stride, cv->pad);
    const int Wo = samc_conv2d_out_dim((int)x->shape[3], cv->kw, cv->stride, cv->pad);
    if (Ho < 1 || Wo < 1 || !shape4_is(&out[i], x->shape[0], neck->d_model, Ho, Wo) ||
        !shape4_is(&pos[i], x->shape[0], neck->d_model, Ho, Wo))
        return samc_fail(err, SAMC_ERR_SHAPE, "fpn_neck: level %d out/pos are not (B,%d,%d,%d)",
                         i, neck->d_model, Ho, Wo);
    return SAMC_OK;
}

/* pos[i] = self.position_encoding(x_out): the same (d, H, W) map per image. */
static samc_status level_pos(const samc_fpn_neck *neck, samc_tensor *pos)
{
    const int B = (int)pos->shape[0], H = (int)pos->shape[2], W = (int)pos->shape[3];
    const int64_t per = (int64_t)neck->d_model * H * W;
    samc_status st = samc_sine_pe_fill(&neck->pe, H, W, pos->data);
    for (int b = 1; b < B && st == SAMC_OK; b++)
        memcpy(pos->data + b * per, pos->data, (size_t)per * sizeof *pos->data);
    return st;
}

samc_status samc_ref_fpn_neck(samc_ctx *ctx, const samc_fpn_neck *neck, const samc_tensor *xs,
                              samc_tensor *out, samc_tensor *pos)
{
    const int n = neck->n_levels;
    if (n < 1 || n > SAMC_FPN_MAX_LEVELS)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "fpn_neck: %d levels", n);
    for (int i = 0; i < n; i++) {
        samc_status st = check_level(ctx->err, neck, i, xs, out, pos);
        if (st != SAMC_OK)
            return st;
    }
    for (int i = n - 1; i >= 0; i--) {
        const samc_tensor *x = &xs[i];
        samc_tensor *o = &out[i];
        const int B = (int)o->shape[0], C = (int)o->shape[1];
        const int H = (int)o->shape[2], W = (int)o->shape[3];
        /* lateral_features = self.convs[n - i](x), written straight into out[i] */
        samc_ref_conv2d_nchw(x->data, B, (int)x->shape[2], (int)x->shape[3], &neck->convs[n - 1 - i],
                        o->data);
        /* prev_features is out[i + 1] whenever it is not None (i < n - 1) */
        if (neck->top_down[i] && i < n - 1) {
            const samc_tensor *prev = &out[i + 1];
            if (2 * prev->shape[2] != H || 2 * prev->shape[3] != W)
                return samc_fail(ctx->err, SAMC_ERR_UNSUPPORTED,
                                 "fpn_neck: level %d is %dx%d but the upsampled level %d is "
                                 "%lldx%lld (the official sum fails to broadcast)",
                                 i, H, W, i + 1, (long long)(2 * prev->shape[2]),
                                 (long long)(2 * prev->shape[3]));
            /* prev_features = lateral_features + top_down_features */
            if (neck->interp_bilinear)
                add_up2_bilinear(prev->data, (int64_t)B * C, H / 2, W / 2, o->data);
            else
                add_up2_nearest(prev->data, (int64_t)B * C, H / 2, W / 2, o->data);
            if (neck->fuse_avg) /* prev_features /= 2 */
                for (int64_t k = 0; k < samc_numel(o); k++)
                    o->data[k] = o->data[k] / 2.0f;
        }
        samc_status st = level_pos(neck, &pos[i]);
        if (st != SAMC_OK)
            return st;
    }
    return SAMC_OK;
}
