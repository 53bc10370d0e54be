/* ref_sam3.h - the ref/ bodies of the SAM 3 image layers (contracts in
 * core/models/sam3/sam3_layers.h), one file per official module, and the
 * small helpers they share. */
#ifndef SAMC_REF_SAM3_H
#define SAMC_REF_SAM3_H

#include <stdbool.h>

#include "core/models/sam3/sam3_layers.h"

/* ---- helpers (ref/sam3/common.c) ------------------------------------------ */

/* nn.MultiheadAttention (F.multi_head_attention_forward, no dropout) for one
 * batch element: q (Lq, d), k and v (Lk, d) as contiguous rows. bias (heads,
 * Lq, Lk) is the additive float attn_mask or NULL; kpm (Lk) the key padding
 * mask (nonzero = -inf) or NULL. out (Lq, d) after out_proj. */
samc_status samc_ref_sam3_mha(const samc_attention *a, const float *q, int Lq, const float *k,
                              const float *v, int Lk, const float *bias, const float *kpm,
                              float *out);

/* Rows of batch element b of a (L,B,C) (seq-first) or (B,L,C) (batch-first)
 * tensor, copied to / from a contiguous (L, C) block. */
void samc_ref_sam3_gather(const float *t, int L, int B, int C, bool batch_first, int b, float *dst);
void samc_ref_sam3_scatter(const float *src, int L, int B, int C, bool batch_first, int b, float *t);

/* GroupNorm over NCHW x (B, C, H, W), in place allowed. */
void samc_ref_group_norm(const float *x, int B, int H, int W, const samc_group_norm *g, float *y);

/* A samc_tensor shape check: ndim and each dim (-1 = any). */
bool samc_ref_sam3_shape_is(const samc_tensor *t, int ndim, const int64_t *dims);

/* ---- bodies -------------------------------------------------------------- */

/* processor.c (sam3/model/sam3_image_processor.py) */
samc_status samc_ref_sam3_preprocess(samc_ctx *ctx, const uint8_t *img, int h, int w, int R,
                                     samc_tensor *out);
samc_status samc_ref_sam3_post_scores(samc_ctx *ctx, const samc_tensor *logits,
                                      const samc_tensor *presence, samc_tensor *out);
samc_status samc_ref_sam3_post_boxes(samc_ctx *ctx, const samc_tensor *boxes, int H, int W,
                                     samc_tensor *out);
samc_status samc_ref_sam3_post_masks(samc_ctx *ctx, const samc_tensor *masks, int H, int W,
                                     samc_tensor *out);

/* vit.c (sam3/model/vitdet.py) */
samc_status samc_ref_sam3_vit_patch_embed(samc_ctx *ctx, const samc_sam3_vit_embed *e,
                                          const samc_tensor *x, samc_tensor *out);
samc_status samc_ref_sam3_vit_pos_ln_pre(samc_ctx *ctx, const samc_sam3_vit_embed *e,
                                         const samc_tensor *x, samc_tensor *out);
samc_status samc_ref_sam3_vit_block(samc_ctx *ctx, const samc_sam3_vit_block *blk,
                                    const samc_tensor *x, samc_tensor *out);

/* neck.c (sam3/model/necks.py) */
samc_status samc_ref_sam3_neck_level(samc_ctx *ctx, const samc_sam3_neck_level *lvl,
                                     const samc_tensor *x, samc_tensor *out);

/* text_encoder.c (sam3/model/text_encoder_ve.py) */
samc_status samc_ref_sam3_text_embed(samc_ctx *ctx, const samc_sam3_text_encoder *enc,
                                     const samc_tensor *ids, samc_tensor *out);
samc_status samc_ref_sam3_text_block(samc_ctx *ctx, const samc_sam3_text_block *blk,
                                     const samc_tensor *x, const samc_tensor *attn_mask,
                                     samc_tensor *out);
