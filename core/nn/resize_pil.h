/* SPDX-License-Identifier: Apache-2.0 */
/* resize_pil.h - Pillow's Image.resize(BICUBIC) on 8-bit RGB, bit-exact.
 *
 * The official video loader (sam2/utils/misc.py: _load_img_as_tensor) resizes
 * frames with PIL's default filter, BICUBIC (a = -0.5, support 2 * max(scale,
 * 1)), computed on uint8 in two separable passes (horizontal, then vertical)
 * with 22-bit fixed-point coefficients and a uint8 intermediate
 * (Pillow libImaging/Resample.c). */
#ifndef SAMC_CORE_RESIZE_PIL_H
#define SAMC_CORE_RESIZE_PIL_H

#include <stdint.h>

#include "samc_status.h"

/* rgb (h, w, 3) -> out (H, W, 3). */
samc_status samc_resize_pil_bicubic_rgb(const uint8_t *rgb, int h, int w, int H, int W, uint8_t *out);

#endif
