/* SPDX-License-Identifier: Apache-2.0 */
/* max_pool.c - nn.MaxPool2d(k, k) on planes (max_pool.h). */
#include "core/nn/max_pool.h"

#include <math.h>
#include <omp.h>

void samc_max_pool_planes(int nt, const float *x, int64_t planes, int H, int W, int k, float *y)
{
    const int Ho = H / k, Wo = W / k;
#pragma omp parallel for num_threads(nt > 0 ? nt : 1) schedule(static) if (nt > 1)
    for (int64_t p = 0; p < planes; p++)
        for (int i = 0; i < Ho; i++)
            for (int j = 0; j < Wo; j++) {
                float m = -INFINITY;
                for (int di = 0; di < k; di++)
                    for (int dj = 0; dj < k; dj++) {
                        const float v = x[(p * H + (int64_t)k * i + di) * W + (int64_t)k * j + dj];
                        if (v > m || isnan(v))
                            m = v;
                    }
                y[(p * Ho + i) * Wo + j] = m;
            }
}
