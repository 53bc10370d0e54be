/* SPDX-License-Identifier: Apache-2.0 */
/* position_encoding.c - PositionEmbeddingSine._pe in float32.
 *
 * Every step is a float32 tensor op in PyTorch; we evaluate the same ops in
 * the same order in float (the build uses -ffp-contract=off):
 *   y_embed = (i+1) / (H + eps) * scale     (eps, scale rounded to float: so
 *                                            64 + 1e-6 is exactly 64)
 *   dim_t[k] = T ** (2 * floor(k/2) / F)    F = d/2, float pow
 *   pos_y[k] = y_embed / dim_t[k];  sin for even k, cos for odd k
 * and channels [pos_y (F), pos_x (F)].
 *
 * pow: torch evaluates `temperature ** tensor` with a vectorized float pow
 * (Sleef, 1 ulp) for whole vectors and std::pow for tails. We use powf
 * (glibc), which agrees with torch 1.13 CPU bit for bit for F = 16, 32, 64
 * and 128 (d = 32 .. 256) and can differ by 1 ulp for other F (F = 24, 256).
 * sin/cos: sinf/cosf; torch's vectorized versions may differ by 1 ulp.
 */
#include "core/nn/position_encoding.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/base/error.h"

#include "core/base/error.h"

/* PositionEmbeddingSine._pe: the normalised coordinate of index i (0-based)
 * along an axis of length n. */
static float embed_coord(const samc_sine_pe *pe, int i, int n)
{
    const float v = (float)(i + 1); /* torch.arange(1, n + 1, dtype=float32) */
    if (!pe->normalize)
        return v;
    const float eps = 1e-6f;
    return v / ((float)n + eps) * pe->scale;
}

/* One channel plane: sin (even k) or cos (odd k) of coord / dim_t along rows
 * (y half) or columns (x half), broadcast over the other axis. */
static void fill_plane(const samc_sine_pe *pe, int k, float dim_t, bool is_y, int H, int W,
                       float *plane)
{
    for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++) {
            const float c = is_y ? embed_coord(pe, i, H) : embed_coord(pe, j, W);
            const float a = c / dim_t;
            plane[(int64_t)i * W + j] = (k % 2 == 0) ? sinf(a) : cosf(a);
        }
}

samc_status samc_sine_pe_fill(const samc_sine_pe *pe, int H, int W, float *out)
{
    if (H < 1 || W < 1)
        return samc_fail(NULL, SAMC_ERR_ARG, "sine pe: bad size %dx%d", H, W);
    if (pe->num_pos_feats < 4 || pe->num_pos_feats % 4 != 0)
        return samc_fail(NULL, SAMC_ERR_UNSUPPORTED,
                         "sine pe: num_pos_feats %d is not a positive multiple of 4",
                         pe->num_pos_feats);
    const int F = pe->num_pos_feats / 2;
    const int64_t hw = (int64_t)H * W;
    for (int k = 0; k < F; k++) {
        /* dim_t = temperature ** (2 * (arange(F) // 2) / F), all float32 */
        const float e = (2.0f * (float)(k / 2)) / (float)F;
        const float dim_t = powf(pe->temperature, e);
        fill_plane(pe, k, dim_t, true, H, W, out + (int64_t)k * hw);
        fill_plane(pe, k, dim_t, false, H, W, out + (int64_t)(F + k) * hw);
    }
    return SAMC_OK;
}

void samc_fourier_pe(const float *gauss, int F, float u, float v, float *out)
{
    const float *g0 = gauss, *g1 = gauss + F;
    const float two_pi = (float)(2.0 * M_PI);
    u = 2.0f * u - 1.0f;
    v = 2.0f * v - 1.0f;
    for (int k = 0; k < F; k++) {
        const float a = two_pi * fmaf(v, g1[k], u * g0[k]);
        out[k] = (float)sin((double)a);
        out[F + k] = (float)cos((double)a);
    }
}


samc_status samc_sine_pe_batch(const samc_sine_pe *pe, samc_tensor *out, samc_error *err)
{
    if (out->ndim != 4 || out->shape[1] != pe->num_pos_feats)
        return samc_fail(err, SAMC_ERR_SHAPE, "sine_pe: output must be (B,%d,H,W)", pe->num_pos_feats);
    const int64_t B = out->shape[0], one = samc_numel(out) / (B > 0 ? B : 1);
    samc_status st = samc_sine_pe_fill(pe, (int)out->shape[2], (int)out->shape[3], out->data);
    if (st)
        return samc_fail(err, st, "sine_pe: %d channels over %lldx%lld", pe->num_pos_feats, (long long)out->shape[2],
                         (long long)out->shape[3]);
    for (int64_t b = 1; b < B; b++)
        memcpy(out->data + b * one, out->data, (size_t)one * sizeof(float));
    return SAMC_OK;
}
