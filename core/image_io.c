/* image_io.c - stb_image for decoding, stb_image_write for PNG output. */
#include "image_io.h"

#include <errno.h>
#include <stb_image.h>
#include <stb_image_write.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

static samc_status check_dims(int w, int h, const char *what, samc_error *err)
{
    if (w <= 0 || h <= 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: image is empty (%dx%d)", what, w, h);
    if (w > SAMC_IMAGE_MAX_SIDE || h > SAMC_IMAGE_MAX_SIDE || (long long)w * h > SAMC_IMAGE_MAX_PIXELS)
        return samc_fail(err, SAMC_ERR_ARG, "%s: image is %dx%d; samc accepts at most %d pixels a side and %lld pixels",
                         what, w, h, SAMC_IMAGE_MAX_SIDE, SAMC_IMAGE_MAX_PIXELS);
    return SAMC_OK;
}

samc_status samc_image_load(const char *path, samc_image *img, samc_error *err)
{
    memset(img, 0, sizeof *img);
    FILE *f = fopen(path, "rb");
    if (!f)
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open image: %s", path, strerror(errno));
    int w = 0, h = 0, c = 0;
    /* Read the header first so a huge image is refused before decoding. */
    if (!stbi_info_from_file(f, &w, &h, &c)) {
        fclose(f);
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image (%s)", path, stbi_failure_reason());
    }
    samc_status st = check_dims(w, h, path, err);
    if (st) {
        fclose(f);
        return st;
    }
    img->rgb = stbi_load_from_file(f, &w, &h, &c, 3); /* 16-bit is scaled to 8-bit */
    fclose(f);
    if (!img->rgb)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot decode image (%s)", path, stbi_failure_reason());
    img->w = w, img->h = h;
    return SAMC_OK;
}

samc_status samc_image_from_memory(const uint8_t *buf, int len, const char *what, samc_image *img, samc_error *err)
{
    memset(img, 0, sizeof *img);
    int w = 0, h = 0, c = 0;
    if (len <= 0 || !stbi_info_from_memory(buf, len, &w, &h, &c))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not a readable image", what);
    samc_status st = check_dims(w, h, what, err);
    if (st)
        return st;
    img->rgb = stbi_load_from_memory(buf, len, &w, &h, &c, 3);
    if (!img->rgb)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot decode image (%s)", what, stbi_failure_reason());
    img->w = w, img->h = h;
    return SAMC_OK;
}

void samc_image_free(samc_image *img)
{
    if (img)
        stbi_image_free(img->rgb), img->rgb = NULL;
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
