/* SPDX-License-Identifier: Apache-2.0 */
/* amg_generate.c - SAM2AutomaticMaskGenerator._generate_masks /
 * _process_crop (automatic_mask_generator.py): crops, per-crop box NMS,
 * NMS across crops. One decoder batch (_process_batch) is amg_batch.c. */
#include "core/amg/amg_generate.h"

#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_batch.h"
#include "core/amg/amg_box.h"
#include "core/amg/amg_nms.h"
#include "core/base/error.h"
#include "core/models/sam2/sam2_model.h"

void samc_amg_output_free(samc_amg_output *o)
{
    for (int64_t i = 0; o->records && i < o->n; i++)
        samc_amg_rle_free(&o->records[i].rle);
    free(o->records);
    memset(o, 0, sizeof *o);
}

/* The grid of every crop layer: the given ones, or build_point_grid of
 * int(points_per_side / factor^i) points per side (owned: *owned). */
static samc_status layer_grids(const samc_amg_params *p, samc_amg_grid *grids, double **owned, samc_error *err)
{
    if (p->point_grids) {
        memcpy(grids, p->point_grids, (size_t)(p->crop_n_layers + 1) * sizeof *grids);
        return SAMC_OK;
    }
    int side[SAMC_AMG_MAX_CROP_LAYERS + 1];
    samc_status st = samc_amg_layer_points_per_side(p->points_per_side, p->crop_n_layers,
                                                    p->crop_n_points_downscale_factor, side, err);
    for (int i = 0; !st && i <= p->crop_n_layers; i++) {
        const int64_t n = (int64_t)side[i] * side[i];
        if (!(owned[i] = malloc((size_t)n * 2 * sizeof(double))))
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory (point grid of %lld points)", (long long)n);
        st = samc_amg_build_point_grid(side[i], owned[i], err);
        grids[i] = (samc_amg_grid){owned[i], n};
    }
    return st;
}

/* batched_nms(boxes.float(), scores, zeros, thresh) and data.filter(keep):
 * the kept candidates move to the front of `c` in keep order, the others
 * are freed. */
static samc_status nms_filter(samc_amg_cands *c, const float *scores, double thresh, samc_error *err)
{
    if (c->n == 0)
        return SAMC_OK;
    float *boxes = malloc((size_t)c->n * 4 * sizeof *boxes);
    int64_t *keep = malloc((size_t)c->n * sizeof *keep), n_keep = 0;
    samc_amg_record *kept = malloc((size_t)c->n * sizeof *kept);
    samc_status st = (!boxes || !keep || !kept) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory (NMS)") : SAMC_OK;
    for (int64_t i = 0; !st && i < c->n; i++)
        samc_amg_box_float(c->r[i].box, boxes + 4 * i);
    if (!st)
        st = samc_amg_batched_nms(boxes, scores, c->n, thresh, keep, &n_keep, err);
    if (!st) {
        for (int64_t k = 0; k < n_keep; k++) {
            kept[k] = c->r[keep[k]];
            c->r[keep[k]].rle.counts = NULL; /* moved */
        }
        for (int64_t i = 0; i < c->n; i++)
            samc_amg_rle_free(&c->r[i].rle);
        memcpy(c->r, kept, (size_t)n_keep * sizeof *kept);
        c->n = n_keep;
    }
    free(boxes), free(keep), free(kept);
    return st;
}

/* _process_crop: set_image on the crop, the batches, box NMS by predicted
 * IoU, back to the image frame; the survivors are appended to `all`. */
