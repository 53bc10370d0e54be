/* SPDX-License-Identifier: Apache-2.0 */
/* bf16.h - bfloat16 rounding as torch does it (SAM 2 stores video memory in
 * bfloat16; the values stay float32 here). */
#ifndef SAMC_CORE_NN_BF16_H
#define SAMC_CORE_NN_BF16_H

#include <stdint.h>

/* Round every value to the nearest bfloat16 (ties to even), as
 * tensor.to(torch.bfloat16) does; NaN stays NaN. */
void samc_round_bf16(float *x, int64_t n);

/* The two bfloat16 values around x (lo: x truncated toward zero, hi: one
 * bf16 step farther from zero) and their midpoint, at which the rounding of
 * x flips (for the margins of rounding decisions). */
void samc_bf16_neighbours(float x, float *lo, float *hi, float *mid);

/* The distance from x to the set of float32 values that round to the
 * bfloat16 value b (0 when x is in it): the margin of a rounding decision. */
double samc_bf16_distance_to_rounding(float x, float b);

#endif
