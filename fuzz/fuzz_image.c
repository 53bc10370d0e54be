/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_image.c - image decoding through samc (core/io/image_io.c:
 * samc_image_from_memory, stb_image underneath) and the PNG writer on what
 * was decoded.
 *
 * In the SAMC_FUZZ build stb_image is compiled from its header into the
 * harness (stb_image_impl.c) so ASan and coverage see inside the decoders;
 * the replay build uses the Debian libstb that samc links. JPEGs go to
 * libjpeg (core/io/jpeg_decode.c, not instrumented). Inputs whose
 * header declares more than 2^22 pixels (but are within samc's limits) are
 * skipped so one execution stays fast; larger than samc's limits is still
 * run, since it must be refused before decoding. Seeds: fuzz/seeds/image/. */
#include <stb_image.h>
#include <stdlib.h>

#include "core/io/image_io.h"
#include "core/io/jpeg_decode.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 24))
        return 0;
    int w = 0, h = 0, c = 0;
    /* Header sizes the way samc will decode: JPEG-looking inputs (stb's
     * test: 0xFF, fill bytes, SOI) go to libjpeg, never to stb. */
    size_t i = 1;
    while (i < size && data[i] == 0xFF)
        i++;
    const int jpeg = size >= 2 && data[0] == 0xFF && i < size && data[i] == 0xD8;
    /* PNM headers go through samc's own guard first (stb's integer parsing
     * overflows on huge numbers): no pre-sizing with stb for them. */
    if (size && data[0] == 'P')
        goto decode;
    samc_error je = {0};
    if (jpeg ? samc_jpeg_size_mem(data, size, "fuzz.img", &w, &h, &je) == SAMC_OK
             : size && stbi_info_from_memory(data, (int)size, &w, &h, &c)) {
        const long long px = (long long)w * h;
        const int over = w > SAMC_IMAGE_MAX_SIDE || h > SAMC_IMAGE_MAX_SIDE || px > SAMC_IMAGE_MAX_PIXELS;
        if (!over && px > (1LL << 22))
            return 0;
    }
decode:;
    samc_image img;
    samc_error err = {0};
    samc_status st = samc_image_from_memory(data, (int)size, "fuzz.img", &img, &err);
    fuzz_check_error(st, &err, "fuzz.img", "samc_image_from_memory");
    if (!st) {
        if (img.w <= 0 || img.h <= 0 || img.w > SAMC_IMAGE_MAX_SIDE || img.h > SAMC_IMAGE_MAX_SIDE || !img.rgb)
            abort();
        fuzz_touch_bytes(img.rgb, (size_t)img.w * img.h * 3);
        if ((long long)img.w * img.h <= 64 * 64) {
            const char *path = fuzz_temp_file((const uint8_t *)"", 0, ".png");
            samc_error we = {0};
            fuzz_check_error(samc_png_write(path, img.w, img.h, 3, img.rgb, &we), &we, path, "samc_png_write");
        }
    }
    samc_image_free(&img);
    return 0;
}
