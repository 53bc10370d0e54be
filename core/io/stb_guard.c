/* SPDX-License-Identifier: Apache-2.0 */
/* stb_guard.c - the formats samc still hands to Debian's stb_image (BMP,
 * GIF, TGA, PSD, HDR, PIC, PNM), with the checks stb lacks.
 *
 * Debian's stb_image (git 2022-09-08) does not check its reads: from memory
 * it returns zeros past the end, and several decoders then hand back
 * buffers they never wrote (a PNM or TGA promising more pixels than the file
 * holds, an 8-bit BMP whose indices pass its palette: a stack array). samc
 * therefore
 *   - reads through stb's callback interface and refuses the image if stb
 *     ever asks for a byte past the end (Pillow: "image file is truncated");
 *   - checks what stb would read blind before it runs: header numbers that
 *     overflow its int parsing (PNM), BMP palette indices, PSD alpha (a UB
 *     cast in its un-premultiply), and, for the uncompressed formats, that
 *     the file holds the bytes its header declares (so a 54-byte BMP
 *     declaring 16384x16384 pixels is refused before any allocation).
 * Every file here is at least SAMC_STB_MIN_BYTES long: stb's format tests
 * read up to 4 bytes of a file of another format before they give up, and
 * a shorter file would look truncated to the read tracking. */
#include "core/io/stb_guard.h"

#include <limits.h>
#include <stb_image.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/io/image_limits.h"

#define SAMC_STB_MIN_BYTES 12

static uint32_t le16(const uint8_t *b) { return (uint32_t)b[0] | (uint32_t)b[1] << 8; }
static uint32_t le32(const uint8_t *b) { return le16(b) | le16(b + 2) << 16; }

/* ---- reads tracked past the end --------------------------------------- */

typedef struct reader {
    const uint8_t *buf;
    size_t len, pos;
    int overread;
} reader;

static int cb_read(void *user, char *data, int size)
{
    reader *r = user;
    if (size <= 0)
        return 0;
    size_t n = r->len - r->pos;
    if (n > (size_t)size)
        n = (size_t)size;
    /* stb's stbi__getn reads straight into the caller's stack buffer and
     * ignores a short count (the flat HDR pixel loop): zero what the file
     * could not supply so stb never branches on uninitialised bytes (found
     * by valgrind); the image is refused by the overread flag anyway. */
    memset(data + n, 0, (size_t)size - n);
    if (n == 0) {
        r->overread = 1;
        return 0;
    }
    memcpy(data, r->buf + r->pos, n);
    r->pos += n;
    return (int)n;
}

static void cb_skip(void *user, int n)
{
    reader *r = user;
    const size_t left = r->len - r->pos;
    r->pos += n > 0 ? ((size_t)n < left ? (size_t)n : left) : 0;
}

static int cb_eof(void *user)
{
    const reader *r = user;
    return r->pos >= r->len;
}

/* ---- header checks ---------------------------------------------------- */

/* stb's PNM header parser (stbi__pnm_getinteger) accumulates digits in an
 * int without an overflow check (undefined behaviour, found by fuzzing).
 * This mirrors its reading of the three header numbers; it fills v[3]
 * (width, height, maxval) and the offset of the first pixel byte, and
 * returns -1 when a number does not fit an int, 0 when the file is no
 * binary PNM, 1 otherwise. */
static int pnm_header(const uint8_t *b, size_t n, long long v[3], size_t *data_at)
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
        v[k] = 0;
        while (!AT_EOF() && c >= '0' && c <= '9') {
            v[k] = v[k] * 10 + (c - '0');
            if (v[k] > 2147483647LL)
                return -1;
            c = GET8();
        }
    }
#undef GET8
#undef AT_EOF
#undef IS_SPACE
    *data_at = pos; /* stb consumed the one whitespace byte after maxval */
    return 1;
}

static samc_status truncated(const char *what, int w, int h, unsigned long long need, size_t have, samc_error *err)
{
    return samc_fail(err, SAMC_ERR_FORMAT,
                     "%s: image file is truncated (its header declares %dx%d pixels, which need %llu bytes; the file has %zu)",
                     what, w, h, need, have);
}

