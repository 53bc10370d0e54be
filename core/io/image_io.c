/* image_io.c - stb_image for decoding, stb_image_write for PNG output. */
#include "core/io/image_io.h"

#include <errno.h>
#include <stb_image.h>
#include <stb_image_write.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/jpeg_decode.h"

static samc_status check_dims(int w, int h, const char *what, samc_error *err)
{
    if (w <= 0 || h <= 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: image is empty (%dx%d)", what, w, h);
    if (w > SAMC_IMAGE_MAX_SIDE || h > SAMC_IMAGE_MAX_SIDE || (long long)w * h > SAMC_IMAGE_MAX_PIXELS)
        return samc_fail(err, SAMC_ERR_ARG, "%s: image is %dx%d; samc accepts at most %d pixels a side and %lld pixels",
                         what, w, h, SAMC_IMAGE_MAX_SIDE, SAMC_IMAGE_MAX_PIXELS);
    return SAMC_OK;
}

/* Whatever stb_image would decode as a JPEG (its test: 0xFF, optional 0xFF
 * fill bytes, then SOI 0xD8) goes to libjpeg instead (core/io/jpeg_decode.c):
 * stb's JPEG decoder in Debian's libstb (git 2022-09-08) writes past its
 * Huffman tables on a DHT segment declaring more than 256 codes (found by
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

/* stb's PNM header parser (stbi__pnm_getinteger) accumulates digits in an
 * int without an overflow check (undefined behaviour, found by fuzzing).
 * This mirrors its reading of the three header integers and refuses any
 * that does not fit an int before stb sees the file. */
static int pnm_header_overflows(const uint8_t *b, size_t n)
{
    size_t pos = 0;
#define GET8() (pos < n ? b[pos++] : 0)
#define AT_EOF() (pos >= n)
#define IS_SPACE(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\v' || (c) == '\f' || (c) == '\r')
    const int p = GET8(), t = GET8();
    if (p != 'P' || (t != '5' && t != '6'))
        return 0;
    int c = GET8();
    for (int k = 0; k < 3; k++) {
        for (;;) { /* stbi__pnm_skip_whitespace */
            while (!AT_EOF() && IS_SPACE(c))
                c = GET8();
            if (AT_EOF() || c != '#')
                break;
            while (!AT_EOF() && c != '\n' && c != '\r')
                c = GET8();
        }
        long long v = 0;
        while (!AT_EOF() && c >= '0' && c <= '9') {
            v = v * 10 + (c - '0');
            if (v > 2147483647LL)
                return 1;
            c = GET8();
        }
    }
#undef GET8
#undef AT_EOF
#undef IS_SPACE
    return 0;
}

/* stb's PNG reader (stbi__parse_png_file) appends each IDAT chunk at
 * `idata + ioff` and allocates idata only for a non-empty chunk: an empty
 * first IDAT makes it compute NULL + 0 (undefined behaviour, found by
 * fuzzing). Walks the chunks in stb's order (it consumes exactly `length`
 * bytes per chunk or stops) and reports an empty IDAT before any data. */
/* stb's PSD loader un-premultiplies every image of 4 or more channels with
 * a float-to-integer cast that overflows when a colour exceeds its alpha
 * (undefined behaviour, found by fuzzing). Such a PSD is refused by its
 * header (signature "8BPS", channel count at byte 12, big-endian). */
static int psd_with_alpha(const uint8_t *b, size_t n)
{
    return n >= 14 && !memcmp(b, "8BPS", 4) && ((b[12] << 8) | b[13]) >= 4;
}

static int png_empty_first_idat(const uint8_t *b, size_t n)
{
    if (n < 8 || memcmp(b, "\x89PNG\r\n\x1a\n", 8))
        return 0;
    for (size_t pos = 8; n - pos >= 8;) {
        const uint32_t len = (uint32_t)b[pos] << 24 | (uint32_t)b[pos + 1] << 16 | (uint32_t)b[pos + 2] << 8 | b[pos + 3];
        const uint8_t *type = b + pos + 4;
        if (!memcmp(type, "IDAT", 4))
            return len == 0;
        if (!memcmp(type, "IEND", 4) || len > n - pos - 8)
            return 0;
        pos += 12 + (size_t)len;
        if (pos > n)
            return 0;
    }
    return 0;
}

samc_status samc_image_from_memory(const uint8_t *buf, int len, const char *what, samc_image *img, samc_error *err)
{
    memset(img, 0, sizeof *img);
    if (!buf || len <= 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: image file is empty", what);
    if (is_jpeg(buf, (size_t)len)) {
        int w = 0, h = 0;
        samc_status st = samc_jpeg_decode_mem(buf, (size_t)len, what, &img->rgb, &w, &h, err);
        if (!st)
            img->w = w, img->h = h;
        return st;
    }
    if (pnm_header_overflows(buf, (size_t)len))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image (PNM header number out of range)", what);
    if (psd_with_alpha(buf, (size_t)len))
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "%s: a PSD with an alpha channel is not supported (flatten it or save it as PNG)", what);
    if (png_empty_first_idat(buf, (size_t)len))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable PNG (empty first IDAT chunk)", what);
    int w = 0, h = 0, c = 0;
    /* Read the header first so a huge image is refused before decoding. */
    if (!stbi_info_from_memory(buf, len, &w, &h, &c))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image (%s)", what, stbi_failure_reason());
    samc_status st = check_dims(w, h, what, err);
    if (st)
        return st;
    /* Decode without stb's channel conversion (req_comp 0): its converter
     * sizes the buffer for 8 bits when a 16-bit PNM is converted, and reads
     * past it (fuzz find); 16-bit samples are still scaled to 8 bits. */
    uint8_t *raw = stbi_load_from_memory(buf, len, &w, &h, &c, 0);
    if (!raw)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot decode image (%s)", what, stbi_failure_reason());
    if (c < 1 || c > 4 || !(img->rgb = malloc((size_t)w * h * 3))) {
        stbi_image_free(raw);
        return samc_fail(err, c < 1 || c > 4 ? SAMC_ERR_FORMAT : SAMC_ERR_NOMEM, "%s: cannot convert %d channels to RGB", what, c);
    }
    for (int64_t i = 0; i < (int64_t)w * h; i++) /* gray -> RGB, alpha dropped */
        for (int k = 0; k < 3; k++)
            img->rgb[3 * i + k] = raw[i * c + (c < 3 ? 0 : k)];
    stbi_image_free(raw);
    img->w = w, img->h = h;
    return SAMC_OK;
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
    if (img) /* stb and libjpeg buffers alike: stb allocates with malloc (STBI_MALLOC default) */
        free(img->rgb), img->rgb = NULL;
}

samc_status samc_png_write(const char *path, int w, int h, int comp, const uint8_t *data, samc_error *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    if (!stbi_write_png(tmp, w, h, comp, data, w * comp)) {
        remove(tmp);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot write PNG", path);
    }
    if (rename(tmp, path)) {
        remove(tmp);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot write PNG: %s", path, strerror(errno));
    }
    return SAMC_OK;
}
