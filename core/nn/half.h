/* SPDX-License-Identifier: Apache-2.0 */
/* half.h - IEEE float16 rounding as torch does it (SAM 3's frame loader
 * stores the video's frames in float16 and normalises them in float16; the
 * values stay float32 here). */
#ifndef SAMC_CORE_NN_HALF_H
#define SAMC_CORE_NN_HALF_H

/* x rounded to the nearest float16 (ties to even; subnormals kept, beyond
 * the largest finite value infinity), as tensor.to(torch.float16) does. */
float samc_round_f16(float x);

#endif
