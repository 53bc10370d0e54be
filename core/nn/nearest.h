/* SPDX-License-Identifier: Apache-2.0 */
/* nearest.h - F.interpolate(mode="nearest") source index, as torch 1.13's
 * nearest_idx computes it (float32 scale in/out, floor, clamped). Shared by
 * the ref and fast bodies of SAM 3's pixel decoder. */
#ifndef SAMC_CORE_NN_NEAREST_H
#define SAMC_CORE_NN_NEAREST_H

/* Source index of output index o when resizing `in` samples to `out`. */
int samc_nearest_src(int o, int in, int out);

#endif
