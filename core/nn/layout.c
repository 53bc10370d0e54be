/* SPDX-License-Identifier: Apache-2.0 */
/* layout.c - see layout.h. Units of 16 pixels: one 64-byte line of each
 * channel plane, against C contiguous floats per pixel on the token side
 * (the pixel-major loop strode a whole plane, 16-256 KiB, per element:
 * a TLB miss per float). */
#include "core/nn/layout.h"

#include <string.h>

#define PIX 16

void samc_layout_tokens_to_planes(int nt, const float *x, int64_t B, int64_t HW, int64_t C, float *y)
{
    const int64_t nblk = (HW + PIX - 1) / PIX, units = B * nblk;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t u = 0; u < units; u++) {
        const int64_t b = u / nblk, i0 = (u % nblk) * PIX, i1 = i0 + PIX < HW ? i0 + PIX : HW;
        const float *xb = x + b * HW * C;
        float *yb = y + b * C * HW;
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = i0; i < i1; i++)
                yb[c * HW + i] = xb[i * C + c];
    }
}

void samc_layout_planes_to_tokens(int nt, const float *x, int64_t B, const float *add, int64_t b_out, int64_t HW,
                                  int64_t C, float *y)
{
    const int64_t nblk = (HW + PIX - 1) / PIX, units = b_out * nblk;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t u = 0; u < units; u++) {
        const int64_t b = u / nblk, i0 = (u % nblk) * PIX, i1 = i0 + PIX < HW ? i0 + PIX : HW;
        const float *xb = x + (B == 1 ? 0 : b) * C * HW;
        float *yb = y + b * HW * C;
        if (add) {
            const float *ab = add + b * C * HW;
            for (int64_t c = 0; c < C; c++)
                for (int64_t i = i0; i < i1; i++)
                    yb[i * C + c] = xb[c * HW + i] + ab[c * HW + i];
        } else {
            for (int64_t c = 0; c < C; c++)
                for (int64_t i = i0; i < i1; i++)
                    yb[i * C + c] = xb[c * HW + i];
        }
    }
}

void samc_layout_add(int nt, float *y, const float *x, int64_t n)
{
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t i = 0; i < n; i++)
        y[i] += x[i];
}

void samc_layout_transpose01(int nt, const float *x, int64_t A, int64_t B, int64_t C, float *y)
{
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t a = 0; a < A; a++)
        for (int64_t b = 0; b < B; b++)
            memcpy(y + (b * A + a) * C, x + (a * B + b) * C, (size_t)C * sizeof(float));
}
