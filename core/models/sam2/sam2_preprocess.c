/* SPDX-License-Identifier: Apache-2.0 */
/* sam2_preprocess.c - @preprocess, SAM 2's input transform as a part with
 * one row (mounted at the top): SAM2Transforms for set_image, the video
 * loader's transform for frames (ref/sam2/preprocess.c,
 * fast/sam2/preprocess.c). */
#include <stdlib.h>

#include "core/base/error.h"
#include "core/models/sam2/sam2_model.h"

enum { PREPROCESS, N_ROWS };

static samc_isolated_body iso_preprocess;
static samc_status ex_preprocess(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);

static const samc_layer_def rows[N_ROWS] = {
    [PREPROCESS] = {.pattern = "@preprocess", .table = SAMC_OPS_SAM2, .body = SAMC_BODY(samc_sam2_ops, preprocess),
                    .body2 = SAMC_BODY(samc_sam2_ops, preprocess_frame), .parity = true,
                    .isolated = iso_preprocess, .example = ex_preprocess},
};
/* No weights: its instance holds the input size (set by the family). */
const samc_part_def samc_sam2_preprocess_part = {"SAM2Transforms", rows, N_ROWS, NULL};

samc_status samc_sam2_preprocess(samc_exec *x, const samc_sam2_transforms *t, const samc_scope *sc, bool video,
                                 bool trace, const uint8_t *rgb, int h, int w, samc_tensor *out, samc_error *err)
{
    static const char *const slot0[] = {"0"};
    const int64_t S = t->image_size;
    const samc_layer *L = samc_part_layer(x, t, &rows[PREPROCESS], 0);
    const samc_sam2_ops *ops = L->ops;
    samc_status st = samc_tensor_alloc_uninit(out, 4, (const int64_t[]){1, 3, S, S}, err);
    if (st)
        return st;
    samc_ctx *ctx = samc_layer_ctx(x, L);
    st = video ? ops->preprocess_frame(ctx, rgb, h, w, (int)S, out) : ops->preprocess(ctx, rgb, h, w, (int)S, out);
    const samc_tensor *outs[] = {out};
    st = samc_layer_done(x, L, sc, st, err, trace ? 1 : 0, slot0, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

static samc_status iso_preprocess(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                  samc_error *err)
{
    samc_tensor img = {0};
    samc_status st = samc_io_tensor(in, "0", NULL, &img, err);
    if (!st && (img.ndim != 3 || img.shape[2] != 3))
        st = samc_fail(err, SAMC_ERR_SHAPE, "@preprocess: in/0 must be [H,W,3]");
    const int64_t n = st ? 0 : samc_numel(&img);
    uint8_t *rgb = st ? NULL : malloc((size_t)n);
    if (!st && !rgb)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; !st && i < n; i++)
        rgb[i] = (uint8_t)img.data[i];
    samc_tensor *y = st ? NULL : samc_layer_out_slot(out, "0");
    if (!st)
        st = samc_sam2_preprocess(x, L->self, &samc_no_scope, in->video, false, rgb, (int)img.shape[0],
                                  (int)img.shape[1], y, err);
    free(rgb);
    samc_tensor_release(&img);
    return st;
}

static samc_status ex_preprocess(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                 samc_error *err)
{
    (void)self, (void)index;
    const int64_t h = full ? 768 : 120, w = full ? 1024 : 160; /* a 4:3 photo, resized to the square input */
    in->video = false;
    return samc_inputs_random(in, "0", seed, 0, 256, err, 3, h, w, (int64_t)3) ? SAMC_OK : SAMC_ERR_NOMEM;
}
