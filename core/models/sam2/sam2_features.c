/* SPDX-License-Identifier: Apache-2.0 */
/* sam2_features.c - SAM 2 as the tracker's feature source: set_image and
 * the video's frames through @preprocess, the Hiera + FPN image encoder
 * and the tracker's own features (conv_s0/s1, no_mem_embed). */
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/sam2_model.h"

samc_status samc_sam2_encode_tensor(samc_exec *x, const samc_sam2_model *m, const samc_tensor *img,
                                    const samc_scope *sc, samc_frame_features *f, samc_error *err)
{
    const samc_layer *W = samc_sam2_image_encoder_whole(x, &m->image_encoder);
    if (W && samc_tracker_features_served_by(x, &m->tracker, W->asked)) { /* one body, on the device */
        samc_tracker_feature_spec spec;
        samc_tracker_feature_records(&m->tracker, &spec);
        return samc_sam2_image_features_whole(x, W, &spec, sc, img, f, err);
    }
    samc_tensor levels[SAMC_FPN_MAX_LEVELS] = {{0}}, pos[SAMC_FPN_MAX_LEVELS] = {{0}};
    int n = 0;
    samc_status st = samc_sam2_image_encoder_forward(x, &m->image_encoder, sc, img, levels, pos, &n, err);
    if (!st)
        st = samc_tracker_features(x, &m->tracker, sc, levels, pos, n, f, err);
    for (int i = 0; i < SAMC_FPN_MAX_LEVELS; i++)
        samc_tensor_release(&levels[i]), samc_tensor_release(&pos[i]);
    if (st)
        samc_frame_features_release(f);
    return st;
}

samc_status samc_sam2_encode_image(samc_exec *x, const samc_sam2_model *m, const uint8_t *rgb, int h, int w,
                                   samc_frame_features *f, samc_error *err)
{
    memset(f, 0, sizeof *f);
    if (!rgb || h <= 0 || w <= 0)
        return samc_fail(err, SAMC_ERR_ARG, "image is empty (%dx%d)", w, h);
    samc_tensor img = {0};
    samc_status st = samc_sam2_preprocess(x, &m->transforms, &samc_no_scope, false, true, rgb, h, w, &img, err);
    if (!st)
        st = samc_sam2_encode_tensor(x, m, &img, &samc_no_scope, f, err);
    samc_tensor_release(&img);
    f->orig_h = h, f->orig_w = w;
    return st;
}

/* A frame: the video loader's transform (untraced: the official loader
 * preprocesses each frame once, at init_state, and frame_record below
 * reproduces that record), then the encoder under scope {t, -1}. */
static samc_status frame_encode(void *user, samc_exec *x, int t, const uint8_t *rgb, int h, int w,
                                samc_frame_features *f, samc_error *err)
{
    const samc_sam2_model *m = user;
    const samc_scope sc = {t, -1};
    samc_tensor img = {0};
    samc_status st = samc_sam2_preprocess(x, &m->transforms, &sc, true, false, rgb, h, w, &img, err);
    if (!st)
        st = samc_sam2_encode_tensor(x, m, &img, &sc, f, err);
    samc_tensor_release(&img);
    if (!st)
        f->orig_h = h, f->orig_w = w;
    return st;
}

static samc_status frame_record(void *user, samc_exec *x, int t, const uint8_t *rgb, int h, int w, samc_tensor *out,
                                samc_error *err)
{
    const samc_sam2_model *m = user;
    const samc_scope sc = {t, -1};
    return samc_sam2_preprocess(x, &m->transforms, &sc, true, true, rgb, h, w, out, err);
}

samc_feature_source samc_sam2_feature_source(const samc_sam2_model *m)
{
    return (samc_feature_source){.user = (void *)m, .encode = frame_encode, .preprocess = frame_record};
}
