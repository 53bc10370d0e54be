/* jpeg_decode.c - libjpeg decompression with an error manager that returns
 * (libjpeg's default one calls exit()). */
#include "jpeg_decode.h"

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h> /* needs stddef.h and stdio.h first */

#include "error.h"
#include "image_io.h"

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

static void quiet(j_common_ptr cinfo) { (void)cinfo; } /* warnings (e.g. premature end) ignored, as Pillow does */

typedef struct job {
    struct jpeg_decompress_struct cinfo;
    jerr err;
    FILE *f;
    uint8_t *rgb;
} job;

/* Everything after setjmp lives in `j` (heap), so longjmp clobbers nothing. */
static samc_status run(job *j, const char *path, bool pixels, int *w, int *h, samc_error *err)
{
    if (setjmp(j->err.jump)) {
        free(j->rgb), j->rgb = NULL;
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable JPEG (%s)", path, j->err.msg);
    }
    jpeg_create_decompress(&j->cinfo);
    jpeg_stdio_src(&j->cinfo, j->f);
    jpeg_read_header(&j->cinfo, TRUE);
    *w = (int)j->cinfo.image_width, *h = (int)j->cinfo.image_height;
    if (*w <= 0 || *h <= 0 || *w > SAMC_IMAGE_MAX_SIDE || *h > SAMC_IMAGE_MAX_SIDE ||
        (long long)*w * *h > SAMC_IMAGE_MAX_PIXELS)
        return samc_fail(err, SAMC_ERR_ARG, "%s: frame is %dx%d, outside samc's image limits", path, *w, *h);
    if (!pixels)
        return SAMC_OK;
    j->cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&j->cinfo);
    if (j->cinfo.output_components != 3)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: JPEG does not decode to RGB", path);
    const size_t stride = (size_t)*w * 3;
    if (!(j->rgb = malloc(stride * (size_t)*h)))
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    while (j->cinfo.output_scanline < j->cinfo.output_height) {
        JSAMPROW row = j->rgb + stride * j->cinfo.output_scanline;
        jpeg_read_scanlines(&j->cinfo, &row, 1);
    }
    jpeg_finish_decompress(&j->cinfo);
    return SAMC_OK;
}

static samc_status decode(const char *path, bool pixels, uint8_t **rgb, int *w, int *h, samc_error *err)
{
    job *j = calloc(1, sizeof *j);
    if (!j)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!(j->f = fopen(path, "rb"))) {
        free(j);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    j->cinfo.err = jpeg_std_error(&j->err.pub);
    j->err.pub.error_exit = on_error;
    j->err.pub.output_message = quiet;
    samc_status st = run(j, path, pixels, w, h, err);
    jpeg_destroy_decompress(&j->cinfo);
    fclose(j->f);
    if (rgb)
        *rgb = st ? NULL : j->rgb;
    else
        free(j->rgb);
    free(j);
    return st;
}

samc_status samc_jpeg_size(const char *path, int *w, int *h, samc_error *err)
{
    return decode(path, false, NULL, w, h, err);
}

samc_status samc_jpeg_decode(const char *path, uint8_t **rgb, int *w, int *h, samc_error *err)
{
    return decode(path, true, rgb, w, h, err);
}
