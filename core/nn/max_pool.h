/* SPDX-License-Identifier: Apache-2.0 */
/* max_pool.h - nn.MaxPool2d(k, stride=k) (floor mode, no padding) on
 * planes: the ref and fast bodies that pool (SAM 3's 0.5x neck level)
 * share it. NaN propagates as in PyTorch's kernel; exact, so any thread
 * count gives the same bytes. */
#ifndef SAMC_CORE_NN_MAX_POOL_H
#define SAMC_CORE_NN_MAX_POOL_H

#include <stdint.h>

/* x: `planes` planes of H x W -> y: planes of (H/k) x (W/k), over nt threads. */
void samc_max_pool_planes(int nt, const float *x, int64_t planes, int H, int W, int k, float *y);

#endif
