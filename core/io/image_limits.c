/* SPDX-License-Identifier: Apache-2.0 */
/* image_limits.c - the pixel limit every image decoder checks from the
 * header, before any pixel buffer exists (Pillow's decompression-bomb
 * threshold by default). */
#include "core/io/image_limits.h"

#include <stdlib.h>

#include "core/base/error.h"
#include "samc.h"

#define PILLOW_MAX_IMAGE_PIXELS 89478485LL /* PIL.Image.MAX_IMAGE_PIXELS */

static _Atomic long long pixel_limit = 0; /* 0: not read yet */

long long samc__image_pixel_limit(void)
{
    long long v = pixel_limit;
    if (v)
        return v;
    /* Pillow refuses (DecompressionBombError) above twice MAX_IMAGE_PIXELS;
     * SAMC_MAX_IMAGE_PIXELS overrides it up to the hard limit. */
    v = 2 * PILLOW_MAX_IMAGE_PIXELS;
    const char *env = getenv("SAMC_MAX_IMAGE_PIXELS");
    if (env && *env) {
        char *end = NULL;
        const long long e = strtoll(env, &end, 10);
        if (end && !*end && e > 0)
            v = e < SAMC_IMAGE_MAX_PIXELS ? e : SAMC_IMAGE_MAX_PIXELS;
    }
    pixel_limit = v;
    return v;
}

long long samc_set_image_pixel_limit(long long max_pixels)
{
    const long long old = samc__image_pixel_limit();
    pixel_limit = max_pixels <= 0 ? 2 * PILLOW_MAX_IMAGE_PIXELS
                  : max_pixels < SAMC_IMAGE_MAX_PIXELS ? max_pixels : SAMC_IMAGE_MAX_PIXELS;
    return old;
}

samc_status samc__image_check_dims(int w, int h, const char *what, samc_error *err)
{
    if (w <= 0 || h <= 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image (its header declares %dx%d pixels)", what, w, h);
    const long long limit = samc__image_pixel_limit();
    if (w > SAMC_IMAGE_MAX_SIDE || h > SAMC_IMAGE_MAX_SIDE)
        return samc_fail(err, SAMC_ERR_ARG, "%s: image is %dx%d; samc accepts at most %d pixels a side", what, w, h,
                         SAMC_IMAGE_MAX_SIDE);
    if ((long long)w * h > limit)
        return samc_fail(err, SAMC_ERR_ARG,
                         "%s: image is %dx%d = %lld pixels, over the limit of %lld (a decompression bomb? raise "
                         "SAMC_MAX_IMAGE_PIXELS or call samc_set_image_pixel_limit to read it)",
                         what, w, h, (long long)w * h, limit);
    return SAMC_OK;
}
