/* SPDX-License-Identifier: Apache-2.0 */
/* png_codec.c - PNG in and out through libpng (fuzzed upstream by
 * OSS-Fuzz), replacing stb_image's PNG reader (it ignored CRC errors and
 * palette indices past the palette, leaving uninitialised bytes in the
 * image) and stb_image_write (int size arithmetic past 2 GiB).
 *
 * Reading follows Pillow's Image.open(f).convert("RGB") as the official
 * predictor calls it: any bad CRC, a truncated file or a palette index past
 * the palette is refused; alpha is dropped; 16-bit colour samples keep
 * their high byte (Pillow's "RGB;16B" unpacker) and 16-bit gray is clipped
 * to 255 (Pillow opens it as mode "I", whose conversion clips). The
 * image size is checked against samc's pixel limit from IHDR, before any
 * pixel buffer exists. libpng's errors longjmp back here; everything that
 * must survive the jump lives in the heap-allocated `pngjob`. */
#include "core/io/png_codec.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/io/image_limits.h"

typedef struct pngjob {
    const uint8_t *buf;
    size_t len, pos;
    char msg[200];
    uint8_t *rgb, *row, *all; /* all: an interlaced image in libpng's layout */
    png_structp png;
    png_infop info;
} pngjob;

static void on_error(png_structp png, png_const_charp msg)
{
    pngjob *j = png_get_error_ptr(png);
    snprintf(j->msg, sizeof j->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

static void read_mem(png_structp png, png_bytep out, png_size_t n)
{
    pngjob *j = png_get_io_ptr(png);
    if (n > j->len - j->pos)
        png_error(png, "file is truncated");
    memcpy(out, j->buf + j->pos, n);
    j->pos += n;
}

/* The palette (PLTE) as RGB, 256 entries, and how many the file defines. */
static int palette_of(pngjob *j, uint8_t pal[256][3])
{
    png_colorp p = NULL;
    int n = 0;
    if (!png_get_PLTE(j->png, j->info, &p, &n) || n < 1 || n > 256)
        png_error(j->png, "palette image without a palette");
    for (int i = 0; i < n; i++)
        pal[i][0] = p[i].red, pal[i][1] = p[i].green, pal[i][2] = p[i].blue;
    return n;
}

/* One decoded row (after png_set_packing/strip_16: one byte per sample) to RGB. */
static void row_to_rgb(pngjob *j, const uint8_t *s, int color, int w, const uint8_t pal[256][3], int npal,
                       uint8_t *dst)
{
    switch (color) {
    case PNG_COLOR_TYPE_PALETTE:
        for (int x = 0; x < w; x++) {
            if (s[x] >= npal)
                png_error(j->png, "palette index past the end of the palette");
            memcpy(dst + 3 * x, pal[s[x]], 3);
        }
        break;
    case PNG_COLOR_TYPE_GRAY + 16: /* 16-bit gray: Pillow's "I" mode clips to 255 on convert("RGB") */
        for (int x = 0; x < w; x++) {
            const unsigned v = (unsigned)s[2 * x] << 8 | s[2 * x + 1];
            dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = (uint8_t)(v > 255 ? 255 : v);
        }
        break;
    case PNG_COLOR_TYPE_GRAY:
    case PNG_COLOR_TYPE_GRAY_ALPHA: {
        const int c = color == PNG_COLOR_TYPE_GRAY ? 1 : 2;
        for (int x = 0; x < w; x++)
            dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = s[c * x];
        break;
    }
    default: {
        const int c = color == PNG_COLOR_TYPE_RGB ? 3 : 4;
        for (int x = 0; x < w; x++)
            memcpy(dst + 3 * x, s + c * x, 3);
    }
    }
}

static samc_status run_decode(pngjob *j, const char *what, int *w, int *h, samc_error *err)
{
    if (setjmp(png_jmpbuf(j->png)))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable PNG (%s)", what, j->msg);
    png_set_read_fn(j->png, j, read_mem);
    /* Pillow refuses a chunk whose CRC is wrong ("broken PNG file"); libpng
     * by default only warns for ancillary chunks. */
    png_set_crc_action(j->png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
    png_set_chunk_malloc_max(j->png, 8u << 20); /* ancillary chunks (text, ICC) */
    png_read_info(j->png, j->info);
    png_uint_32 pw = 0, ph = 0;
    int depth = 0, color = 0, interlace = 0;
    png_get_IHDR(j->png, j->info, &pw, &ph, &depth, &color, &interlace, NULL, NULL);
    *w = (int)pw, *h = (int)ph;
    samc_status st = samc__image_check_dims(*w, *h, what, err);
    if (st)
        return st;
    uint8_t pal[256][3];
    const int npal = color == PNG_COLOR_TYPE_PALETTE ? palette_of(j, pal) : 0;
    if (color == PNG_COLOR_TYPE_GRAY && depth == 16)
        color = PNG_COLOR_TYPE_GRAY + 16; /* kept 16-bit (big-endian), clipped in row_to_rgb */
    else
        png_set_strip_16(j->png); /* high byte, as Pillow's RGB;16B and LA;16B */
    png_set_packing(j->png);  /* 1, 2, 4-bit samples to one byte each */
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(j->png); /* scaled to 0..255, as Pillow's "L" */
    const int passes = png_set_interlace_handling(j->png);
    png_read_update_info(j->png, j->info);
    const size_t rowbytes = png_get_rowbytes(j->png, j->info);
    const size_t stride = (size_t)*w * 3;
    if (!(j->row = malloc(rowbytes)) || !(j->rgb = malloc(stride * (size_t)*h)))
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory for a %dx%d image", what, *w, *h);
    if (passes > 1) { /* interlaced: libpng needs the whole image in its own layout */
        if (!(j->all = malloc(rowbytes * (size_t)*h)))
            return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory for a %dx%d image", what, *w, *h);
        for (int pass = 0; pass < passes; pass++)
            for (int y = 0; y < *h; y++)
                png_read_row(j->png, j->all + rowbytes * (size_t)y, NULL);
        for (int y = 0; y < *h; y++)
            row_to_rgb(j, j->all + rowbytes * (size_t)y, color, *w, pal, npal, j->rgb + stride * (size_t)y);
    } else {
        for (int y = 0; y < *h; y++) {
            png_read_row(j->png, j->row, NULL);
            row_to_rgb(j, j->row, color, *w, pal, npal, j->rgb + stride * (size_t)y);
        }
    }
    png_read_end(j->png, NULL); /* the CRCs of the chunks after the image */
    return SAMC_OK;
}

samc_status samc__png_decode_mem(const uint8_t *buf, size_t len, const char *what, uint8_t **rgb, int *w, int *h,
                                 samc_error *err)
{
    *rgb = NULL;
    pngjob *j = calloc(1, sizeof *j);
    if (!j)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    j->buf = buf, j->len = len;
    j->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, j, on_error, on_warning);
    j->info = j->png ? png_create_info_struct(j->png) : NULL;
    samc_status st = j->info ? run_decode(j, what, w, h, err) : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    png_destroy_read_struct(j->png ? &j->png : NULL, j->info ? &j->info : NULL, NULL);
    free(j->row);
    free(j->all);
    if (st)
        free(j->rgb);
    else
        *rgb = j->rgb;
    free(j);
    return st;
}

/* ---- writing ------------------------------------------------------------ */

typedef struct pngout {
    FILE *f;
    char msg[200];
} pngout;

static void on_write_error(png_structp png, png_const_charp msg)
{
    pngout *o = png_get_error_ptr(png);
    snprintf(o->msg, sizeof o->msg, "%s", msg);
    png_longjmp(png, 1);
}

/* palette: n_colors RGB triples when comp is 1 and the bytes are indices
 * into it (PNG_COLOR_TYPE_PALETTE), else NULL. */
static samc_status run_encode(png_structp png, png_infop info, pngout *o, int w, int h, int comp, const uint8_t *data,
                              const uint8_t *palette, int n_colors, const char *what, samc_error *err)
{
    if (setjmp(png_jmpbuf(png)))
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot write PNG (%s)", what, o->msg);
    png_init_io(png, o->f);
    const int type = palette ? PNG_COLOR_TYPE_PALETTE : comp == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB;
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (palette) {
        png_color pal[256];
        for (int i = 0; i < n_colors; i++)
            pal[i] = (png_color){palette[3 * i], palette[3 * i + 1], palette[3 * i + 2]};
        png_set_PLTE(png, info, pal, n_colors);
    }
    png_set_compression_level(png, 6);
    png_write_info(png, info);
    const size_t stride = (size_t)w * (size_t)comp;
    for (int y = 0; y < h; y++)
        png_write_row(png, data + stride * (size_t)y);
    png_write_end(png, info);
    return SAMC_OK;
}

static samc_status encode(FILE *f, int w, int h, int comp, const uint8_t *data, const uint8_t *palette, int n_colors,
                          const char *what, samc_error *err)
{
    if (w <= 0 || h <= 0 || w > SAMC_PNG_MAX_SIDE || h > SAMC_PNG_MAX_SIDE || (comp != 1 && comp != 3))
        return samc_fail(err, SAMC_ERR_ARG, "%s: cannot write a %dx%d PNG of %d channels (1 or 3 channels, at most %d "
                         "pixels a side)", what, w, h, comp, SAMC_PNG_MAX_SIDE);
    pngout *o = calloc(1, sizeof *o);
    if (!o)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    o->f = f;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, o, on_write_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    samc_status st = info ? run_encode(png, info, o, w, h, comp, data, palette, n_colors, what, err)
                          : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
    free(o);
    return st;
}

samc_status samc__png_encode_file(FILE *f, int w, int h, int comp, const uint8_t *data, const char *what,
                                  samc_error *err)
{
    return encode(f, w, h, comp, data, NULL, 0, what, err);
}

samc_status samc__png_encode_palette_file(FILE *f, int w, int h, const uint8_t *index, const uint8_t *palette,
                                          int n_colors, const char *what, samc_error *err)
{
    if (n_colors < 1 || n_colors > 256)
        return samc_fail(err, SAMC_ERR_ARG, "%s: a palette of %d colours (1 to 256)", what, n_colors);
    return encode(f, w, h, 1, index, palette, n_colors, what, err);
}
