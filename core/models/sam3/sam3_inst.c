/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_inst.c - Sam3Image.predict_inst (sam3_inst.h): the tracker's
 * features of the image, then SAM2ImagePredictor's predict on them with
 * SAM3InteractiveImagePredictor's options (core/models/tracker/image_predict.c). */
#include "core/models/sam3/sam3_inst.h"

#include <string.h>

#include "core/base/error.h"

enum { INST_FEATURES, N_ROWS };
static const samc_layer_def rows[N_ROWS] = {
    /* the features predict_inst hands the predictor (from set_image's) */
    [INST_FEATURES] = {.pattern = "@inst_features", .parity = true, .chained_only = true},
};
const samc_part_def samc_sam3_inst_part = {"Sam3Image.predict_inst", rows, N_ROWS, NULL};

samc_status samc_sam3_inst_features(samc_exec *x, const samc_sam3_image *img, samc_frame_features *f,
                                    samc_error *err)
{
    const samc_sam3_model *m = x->model;
    memset(f, 0, sizeof *f);
    if (!m->has_tracker)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "sam3: this model has no tracker half (predict_inst needs it)");
    if (img->f.n_sam2 < 3)
        return samc_fail(err, SAMC_ERR_ARG, "sam3: the image was encoded without its tracker neck");
    samc_status st = samc_tracker_features(x, &m->tracker, NULL, img->f.sam2_level, img->f.sam2_pos, 3, f, err);
    if (!st)
        f->orig_h = img->h, f->orig_w = img->w;
    return st;
}

samc_status samc_sam3_predict_inst(samc_exec *x, const samc_frame_features *f, const samc_sam_prompt *p,
                                   samc_sam_prediction *out, samc_error *err)
{
    const samc_sam3_model *m = x->model;
    memset(out, 0, sizeof *out);
    if (!m->has_tracker)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "sam3: this model has no tracker half (predict_inst needs it)");
    if (x->trace) {
        const char *slots[] = {"image_embed", "high_res_feats.0", "high_res_feats.1"};
        const samc_tensor *t[] = {&f->image_embed, &f->feat_s0, &f->feat_s1};
        samc_layer_emit(x, samc_part_layer(x, &m->tracker, &rows[INST_FEATURES], 0), NULL, 3, slots, t);
    }
    const samc_sam_image_opts opts = {m->video.inst.max_hole_area, m->video.inst.max_sprinkle_area};
    return samc_sam_predict(x, &m->tracker, f, p, &opts, out, err);
}
