/* ref_layers.h - the ref/ bodies of every layer kind (see core/layers.h for
 * the contracts). Each lives in a file named after its official module. */
#ifndef SAMC_REF_LAYERS_H
#define SAMC_REF_LAYERS_H

#include "core/layers.h"

/* ref/preprocess.c  (sam2/utils/transforms.py: SAM2Transforms.__call__) */
samc_status samc_ref_preprocess(samc_ctx *ctx, const uint8_t *img, int h, int w, int size,
                                samc_tensor *out);
/* ref/postprocess.c (SAM2Transforms.postprocess_masks, resize part) */
samc_status samc_ref_postprocess(samc_ctx *ctx, const samc_tensor *lowres, int H, int W,
                                 samc_tensor *out);

/* ref/hiera.c (backbones/hieradet.py, backbones/utils.py: PatchEmbed) */
samc_status samc_ref_patch_embed(samc_ctx *ctx, const samc_conv2d *proj, const samc_tensor *x,
                                 samc_tensor *out);
samc_status samc_ref_hiera_block(samc_ctx *ctx, const samc_hiera_block *blk, const samc_tensor *x,
                                 samc_tensor *out);

/* ref/fpn_neck.c (backbones/image_encoder.py: FpnNeck) */
samc_status samc_ref_fpn_neck(samc_ctx *ctx, const samc_fpn_neck *neck, const samc_tensor *xs,
                              samc_tensor *out, samc_tensor *pos);

/* ref/conv.c */
samc_status samc_ref_conv2d_op(samc_ctx *ctx, const samc_conv2d *conv, const samc_tensor *x,
                               samc_tensor *out);

/* ref/prompt_encoder.c (sam/prompt_encoder.py: PromptEncoder) */
samc_status samc_ref_prompt_encoder(samc_ctx *ctx, const samc_prompt_encoder *pe,
                                    const float *coords, const int32_t *labels, int B, int N,
                                    const float *boxes, const samc_tensor *masks,
                                    samc_tensor *sparse, samc_tensor *dense);
samc_status samc_ref_dense_pe(samc_ctx *ctx, const samc_prompt_encoder *pe, samc_tensor *out);

/* ref/twoway_transformer.c (sam/transformer.py) */
samc_status samc_ref_twoway_block(samc_ctx *ctx, const samc_twoway_block *blk,
                                  const samc_tensor *q, const samc_tensor *k,
                                  const samc_tensor *qpe, const samc_tensor *kpe,
                                  samc_tensor *q_out, samc_tensor *k_out);
samc_status samc_ref_twoway_final(samc_ctx *ctx, const samc_twoway_transformer *tr,
                                  const samc_tensor *q, const samc_tensor *k,
                                  const samc_tensor *qpe, const samc_tensor *kpe,
                                  samc_tensor *q_out);

/* ref/mask_decoder.c (sam/mask_decoder.py: MaskDecoder.predict_masks tail) */
samc_status samc_ref_mask_decoder_heads(samc_ctx *ctx, const samc_mask_decoder *dec,
                                        const samc_tensor *hs, const samc_tensor *keys, int emb_h,
                                        int emb_w, const samc_tensor *feat_s0,
                                        const samc_tensor *feat_s1, samc_tensor *masks,
                                        samc_tensor *iou, samc_tensor *obj);

#endif
