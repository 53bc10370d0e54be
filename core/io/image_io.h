/* image_io.h - images in (stb_image) and PNGs out (stb_image_write). */
#ifndef SAMC_CORE_IMAGE_IO_H
#define SAMC_CORE_IMAGE_IO_H

#include <stdint.h>

#include "samc_status.h"

/* Largest accepted image side and pixel count (a decoded 16384x16384 RGB
 * image is 768 MiB; larger inputs are refused before decoding). */
#define SAMC_IMAGE_MAX_SIDE 16384
#define SAMC_IMAGE_MAX_PIXELS (1LL << 28)
/* Largest image file read (stb and libjpeg take the encoded size as an int). */
#define SAMC_IMAGE_MAX_FILE_BYTES (1LL << 30)

typedef struct samc_image {
    int w, h;
    uint8_t *rgb;      /* h*w*3, row-major RGB */
} samc_image;

/* Load JPEG (libjpeg, as Pillow decodes it: core/io/jpeg_decode.c) or any
 * other format stb_image reads (PNG, BMP, GIF, TGA, PSD, HDR, PIC, PNM).
 * Grayscale, gray+alpha, RGBA and 16-bit inputs are converted to 8-bit RGB
 * (alpha dropped, 16-bit values >> 8). Any size from 1x1 up to the limits
 * above is accepted. Empty, 0x0, oversized and undecodable files fail with
 * a message naming the file. docs/hostile_input.md has the details. */
samc_status samc_image_load(const char *path, samc_image *img, samc_error *err);
samc_status samc_image_from_memory(const uint8_t *buf, int len, const char *what, samc_image *img,
                                   samc_error *err);
void samc_image_free(samc_image *img);

/* Write a PNG atomically (a temporary name, renamed at the end). */
samc_status samc_png_write(const char *path, int w, int h, int comp, const uint8_t *data, samc_error *err);

#endif
