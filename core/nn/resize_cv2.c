/* SPDX-License-Identifier: Apache-2.0 */
/* resize_cv2.c - cv2.resize(INTER_CUBIC) on uint8 RGB (resize_cv2.h). */
#include "core/nn/resize_cv2.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/base/error.h"

enum { COEF_BITS = 11, COEF_SCALE = 1 << COEF_BITS, CN = 3, VEC_BYTES = 16 };

/* interpolateCubic: the four weights of source pixels sx-1..sx+2 at fraction x. */
static void cubic_weights(float x, float c[4])
{
    const float A = -0.75f;
    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = 1.f - c[0] - c[1] - c[2];
}

/* saturate_cast<short>(v * INTER_RESIZE_COEF_SCALE): round half to even. */
static int16_t fixed_weight(float v)
{
    const float r = rintf(v * (float)COEF_SCALE);
    return (int16_t)(r > 32767.f ? 32767 : r < -32768.f ? -32768 : r);
}

/* Per output position d of an axis of n_out from n_in: the first source
 * index and the four int16 weights. */
static void axis_taps(int n_in, int n_out, int *first, int16_t *w)
{
    const double scale = 1.0 / ((double)n_out / n_in);
    for (int d = 0; d < n_out; d++) {
        float f = (float)((d + 0.5) * scale - 0.5);
        const int s = (int)floorf(f);
        f -= (float)s;
        float c[4];
        cubic_weights(f, c);
        first[d] = s - 1;
        for (int k = 0; k < 4; k++)
            w[4 * d + k] = fixed_weight(c[k]);
    }
}

static int clampi(int v, int n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

static uint8_t sat_u8(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* One source row through the horizontal pass: W*3 int32 sums. */
static void hpass(const uint8_t *src, int w, int W, const int *xs, const int16_t *xw, int32_t *row)
{
    for (int x = 0; x < W; x++)
        for (int c = 0; c < CN; c++) {
            int32_t v = 0;
            for (int k = 0; k < 4; k++)
                v += src[clampi(xs[x] + k, w) * CN + c] * xw[4 * x + k];
            row[x * CN + c] = v;
        }
}

/* The vertical pass of one output row from four horizontal rows. */
static void vpass(int32_t *const rows[4], const int16_t *b, int n, uint8_t *dst)
{
    const float s = 1.f / ((float)COEF_SCALE * COEF_SCALE);
    const float bf[4] = {b[0] * s, b[1] * s, b[2] * s, b[3] * s};
    const int vec_end = n - n % VEC_BYTES;
    for (int i = 0; i < vec_end; i++) { /* OpenCV's SIMD: S0*b0 + (S1*b1 + (S2*b2 + S3*b3)), cvRound */
        const float v = (float)rows[0][i] * bf[0] +
                        ((float)rows[1][i] * bf[1] + ((float)rows[2][i] * bf[2] + (float)rows[3][i] * bf[3]));
        const float r = rintf(v);
        dst[i] = sat_u8(r > 32767.f ? 32767 : r < -32768.f ? -32768 : (int)r);
    }
    for (int i = vec_end; i < n; i++) { /* the scalar tail: FixedPtCast<int, uchar, 22> */
        const int64_t v = (int64_t)rows[0][i] * b[0] + (int64_t)rows[1][i] * b[1] + (int64_t)rows[2][i] * b[2] +
                          (int64_t)rows[3][i] * b[3];
        dst[i] = sat_u8((int)((v + (1 << (2 * COEF_BITS - 1))) >> (2 * COEF_BITS)));
    }
}

samc_status samc_resize_cv2_cubic_rgb(const uint8_t *rgb, int h, int w, int H, int W, uint8_t *out)
{
    if (!rgb || !out || h <= 0 || w <= 0 || H <= 0 || W <= 0)
        return SAMC_ERR_ARG;
    int *xs = malloc((size_t)W * sizeof *xs), *ys = malloc((size_t)H * sizeof *ys);
    int16_t *xw = malloc((size_t)W * 4 * sizeof *xw), *yw = malloc((size_t)H * 4 * sizeof *yw);
    int32_t *buf = malloc((size_t)4 * W * CN * sizeof *buf);
    samc_status st = xs && ys && xw && yw && buf ? SAMC_OK : SAMC_ERR_NOMEM;
    if (!st) {
        axis_taps(w, W, xs, xw);
        axis_taps(h, H, ys, yw);
        int have[4] = {-1, -1, -1, -1}; /* source row held in each of the four buffers */
        for (int y = 0; y < H; y++) {
            int32_t *rows[4];
            for (int k = 0; k < 4; k++) {
                const int sy = clampi(ys[y] + k, h);
                int slot = -1;
                for (int j = 0; j < 4; j++)
                    if (have[j] == sy)
                        slot = j;
                if (slot < 0) { /* a free buffer: one no tap of this row needs */
                    for (int j = 0; j < 4 && slot < 0; j++) {
                        bool used = false;
                        for (int q = 0; q < 4; q++)
                            used |= have[j] == clampi(ys[y] + q, h);
                        if (!used)
                            slot = j;
                    }
                    hpass(rgb + (size_t)sy * w * CN, w, W, xs, xw, buf + (size_t)slot * W * CN);
                    have[slot] = sy;
                }
                rows[k] = buf + (size_t)slot * W * CN;
            }
            vpass(rows, yw + 4 * y, W * CN, out + (size_t)y * W * CN);
        }
    }
    free(xs), free(ys), free(xw), free(yw), free(buf);
    return st;
}
