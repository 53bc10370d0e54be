/* SPDX-License-Identifier: Apache-2.0 */
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

samc_status samc_image_size_from_memory(const uint8_t *buf, int len, const char *what, int *w, int *h,
                                        samc_error *err)
{
    *w = *h = 0;
    if (!buf || len <= 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: image file is empty", what);
    const size_t n = (size_t)len;
    if (is_jpeg(buf, n))
        return samc_jpeg_size_mem(buf, n, what, w, h, err);
    if (n >= 24 && !memcmp(buf, "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", 16)) { /* IHDR comes first */
        const uint8_t *d = buf + 16;
        const uint32_t pw = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
        const uint32_t ph = (uint32_t)d[4] << 24 | (uint32_t)d[5] << 16 | (uint32_t)d[6] << 8 | d[7];
        if (pw > INT32_MAX || ph > INT32_MAX)
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: PNG size %ux%u is out of range", what, pw, ph);
        *w = (int)pw, *h = (int)ph;
        return samc__image_check_dims(*w, *h, what, err);
    }
    /* the other formats: their decoder checks the header against the
     * limits before it allocates; the pixels are then dropped */
    samc_image img;
    samc_status st = samc_image_from_memory(buf, len, what, &img, err);
    if (!st)
        *w = img.w, *h = img.h;
    samc_image_free(&img);
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

samc_status samc_png_encode(int w, int h, int comp, const uint8_t *data, uint8_t **png, size_t *n, samc_error *err)
{
    *png = NULL, *n = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return samc_fail(err, SAMC_ERR_NOMEM, "cannot encode a %dx%d PNG (out of memory)", w, h);
    samc_status st = samc__png_encode_file(f, w, h, comp, data, "PNG in memory", err);
    if (fclose(f) && !st)
        st = samc_fail(err, SAMC_ERR_NOMEM, "cannot encode a %dx%d PNG (out of memory)", w, h);
    if (st) {
        free(buf);
        return st;
    }
    *png = (uint8_t *)buf, *n = len;
    return SAMC_OK;
}

void samc_davis_palette(uint8_t palette[768])
{
    /* PASCAL VOC's colour map: bit k of the index, from the lowest,
     * becomes bit 7-k/3 of channel k%3. */
    for (int i = 0; i < 256; i++) {
        int r = 0, g = 0, b = 0, c = i;
        for (int j = 0; j < 8; j++, c >>= 3) {
            r |= ((c >> 0) & 1) << (7 - j);
            g |= ((c >> 1) & 1) << (7 - j);
            b |= ((c >> 2) & 1) << (7 - j);
        }
        palette[3 * i] = (uint8_t)r, palette[3 * i + 1] = (uint8_t)g, palette[3 * i + 2] = (uint8_t)b;
    }
}

samc_status samc_png_write_palette(const char *path, int w, int h, const uint8_t *index, const uint8_t *palette,
                                   int n_colors, samc_error *err)
{
    if (w < 1 || h < 1 || n_colors < 1 || n_colors > 256)
        return samc_fail(err, SAMC_ERR_ARG, "%s: a palette PNG needs a size and 1 to 256 colours (got %dx%d, %d)", path,
                         w, h, n_colors);
    for (int64_t i = 0; i < (int64_t)w * h; i++)
        if (index[i] >= n_colors)
            return samc_fail(err, SAMC_ERR_ARG, "%s: pixel %lld has index %d, past the %d palette colours", path,
                             (long long)i, index[i], n_colors);
    char *tmp = NULL;
    FILE *f = NULL;
    samc_status st = samc__tmp_create(path, &tmp, err);
    if (!st && !(st = samc__tmp_reopen(tmp, path, &f, err))) {
        st = samc__png_encode_palette_file(f, w, h, index, palette, n_colors, path, err);
        if (fclose(f) && !st)
            st = samc_fail(err, SAMC_ERR_IO, "%s: cannot write PNG: %s", path, strerror(errno));
    }
    if (!st)
        st = samc__tmp_commit(&tmp, path, err);
    samc__tmp_discard(tmp);
    return st;
}