static samc_status process_crop(samc_exec *x, const samc_sam2_model *m, const uint8_t *rgb, int h, int w, const samc_amg_params *p,
                                const samc_amg_crop *crop, const samc_amg_grid *grid, samc_amg_batch_env *env,
                                samc_amg_cands *all, samc_error *err)
{
    const int cw = crop->x1 - crop->x0, ch = crop->y1 - crop->y0;
    uint8_t *img = malloc((size_t)cw * ch * 3);
    float *pts = malloc((size_t)grid->n * 2 * sizeof *pts), *scores = NULL;
    samc_frame_features f = {0};
    samc_amg_cands c = {0};
    samc_status st = (!img || !pts) ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory (crop %dx%d)", cw, ch) : SAMC_OK;
    for (int y = 0; !st && y < ch; y++)
        memcpy(img + (size_t)y * cw * 3, rgb + ((size_t)(crop->y0 + y) * w + crop->x0) * 3, (size_t)cw * 3);
    if (!st)
        st = samc_sam2_encode_image(x, m, img, ch, cw, &f, err);
    if (!st)
        samc_amg_grid_to_crop_points(grid->xy, grid->n, cw, ch, pts);
    for (int64_t s = 0; !st && s < grid->n; s += p->points_per_batch) {
        const int nb = (int)(grid->n - s < p->points_per_batch ? grid->n - s : p->points_per_batch);
        st = samc_amg_process_batch(x, m, &f, p, crop, h, w, pts + 2 * s, nb, env, &c, err);
    }
    if (!st && c.n && !(scores = malloc((size_t)c.n * sizeof *scores)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; !st && i < c.n; i++)
        scores[i] = c.r[i].predicted_iou;
    if (!st)
        st = nms_filter(&c, scores, p->box_nms_thresh, err);
    env->counts.box_nms += c.n;
    for (int64_t i = 0; !st && i < c.n; i++) { /* uncrop_boxes_xyxy, uncrop_points, crop_boxes */
        samc_amg_uncrop_box(c.r[i].box, crop);
        samc_amg_uncrop_point(c.r[i].point, crop);
        c.r[i].crop = *crop;
        if ((st = samc_amg_cands_push(all, &c.r[i], err)))
            break;
        c.r[i].rle.counts = NULL; /* moved */
    }
    samc_amg_cands_free(&c);
    samc_frame_features_release(&f);
    free(img), free(pts), free(scores);
    return st;
}

/* Across crops: batched_nms with score 1 / box_area(crop_box) (float32:
 * masks of smaller crops win). */
static samc_status crop_nms(samc_amg_cands *all, const samc_amg_params *p, samc_error *err)
{
    float *scores = all->n ? malloc((size_t)all->n * sizeof *scores) : NULL;
    if (all->n && !scores)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < all->n; i++) {
        const samc_amg_crop *c = &all->r[i].crop;
        scores[i] = 1.0f / (float)((int64_t)(c->x1 - c->x0) * (c->y1 - c->y0));
    }
    samc_status st = nms_filter(all, scores, p->crop_nms_thresh, err);
    free(scores);
    return st;
}

samc_status samc_amg_generate(samc_exec *x, const samc_sam2_model *m, const uint8_t *rgb, int h, int w, const samc_amg_params *p,
                              const samc_amg_hooks *hooks, samc_amg_output *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    samc_status st = samc_amg_params_check(p, h, w, err);
    if (st)
        return st;
    const int64_t n_crops = samc_amg_crop_count(p->crop_n_layers);
    samc_amg_crop *crops = malloc((size_t)n_crops * sizeof *crops);
    samc_amg_grid grids[SAMC_AMG_MAX_CROP_LAYERS + 1];
    double *owned[SAMC_AMG_MAX_CROP_LAYERS + 1] = {0};
    samc_amg_cands all = {0};
    samc_amg_batch_env env = {.hooks = hooks ? *hooks : (samc_amg_hooks){0}};
    if (!crops)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    st = samc_amg_crop_boxes(h, w, p->crop_n_layers, p->crop_overlap_ratio, crops, err);
    if (!st)
        st = layer_grids(p, grids, owned, err);
    for (int64_t k = 0; !st && k < n_crops; k++)
        env.prog.points_total += grids[crops[k].layer].n;
    env.prog.n_crops = (int)n_crops;
    for (int64_t k = 0; !st && k < n_crops; k++) {
        env.prog.crop = (int)k;
        st = process_crop(x, m, rgb, h, w, p, &crops[k], &grids[crops[k].layer], &env, &all, err);
    }
    if (!st && n_crops > 1)
        st = crop_nms(&all, p, err);
    env.counts.crop_nms = all.n;
    if (!st) {
        out->records = all.r, out->n = all.n, out->counts = env.counts;
        memset(&all, 0, sizeof all);
    }
    samc_amg_cands_free(&all);
    for (int i = 0; i <= SAMC_AMG_MAX_CROP_LAYERS; i++)
        free(owned[i]);
    free(crops);
    return st;
}