samc_status samc_ref_sam3_text_final(samc_ctx *ctx, const samc_sam3_text_encoder *enc,
                                     const samc_tensor *x, samc_tensor *tokens, samc_tensor *proj);
samc_status samc_ref_sam3_text_resize(samc_ctx *ctx, const samc_sam3_text_encoder *enc,
                                      const samc_tensor *tokens, samc_tensor *out);

/* geometry_encoder.c (sam3/model/geometry_encoders.py) */
samc_status samc_ref_sam3_geo_prompt(samc_ctx *ctx, const samc_sam3_geometry_encoder *g,
                                     const samc_tensor *points, const samc_tensor *point_mask,
                                     const samc_tensor *point_labels, const samc_tensor *boxes,
                                     const samc_tensor *box_mask, const samc_tensor *box_labels,
                                     const samc_tensor *img, int H, int W, samc_tensor *embeds,
                                     samc_tensor *mask);

/* encoder.c (sam3/model/encoder.py) */
samc_status samc_ref_sam3_enc_layer(samc_ctx *ctx, const samc_sam3_enc_layer *l,
                                    const samc_tensor *tgt, const samc_tensor *memory,
                                    const samc_tensor *tgt_kpm, const samc_tensor *mem_kpm,
                                    const samc_tensor *pos, const samc_tensor *query_pos,
                                    samc_tensor *out);
samc_status samc_ref_sam3_layer_norm(samc_ctx *ctx, const samc_norm *n, const samc_tensor *x,
                                     samc_tensor *out);

/* decoder.c (sam3/model/decoder.py) */
samc_status samc_ref_sam3_dec_layer(samc_ctx *ctx, const samc_sam3_dec_layer *l,
                                    const samc_tensor *tgt, const samc_tensor *query_pos,
                                    const samc_tensor *memory_text, const samc_tensor *text_mask,
                                    const samc_tensor *memory, const samc_tensor *memory_pos,
                                    const samc_tensor *cross_attn_mask,
                                    const samc_tensor *presence, samc_tensor *out,
                                    samc_tensor *presence_out);
samc_status samc_ref_sam3_dec_query_pos(samc_ctx *ctx, const samc_sam3_decoder *dec,
                                        const samc_tensor *ref, samc_tensor *sine,
                                        samc_tensor *query_pos);
samc_status samc_ref_sam3_dec_boxrpb(samc_ctx *ctx, const samc_sam3_decoder *dec,
                                     const samc_tensor *ref, int H, int W, samc_tensor *out);
samc_status samc_ref_sam3_dec_refine(samc_ctx *ctx, const samc_sam3_decoder *dec,
                                     const samc_tensor *out, const samc_tensor *ref,
                                     samc_tensor *normed, samc_tensor *new_ref);
samc_status samc_ref_sam3_dec_presence(samc_ctx *ctx, const samc_sam3_decoder *dec,
                                       const samc_tensor *presence, samc_tensor *out);

/* scoring.c (sam3/model/model_misc.py: DotProductScoring) */
samc_status samc_ref_sam3_dot_scoring(samc_ctx *ctx, const samc_sam3_scoring *s,
                                      const samc_tensor *hs, const samc_tensor *prompt,
                                      const samc_tensor *prompt_mask, samc_tensor *out);

/* segmentation.c (sam3/model/maskformer_segmentation.py) */
samc_status samc_ref_sam3_seg_cross_attend(samc_ctx *ctx, const samc_sam3_seg_head *s,
                                           const samc_tensor *memory, const samc_tensor *prompt,
                                           const samc_tensor *prompt_mask, samc_tensor *out);
samc_status samc_ref_sam3_pixel_decoder(samc_ctx *ctx, const samc_sam3_seg_head *s,
                                        const samc_tensor *feats, int n, samc_tensor *out);
samc_status samc_ref_sam3_seg_heads(samc_ctx *ctx, const samc_sam3_seg_head *s,
                                    const samc_tensor *pixel, const samc_tensor *queries,
                                    samc_tensor *masks, samc_tensor *semantic);

#endif
