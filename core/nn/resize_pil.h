/* SPDX-License-Identifier: Apache-2.0 */
/* resize_pil.h - Pillow's Image.resize(BICUBIC | BILINEAR) on 8-bit RGB,
 * bit-exact.
 *
 * SAM 2's video loader (sam2/utils/misc.py: _load_img_as_tensor) resizes
 * frames with PIL's default filter, BICUBIC (a = -0.5, support 2 * max(scale,
 * 1)); SAM 3's (sam3/model/io_utils.py: torchvision's TF.resize of a PIL
 * image) with BILINEAR (support 1 * max(scale, 1)). Both are computed on
 * uint8 in two separable passes (horizontal, then vertical) with 22-bit
 * fixed-point coefficients and a uint8 intermediate (Pillow
 * libImaging/Resample.c). */
#ifndef SAMC_CORE_RESIZE_PIL_H
#define SAMC_CORE_RESIZE_PIL_H

#include <stdint.h>

#include "samc_status.h"

typedef enum samc_pil_filter { SAMC_PIL_BICUBIC, SAMC_PIL_BILINEAR } samc_pil_filter;

/* rgb (h, w, 3) -> out (H, W, 3). */
samc_status samc_resize_pil_rgb(const uint8_t *rgb, int h, int w, int H, int W, samc_pil_filter filter, uint8_t *out);
static inline samc_status samc_resize_pil_bicubic_rgb(const uint8_t *rgb, int h, int w, int H, int W, uint8_t *out)
{
    return samc_resize_pil_rgb(rgb, h, w, H, W, SAMC_PIL_BICUBIC, out);
}

#endif
