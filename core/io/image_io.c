/* image_io.c - images in (libjpeg for JPEG, libpng for PNG, stb_image
 * behind samc's checks for the rest) and PNGs out (libpng), with the pixel
 * limit every decoder checks from the header before allocating. */
#include "core/io/image_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/image_limits.h"
#include "core/io/jpeg_decode.h"
#include "core/io/png_codec.h"
#include "core/io/stb_guard.h"
#include "core/base/tmpfile.h"

/* Whatever stb_image would decode as a JPEG (its test: 0xFF, optional 0xFF
 * fill bytes, then SOI 0xD8) goes to libjpeg (core/io/jpeg_decode.c): stb's
 * JPEG decoder in Debian's libstb (git 2022-09-08) writes past its Huffman
 * tables on a DHT segment declaring more than 256 codes (found by
 * fuzz/fuzz_image.c; docs/hostile_input.md), and libjpeg decodes exactly as
 * Pillow does for the official predictor. */
static int is_jpeg(const uint8_t *b, size_t n)
{
    if (n < 2 || b[0] != 0xFF)
        return 0;
    size_t i = 1;
    while (i < n && b[i] == 0xFF)
        i++;
    return i < n && b[i] == 0xD8;
}

samc_status samc_image_from_memory(const uint8_t *buf, int len, const char *what, samc_image *img, samc_error *err)
{
    memset(img, 0, sizeof *img);
    if (!buf || len <= 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: image file is empty", what);
    const size_t n = (size_t)len;
    int w = 0, h = 0;
    samc_status st;
    if (is_jpeg(buf, n))
        st = samc_jpeg_decode_mem(buf, n, what, &img->rgb, &w, &h, err);
    else if (n >= 8 && !memcmp(buf, "\x89PNG\r\n\x1a\n", 8))
        st = samc__png_decode_mem(buf, n, what, &img->rgb, &w, &h, err);
    else
        st = samc__stb_decode_mem(buf, n, what, &img->rgb, &w, &h, err);
    if (!st)
        img->w = w, img->h = h;
    return st;
}

samc_status samc_image_load(const char *path, samc_image *img, samc_error *err)
{
    memset(img, 0, sizeof *img);
    samc_mapped_file mf;
    samc_status st = samc_file_map(path, &mf, err);
    if (st)
        return st;
    if (mf.size > (size_t)SAMC_IMAGE_MAX_FILE_BYTES) {
        samc_file_unmap(&mf);
        return samc_fail(err, SAMC_ERR_ARG, "%s: image file is %zu bytes; samc reads images of at most %lld bytes",
                         path, mf.size, (long long)SAMC_IMAGE_MAX_FILE_BYTES);
    }
    st = samc_image_from_memory(mf.data, (int)mf.size, path, img, err);
    samc_file_unmap(&mf);
    return st;
}

void samc_image_free(samc_image *img)
{
    if (img) /* malloc'd by every decoder */
        free(img->rgb), img->rgb = NULL;
}

samc_status samc_png_write(const char *path, int w, int h, int comp, const uint8_t *data, samc_error *err)
{
    char *tmp = NULL;
    samc_status st = samc__tmp_create(path, &tmp, err);
    if (st)
        return st;
    if (!(st = samc__png_write_into(tmp, path, w, h, comp, data, err)))
        st = samc__tmp_commit(&tmp, path, err);
    samc__tmp_discard(tmp);
    return st;
}

samc_status samc__png_write_into(const char *tmp, const char *what, int w, int h, int comp, const uint8_t *data,
                                 samc_error *err)
{
    FILE *f = NULL;
    samc_status st = samc__tmp_reopen(tmp, what, &f, err);
    if (st)
        return st;
    st = samc__png_encode_file(f, w, h, comp, data, what, err);
    if (fclose(f) && !st)
        st = samc_fail(err, SAMC_ERR_IO, "%s: cannot write PNG: %s", what, strerror(errno));
    return st;
}
