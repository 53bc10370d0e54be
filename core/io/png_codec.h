/* SPDX-License-Identifier: Apache-2.0 */
/* png_codec.h - PNG decoding and encoding with libpng (core/io/png_codec.c). */
#ifndef SAMC_CORE_PNG_CODEC_H
#define SAMC_CORE_PNG_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "samc_status.h"

/* Largest side written (libpng's default user limit for IHDR). */
#define SAMC_PNG_MAX_SIDE 1000000

/* Decode a PNG in buf[0..len) to 8-bit RGB (*rgb malloc'd, h*w*3), as Pillow's
 * convert("RGB") reads it; refused: bad CRCs, truncation, palette indices
 * past the palette, sizes over samc's image limits (from IHDR, before any
 * pixel buffer). `what` names the file in messages. */
samc_status samc__png_decode_mem(const uint8_t *buf, size_t len, const char *what, uint8_t **rgb, int *w, int *h,
                                 samc_error *err);

/* Write an 8-bit gray (comp 1) or RGB (comp 3) image to `f`, row by row
 * (any size libpng accepts; no int arithmetic on the whole image). */
/* The same for an 8-bit palette image: index h*w bytes into `palette`
 * (n_colors RGB triples, 1..256). */
samc_status samc__png_encode_palette_file(FILE *f, int w, int h, const uint8_t *index, const uint8_t *palette,
                                          int n_colors, const char *what, samc_error *err);
samc_status samc__png_encode_file(FILE *f, int w, int h, int comp, const uint8_t *data, const char *what,
                                  samc_error *err);

#endif
