/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_segment_mask_input.c - `samc segment --mask-input FILE [--mask-index K]`:
 * one s x s low-res mask of logits, as the official notebooks feed back the
 * best of the previous call's masks (mask_input = logits[np.argmax(scores)]).
 * FILE is raw little-endian float32 (the low_res_masks.f32 a run writes: one
 * or several masks) or an s x s image. Several masks: mask K, or, without
 * --mask-index, the best_mask of the result.json beside the file, whose
 * low_res_masks shape must describe the file. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_segment.h"
#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/image_io.h"

/* result.json beside `path`, parsed (NULL when absent or unreadable). */
static cJSON *sibling_result(const char *path)
{
    char json[4200];
    const char *slash = strrchr(path, '/');
    const int dir = slash ? (int)(slash - path) + 1 : 0;
    snprintf(json, sizeof json, "%.*sresult.json", dir, path);
    samc_mapped_file mf;
    samc_error e = {0};
    if (samc_file_map(json, &mf, &e))
        return NULL;
    cJSON *r = mf.data ? cJSON_ParseWithLength((const char *)mf.data, mf.size) : NULL;
    samc_file_unmap(&mf);
    return r;
}

/* The best mask that result.json names for a file of n masks, or -1 with
 * the message saying what is missing. */
static int best_from_result(const char *path, long n, int s, samc_error *err)
{
    cJSON *r = sibling_result(path);
    const cJSON *lr = cJSON_GetObjectItem(r, "low_res_masks"), *shape = cJSON_GetObjectItem(lr, "shape");
    const cJSON *best = cJSON_GetObjectItem(r, "best_mask");
    int ok = cJSON_IsArray(shape) && cJSON_GetArraySize(shape) == 3 && cJSON_IsNumber(best);
    for (int i = 0; ok && i < 3; i++) {
        const cJSON *d = cJSON_GetArrayItem(shape, i);
        ok = cJSON_IsNumber(d) && d->valuedouble == (i == 0 ? (double)n : (double)s);
    }
    const int k = ok ? (int)best->valuedouble : -1;
    const bool batched = cJSON_IsArray(shape) && cJSON_GetArraySize(shape) == 4;
    cJSON_Delete(r);
    if (k >= 0 && k < n)
        return k;
    if (batched)
        samc_fail(err, SAMC_ERR_ARG, "--mask-input %s: %ld masks of several prompts (result.json beside it: "
                  "low_res_masks of shape [B, C, %d, %d]): give --mask-index 0..%ld", path, n, s, s, n - 1);
    else
        samc_fail(err, SAMC_ERR_ARG, "--mask-input %s: %ld masks of %dx%d and no result.json beside it whose "
                  "low_res_masks shape [%ld, %d, %d] and best_mask pick one: give --mask-index 0..%ld", path, n, s,
                  s, n, s, s, n - 1);
    return -1;
}

/* Raw float32: mask `index` (< 0: the only one, or result.json's best). */
static samc_status read_logits(FILE *f, const char *path, long bytes, int s, int index, float *out, int *used,
                               samc_error *err)
{
    const long per = (long)s * s * 4, n = bytes / per;
    if (index >= n)
        return samc_fail(err, SAMC_ERR_ARG, "--mask-index %d: %s holds %ld mask(s) of %dx%d", index, path, n, s, s);
    if (index < 0)
        index = n == 1 ? 0 : best_from_result(path, n, s, err);
    if (index < 0)
        return err->status;
    if (fseek(f, index * per, SEEK_SET) || fread(out, sizeof(float), (size_t)s * s, f) != (size_t)s * s)
        return samc_fail(err, SAMC_ERR_IO, "--mask-input %s: short read", path);
    *used = index;
    return SAMC_OK;
}

/* An s x s image: > 127 -> +10, else -10 (the logit scale of SAM's mask-as-input). */
static samc_status read_image(const char *path, long bytes, int s, float *out, samc_error *err)
{
    samc_image img;
    samc_error ie = {0};
    if (samc_image_load(path, &img, &ie))
        return samc_fail(err, SAMC_ERR_ARG, "--mask-input %s: neither %dx%d float32 logits (%ld bytes given, a "
                         "multiple of %ld expected) nor an image (%s)", path, s, s, bytes, (long)s * s * 4, ie.msg);
    if (img.w != s || img.h != s) {
        samc_image_free(&img);
        return samc_fail(err, SAMC_ERR_ARG,
                         "--mask-input %s: image is %dx%d, expected %dx%d (the model's low-res mask size: the "
                         "official SAM2ImagePredictor passes mask_input to the prompt encoder unresized)",
                         path, img.w, img.h, s, s);
    }
    for (int i = 0; i < s * s; i++)
        out[i] = img.rgb[3 * i] > 127 ? 10.0f : -10.0f;
    samc_image_free(&img);
    return SAMC_OK;
}

samc_status cmd_segment_mask_input(const char *path, int index, int s, float **out, int *used, samc_error *err)
{
    *used = -1;
    *out = malloc((size_t)s * s * sizeof(float));
    if (!*out)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    samc_error re = {0};
    if (samc_check_regular(path, &re)) /* a FIFO or device would block or never end */
        return samc_fail(err, SAMC_ERR_IO, "--mask-input %s", re.msg);
    FILE *f = fopen(path, "rb");
    if (!f)
        return samc_fail(err, SAMC_ERR_IO, "--mask-input %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    const long n = ftell(f), per = (long)s * s * 4;
    samc_status st;
    if (n >= per && n % per == 0) {
        st = read_logits(f, path, n, s, index, *out, used, err);
        fclose(f);
        return st;
    }
    fclose(f);
    if (index >= 0)
        return samc_fail(err, SAMC_ERR_ARG, "--mask-index %d: %s is not float32 logits (%ld bytes, not a multiple "
                         "of %dx%dx4)", index, path, n, s, s);
    return read_image(path, n, s, *out, err);
}
