/* SPDX-License-Identifier: Apache-2.0 */
/* neck.c - one branch of sam3/model/necks.py Sam3DualViTDetNeck.convs, fast
 * body: ConvTranspose2d(k2, s2) (the one of SAM 2's output upscaling too),
 * GELU between the two of the 4x branch, MaxPool for 0.5x, then conv_1x1
 * and conv_3x3: all on fast/conv.c. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/max_pool.h"
#include "fast/fast.h"
#include "fast/sam3/fast_sam3.h"

samc_status samc_fast_sam3_neck_level(samc_ctx *ctx, const samc_sam3_neck_level *lvl, const samc_tensor *x,
                                      samc_tensor *out)
{
    if (x->ndim != 4)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "neck level: input is not (B,C,H,W)");
    const int B = (int)x->shape[0], C0 = (int)x->shape[1], H0 = (int)x->shape[2], W0 = (int)x->shape[3];
    const float s = lvl->scale;
    if (s != 4.0f && s != 2.0f && s != 1.0f && s != 0.5f)
        return samc_fail(ctx->err, SAMC_ERR_UNSUPPORTED, "neck level: scale factor %g", (double)s);
    if ((s >= 2.0f && lvl->dconv0.cin != C0) || (s == 4.0f && lvl->dconv1.cin != lvl->dconv0.cout))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "neck level: %d input channels do not fit the transposed "
                                                   "convolutions", C0);
    const int f = s == 4.0f ? 4 : s == 2.0f ? 2 : 1;
    const int C = s == 4.0f ? lvl->dconv1.cout : s == 2.0f ? lvl->dconv0.cout : C0;
    const int H = s == 0.5f ? H0 / 2 : H0 * f, W = s == 0.5f ? W0 / 2 : W0 * f;
    const samc_conv2d *c1 = &lvl->conv_1x1, *c3 = &lvl->conv_3x3;
    if (c1->cin != C || c3->cin != c1->cout || c1->kh != 1 || c1->stride != 1 || H < 1 || W < 1 || out->ndim != 4 ||
        out->shape[0] != B || out->shape[1] != c3->cout ||
        out->shape[2] != samc_conv2d_out_dim(H, c3->kh, c3->stride, c3->pad) ||
        out->shape[3] != samc_conv2d_out_dim(W, c3->kw, c3->stride, c3->pad))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "neck level: output shape or conv shapes do not chain");
    const int nt = samc__fast_threads(ctx);
    const int64_t hw = (int64_t)H * W;
    const int64_t up = s >= 2.0f ? (int64_t)lvl->dconv0.cout * H0 * 2 * W0 * 2 : 1;
    size_t zs = s >= 2.0f ? samc__fast_conv_t2d_scratch(&lvl->dconv0, H0, W0, nt) : 1;
    if (s == 4.0f && samc__fast_conv_t2d_scratch(&lvl->dconv1, 2 * H0, 2 * W0, nt) > zs)
        zs = samc__fast_conv_t2d_scratch(&lvl->dconv1, 2 * H0, 2 * W0, nt);
    const size_t c1s = samc__fast_conv2d_scratch(c1, H, W, nt), c3s = samc__fast_conv2d_scratch(c3, H, W, nt);
    const size_t cs = c1s > c3s ? c1s : c3s;
    const size_t counts[4] = {(size_t)up, (size_t)C * hw, (size_t)c1->cout * hw, zs > cs ? zs : cs};
    float *buf[4];
    samc_status st = samc__fast_ws_get(ctx, 4, counts, buf);
    if (st)
        return samc_fail(ctx->err, st, "neck level: out of memory");
    for (int b = 0; b < B; b++) {
        const float *xb = x->data + (int64_t)b * C0 * H0 * W0, *cur = xb;
        if (s == 4.0f) { /* dconv_2x2_0, GELU, dconv_2x2_1 */
            samc__fast_conv_t2d(nt, &lvl->dconv0, xb, H0, W0, buf[0], buf[3]);
            samc__fast_gelu_mt(nt, buf[0], up);
            samc__fast_conv_t2d(nt, &lvl->dconv1, buf[0], 2 * H0, 2 * W0, buf[1], buf[3]);
            cur = buf[1];
        } else if (s == 2.0f) {
            samc__fast_conv_t2d(nt, &lvl->dconv0, xb, H0, W0, buf[1], buf[3]);
            cur = buf[1];
        } else if (s == 0.5f) {
            samc_max_pool_planes(nt, xb, C0, H0, W0, 2, buf[1]);
            cur = buf[1];
        }
        samc__fast_conv2d(nt, c1, cur, H, W, buf[2], buf[3]);
        samc__fast_conv2d(nt, c3, buf[2], H, W, out->data + (int64_t)b * out->shape[1] * out->shape[2] * out->shape[3],
                          buf[3]);
    }
    return SAMC_OK;
}
