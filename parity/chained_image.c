/* SPDX-License-Identifier: Apache-2.0 */
/* chained_image.c - run the dump's image task end to end from /inputs and
 * compare every parity point as samc completes it, then the final /outputs. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "harness_internal.h"

void samc__parity_prompt_free(samc_parity_prompt *dp)
{
    samc_tensor_release(&dp->coords);
    samc_tensor_release(&dp->mask);
    free(dp->labels);
}

samc_status samc__parity_read_prompt(samc_dump *d, const char *g, samc_parity_prompt *dp, samc_error *err)
{
    memset(dp, 0, sizeof *dp);
    char path[256];
    int64_t nl = 0;
    snprintf(path, sizeof path, "%s/point_coords", g);
    samc_status st = samc_dump_read(d, path, &dp->coords, err);
    snprintf(path, sizeof path, "%s/point_labels", g);
    if (!st)
        st = samc_dump_read_i32(d, path, &dp->labels, &nl, err);
    if (!st && (dp->coords.ndim != 2 || dp->coords.shape[1] != 2 || dp->coords.shape[0] != nl))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: %s/point_coords must be [N,2] matching point_labels [N]",
                       samc_dump_path(d), g);
    dp->p.n_points = (int)nl;
    dp->p.points = dp->coords.data;
    dp->p.labels = dp->labels;
    dp->p.allow_points_outside = true; /* replay exactly what the official code ran */
    snprintf(path, sizeof path, "%s/box", g);
    if (!st && samc_dump_exists(d, path)) {
        samc_tensor b = {0};
        if (!(st = samc_dump_read(d, path, &b, err))) {
            if (samc_numel(&b) != 4)
                st = samc_fail(err, SAMC_ERR_SHAPE, "%s: %s must have 4 values", samc_dump_path(d), path);
            else
                memcpy(dp->p.box, b.data, sizeof dp->p.box), dp->p.has_box = true;
        }
        samc_tensor_release(&b);
    }
    snprintf(path, sizeof path, "%s/mask_input", g);
    if (!st && samc_dump_exists(d, path) && !(st = samc_dump_read(d, path, &dp->mask, err)))
        dp->p.mask_input = &dp->mask;
    double mm = 1;
    if (!st && samc_dump_has_attr(d, g, "multimask_output"))
        st = samc_dump_attr_num(d, g, "multimask_output", &mm, NULL, err);
    dp->p.multimask = mm != 0;
    return st;
}

void samc__parity_compare_prediction(parity_run *r, int k, const samc_sam_prediction *pr)
{
    char mod[64], path[128];
    snprintf(mod, sizeof mod, "/outputs/%d", k);
    static const char *const names[] = {"masks", "iou_predictions", "low_res_masks"};
    const samc_tensor *t[] = {&pr->masks, &pr->iou, &pr->low_res};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "/outputs/%d/%s", k, names[i]);
        samc__parity_compare(r, INT_MAX, mod, 0, names[i], t[i], path);
    }
}

static samc_status run_image_task(parity_run *r, samc_error *err)
{
    samc_dump *d = r->dump;
    uint8_t *img = NULL;
    int nd = 0;
    int64_t dims[4];
    samc_status st = samc_dump_read_u8(d, "/inputs/image_u8", &img, &nd, dims, err);
    if (!st && (nd != 3 || dims[2] != 3))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: /inputs/image_u8 must be [H,W,3]", samc_dump_path(d));
    samc_frame_features f = {0};
    if (!st)
        st = samc_sam2_encode_image(&r->x, r->model, img, (int)dims[0], (int)dims[1], &f, err);
    free(img);
    for (int k = 0; !st; k++) {
        char g[64];
        snprintf(g, sizeof g, "/inputs/prompts/%d", k);
        if (!samc_dump_exists(d, g))
            break;
        samc_parity_prompt dp;
        samc_sam_prediction pr = {0};
        st = samc__parity_read_prompt(d, g, &dp, err);
        if (!st)
            st = samc_sam_predict(&r->x, &r->model->tracker, &f, &dp.p, &r->image_opts, &pr, err);
        if (!st)
            samc__parity_compare_prediction(r, k, &pr);
        samc_sam_prediction_release(&pr);
        samc__parity_prompt_free(&dp);
    }
    samc_frame_features_release(&f);
    return st;
}

samc_status samc__parity_run_image(parity_run *r, samc_error *err)
{
    samc_exec_set_trace(&r->x, samc__parity_on_trace, r);
    if (!r->strict || r->plant_bf16_flip > 0)
        r->x.decide = samc__parity_resync, r->x.decide_user = r;
    samc_status st = run_image_task(r, err);
    samc_exec_set_trace(&r->x, NULL, NULL);
    return st;
}
