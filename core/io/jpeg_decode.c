/* SPDX-License-Identifier: Apache-2.0 */
/* jpeg_decode.c - libjpeg decompression with an error manager that returns
 * (libjpeg's default one calls exit()). */
#include "core/io/jpeg_decode.h"

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h> /* needs stddef.h and stdio.h first */
#include <jerror.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/image_limits.h"

typedef struct jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} jerr;

static void on_error(j_common_ptr cinfo)
{
    jerr *e = (jerr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jump, 1);
}

static void quiet(j_common_ptr cinfo) { (void)cinfo; }

/* Warnings (corrupt-data notes) are ignored as Pillow ignores them, except
 * premature end of data: libjpeg would pad the image with gray, Pillow
 * raises "image file is truncated" (LOAD_TRUNCATED_IMAGES is off by
 * default), and so does samc. */
static void on_message(j_common_ptr cinfo, int level)
{
    if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
        jerr *e = (jerr *)cinfo->err;
        snprintf(e->msg, sizeof e->msg, "file is truncated (premature end of JPEG data)");
        longjmp(e->jump, 1);
    }
}

/* Progress monitor: refuse absurd scan counts (see SAMC_JPEG_MAX_SCANS). */
static void scan_limit(j_common_ptr cinfo)
{
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (cinfo->is_decompressor && d->input_scan_number > SAMC_JPEG_MAX_SCANS) {
        jerr *e = (jerr *)cinfo->err;
        snprintf(e->msg, sizeof e->msg, "more than %d progressive scans", SAMC_JPEG_MAX_SCANS);
        longjmp(e->jump, 1);
    }
}

typedef struct job {
    struct jpeg_decompress_struct cinfo;
    jerr err;
    struct jpeg_progress_mgr progress;
    FILE *f;
    const uint8_t *buf; /* memory source when f is NULL */
    size_t len;
    uint8_t *rgb;
    uint8_t *cmyk_row; /* one CMYK row before conversion */
} job;

/* Pillow reads every 4-component JPEG as Adobe-inverted CMYK ("CMYK;I")
 * and converts it to RGB with cmyk2rgb (libImaging/Convert.c): with the
 * stored values inverted, r = nk - nk*c/255 (rounded as MULDIV255), nk =
 * 255 - k, which is what this does on libjpeg's raw CMYK output. */
static uint8_t muldiv255(int a, int b)
{
    const int t = a * b + 128;
    return (uint8_t)(((t >> 8) + t) >> 8);
}

static void cmyk_to_rgb(const uint8_t *in, uint8_t *out, int w)
{
    for (int x = 0; x < w; x++) {
        const int nk = in[4 * x + 3]; /* 255 - (255 - stored k) */
        for (int k = 0; k < 3; k++)
            out[3 * x + k] = (uint8_t)(nk - muldiv255(255 - in[4 * x + k], nk));
    }
}

/* Everything after setjmp lives in `j` (heap), so longjmp clobbers nothing. */
static samc_status run(job *j, const char *path, bool pixels, int *w, int *h, samc_error *err)
{
    if (setjmp(j->err.jump)) {
        free(j->rgb), j->rgb = NULL;
        free(j->cmyk_row), j->cmyk_row = NULL;
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable JPEG (%s)", path, j->err.msg);
    }
    jpeg_create_decompress(&j->cinfo);
    if (j->f)
        jpeg_stdio_src(&j->cinfo, j->f);
    else
        jpeg_mem_src(&j->cinfo, j->buf, (unsigned long)j->len);
    j->progress.progress_monitor = scan_limit;
    j->cinfo.progress = &j->progress;
    jpeg_read_header(&j->cinfo, TRUE);
    *w = (int)j->cinfo.image_width, *h = (int)j->cinfo.image_height;
    samc_status st = samc__image_check_dims(*w, *h, path, err);
    if (st || !pixels)
        return st;
    const bool cmyk = j->cinfo.jpeg_color_space == JCS_CMYK || j->cinfo.jpeg_color_space == JCS_YCCK;
    j->cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB; /* libjpeg turns YCCK into CMYK */
    jpeg_start_decompress(&j->cinfo);
    if (j->cinfo.output_components != (cmyk ? 4 : 3))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: JPEG does not decode to %s", path, cmyk ? "CMYK" : "RGB");
    const size_t stride = (size_t)*w * 3;
    if (!(j->rgb = malloc(stride * (size_t)*h)) || (cmyk && !(j->cmyk_row = malloc((size_t)*w * 4))))
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory for a %dx%d image", path, *w, *h);
    while (j->cinfo.output_scanline < j->cinfo.output_height) {
        JSAMPROW out = j->rgb + stride * j->cinfo.output_scanline, row = cmyk ? j->cmyk_row : out;
        jpeg_read_scanlines(&j->cinfo, &row, 1);
        if (cmyk)
            cmyk_to_rgb(j->cmyk_row, out, *w);
    }
    jpeg_finish_decompress(&j->cinfo);
    free(j->cmyk_row), j->cmyk_row = NULL;
    return SAMC_OK;
}

/* From the file `path`, or from buf[0..len) when buf is not NULL (then
 * `path` only names it in messages). */
static samc_status decode(const char *path, const uint8_t *buf, size_t len, bool pixels, uint8_t **rgb, int *w,
                          int *h, samc_error *err)
{
    job *j = calloc(1, sizeof *j);
    if (!j)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    j->buf = buf, j->len = len;
    samc_status rs = buf ? SAMC_OK : samc_check_regular(path, err); /* never block on a FIFO */
    if (rs) {
        free(j);
        return rs;
    }
    if (!buf && !(j->f = fopen(path, "rb"))) {
        free(j);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    j->cinfo.err = jpeg_std_error(&j->err.pub);
    j->err.pub.error_exit = on_error;
    j->err.pub.output_message = quiet;
    j->err.pub.emit_message = on_message;
    samc_status st = run(j, path, pixels, w, h, err);
    jpeg_destroy_decompress(&j->cinfo);
    if (j->f)
        fclose(j->f);
    free(j->cmyk_row);
    if (rgb && !st)
        *rgb = j->rgb;
    else
        free(j->rgb);
    if (rgb && st)
        *rgb = NULL;
    free(j);
    return st;
}

samc_status samc_jpeg_size(const char *path, int *w, int *h, samc_error *err)
{
    return decode(path, NULL, 0, false, NULL, w, h, err);
}

samc_status samc_jpeg_decode(const char *path, uint8_t **rgb, int *w, int *h, samc_error *err)
{
    return decode(path, NULL, 0, true, rgb, w, h, err);
}

samc_status samc_jpeg_size_mem(const uint8_t *buf, size_t len, const char *what, int *w, int *h, samc_error *err)
{
    if (!buf || !len)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable JPEG (empty)", what);
    return decode(what, buf, len, false, NULL, w, h, err);
}

samc_status samc_jpeg_decode_mem(const uint8_t *buf, size_t len, const char *what, uint8_t **rgb, int *w, int *h,
                                 samc_error *err)
{
    *rgb = NULL;
    if (!buf || !len)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable JPEG (empty)", what);
    return decode(what, buf, len, true, rgb, w, h, err);
}
