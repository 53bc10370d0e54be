/* SPDX-License-Identifier: Apache-2.0 */
/* amg_params.c - generator defaults and parameter checks (see amg_params.h). */
#include "core/amg/amg_params.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "core/amg/amg_grid.h"
#include "core/api/api_internal.h"
#include "core/base/error.h"

samc_amg_params samc_amg_default_params(void)
{
    samc_amg_params p;
    samc_amg_params_default(&p);
    return p;
}

void samc_amg_params_default(samc_amg_params *p)
{
    *p = (samc_amg_params){
        .points_per_side = 32,
        .points_per_batch = 64,
        .pred_iou_thresh = 0.8,
        .stability_score_thresh = 0.95,
        .stability_score_offset = 1.0,
        .mask_threshold = 0.0,
        .box_nms_thresh = 0.7,
        .crop_n_layers = 0,
        .crop_nms_thresh = 0.7,
        .crop_overlap_ratio = 512.0 / 1500.0,
        .crop_n_points_downscale_factor = 1,
        .min_mask_region_area = 0,
        .output_mode = SAMC_AMG_BINARY_MASK,
        .use_m2m = false,
        .multimask_output = true,
    };
}

static samc_status check_unit(const char *name, double v, samc_error *err)
{
    if (!(v >= 0.0 && v <= 1.0))
        return samc_fail(err, SAMC_ERR_ARG, "%s is %g; expected a value in [0, 1]", name, v);
    return SAMC_OK;
}

static samc_status check_thresholds(const samc_amg_params *p, samc_error *err)
{
    samc_status st = check_unit("pred_iou_thresh", p->pred_iou_thresh, err);
    if (!st)
        st = check_unit("stability_score_thresh", p->stability_score_thresh, err);
    if (!st)
        st = check_unit("box_nms_thresh", p->box_nms_thresh, err);
    if (!st)
        st = check_unit("crop_nms_thresh", p->crop_nms_thresh, err);
    if (st)
        return st;
    if (!(isfinite(p->stability_score_offset) && p->stability_score_offset >= 0.0))
        return samc_fail(err, SAMC_ERR_ARG,
                         "stability_score_offset is %g; expected a finite logit offset >= 0",
                         p->stability_score_offset);
    if (!isfinite(p->mask_threshold))
        return samc_fail(err, SAMC_ERR_ARG, "mask_threshold is %g; expected a finite logit",
                         p->mask_threshold);
    if (p->min_mask_region_area < 0 || p->min_mask_region_area > INT32_MAX)
        return samc_fail(err, SAMC_ERR_ARG, "min_mask_region_area is %lld; expected 0 to %d",
                         (long long)p->min_mask_region_area, INT32_MAX);
    return SAMC_OK;
}

static samc_status check_explicit_grids(const samc_amg_params *p, samc_error *err)
{
    if (p->n_point_grids < p->crop_n_layers + 1)
        return samc_fail(err, SAMC_ERR_ARG,
                         "point_grids has %d grids; crop_n_layers %d needs one per layer (%d)",
                         p->n_point_grids, p->crop_n_layers, p->crop_n_layers + 1);
    for (int i = 0; i <= p->crop_n_layers; i++) {
        const samc_amg_grid *g = &p->point_grids[i];
        if (g->n < 1 || g->n > SAMC_AMG_MAX_TOTAL_POINTS || !g->xy)
            return samc_fail(err, SAMC_ERR_ARG, "point_grids[%d] has %lld points; expected 1 to %lld",
                             i, (long long)g->n, (long long)SAMC_AMG_MAX_TOTAL_POINTS);
        for (int64_t k = 0; k < 2 * g->n; k++)
            if (!(g->xy[k] >= 0.0 && g->xy[k] <= 1.0))
                return samc_fail(err, SAMC_ERR_ARG,
                                 "point_grids[%d] point %lld has coordinate %g; grids are "
                                 "normalised to [0, 1]",
                                 i, (long long)(k / 2), g->xy[k]);
    }
    return SAMC_OK;
}

/* Points per crop of each layer, from the grids the generator will use. */
static samc_status layer_points(const samc_amg_params *p, int64_t *per_layer, samc_error *err)
{
    if (p->point_grids) {
        for (int i = 0; i <= p->crop_n_layers; i++)
            per_layer[i] = p->point_grids[i].n;
        return SAMC_OK;
    }
    int side[SAMC_AMG_MAX_CROP_LAYERS + 1];
    samc_status st = samc_amg_layer_points_per_side(p->points_per_side, p->crop_n_layers,
                                                    p->crop_n_points_downscale_factor, side, err);
    for (int i = 0; !st && i <= p->crop_n_layers; i++)
        per_layer[i] = (int64_t)side[i] * side[i];
    return st;
}

