/* SPDX-License-Identifier: Apache-2.0 */
/* image_io.h - images in (libjpeg, libpng, stb_image behind checks) and PNGs out (libpng). */
#ifndef SAMC_CORE_IMAGE_IO_H
#define SAMC_CORE_IMAGE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "core/io/image_limits.h"
#include "samc_status.h"

/* Largest image file read (stb and libjpeg take the encoded size as an int). */
#define SAMC_IMAGE_MAX_FILE_BYTES (1LL << 30)

typedef struct samc_image {
    int w, h;
    uint8_t *rgb;      /* h*w*3, row-major RGB */
} samc_image;

/* Load JPEG (libjpeg, as Pillow decodes it: core/io/jpeg_decode.c), PNG
 * (libpng: core/io/png_codec.c) or the other formats stb_image reads (BMP,
 * GIF, TGA, PSD, HDR, PIC, PNM: core/io/stb_guard.c).
 * Grayscale, gray+alpha, RGBA and 16-bit inputs are converted to 8-bit RGB
 * as Pillow's convert("RGB") does (alpha dropped, 16-bit colour samples >> 8,
 * 16-bit PNG gray clipped to 255). Any size from 1x1 up to the limits
 * above is accepted. Empty, 0x0, oversized and undecodable files fail with
 * a message naming the file. docs/hostile_input.md has the details. */
samc_status samc_image_load(const char *path, samc_image *img, samc_error *err);
samc_status samc_image_from_memory(const uint8_t *buf, int len, const char *what, samc_image *img,
                                   samc_error *err);
/* The size from the header alone (no pixels decoded), with the same checks. */
samc_status samc_image_size_from_memory(const uint8_t *buf, int len, const char *what, int *w, int *h,
                                        samc_error *err);
void samc_image_free(samc_image *img);

/* Encode an 8-bit PNG (comp 1 or 3) in memory; *png is malloc'd. */
samc_status samc_png_encode(int w, int h, int comp, const uint8_t *data, uint8_t **png, size_t *n, samc_error *err);
/* Write a palettised 8-bit PNG atomically (as samc_png_write): index h*w
 * bytes, each an entry of `palette` (n_colors RGB triples, 1..256). */
samc_status samc_png_write_palette(const char *path, int w, int h, const uint8_t *index, const uint8_t *palette,
                                   int n_colors, samc_error *err);
/* The DAVIS 2017 palette of the official tools/vos_inference.py (the PASCAL
 * VOC colour map): 256 RGB triples. */
void samc_davis_palette(uint8_t palette[768]);

/* Write a PNG atomically (a temporary created exclusively beside it,
 * renamed at the end: core/base/tmpfile.h). */
samc_status samc_png_write(const char *path, int w, int h, int comp, const uint8_t *data, samc_error *err);
/* Write a PNG into the temporary `tmp` made by samc__tmp_create (opened
 * without following links); `what` names the final file in messages. */
samc_status samc__png_write_into(const char *tmp, const char *what, int w, int h, int comp, const uint8_t *data,
                                 samc_error *err);

#endif
