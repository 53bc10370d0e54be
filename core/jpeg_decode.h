/* jpeg_decode.h - JPEG frames decoded with libjpeg(-turbo) exactly as Pillow
 * decodes them for the official video loader (Image.open(p).convert("RGB")):
 * libjpeg's defaults (islow IDCT, fancy upsampling), output in RGB. */
#ifndef SAMC_CORE_JPEG_DECODE_H
#define SAMC_CORE_JPEG_DECODE_H

#include <stdint.h>

#include "samc_status.h"

/* Header only: the frame size (no pixel decoding). */
samc_status samc_jpeg_size(const char *path, int *w, int *h, samc_error *err);
/* Decode to RGB (*rgb malloc'd, h*w*3). Sizes above the image limit of
 * core/image_io.h are refused before decoding. */
samc_status samc_jpeg_decode(const char *path, uint8_t **rgb, int *w, int *h, samc_error *err);

#endif
