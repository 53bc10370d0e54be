/* SPDX-License-Identifier: Apache-2.0 */
/* resize_bilinear.h - torch.nn.functional.interpolate(mode="bilinear",
 * align_corners=False), without and with antialias, on float32 NCHW planes,
 * bit-for-bit with the CPU kernels of torch 1.13 (the torch the parity dumps
 * are made with; aten/src/ATen/native/cpu/UpSampleKernel.cpp) when the output
 * size is given (no scale_factor).
 *
 * Used by SAM2Transforms (antialias=True: torchvision >= 0.17 Resize on a
 * float tensor is exactly that F.interpolate call), postprocess_masks and
 * SAM2Base's mask resizes (antialias=False, also when downsampling).
 *
 * Sizes: any >= 1, up or down, square or not. out must not alias in.
 * Errors: SAMC_ERR_ARG for bad sizes, SAMC_ERR_NOMEM for the tap tables.
 */
#ifndef SAMC_CORE_RESIZE_BILINEAR_H
#define SAMC_CORE_RESIZE_BILINEAR_H

#include <math.h>
#include <stdint.h>

#include "samc_status.h"

/* The source taps of one axis (antialias=False): output o reads inputs i0
 * and i1 with weights l0 and l1, computed as torch 1.13 does (double source
 * index, float32 lambdas). */
typedef struct samc_lin_tap {
    int i0, i1;
    float l0, l1;
} samc_lin_tap;
void samc_bilinear_taps(int in, int out, samc_lin_tap *t);

/* antialias=False. in: (n, c, h, w) -> out: (n, c, H, W).
 * c matters beyond the plane count: torch 1.13 sends a tensor that is also
 * channels-last contiguous (c == 1, or h == w == 1) to a different kernel
 * that rounds differently (see resize_bilinear.c). */
samc_status samc_resize_bilinear(const float *in, int64_t n, int c, int h, int w, int H, int W,
                                 float *out);

/* antialias=True (torch's _upsample_bilinear2d_aa): separable triangle
 * filter, support = in/out when downsampling. in: (planes, h, w) -> out:
 * (planes, H, W). An axis whose size is unchanged is copied. */
samc_status samc_resize_bilinear_aa(const float *in, int64_t planes, int h, int w, int H, int W,
                                    float *out);

/* The antialiased resize's pieces, for implementations that run its two
 * passes their own way (fast/resize.c: threads, a row-wise vertical pass)
 * with the same float steps. */
typedef struct samc_aa_taps {
    int *xmin, *n; /* first tap and tap count per output index */
    float *w;      /* (out, stride) normalized weights */
    int stride;    /* interp_size = ceil(support) * 2 + 1 */
} samc_aa_taps;

/* _compute_indices_weights_aa + _compute_weights_aa for in -> out samples,
 * keeping torch's mix of float variables and double intermediates. */
samc_status samc_aa_taps_make(int in, int out, samc_aa_taps *t);
void samc_aa_taps_free(samc_aa_taps *t);

/* interpolate_aa_single_dim: one output value from n taps spaced `step`
 * (taps 1..((n-1)/4)*4 summed as multiply then add, the rest fused, as
 * torch's vectorised in-order reduction). Inline: the fast kernels
 * (fast/isa/) compile it for their level, where fmaf is one instruction. */
static inline float samc_aa_dot(const float *x, int64_t step, const float *w, int n)
{
    const int vec_end = ((n - 1) / 4) * 4; /* taps 1..vec_end: vectorised in-order reduction */
    float acc = x[0] * w[0];
    for (int j = 1; j < n; j++) {
        if (j <= vec_end)
            acc = acc + x[j * step] * w[j];
        else
            acc = fmaf(x[j * step], w[j], acc);
    }
    return acc;
}

#endif
