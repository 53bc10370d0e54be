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
