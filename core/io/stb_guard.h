/* SPDX-License-Identifier: Apache-2.0 */
/* stb_guard.h - BMP, GIF, TGA, PSD, HDR, PIC and PNM through Debian's
 * stb_image with the read and header checks it lacks (core/io/stb_guard.c). */
#ifndef SAMC_CORE_STB_GUARD_H
#define SAMC_CORE_STB_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include "samc_status.h"

/* Decode buf[0..len) to 8-bit RGB (*rgb malloc'd, h*w*3; gray expanded,
 * alpha dropped, 16-bit samples >> 8). Refused: truncated files (stb asked
 * for a byte past the end, or the header declares more pixel bytes than the
 * file holds), BMP palette indices past the palette, PNM header numbers
 * past INT_MAX, PSDs with alpha, sizes over samc's image limits. */
samc_status samc__stb_decode_mem(const uint8_t *buf, size_t len, const char *what, uint8_t **rgb, int *w, int *h,
                                 samc_error *err);

#endif
