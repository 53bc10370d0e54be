/* SPDX-License-Identifier: Apache-2.0 */
/* chained_sam3_inst.c - the sam3_inst task (docs/parity_sam3_video.md,
 * "sam3_inst"): Sam3Processor.set_image on /inputs/image_u8 with the tracker
 * neck, then each /inputs/prompts/<k> through Sam3Image.predict_inst
 * (core/models/sam3/sam3_inst.c), every parity point traced and the
 * outputs compared like the SAM 2 image task's. */
#include <stdio.h>
#include <stdlib.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_inst.h"
#include "harness_internal.h"

static samc_status run_prompts(parity_run *r, const samc_frame_features *f, samc_error *err)
{
    samc_status st = SAMC_OK;
    for (int k = 0; !st; k++) {
        char g[64];
        snprintf(g, sizeof g, "/inputs/prompts/%d", k);
        if (!samc_dump_exists(r->dump, g))
            break;
        samc_parity_prompt dp;
        samc_sam_prediction pr = {0};
        st = samc__parity_read_prompt(r->dump, g, &dp, err);
        if (!st)
            st = samc_sam3_predict_inst(&r->x, f, &dp.p, &pr, err);
        if (!st)
            samc__parity_compare_prediction(r, k, &pr);
        samc_sam_prediction_release(&pr);
        samc__parity_prompt_free(&dp);
    }
    return st;
}

samc_status samc__parity_run_sam3_inst(parity_run *r, samc_error *err)
{
    samc_dump *d = r->dump;
    uint8_t *rgb = NULL;
    int nd = 0;
    int64_t dims[4];
    samc_status st = samc_dump_read_u8(d, "/inputs/image_u8", &rgb, &nd, dims, err);
    if (!st && (nd != 3 || dims[2] != 3))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: /inputs/image_u8 must be [H,W,3]", samc_dump_path(d));
    samc_exec_set_trace(&r->x, samc__parity_on_trace, r);
    if (!r->strict || r->plant_bf16_flip > 0)
        r->x.decide = samc__parity_resync, r->x.decide_user = r;
    samc_sam3_image img = {0};
    samc_frame_features f = {0};
    if (!st)
        st = samc_sam3_set_image(&r->x, rgb, (int)dims[0], (int)dims[1], &img, err);
    free(rgb);
    if (!st)
        st = samc_sam3_inst_features(&r->x, &img, &f, err);
    if (!st)
        st = run_prompts(r, &f, err);
    samc_frame_features_release(&f);
    samc_sam3_image_release(&img);
    samc_exec_set_trace(&r->x, NULL, NULL);
    return st;
}