static samc_status check_pnm(const uint8_t *b, size_t n, const char *what, samc_error *err)
{
    long long v[3] = {0, 0, 0};
    size_t at = 0;
    const int r = pnm_header(b, n, v, &at);
    if (r < 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image (PNM header number out of range)", what);
    if (r == 0 || v[0] <= 0 || v[1] <= 0)
        return SAMC_OK; /* stb refuses it with its own reason */
    samc_status st = samc__image_check_dims((int)v[0], (int)v[1], what, err);
    if (st)
        return st;
    const unsigned long long need = at + (unsigned long long)v[0] * v[1] * (b[1] == '6' ? 3 : 1) * (v[2] > 255 ? 2 : 1);
    return n < need ? truncated(what, (int)v[0], (int)v[1], need, n, err) : SAMC_OK;
}

/* An uncompressed BMP: the pixel rows stb will read must be in the file,
 * and every palette index inside the palette (stb looks indices up in a
 * 256-entry stack array of which it fills only the file's entries). The
 * palette size is computed as stb computes it (from the data offset). */
static samc_status check_bmp(const uint8_t *b, size_t n, const char *what, samc_error *err)
{
    if (n < 26)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: image file is truncated (a BMP header needs 26 bytes)", what);
    const uint32_t offset = le32(b + 10), hsz = le32(b + 14);
    int w, h, bpp;
    uint32_t comp = 0;
    if (hsz == 12) {
        w = (int)le16(b + 18), h = (int)(int16_t)le16(b + 20), bpp = (int)le16(b + 24);
    } else {
        if (n < 54 || hsz < 40)
            return SAMC_OK; /* stb refuses it */
        w = (int)le32(b + 18), h = (int)le32(b + 22), bpp = (int)le16(b + 28), comp = le32(b + 30);
    }
    if (h == INT32_MIN) /* stb takes abs() of it: undefined behaviour (fuzz find) */
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable BMP (height -2^31)", what);
    if (w <= 0 || h == 0 || (comp != 0 && comp != 3) || bpp < 1 || bpp > 32)
        return SAMC_OK; /* stb refuses RLE and odd headers itself */
    const int ah = h < 0 ? -h : h;
    samc_status st = samc__image_check_dims(w, ah, what, err);
    if (st)
        return st;
    const size_t row_bytes = ((size_t)w * (size_t)bpp + 7) / 8, stride = ((size_t)w * (size_t)bpp + 31) / 32 * 4;
    const unsigned long long need = (unsigned long long)offset + stride * (size_t)(ah - 1) + row_bytes;
    if (need > n)
        return truncated(what, w, ah, need, n, err);
    if (bpp != 1 && bpp != 2 && bpp != 4 && bpp != 8)
        return SAMC_OK;
    const size_t entry = hsz == 12 ? 3 : 4;
    /* A data offset inside the header gives stb a negative palette size
     * (it shifts, >> 2, rather than divides), which it does not refuse: it
     * then reads no palette and maps every pixel through its uninitialised
     * stack array (fuzz find, valgrind). */
    const long long pbytes = (long long)offset - 14 - hsz;
    if (pbytes < 0)
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "%s: not a readable BMP (its pixel data offset %u points inside its %u-byte header)", what,
                         offset, 14 + hsz);
    const long long psize = pbytes / (long long)entry;
    if (psize <= 0 || psize > 256)
        return SAMC_OK; /* stb refuses a missing or oversized palette */
    const unsigned mask = (1u << bpp) - 1;
    for (int y = 0; y < ah; y++) {
        const uint8_t *row = b + offset + stride * (size_t)y;
        for (int x = 0; x < w; x++) {
            const size_t bit = (size_t)x * (size_t)bpp;
            const unsigned idx = (row[bit / 8] >> (8 - bpp - bit % 8)) & mask;
            if (idx >= (unsigned)psize)
                return samc_fail(err, SAMC_ERR_FORMAT,
                                 "%s: not a readable BMP (pixel (%d,%d) uses palette index %u; the palette has %lld "
                                 "colours)", what, x, y, idx, psize);
        }
    }
    return SAMC_OK;
}

/* An uncompressed TGA (types 1-3) must hold its pixels; an RLE one (9-11)
 * at least one packet byte and one pixel per 128 pixels. */
