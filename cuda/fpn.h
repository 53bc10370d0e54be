/* SPDX-License-Identifier: Apache-2.0 */
/* fpn.h - FpnNeck on the device (fpn.cu). */
#ifndef SAMC_CUDA_FPN_H
#define SAMC_CUDA_FPN_H

#include "cuda/kernels.h"

/* The neck on the stage outputs xs[i] (B, H[i]*W[i], C_i) tokens, fp32 ->
 * out[i] (B, H[i]*W[i], d_model) tokens, fp32; cvt: bf16 scratch of the
 * largest xs (the bf16 row converts each GEMM input). */
void cu_fpn(cu_dev *d, int slot, const samc_fpn_neck *neck, int B, const float *const *xs, const int *H, const int *W,
            float *const *out, void *cvt);
/* PositionEmbeddingSine of an H x W map, (d, H, W) planes on the device
 * (made once per size and kept in the arena). */
const float *cu_sine_pe_planes(cu_arena *A, const samc_sine_pe *pe, int H, int W);
/* x as the input of L's GEMM: x itself, or its bf16 copy in cvt. */
const void *cu_gemm_input(cu_dev *d, const cu_lin *L, const float *x, int64_t n, void *cvt);

#endif
