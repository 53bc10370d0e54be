/* SPDX-License-Identifier: Apache-2.0 */
/* mask_select.h - the output selection of sam/mask_decoder.py:
 * MaskDecoder.forward after predict_masks, including
 * _dynamic_multimask_via_stability, shared by every ops table.
 */
#ifndef SAMC_MODELS_TRACKER_MASK_SELECT_H
#define SAMC_MODELS_TRACKER_MASK_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/models/tracker/tracker_layers.h"

/* torch.argmax on n floats: the first maximum; a NaN counts as the maximum
 * (the first NaN wins). n >= 1. */
int samc_argmax_first(const float *x, int n);

/* MaskDecoder._get_stability_scores for one mask: count(logit > delta) /
 * count(logit > -delta) in float32, 1.0 when the denominator is 0. */
float samc_mask_stability_score(const float *logits, int64_t n, float delta);

/* Masks per batch element that MaskDecoder.forward returns: M-1 with
 * multimask_output, else 1. */
int samc_mask_decoder_num_outputs(const samc_mask_decoder *dec, bool multimask_output);

/* Which mask tokens MaskDecoder.forward returns, per batch element:
 * mask_index[b * n_out + k] = the index into the M mask tokens of output k
 * (n_out from samc_mask_decoder_num_outputs):
 *  - multimask_output: 1..M-1, in order (not sorted by IoU);
 *  - else with dynamic_multimask_via_stability (eval): 0 if the stability of
 *    mask 0 >= thresh, else 1 + argmax of IoUs 1..M-1;
 *  - else 0.
 * all_masks (B,M,h,w), all_iou (B,M). */
samc_status samc_mask_decoder_select_index(const samc_mask_decoder *dec,
                                           const samc_tensor *all_masks,
                                           const samc_tensor *all_iou, bool multimask_output,
                                           int *mask_index);

/* MaskDecoder.forward's selection: masks_out (B,n_out,h,w), iou_out
 * (B,n_out). An output tensor with data == NULL is allocated (owned);
 * otherwise it must already have that shape.
 * *token_index_out (may be NULL): the first mask token of sam_tokens_out,
 * which is mask_tokens_out[:, first : first + count] with first = 1, count =
 * M-1 when multimask_output && use_multimask_token_for_obj_ptr, else first 0,
 * count 1 -- token 0 even when the dynamic fallback picked another mask. */
samc_status samc_mask_decoder_select(const samc_mask_decoder *dec, const samc_tensor *all_masks,
                                     const samc_tensor *all_iou, bool multimask_output,
                                     samc_tensor *masks_out, samc_tensor *iou_out,
                                     int *token_index_out, samc_error *err);
/* The same with the single-mask choice of batch item 0 given (forced_index
 * >= 0: a re-synchronised decision), else computed. */
samc_status samc_mask_decoder_select_forced(const samc_mask_decoder *dec, const samc_tensor *all_masks,
                                            const samc_tensor *all_iou, bool multimask_output, int forced_index,
                                            samc_tensor *masks_out, samc_tensor *iou_out, int *token_index_out,
                                            samc_error *err);

#endif
