/* SPDX-License-Identifier: Apache-2.0 */
/* mask_select.c - MaskDecoder.forward's choice of masks, IoUs and output
 * tokens (sam/mask_decoder.py), with _dynamic_multimask_via_stability. */
#include "core/models/tracker/mask_select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

int samc_argmax_first(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++) {
        if (isnan(x[best]))
            break;
        if (isnan(x[i]) || x[i] > x[best])
            best = i;
    }
    return best;
}

/* _get_stability_scores: the areas are int64 sums turned .float(), the ratio
 * a float32 division; delta is the Python float compared in float32. */
float samc_mask_stability_score(const float *logits, int64_t n, float delta)
{
    int64_t inter = 0, uni = 0;
    for (int64_t i = 0; i < n; i++) {
        inter += logits[i] > delta;
        uni += logits[i] > -delta;
    }
    return uni > 0 ? (float)inter / (float)uni : 1.0f;
}

int samc_mask_decoder_num_outputs(const samc_mask_decoder *dec, bool multimask_output)
{
    return multimask_output ? dec->num_mask_tokens - 1 : 1;
}

static samc_status check_inputs(const samc_mask_decoder *dec, const samc_tensor *all_masks,
                                const samc_tensor *all_iou, bool multimask_output)
{
    const int M = dec->num_mask_tokens;
    if (all_masks->ndim != 4 || all_masks->shape[1] != M || all_iou->ndim != 2 ||
        all_iou->shape[0] != all_masks->shape[0] || all_iou->shape[1] != M)
        return samc_fail(NULL, SAMC_ERR_SHAPE, "mask select: want masks (B,%d,h,w), iou (B,%d)", M,
                         M);
    if (M < 2 && (multimask_output || dec->dynamic_multimask_via_stability))
        return samc_fail(NULL, SAMC_ERR_ARG, "mask select: no multimask tokens (M = %d)", M);
    return SAMC_OK;
}

samc_status samc_mask_decoder_select_index(const samc_mask_decoder *dec,
                                           const samc_tensor *all_masks, const samc_tensor *all_iou,
                                           bool multimask_output, int *mask_index)
{
    samc_status st = check_inputs(dec, all_masks, all_iou, multimask_output);
    if (st)
        return st;
    const int M = dec->num_mask_tokens,
              n_out = samc_mask_decoder_num_outputs(dec, multimask_output);
    const int64_t B = all_masks->shape[0], hw = all_masks->shape[2] * all_masks->shape[3];
    for (int64_t b = 0; b < B; b++) {
        int *idx = mask_index + b * n_out;
        if (multimask_output) { /* masks[:, 1:], iou_pred[:, 1:] */
            for (int k = 0; k < n_out; k++)
                idx[k] = k + 1;
        } else if (dec->dynamic_multimask_via_stability) { /* "and not self.training" */
            const float s = samc_mask_stability_score(all_masks->data + b * M * hw, hw,
                                                      dec->dynamic_multimask_stability_delta);
            idx[0] = s >= dec->dynamic_multimask_stability_thresh
                         ? 0
                         : 1 + samc_argmax_first(all_iou->data + b * M + 1, M - 1);
        } else { /* masks[:, 0:1], iou_pred[:, 0:1] */
            idx[0] = 0;
        }
    }
    return SAMC_OK;
}

/* Use out as given when it has data (shape checked), else allocate it. */
static samc_status prepare_out(samc_tensor *out, int ndim, const int64_t *shape, samc_error *err)
{
    if (!out->data)
        return samc_tensor_alloc(out, ndim, shape, err);
    if (!samc_shape_equal(out->ndim, out->shape, ndim, shape))
        return samc_fail(err, SAMC_ERR_SHAPE, "mask select: output has the wrong shape");
    return SAMC_OK;
}

samc_status samc_mask_decoder_select(const samc_mask_decoder *dec, const samc_tensor *all_masks,
                                     const samc_tensor *all_iou, bool multimask_output,
                                     samc_tensor *masks_out, samc_tensor *iou_out,
                                     int *token_index_out, samc_error *err)
{
    return samc_mask_decoder_select_forced(dec, all_masks, all_iou, multimask_output, -1, masks_out, iou_out,
                                           token_index_out, err);
}

samc_status samc_mask_decoder_select_forced(const samc_mask_decoder *dec, const samc_tensor *all_masks,
                                            const samc_tensor *all_iou, bool multimask_output, int forced_index,
                                            samc_tensor *masks_out, samc_tensor *iou_out, int *token_index_out,
                                            samc_error *err)
{
    samc_status st = check_inputs(dec, all_masks, all_iou, multimask_output);
    if (st)
        return samc_fail(err, st,
                         "mask select: bad input shapes (masks (B,M,h,w), iou (B,M), M=%d)",
                         dec->num_mask_tokens);
    const int M = dec->num_mask_tokens,
              n_out = samc_mask_decoder_num_outputs(dec, multimask_output);
    const int64_t B = all_masks->shape[0], h = all_masks->shape[2], w = all_masks->shape[3];
    int *idx = malloc((size_t)(B > 0 ? B * n_out : 1) * sizeof *idx);
    if (!idx)
        return samc_fail(err, SAMC_ERR_NOMEM, "mask select: index table");
    st = samc_mask_decoder_select_index(dec, all_masks, all_iou, multimask_output, idx);
    if (!st && !multimask_output && forced_index >= 0 && forced_index < M)
        idx[0] = forced_index;
    const int64_t mshape[4] = {B, n_out, h, w}, ishape[2] = {B, n_out};
    if (!st && !(st = prepare_out(masks_out, 4, mshape, err)) &&
        !(st = prepare_out(iou_out, 2, ishape, err))) {
        for (int64_t b = 0; b < B; b++)
            for (int k = 0; k < n_out; k++) {
                const int t = idx[b * n_out + k];
                memcpy(masks_out->data + (b * n_out + k) * h * w,
                       all_masks->data + (b * M + t) * h * w, (size_t)(h * w) * sizeof(float));
                iou_out->data[b * n_out + k] = all_iou->data[b * M + t];
            }
        if (token_index_out)
            *token_index_out = multimask_output && dec->use_multimask_token_for_obj_ptr ? 1 : 0;
    }
    free(idx);
    return st;
}
