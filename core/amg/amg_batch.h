/* SPDX-License-Identifier: Apache-2.0 */
/* amg_batch.h - one decoder batch of the automatic mask generator
 * (SAM2AutomaticMaskGenerator._process_batch, refine_with_m2m) and the
 * candidate list the generator's steps share. Internal to amg_generate.c. */
#ifndef SAMC_CORE_AMG_BATCH_H
#define SAMC_CORE_AMG_BATCH_H

#include "core/amg/amg_generate.h"
#include "core/models/sam2/sam2_model.h"

/* A growing list of candidates (MaskData): records whose box and point are
 * in the crop's frame until _process_crop moves them to the image's. */
typedef struct samc_amg_cands {
    samc_amg_record *r;
    int64_t n, cap;
} samc_amg_cands;

/* Append (the record's RLE moves into the list). */
samc_status samc_amg_cands_push(samc_amg_cands *c, const samc_amg_record *r, samc_error *err);
void samc_amg_cands_free(samc_amg_cands *c);

/* What the batches share over a run: progress and the filters' counts. */
typedef struct samc_amg_batch_env {
    samc_amg_hooks hooks;
    int batch;                      /* batches so far over the run */
    samc_amg_progress prog;
    samc_amg_counts counts;
} samc_amg_batch_env;

/* _process_batch: nb prompts of one positive point each (float32 crop
 * pixels `pts`, (nb, 2)) on the crop's features f; the candidates that pass
 * the IoU, stability and crop-edge filters are appended to `out` (RLE of the
 * uncropped mask, inclusive box and point in the crop's frame). */
samc_status samc_amg_process_batch(samc_exec *x, const samc_sam2_model *m, const samc_frame_features *f, const samc_amg_params *p,
                                   const samc_amg_crop *crop, int orig_h, int orig_w, const float *pts, int nb,
                                   samc_amg_batch_env *env, samc_amg_cands *out, samc_error *err);

#endif
