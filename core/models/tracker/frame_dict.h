/* SPDX-License-Identifier: Apache-2.0 */
/* frame_dict.h - an insertion-ordered map frame_idx -> per-frame output,
 * with Python dict semantics (assigning an existing key keeps its place;
 * pop + assign moves it to the end), because the official memory bank
 * iterates its dicts in insertion order. */
#ifndef SAMC_MODELS_TRACKER_FRAME_DICT_H
#define SAMC_MODELS_TRACKER_FRAME_DICT_H

#include <stdbool.h>

#include "core/base/tensor.h"

/* One entry of output_dict[cond|non_cond_frame_outputs] (the "compact"
 * output of SAM2VideoPredictor._run_single_frame_inference). */
typedef struct samc_frame_out {
    int frame_idx;
    bool has_mem;              /* maskmem_features is not None */
    samc_tensor maskmem;       /* (1, mem_dim, e, e), values rounded to bfloat16 */
    samc_tensor pred_masks;    /* (1, 1, 4e, 4e) low-res logits (hole-filled) */
    samc_tensor obj_ptr;       /* (1, D) */
    float object_score;        /* object_score_logits (1,1) */
    /* SAM 3's memory selection (use_memory_selection): the best IoU
     * prediction, and the output's eff_iou_score where it has one (the
     * tracking step's, one value per tracker state) */
    float iou_score;
    bool has_eff;
    float eff_iou_score;
} samc_frame_out;

void samc_frame_out_release(samc_frame_out *o);
samc_status samc_frame_out_copy(samc_frame_out *dst, const samc_frame_out *src, samc_error *err);

typedef struct samc_frame_dict {
    samc_frame_out *items;
    int n, cap;
} samc_frame_dict;

samc_frame_out *samc_frame_dict_get(const samc_frame_dict *d, int frame_idx);
/* d[frame_idx] = *o (ownership of o's tensors moves into the dict; an old
 * value is released and its position kept). */
samc_status samc_frame_dict_put(samc_frame_dict *d, samc_frame_out *o, samc_error *err);
/* Remove; when `out` is non-NULL the value moves there, else it is released. */
bool samc_frame_dict_pop(samc_frame_dict *d, int frame_idx, samc_frame_out *out);
void samc_frame_dict_clear(samc_frame_dict *d);
void samc_frame_dict_free(samc_frame_dict *d);

#endif
