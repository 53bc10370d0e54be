/* SPDX-License-Identifier: Apache-2.0 */
/* api_image.c - image files for API users (the decoder samc itself uses). */
#include <stdlib.h>

#include "core/api/api_internal.h"
#include "core/io/image_io.h"

samc_status samc_read_image(const char *path, uint8_t **rgb, int *height, int *width, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(rgb, err);
    *rgb = NULL;
    SAMC_API_NEED(path, err);
    SAMC_API_NEED(height, err);
    SAMC_API_NEED(width, err);
    samc_image img;
    samc_status st = samc_image_load(path, &img, err);
    if (st)
        return st;
    *rgb = img.rgb; /* malloc'd: samc_free releases it */
    *height = img.h, *width = img.w;
    return SAMC_OK;
}

samc_status samc_write_png(const char *path, const uint8_t *data, int height, int width, int channels,
                           samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(path, err);
    SAMC_API_NEED(data, err);
    if (channels != 1 && channels != 3)
        return samc_fail(err, SAMC_ERR_ARG, "%s: channels must be 1 or 3, got %d", path, channels);
    if (height <= 0 || width <= 0)
        return samc_fail(err, SAMC_ERR_ARG, "%s: size %dx%d is empty", path, width, height);
    return samc_png_write(path, width, height, channels, data, err);
}

void samc_free(void *ptr) { free(ptr); }

/* An in-memory image is handed to the decoders as an int count: larger
 * buffers are refused with the limit rather than truncated. */
static samc_status too_big(const char *what, size_t n, samc_error *err)
{
    return samc_fail(err, SAMC_ERR_ARG, "%s: %zu bytes; samc reads images of at most %lld bytes", what, n,
                     (long long)SAMC_IMAGE_MAX_FILE_BYTES);
}

samc_status samc_decode_image(const void *data, size_t n, const char *what, uint8_t **rgb, int *height, int *width,
                              samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(rgb, err);
    *rgb = NULL;
    SAMC_API_NEED(data, err);
    SAMC_API_NEED(height, err);
    SAMC_API_NEED(width, err);
    if (!what)
        what = "image";
    if (n > (size_t)SAMC_IMAGE_MAX_FILE_BYTES)
        return too_big(what, n, err);
    samc_image img;
    samc_status st = samc_image_from_memory(data, (int)n, what, &img, err);
    if (st)
        return st;
    *rgb = img.rgb;
    *height = img.h, *width = img.w;
    return SAMC_OK;
}

samc_status samc_probe_image(const void *data, size_t n, const char *what, int *height, int *width, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(data, err);
    SAMC_API_NEED(height, err);
    SAMC_API_NEED(width, err);
    *height = *width = 0;
    if (!what)
        what = "image";
    if (n > (size_t)SAMC_IMAGE_MAX_FILE_BYTES)
        return too_big(what, n, err);
    return samc_image_size_from_memory(data, (int)n, what, width, height, err);
}

samc_status samc_encode_png(const uint8_t *data, int height, int width, int channels, uint8_t **png, size_t *n,
                            samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(png, err);
    *png = NULL;
    SAMC_API_NEED(n, err);
    *n = 0;
    SAMC_API_NEED(data, err);
    if (channels != 1 && channels != 3)
        return samc_fail(err, SAMC_ERR_ARG, "samc_encode_png: channels must be 1 or 3, got %d", channels);
    if (height <= 0 || width <= 0 || (int64_t)height * width > SAMC_IMAGE_MAX_PIXELS)
        return samc_fail(err, SAMC_ERR_ARG, "samc_encode_png: size %dx%d is empty or too large", width, height);
    return samc_png_encode(width, height, channels, data, png, n, err);
}