static samc_status check_tga(const uint8_t *b, size_t n, const char *what, samc_error *err)
{
    if (n < 18)
        return SAMC_OK;
    const int type = b[2], w = (int)le16(b + 12), h = (int)le16(b + 14), bpp = b[16];
    const size_t head = 18 + (size_t)b[0] + (b[1] ? (size_t)le16(b + 5) * ((b[7] + 7u) / 8) : 0);
    if (w <= 0 || h <= 0 || ((type & ~8) < 1 || (type & ~8) > 3) || bpp < 1)
        return SAMC_OK;
    samc_status st = samc__image_check_dims(w, h, what, err);
    if (st)
        return st;
    const unsigned long long px = (unsigned long long)w * h, pb = ((unsigned)bpp + 7) / 8;
    const unsigned long long need = head + (type & 8 ? (px + 127) / 128 * (1 + pb) : px * pb);
    return need > n ? truncated(what, w, h, need, n, err) : SAMC_OK;
}

/* stb's PSD loader un-premultiplies every image of 4 or more channels with
 * a float-to-integer cast that overflows when a colour exceeds its alpha
 * (undefined behaviour, found by fuzzing). Such a PSD is refused by its
 * header (signature "8BPS", channel count at byte 12, big-endian). */
static int psd_with_alpha(const uint8_t *b, size_t n)
{
    return n >= 14 && !memcmp(b, "8BPS", 4) && ((b[12] << 8) | b[13]) >= 4;
}

static samc_status check_header(const uint8_t *b, size_t n, const char *what, samc_error *err)
{
    if (n < SAMC_STB_MIN_BYTES)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image (%zu bytes is too short for any format)",
                         what, n);
    if (b[0] == 'P')
        return check_pnm(b, n, what, err);
    if (b[0] == 'B' && b[1] == 'M')
        return check_bmp(b, n, what, err);
    if (psd_with_alpha(b, n))
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "%s: a PSD with an alpha channel is not supported (flatten it or save it as PNG)", what);
    static const uint8_t other[][4] = {{'G', 'I', 'F', '8'}, {'8', 'B', 'P', 'S'}, {'#', '?', 'R', 'A'},
                                       {'#', '?', 'R', 'G'}, {0x53, 0x80, 0xF6, 0x34}};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        if (!memcmp(b, other[i], 4))
            return SAMC_OK;
    return check_tga(b, n, what, err); /* stb's last guess: TGA has no signature */
}

samc_status samc__stb_decode_mem(const uint8_t *buf, size_t len, const char *what, uint8_t **rgb, int *w, int *h,
                                 samc_error *err)
{
    *rgb = NULL;
    samc_status st = check_header(buf, len, what, err);
    if (st)
        return st;
    const stbi_io_callbacks io = {cb_read, cb_skip, cb_eof};
    reader r = {buf, len, 0, 0};
    int c = 0;
    if (!stbi_info_from_callbacks(&io, &r, w, h, &c))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image (%s)", what, stbi_failure_reason());
    /* only a BMP has a negative height (top-down rows); a PSD of height
     * 2^31 reached -(-2^31) here (fuzz find) */
    if (*h < 0 && (*h == INT_MIN || buf[0] != 'B' || buf[1] != 'M'))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image (height %d)", what, *h);
    if ((st = samc__image_check_dims(*w, *h < 0 ? -*h : *h, what, err)))
        return st;
    /* Decode without stb's channel conversion (req_comp 0): its converter
     * sizes the buffer for 8 bits when a 16-bit PNM is converted, and reads
     * past it (fuzz find); 16-bit samples are still scaled to 8 bits. */
    r = (reader){buf, len, 0, 0};
    uint8_t *raw = stbi_load_from_callbacks(&io, &r, w, h, &c, 0);
    if (!raw)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image (%s)", what, stbi_failure_reason());
    if (r.overread) {
        stbi_image_free(raw);
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: image file is truncated (the decoder ran past its %zu bytes)",
                         what, len);
    }
    if (c < 1 || c > 4 || !(*rgb = malloc((size_t)*w * (size_t)*h * 3))) {
        stbi_image_free(raw);
        return samc_fail(err, c < 1 || c > 4 ? SAMC_ERR_FORMAT : SAMC_ERR_NOMEM, "%s: cannot convert %d channels to RGB",
                         what, c);
    }
    for (int64_t i = 0; i < (int64_t)*w * *h; i++) /* gray -> RGB, alpha dropped */
        for (int k = 0; k < 3; k++)
            (*rgb)[3 * i + k] = raw[i * c + (c < 3 ? 0 : k)];
    stbi_image_free(raw);
    return SAMC_OK;
}
