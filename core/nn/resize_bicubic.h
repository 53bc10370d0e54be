/* SPDX-License-Identifier: Apache-2.0 */
/* resize_bicubic.h - torch.nn.functional.interpolate(mode="bicubic",
 * align_corners=False, antialias=False) on float32 NCHW, bit-for-bit with
 * PyTorch's CPU kernel (aten/src/ATen/native/cpu/UpSampleKernel.cpp,
 * HelperInterpCubic) when the output size is given (no scale_factor).
 *
 * Used by Hiera._get_pos_embed (core/models/sam2/hiera_pos_embed.c).
 */
#ifndef SAMC_CORE_RESIZE_BICUBIC_H
#define SAMC_CORE_RESIZE_BICUBIC_H

#include "samc_status.h"

/* in: (planes, h, w) -> out: (planes, H, W), planes = N*C. Any sizes >= 1,
 * up or down. out must not alias in. Returns SAMC_ERR_ARG for bad sizes,
 * SAMC_ERR_NOMEM if the tap tables cannot be allocated. */
samc_status samc_resize_bicubic(const float *in, int planes, int h, int w, int H, int W,
                                float *out);

#endif
