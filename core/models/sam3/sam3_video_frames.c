/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_frames.c - SAM 3's video frame loader
 * (io_utils.load_video_frames_from_image_folder, docs/sam3_video.md 8):
 * the decoded RGB frame resized by Pillow's BILINEAR to R x R (torchvision
 * TF.resize of a PIL image), / 255 in float32 stored as float16, then
 * (x - mean) / std in float16. The session computes a frame when the
 * detector needs it (the official loader keeps them all); @preprocess is
 * its parity record. */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_video_internal.h"
#include "core/nn/half.h"
#include "core/nn/resize_pil.h"

enum { PREPROCESS, N_ROWS };
static samc_isolated_body iso_preprocess;
static const samc_layer_def rows[N_ROWS] = {
    [PREPROCESS] = {.pattern = "@preprocess", .parity = true, .isolated = iso_preprocess},
};
const samc_part_def samc_sam3_video_preprocess_part = {"load_video_frames", rows, N_ROWS, NULL};

/* rgb (h, w, 3) -> out (1, 3, R, R). */
static samc_status load(const samc_sam3_loop_config *c, const uint8_t *rgb, int h, int w, samc_tensor *out,
                        samc_error *err)
{
    const int R = c->image_size;
    uint8_t *small = NULL;
    samc_status st = samc_tensor_allocv(out, err, 4, (int64_t)1, (int64_t)3, (int64_t)R, (int64_t)R);
    if (!st && (h != R || w != R)) {
        small = malloc((size_t)R * R * 3);
        if (!small || samc_resize_pil_rgb(rgb, h, w, R, R, SAMC_PIL_BILINEAR, small))
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory (frame resize)");
        rgb = small;
    }
    for (int ch = 0; !st && ch < 3; ch++) {
        const float mean = samc_round_f16((float)c->image_mean[ch]), std = samc_round_f16((float)c->image_std[ch]);
        float *o = out->data + (int64_t)ch * R * R;
        for (int64_t p = 0; p < (int64_t)R * R; p++) {
            const float x = samc_round_f16((float)rgb[p * 3 + ch] / 255.0f); /* to_tensor, into float16 */
            o[p] = samc_round_f16(samc_round_f16(x - mean) / std);            /* float16 arithmetic */
        }
    }
    free(small);
    if (st)
        samc_tensor_release(out);
    return st;
}

samc_status samc__s3v_frame_image(samc_sam3_video *v, int t, samc_tensor *img, samc_error *err)
{
    const uint8_t *rgb = NULL;
    samc_status st = samc_frames_get(v->frames, t, &rgb, err);
    return st ? st : load(&v->m->video.loop, rgb, v->H, v->W, img, err);
}

samc_status samc_sam3_video_preprocess(samc_sam3_video *v, int t, samc_tensor *out, samc_error *err)
{
    if (t < 0 || t >= v->T)
        return samc_fail(err, SAMC_ERR_ARG, "frame %d is outside the video's %d frames", t, v->T);
    samc_status st = samc__s3v_frame_image(v, t, out, err);
    const samc_scope sc = {t, -1};
    const char *slots[] = {"0"};
    const samc_tensor *ts[] = {out};
    if (!st)
        samc_layer_emit(v->x, samc_part_layer(v->x, v->m, &rows[PREPROCESS], 0), &sc, 1, slots, ts);
    return st;
}

static samc_status iso_preprocess(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                  samc_error *err)
{
    (void)x;
    const samc_sam3_model *m = L->self;
    samc_tensor frame = {0};
    samc_status st = samc_io_tensor(in, "0", NULL, &frame, err);
    if (!st && (frame.ndim != 3 || frame.shape[2] != 3))
        st = samc_fail(err, SAMC_ERR_SHAPE, "@preprocess: in/0 must be an (H, W, 3) frame");
    uint8_t *rgb = st ? NULL : malloc((size_t)samc_numel(&frame));
    if (!st && !rgb)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; !st && i < samc_numel(&frame); i++)
        rgb[i] = (uint8_t)frame.data[i];
    samc_tensor *y = st ? NULL : samc_layer_out_slot(out, "0");
    if (!st)
        st = load(&m->video.loop, rgb, (int)frame.shape[0], (int)frame.shape[1], y, err);
    free(rgb);
    samc_tensor_release(&frame);
    return st;
}
