/* neck.c - one branch of sam3/model/necks.py Sam3DualViTDetNeck.convs, fast
 * body: ConvTranspose2d(k2, s2) as one GEMM per panel of input pixels (the
 * NCHW input read as a pixels x cin matrix, the weight as cin x cout*4),
 * then the four taps scattered with the bias; GELU between the two of the
 * 4x branch; MaxPool for 0.5x; conv_1x1 and conv_3x3 on fast/conv.c. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/sam3/fast_sam3.h"

#define PIX_PANEL 256

/* ConvTranspose2d(k, stride k) of one image x (cin, h, w) -> y (cout, k*h, k*w);
 * z: PIX_PANEL * cout*k*k floats per thread. */
static void conv_t(int nt, const samc_conv_t2d *c, const float *x, int h, int w, float *y, float *z)
{
    const int k = c->k, N = c->cout * k * k, Wy = w * k;
    const int64_t hw = (int64_t)h * w, np = (hw + PIX_PANEL - 1) / PIX_PANEL;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t p = 0; p < np; p++) {
        const int64_t p0 = p * PIX_PANEL;
        const int n = (int)(hw - p0 < PIX_PANEL ? hw - p0 : PIX_PANEL);
        float *zt = z + (size_t)omp_get_thread_num() * PIX_PANEL * N;
        samc__fast_sgemm(n, N, c->cin, x + p0, 1, hw, c->w, N, 0, zt, N, 0);
        for (int i = 0; i < n; i++) {
            const int64_t iy = (p0 + i) / w, ix = (p0 + i) % w;
            const float *zr = zt + (int64_t)i * N;
            for (int o = 0; o < c->cout; o++)
                for (int dy = 0; dy < k; dy++)
                    for (int dx = 0; dx < k; dx++)
                        y[((int64_t)o * h * k + iy * k + dy) * Wy + ix * k + dx] =
                            zr[(o * k + dy) * k + dx] + c->b[o];
        }
    }
}

/* MaxPool2d(2, 2) on planes; NaN propagates as in PyTorch. */
static void max_pool2(int nt, const float *x, int64_t planes, int H, int W, float *y)
{
    const int Ho = H / 2, Wo = W / 2;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t p = 0; p < planes; p++)
        for (int i = 0; i < Ho; i++)
            for (int j = 0; j < Wo; j++) {
                float m = -INFINITY;
                for (int di = 0; di < 2; di++)
                    for (int dj = 0; dj < 2; dj++) {
                        const float v = x[(p * H + 2 * i + di) * W + 2 * j + dj];
                        if (v > m || isnan(v))
                            m = v;
                    }
                y[(p * Ho + i) * Wo + j] = m;
            }
}

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
    size_t zs = s >= 2.0f ? (size_t)PIX_PANEL * lvl->dconv0.cout * 4 : 1;
    if (s == 4.0f && (size_t)PIX_PANEL * lvl->dconv1.cout * 4 > zs)
        zs = (size_t)PIX_PANEL * lvl->dconv1.cout * 4;
    const size_t c1s = samc__fast_conv2d_scratch(c1, H, W), c3s = samc__fast_conv2d_scratch(c3, H, W);
    const size_t counts[4] = {(size_t)up, (size_t)C * hw, (size_t)c1->cout * hw,
                              (zs > (c1s > c3s ? c1s : c3s) ? zs : (c1s > c3s ? c1s : c3s)) * nt};
    float *buf[4];
    samc_status st = samc__fast_ws_get(ctx, 4, counts, buf);
    if (st)
        return samc_fail(ctx->err, st, "neck level: out of memory");
    for (int b = 0; b < B; b++) {
        const float *xb = x->data + (int64_t)b * C0 * H0 * W0, *cur = xb;
        if (s == 4.0f) { /* dconv_2x2_0, GELU, dconv_2x2_1 */
            conv_t(nt, &lvl->dconv0, xb, H0, W0, buf[0], buf[3]);
            samc__fast_gelu_mt(nt, buf[0], up);
            conv_t(nt, &lvl->dconv1, buf[0], 2 * H0, 2 * W0, buf[1], buf[3]);
            cur = buf[1];
        } else if (s == 2.0f) {
            conv_t(nt, &lvl->dconv0, xb, H0, W0, buf[1], buf[3]);
            cur = buf[1];
        } else if (s == 0.5f) {
            max_pool2(nt, xb, C0, H0, W0, buf[1]);
            cur = buf[1];
        }
        samc__fast_conv2d(nt, c1, cur, H, W, buf[2], buf[3]);
        samc__fast_conv2d(nt, c3, buf[2], H, W, out->data + (int64_t)b * out->shape[1] * out->shape[2] * out->shape[3],
                          buf[3]);
    }
    return SAMC_OK;
}
