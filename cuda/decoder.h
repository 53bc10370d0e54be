/* SPDX-License-Identifier: Apache-2.0 */
/* decoder.h - the SAM heads on the device (decoder.cu, prompt.cu): the
 * two-way transformer and the mask decoder's heads on device buffers in
 * token layout, fp32 activations (the bf16 row converts each linear's
 * input), batched over B prompts. */
#ifndef SAMC_CUDA_DECODER_H
#define SAMC_CUDA_DECODER_H

#include "cuda/kernels.h"

/* TwoWayAttentionBlock.forward in place: Q (B, Nq, D), K (B, Nk, D); qpe
 * (B, Nq, D) or batch 1 when !qpe_b, kpe likewise. */
void cu_twoway_block(cu_dev *d, int slot, const samc_twoway_block *blk, int B, int Nq, int Nk, float *Q, float *K,
                     const float *qpe, bool qpe_b, const float *kpe, bool kpe_b);
/* TwoWayTransformer's tail: Q = norm_final(Q + final_attn(Q + qpe, K + kpe, K)), in place. */
void cu_twoway_final(cu_dev *d, int slot, const samc_twoway_transformer *tr, int B, int Nq, int Nk, float *Q,
                     const float *K, const float *qpe, bool qpe_b, const float *kpe, bool kpe_b);
/* MaskDecoder.predict_masks after the transformer: hs (B, T, D), keys
 * (B, h*w, D) tokens, feat_s0 (1|B, D/8, 4h, 4w) and feat_s1 (1|B, D/4,
 * 2h, 2w) planes or NULL -> masks (B, M, 4h, 4w), iou (B, M) (before the
 * sigmoid when dec->iou_sigmoid), obj (B, 1) logits (NULL: no obj head). */
void cu_mask_heads(cu_dev *d, int slot, const samc_mask_decoder *dec, int B, int T, const float *hs, const float *keys,
                   int h, int w, const float *feat_s0, const float *feat_s1, bool feat_b, float *masks, float *iou,
                   float *obj);
/* The sigmoid of the IoU head and the constant object score, on the host
 * copies (a few floats per prompt). */
void cu_mask_heads_finish(const samc_mask_decoder *dec, int B, float *iou, float *obj);

#endif
