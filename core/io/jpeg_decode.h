/* SPDX-License-Identifier: Apache-2.0 */
/* jpeg_decode.h - JPEG frames decoded with libjpeg(-turbo) exactly as Pillow
 * decodes them for the official video loader (Image.open(p).convert("RGB")):
 * libjpeg's defaults (islow IDCT, fancy upsampling), output in RGB. */
#ifndef SAMC_CORE_JPEG_DECODE_H
#define SAMC_CORE_JPEG_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "samc_status.h"

/* Header only: the frame size (no pixel decoding). */
samc_status samc_jpeg_size(const char *path, int *w, int *h, samc_error *err);
/* Decode to RGB (*rgb malloc'd, h*w*3). Sizes above the image limit of
 * core/io/image_io.h are refused before decoding. */
samc_status samc_jpeg_decode(const char *path, uint8_t **rgb, int *w, int *h, samc_error *err);
/* The same on a JPEG in memory; `what` names it in messages. */
samc_status samc_jpeg_size_mem(const uint8_t *buf, size_t len, const char *what, int *w, int *h, samc_error *err);
samc_status samc_jpeg_decode_mem(const uint8_t *buf, size_t len, const char *what, uint8_t **rgb, int *w, int *h,
                                 samc_error *err);

/* Progressive JPEGs with more scans than this are refused: every scan
 * re-reads the whole coefficient buffer, so a small file with thousands of
 * scans would take minutes (libjpeg-turbo's advice for untrusted input). */
#define SAMC_JPEG_MAX_SCANS 500

#endif
