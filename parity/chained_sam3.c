/* SPDX-License-Identifier: Apache-2.0 */
/* chained_sam3.c - the SAM 3 image task (PARITY_DUMP_FORMAT.md, "SAM 3"):
 * its model (and the tokenizer's vocabulary) loaded from the dump by
 * samc_sam3_model_load, and the chained run: set_image, then each prompt
 * session through the processor's wiring (core/models/sam3/sam3_predict.c)
 * with every parity point traced. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_inst.h"
#include "core/models/sam3/sam3_predict.h"
#include "harness_internal.h"

samc_status samc__parity_load_sam3(parity_run *r, const char *path, const char *impl, samc_error *err)
{
    /* the dump as a SAM 3 checkpoint (core/models/sam3/sam3_load.c): its
     * weights, its /model/config_json and its tokenizer's vocabulary */
    samc_status st = samc_sam3_model_load(path, NULL, &r->model3, err);
    if (!st && r->sam3_video)
        st = samc_sam3_video_exec_init(&r->x, r->model3, impl, err);
    else if (!st && r->sam3_inst)
        st = samc_sam3_inst_exec_init(&r->x, r->model3, impl, err);
    else if (!st)
        st = samc_sam3_exec_init(&r->x, r->model3, impl, err);
    if (!st && r->sam3_inst) /* SAM3InteractiveImagePredictor's hole filling, for @postprocess run alone */
        r->image_opts = (samc_sam_image_opts){r->model3->video.inst.max_hole_area,
                                              r->model3->video.inst.max_sprinkle_area};
    return st;
}

/* /outputs/<k> against prompt k's last grounding. */
static void compare_outputs(parity_run *r, int k, const samc_sam3_result *res)
{
    char mod[64], path[128];
    snprintf(mod, sizeof mod, "/outputs/%d", k);
    const samc_tensor *pm = &res->post.masks; /* [M,1,H,W], recorded as [M,H,W] */
    samc_tensor masks = *pm;
    masks.owns = false, masks.ndim = 3, masks.shape[1] = pm->shape[2], masks.shape[2] = pm->shape[3];
    const char *names[] = {"scores", "boxes", "masks", "pred_logits", "pred_boxes", "presence_logit", "pred_masks"};
    const samc_tensor *t[7] = {&res->post.scores, &res->post.boxes, &masks, &res->pred_logits, &res->pred_boxes,
                               &res->presence_logit, &res->pred_masks};
    for (int i = 0; i < 7; i++) {
        snprintf(path, sizeof path, "/outputs/%d/%s", k, names[i]);
        if (t[i] && t[i]->data)
            samc__parity_compare(r, INT_MAX, mod, 0, names[i], t[i], path);
    }
}

/* One /inputs/prompts/<k> session: reset, the text if any, then each box. */
static samc_status run_prompt(parity_run *r, const samc_sam3_image *img, int k, float thr, samc_error *err)
{
    samc_dump *d = r->dump;
    char g[64], path[128];
    snprintf(g, sizeof g, "/inputs/prompts/%d", k);
    samc_sam3_session s = {0};
    samc_sam3_result res = {0};
    samc_tensor boxes = {0};
    int32_t *labels = NULL;
    int64_t nl = 0;
    samc_status st = SAMC_OK;
    snprintf(path, sizeof path, "%s/box_cxcywh", g);
    if (samc_dump_exists(d, path)) {
        st = samc_dump_read(d, path, &boxes, err);
        snprintf(path, sizeof path, "%s/box_labels", g);
        if (!st)
            st = samc_dump_read_i32(d, path, &labels, &nl, err);
        if (!st && (boxes.ndim != 2 || boxes.shape[1] != 4 || boxes.shape[0] != nl))
            st = samc_fail(err, SAMC_ERR_SHAPE, "%s: %s/box_cxcywh must be [N,4] matching box_labels [N]",
                           samc_dump_path(d), g);
    }
    if (!st && samc_dump_has_attr(d, g, "text")) {
        char *text = NULL;
        st = samc_dump_attr_str(d, g, "text", &text, err);
        if (!st)
            st = samc_sam3_set_text(&r->x, img, &s, text, thr, &res, err);
        free(text);
    }
    for (int64_t i = 0; !st && i < nl; i++) {
        samc_sam3_result_release(&res);
        st = samc_sam3_add_box(&r->x, img, &s, boxes.data + 4 * i, labels[i] != 0, thr, &res, err);
    }
    if (!st && !s.has_text)
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: %s has neither a text nor boxes", samc_dump_path(d), g);
    if (!st)
        compare_outputs(r, k, &res);
    samc_sam3_result_release(&res);
    samc_sam3_session_reset(&s);
    samc_tensor_release(&boxes);
    free(labels);
    return st;
}

samc_status samc__parity_run_sam3(parity_run *r, samc_error *err)
{
    samc_dump *d = r->dump;
    uint8_t *rgb = NULL;
    int nd = 0;
    int64_t dims[4];
    double thr = 0.5;
    samc_status st = samc_dump_attr_num(d, "/inputs", "confidence_threshold", &thr, NULL, err);
    if (!st)
        st = samc_dump_read_u8(d, "/inputs/image_u8", &rgb, &nd, dims, err);
    if (!st && (nd != 3 || dims[2] != 3))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: /inputs/image_u8 must be [H,W,3]", samc_dump_path(d));
    samc_exec_set_trace(&r->x, samc__parity_on_trace, r);
    samc_sam3_image img = {0};
    if (!st)
        st = samc_sam3_set_image(&r->x, rgb, (int)dims[0], (int)dims[1], &img, err);
    free(rgb);
    for (int k = 0; !st; k++) {
        char g[64];
        snprintf(g, sizeof g, "/inputs/prompts/%d", k);
        if (!samc_dump_exists(d, g))
            break;
        st = run_prompt(r, &img, k, (float)thr, err);
    }
    samc_sam3_image_release(&img);
    samc_exec_set_trace(&r->x, NULL, NULL);
    return st;
}
