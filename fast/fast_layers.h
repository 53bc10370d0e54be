/* fast_layers.h - the fast/ bodies of every layer kind (contracts in
 * core/layers.h), one file per official module, as in ref/. */
#ifndef SAMC_FAST_LAYERS_H
#define SAMC_FAST_LAYERS_H

#include "core/layers.h"

/* prepost.c */
samc_status samc_fast_preprocess(samc_ctx *ctx, const uint8_t *img, int h, int w, int size, samc_tensor *out);
samc_status samc_fast_postprocess(samc_ctx *ctx, const samc_tensor *lowres, int H, int W, samc_tensor *out);
/* hiera.c */
samc_status samc_fast_patch_embed(samc_ctx *ctx, const samc_conv2d *proj, const samc_tensor *x, samc_tensor *out);
samc_status samc_fast_hiera_block(samc_ctx *ctx, const samc_hiera_block *blk, const samc_tensor *x,
                                  samc_tensor *out);
/* fpn_neck.c */
samc_status samc_fast_fpn_neck(samc_ctx *ctx, const samc_fpn_neck *neck, const samc_tensor *xs, samc_tensor *out,
                               samc_tensor *pos);
/* conv.c */
samc_status samc_fast_conv2d_op(samc_ctx *ctx, const samc_conv2d *conv, const samc_tensor *x, samc_tensor *out);
/* prompt_encoder.c */
samc_status samc_fast_prompt_encoder(samc_ctx *ctx, const samc_prompt_encoder *pe, const float *coords,
                                     const int32_t *labels, int B, int N, const float *boxes,
                                     const samc_tensor *masks, samc_tensor *sparse, samc_tensor *dense);
samc_status samc_fast_dense_pe(samc_ctx *ctx, const samc_prompt_encoder *pe, samc_tensor *out);
/* twoway.c */
samc_status samc_fast_twoway_block(samc_ctx *ctx, const samc_twoway_block *blk, const samc_tensor *q,
                                   const samc_tensor *k, const samc_tensor *qpe, const samc_tensor *kpe,
                                   samc_tensor *q_out, samc_tensor *k_out);
samc_status samc_fast_twoway_final(samc_ctx *ctx, const samc_twoway_transformer *tr, const samc_tensor *q,
                                   const samc_tensor *k, const samc_tensor *qpe, const samc_tensor *kpe,
                                   samc_tensor *q_out);
/* mask_decoder.c */
samc_status samc_fast_mask_decoder_heads(samc_ctx *ctx, const samc_mask_decoder *dec, const samc_tensor *hs,
                                         const samc_tensor *keys, int emb_h, int emb_w, const samc_tensor *feat_s0,
                                         const samc_tensor *feat_s1, samc_tensor *masks, samc_tensor *iou,
                                         samc_tensor *obj);

/* Per-model caches kept next to the workspace (workspace.c). */
enum { FAST_CACHE_DENSE_PE, FAST_CACHE_ROPE, FAST_CACHE_N };
/* A zeroed block of `size` bytes for `slot`, kept until the model is freed;
 * NULL when out of memory. */
void *fast_ws_cache(samc_ctx *ctx, int slot, size_t size);
void fast_dense_pe_cache_free(void *cache);

#endif
