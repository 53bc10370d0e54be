/* SPDX-License-Identifier: Apache-2.0 */
/* position_encoding.h - sam2/modeling/position_encoding.py:
 * PositionEmbeddingSine._pe, used by the FPN neck (d = 256) and the memory
 * encoder (d = 64). */
#ifndef SAMC_CORE_POSITION_ENCODING_H
#define SAMC_CORE_POSITION_ENCODING_H

#include "core/nn/records.h"

/* One image's encoding, (d, H, W) with d = pe->num_pos_feats, in the float32
 * arithmetic and order of the official code. The official forward repeats
 * it over the batch. Returns SAMC_ERR_UNSUPPORTED when d is not a multiple of
 * 4 (the official torch.stack of the sin/cos halves then fails), SAMC_ERR_ARG
 * for H or W < 1. */
samc_status samc_sine_pe_fill(const samc_sine_pe *pe, int H, int W, float *out);

/* The encoding over out's (H, W) grid, repeated over its batch: out
 * (B, pe->num_pos_feats, H, W); errors name the sizes. */
samc_status samc_sine_pe_batch(const samc_sine_pe *pe, samc_tensor *out, samc_error *err);

/* PositionEmbeddingRandom._pe_encoding on one point (u, v) in [0,1]^2:
 *   c = 2*c - 1; p = c @ G (2, F); a = 2*pi*p; [sin(a) | cos(a)].
 * The K=2 matmul is sgemm's order: fma(v, G[1], u*G[0]). 2*np.pi is a Python
 * float multiplied into a float32 tensor, i.e. by (float)(2*pi). */
void samc_fourier_pe(const float *gauss, int F, float u, float v, float *out);

#endif
