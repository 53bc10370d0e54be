/* fast_sam3.h - the fast/ bodies of the SAM 3 layer kinds (contracts:
 * core/models/sam3/sam3_layers.h), one for every kind. */
#ifndef SAMC_FAST_SAM3_H
#define SAMC_FAST_SAM3_H

#include <stdbool.h>

#include "core/models/sam3/sam3_layers.h"

samc_status samc_fast_sam3_vit_patch_embed(samc_ctx *ctx, const samc_sam3_vit_embed *e, const samc_tensor *x,
                                           samc_tensor *out);
samc_status samc_fast_sam3_vit_block(samc_ctx *ctx, const samc_sam3_vit_block *blk, const samc_tensor *x,
                                     samc_tensor *out);

samc_status samc_fast_sam3_vit_pos_ln_pre(samc_ctx *ctx, const samc_sam3_vit_embed *e, const samc_tensor *x,
                                          samc_tensor *out);
samc_status samc_fast_sam3_text_final(samc_ctx *ctx, const samc_sam3_text_encoder *enc, const samc_tensor *x,
                                      samc_tensor *tokens, samc_tensor *proj);
samc_status samc_fast_sam3_text_resize(samc_ctx *ctx, const samc_sam3_text_encoder *enc, const samc_tensor *tokens,
                                       samc_tensor *out);
samc_status samc_fast_sam3_dec_refine(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *out,
                                      const samc_tensor *ref, samc_tensor *normed, samc_tensor *new_ref);
samc_status samc_fast_sam3_neck_level(samc_ctx *ctx, const samc_sam3_neck_level *lvl, const samc_tensor *x,
                                      samc_tensor *out);
samc_status samc_fast_sam3_text_block(samc_ctx *ctx, const samc_sam3_text_block *blk, const samc_tensor *x,
                                      const samc_tensor *attn_mask, samc_tensor *out);
samc_status samc_fast_sam3_geo_prompt(samc_ctx *ctx, const samc_sam3_geometry_encoder *g,
                                      const samc_tensor *points, const samc_tensor *point_mask,
                                      const samc_tensor *point_labels, const samc_tensor *boxes,
                                      const samc_tensor *box_mask, const samc_tensor *box_labels,
                                      const samc_tensor *img, int H, int W, samc_tensor *embeds, samc_tensor *mask);
samc_status samc_fast_sam3_enc_layer(samc_ctx *ctx, const samc_sam3_enc_layer *l, const samc_tensor *tgt,
                                     const samc_tensor *memory, const samc_tensor *tgt_kpm,
                                     const samc_tensor *mem_kpm, const samc_tensor *pos,
                                     const samc_tensor *query_pos, samc_tensor *out);
samc_status samc_fast_sam3_dec_layer(samc_ctx *ctx, const samc_sam3_dec_layer *l, const samc_tensor *tgt,
                                     const samc_tensor *query_pos, const samc_tensor *memory_text,
                                     const samc_tensor *text_mask, const samc_tensor *memory,
                                     const samc_tensor *memory_pos, const samc_tensor *cam,
                                     const samc_tensor *presence, samc_tensor *out, samc_tensor *presence_out);
samc_status samc_fast_sam3_seg_cross_attend(samc_ctx *ctx, const samc_sam3_seg_head *s, const samc_tensor *memory,
                                            const samc_tensor *prompt, const samc_tensor *prompt_mask,
                                            samc_tensor *out);
samc_status samc_fast_sam3_pixel_decoder(samc_ctx *ctx, const samc_sam3_seg_head *s, const samc_tensor *feats,
                                         int n, samc_tensor *out);
samc_status samc_fast_sam3_seg_heads(samc_ctx *ctx, const samc_sam3_seg_head *s, const samc_tensor *pixel,
                                     const samc_tensor *queries, samc_tensor *masks, samc_tensor *semantic);
samc_status samc_fast_sam3_text_embed(samc_ctx *ctx, const samc_sam3_text_encoder *enc, const samc_tensor *ids,
                                      samc_tensor *out);
samc_status samc_fast_sam3_dec_query_pos(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *ref,
                                         samc_tensor *sine, samc_tensor *query_pos);
samc_status samc_fast_sam3_dec_presence(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *presence,
                                        samc_tensor *out);
samc_status samc_fast_sam3_dec_boxrpb(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *ref, int H,
                                      int W, samc_tensor *out);
samc_status samc_fast_sam3_dot_scoring(samc_ctx *ctx, const samc_sam3_scoring *s, const samc_tensor *hs,
                                       const samc_tensor *prompt, const samc_tensor *prompt_mask, samc_tensor *out);
samc_status samc_fast_sam3_preprocess(samc_ctx *ctx, const uint8_t *img, int h, int w, int R, samc_tensor *out);
samc_status samc_fast_sam3_post_scores(samc_ctx *ctx, const samc_tensor *logits, const samc_tensor *presence,
                                       samc_tensor *out);
samc_status samc_fast_sam3_post_boxes(samc_ctx *ctx, const samc_tensor *boxes, int H, int W, samc_tensor *out);
samc_status samc_fast_sam3_post_masks(samc_ctx *ctx, const samc_tensor *masks, int H, int W, samc_tensor *out);
samc_status samc_fast_sam3_layer_norm(samc_ctx *ctx, const samc_norm *n, const samc_tensor *x, samc_tensor *out);

extern const samc_sam3_ops samc_fast_sam3_ops;

/* ---- nn.MultiheadAttention on one batch element (mha.c) ---------------------------- */

typedef struct fast_mha_io {
    const float *q, *k, *v;      /* query rows (Lq), key and value rows (Lk), ld* floats apart */
    int64_t ldq, ldk, ldv;
    int Lq, Lk;
    const float *bias;           /* additive float mask, head h at bias + h * bias_hstride (Lq x Lk), or NULL */
    int64_t bias_hstride;        /* 0: one mask for every head */
    const float *kpm;            /* key padding mask (Lk), nonzero = masked, or NULL */
    float *out;                  /* Lq rows after out_proj, ldo apart */
    int64_t ldo;
    bool accumulate;             /* out += attention (a residual add) */
} fast_mha_io;

/* Floats of scratch samc__fast_sam3_mha needs. */
size_t samc__fast_sam3_mha_scratch(const samc_attention *a, int Lq, int Lk);
void samc__fast_sam3_mha(samc_ctx *ctx, int nt, const samc_attention *a, const fast_mha_io *io, float *scratch);

#endif