static samc_status check_points(const samc_amg_params *p, samc_error *err)
{
    if ((p->points_per_side != 0) == (p->point_grids != NULL))
        return samc_fail(err, SAMC_ERR_ARG,
                         "give exactly one of points_per_side (>= 1) and point_grids "
                         "(points_per_side %d, %s point_grids)",
                         p->points_per_side, p->point_grids ? "with" : "without");
    if (p->point_grids)
        return check_explicit_grids(p, err);
    if (p->points_per_side < 1 || p->points_per_side > SAMC_AMG_MAX_POINTS_PER_SIDE)
        return samc_fail(err, SAMC_ERR_ARG, "points_per_side is %d; expected 1 to %d",
                         p->points_per_side, SAMC_AMG_MAX_POINTS_PER_SIDE);
    return SAMC_OK;
}

static samc_status check_total(const samc_amg_params *p, samc_error *err)
{
    int64_t per_layer[SAMC_AMG_MAX_CROP_LAYERS + 1], total = 0;
    samc_status st = layer_points(p, per_layer, err);
    for (int i = 0; !st && i <= p->crop_n_layers; i++)
        total += per_layer[i] << (2 * i); /* 4^i crops in layer i */
    if (!st && total > SAMC_AMG_MAX_TOTAL_POINTS)
        return samc_fail(err, SAMC_ERR_ARG,
                         "%lld point prompts over all crops (points_per_side %d, crop_n_layers "
                         "%d); at most %lld are accepted",
                         (long long)total, p->points_per_side, p->crop_n_layers,
                         (long long)SAMC_AMG_MAX_TOTAL_POINTS);
    return st;
}

samc_status samc_amg_params_check(const samc_amg_params *p, int im_h, int im_w, samc_error *err)
{
    if (im_h < 1 || im_w < 1 || (int64_t)im_h * im_w > INT32_MAX)
        return samc_fail(err, SAMC_ERR_ARG, "image size %dx%d; expected 1x1 to %d pixels", im_h,
                         im_w, INT32_MAX);
    if (im_w > 32767)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED,
                         "image width %d: the official stability score counts each row in int16 "
                         "and overflows beyond 32767 columns",
                         im_w);
    if (p->crop_n_layers < 0 || p->crop_n_layers > SAMC_AMG_MAX_CROP_LAYERS)
        return samc_fail(err, SAMC_ERR_ARG, "crop_n_layers is %d; expected 0 to %d",
                         p->crop_n_layers, SAMC_AMG_MAX_CROP_LAYERS);
    if (p->points_per_batch < 1 || p->points_per_batch > SAMC_AMG_MAX_POINTS_PER_BATCH)
        return samc_fail(err, SAMC_ERR_ARG, "points_per_batch is %d; expected 1 to %d",
                         p->points_per_batch, SAMC_AMG_MAX_POINTS_PER_BATCH);
    if (p->output_mode != SAMC_AMG_BINARY_MASK && p->output_mode != SAMC_AMG_UNCOMPRESSED_RLE &&
        p->output_mode != SAMC_AMG_COCO_RLE)
        return samc_fail(err, SAMC_ERR_ARG, "output_mode %d is not one of binary_mask, "
                         "uncompressed_rle, coco_rle", (int)p->output_mode);
    samc_status st = check_thresholds(p, err);
    if (!st)
        st = check_points(p, err);
    if (!st)
        st = check_total(p, err);
    if (st)
        return st;
    return samc_amg_crop_layers_check(im_h, im_w, p->crop_n_layers, p->crop_overlap_ratio, err);
}

samc_status samc_amg_output_mode_parse(const char *s, samc_amg_output_mode *out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    SAMC_API_NEED(s, err);
    static const char *const names[] = {"binary_mask", "uncompressed_rle", "coco_rle"};
    for (int i = 0; i < 3; i++)
        if (s && strcmp(s, names[i]) == 0) {
            *out = (samc_amg_output_mode)i;
            return SAMC_OK;
        }
    return samc_fail(err, SAMC_ERR_ARG,
                     "output_mode '%s': expected binary_mask, uncompressed_rle or coco_rle",
                     s ? s : "(null)");
}
