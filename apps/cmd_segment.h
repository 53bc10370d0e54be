/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_segment.h - what the two halves of `samc segment` share: its
 * arguments (cmd_segment.c parses them and runs SAM 2; cmd_segment_sam3.c
 * runs SAM 3: text and box-exemplar prompts). */
#ifndef SAMC_APPS_CMD_SEGMENT_H
#define SAMC_APPS_CMD_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "core/io/image_io.h"
#include "samc.h"

#define SEG_MAX_POINTS 256
#define SEG_MAX_BOXES 64

typedef struct seg_args {
    const char *model, *config, *image, *mask_input, *out, *impl;
    const char *text, *vocab;         /* SAM 3 */
    const char *overrides[64];
    int n_overrides, n_points, threads;
    double max_hole_area, max_sprinkle_area;
    float points[2 * SEG_MAX_POINTS];
    int32_t labels[SEG_MAX_POINTS];
    float box[4];                     /* SAM 2: the one box (boxes[0]) */
    float boxes[4 * SEG_MAX_BOXES];   /* every --box, pixels X0,Y0,X1,Y1 */
    bool box_positive[SEG_MAX_BOXES]; /* false: ",neg" (a SAM 3 negative exemplar) */
    int n_boxes;
    float threshold;                  /* SAM 3 --threshold; < 0: not given */
    int mask_index;                   /* --mask-index; < 0: not given */
    cli_rle_format rle;               /* --rle */
    bool has_box, multimask, allow_nonfinite, has_hole_opts;
    bool inst;                        /* --inst: SAM 3's SAM 1 task (predict_inst) even for a box alone */
    bool sam3_inst;                   /* a SAM 3 model given --point/--mask-input/--multimask/--inst: predict_inst */
} seg_args;

/* The SAM 3 run of `samc segment` on a SAM 3 model: `img` is loaded, the
 * options are checked for the family (cmd_segment.c). */
samc_status cmd_segment_sam3(const seg_args *a, const samc_image *img, samc_error *err);

/* --mask-input FILE: mask `index` (< 0: the only one, or the best_mask of
 * the result.json beside FILE) of s x s float32 logits, or an s x s image,
 * into *out (malloc'd); *used: the index taken from a float32 file, else -1
 * (apps/cmd_segment_mask_input.c). */
samc_status cmd_segment_mask_input(const char *path, int index, int s, float **out, int *used, samc_error *err);

/* Prompt-progress callback of both halves (the encoder's blocks). */
void cmd_segment_progress(void *user, const char *what, int done, int total);

#endif
