/* SPDX-License-Identifier: Apache-2.0 */
/* image_limits.h - the sizes every image decoder accepts (core/io/image_limits.c). */
#ifndef SAMC_CORE_IMAGE_LIMITS_H
#define SAMC_CORE_IMAGE_LIMITS_H

#include "samc_status.h"

/* Largest accepted image side and the hard cap of the pixel limit (a
 * decoded 16384x16384 RGB image is 768 MiB). The pixel limit itself is
 * Pillow's (2 x PIL.Image.MAX_IMAGE_PIXELS = 178956970) unless
 * SAMC_MAX_IMAGE_PIXELS or samc_set_image_pixel_limit says otherwise; every
 * decoder checks it from the header, before allocating pixels. */
#define SAMC_IMAGE_MAX_SIDE 16384
#define SAMC_IMAGE_MAX_PIXELS (1LL << 28)

/* The pixel limit in force, and the check every decoder makes: w, h >= 1,
 * each side <= SAMC_IMAGE_MAX_SIDE, w*h <= the limit; messages name `what`. */
long long samc__image_pixel_limit(void);
samc_status samc__image_check_dims(int w, int h, const char *what, samc_error *err);

#endif
