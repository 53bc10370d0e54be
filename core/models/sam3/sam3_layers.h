/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_layers.h - the layer kinds of the SAM 3 image model (the detector
 * of sam3.pt): weight records, one signature per kind, and the ops table
 * every implementation fills (core/runtime/impl.h, SAMC_OPS_SAM3). The
 * official code is facebookresearch/sam3 (the sam3/model/ Python files);
 * every record names the class it mirrors. The parts that hold these
 * records and call these kinds are core/models/sam3/sam3_parts.h.
 *
 * Conventions (in addition to core/nn/records.h)
 *  - Tensors are contiguous float32 in the layout PyTorch has at that point:
 *    the ViT works in BHWC, the neck and heads in NCHW, the DETR parts
 *    sequence-first (L, B, C) except the fusion encoder's layers, which are
 *    batch-first (B, L, C) as nn.MultiheadAttention(batch_first=True) sees them.
 *  - Boolean masks (key padding masks, prompt masks) are float tensors holding
 *    0/1 (1 = True = padding), the dump's int32 read as float.
 *  - nn.MultiheadAttention's packed in_proj_weight (3d, d) is bound as three
 *    samc_linear views (rows [0,d), [d,2d), [2d,3d)) of a samc_attention
 *    (core/nn/records.h), internal_dim = d, heads split head-major.
 *  - LayerNorm eps is 1e-5 everywhere in the SAM 3 detector (nn.LayerNorm
 *    default, and the ViT's partial(nn.LayerNorm, eps=1e-5)).
 */
#ifndef SAMC_CORE_MODELS_SAM3_LAYERS_H
#define SAMC_CORE_MODELS_SAM3_LAYERS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/models/sam3/sam3_config.h"
#include "core/nn/records.h"

/* ---- primitives the SAM 2 records lack ------------------------------------ */

typedef struct samc_group_norm { /* nn.GroupNorm(groups, C), affine */
    const float *w, *b;          /* (C) */
    int C, groups;
    float eps;                   /* 1e-5 */
} samc_group_norm;

/* ---- vision: sam3/model/vitdet.py ---------------------------------------- */

/* ViT.forward up to the blocks: patch_embed (Conv2d k = s = patch, no bias in
 * SAM 3, then BHWC), + get_abs_pos(tiling), ln_pre. */
typedef struct samc_sam3_vit_embed {
    samc_conv2d patch;       /* patch_embed.proj */
    const float *pos_embed;  /* (1, npos, C) or NULL (use_abs_pos False) */
    int pos_grid;            /* side of the pos grid without the cls slot */
    bool pos_has_cls;        /* pretrain_use_cls_token: pos_embed[0] is the cls slot */
    bool pos_tile;           /* tile_abs_pos (the only mode supported; bicubic is not) */
    bool has_ln_pre;
    samc_norm ln_pre;
} samc_sam3_vit_embed;

/* vitdet.Block + Attention (use_rope, no rel-pos, no cls token, no LayerScale). */
typedef struct samc_sam3_vit_block {
    int dim, heads;
    int window;              /* 0 = global attention */
    samc_norm norm1, norm2;
    samc_linear qkv;         /* dim -> 3 dim: [q | k | v], heads head-major inside each */
    samc_linear proj;
    samc_linear fc1, fc2;    /* timm Mlp: fc1, GELU (erf), fc2 */
    /* attn.freqs_cis: complex64 as (re, im) pairs, (rope_tokens, head_dim/2, 2),
     * token t = y * side + x of the window (window blocks) or of the whole map
     * (global blocks). NULL = no RoPE. */
    const float *freqs_cis;
    int rope_tokens;
} samc_sam3_vit_block;

/* One branch of necks.Sam3DualViTDetNeck.convs (scale 4, 2, 1 or 0.5). */
typedef struct samc_sam3_neck_level {
    float scale;
    samc_conv_t2d dconv0;    /* scale 4: dconv_2x2_0; scale 2: dconv_2x2 */
    samc_conv_t2d dconv1;    /* scale 4: dconv_2x2_1 (after GELU) */
    samc_conv2d conv_1x1, conv_3x3;
} samc_sam3_neck_level;

typedef struct samc_sam3_neck {
    int n_levels, d_model;
    samc_sam3_neck_level levels[SAMC_SAM3_NECK_MAX];
    samc_sine_pe pe;         /* position_encoding.PositionEmbeddingSine (same numerics as SAM 2's) */
} samc_sam3_neck;

/* ---- text: sam3/model/text_encoder_ve.py ---------------------------------- */

/* ResidualAttentionBlock: x += attn(ln_1(x), mask); x += mlp(ln_2(x)). */
typedef struct samc_sam3_text_block {
    int width, heads;
    samc_norm ln_1, ln_2;
    samc_attention attn;     /* nn.MultiheadAttention(batch_first=True), packed in_proj */
    samc_linear c_fc, c_proj; /* GELU (erf) between */
} samc_sam3_text_block;

/* TextTransformer + VETextEncoder.resizer. */
typedef struct samc_sam3_text_encoder {
    int width, heads, n_layers, context_length, vocab, proj_dim;
    const float *token_embedding;      /* (vocab, width) */
    const float *positional_embedding; /* (context_length, width) */
    samc_sam3_text_block layers[SAMC_SAM3_TEXT_MAX_LAYERS];
    bool causal;                       /* !no_causal_mask */
    bool has_ln_final;
    samc_norm ln_final;
    const float *text_projection;      /* (width, proj_dim): pooled @ P (output unused downstream) */
    samc_linear resizer;               /* width -> d_model */
} samc_sam3_text_encoder;

/* ---- DETR parts: encoder.py, geometry_encoders.py, decoder.py ------------- */

/* encoder.TransformerEncoderLayer (pre-norm; used by the fusion encoder and
 * the geometry encoder), FFN with ReLU. */
typedef struct samc_sam3_enc_layer {
    int d_model, heads;
    bool batch_first;        /* its MultiheadAttentions' batch_first (fusion: true, geometry: false) */
    bool pos_at_attn;        /* q = k = norm1(x) + query_pos in self-attention */
    bool pos_at_cross_queries, pos_at_cross_keys;
    samc_attention self_attn, cross_attn; /* cross_attn_image */
    samc_linear linear1, linear2;
    samc_norm norm1, norm2, norm3;
} samc_sam3_enc_layer;

/* geometry_encoders.SequenceGeometryEncoder (boxes not encoded as points, no
 * mask encoder). A projection pointer is NULL when its option is off. */
typedef struct samc_sam3_geometry_encoder {
    int d_model, roi_size;
    int feat_side;                     /* the side of the feature map it reads (op-test inputs) */
    const float *label_embed;          /* (2, d) */
    const float *cls_embed;            /* (1, d) or NULL */
    samc_linear points_direct, points_pool, points_pos; /* .w == NULL when off */
    samc_linear boxes_direct, boxes_pos; /* boxes_pos: d + 2 -> d */
    samc_conv2d boxes_pool;            /* Conv2d(d, d, roi_size) on the roi_align output; .w NULL when off */
    bool has_img_pre_norm;
    samc_norm img_pre_norm;
    bool has_final_proj;
    samc_linear final_proj;
    samc_norm norm;
    samc_sine_pe pe;                   /* pos_enc: num_pos_feats d, temperature, scale */
    int n_layers;
    samc_sam3_enc_layer layers[SAMC_SAM3_MAX_ENC_LAYERS];
    samc_norm encode_norm;
} samc_sam3_geometry_encoder;

/* encoder.TransformerEncoderFusion (add_pooled_text_to_img_feat False). */
typedef struct samc_sam3_fusion_encoder {
    int d_model, n_layers;
    int feat_side;                     /* the side of the feature map it reads (op-test inputs) */
    samc_sam3_enc_layer layers[SAMC_SAM3_MAX_ENC_LAYERS];
} samc_sam3_fusion_encoder;

/* decoder.TransformerDecoderLayer (post-norm): self-attn -> norm2, text
 * cross-attn -> catext_norm, image cross-attn -> norm1, FFN -> norm3. */
typedef struct samc_sam3_dec_layer {
    int d_model, heads;
    samc_attention self_attn, ca_text, cross_attn;
    bool use_text_cross_attention;
    samc_norm norm1, norm2, norm3, catext_norm;
    samc_linear linear1, linear2; /* ReLU between */
} samc_sam3_dec_layer;

/* decoder.TransformerDecoder (box_refine, return_intermediate, presence token). */
typedef struct samc_sam3_decoder {
    int d_model, heads, n_layers, num_queries;
    int feat_side;                     /* the side of the feature map it reads (op-test inputs) */
    samc_sam3_dec_layer layers[SAMC_SAM3_MAX_ENC_LAYERS];
    samc_norm norm;
    samc_mlp bbox_embed;               /* MLP(d, d, 4, 3) */
    const float *query_embed;          /* (num_queries, d) */
    const float *reference_points;     /* (num_queries, 4), logits of cx, cy, w, h */
    int boxrpb;                        /* SAMC_SAM3_RPB_* */
    samc_mlp boxrpb_x, boxrpb_y;       /* MLP(n_in, d, heads, 2) */
    bool has_presence;
    const float *presence_token;       /* (1, d) */
    samc_mlp presence_head;            /* MLP(d, d, 1, 3) */
    samc_norm presence_out_norm;
    samc_mlp ref_point_head;           /* MLP(2d, d, d, 2) */
    bool normed_output_consistently;   /* use_normed_output_consistently */
} samc_sam3_decoder;

/* model_misc.DotProductScoring with prompt_mlp = MLP(residual, out_norm). */
typedef struct samc_sam3_scoring {
    int d_model, d_proj;
    bool has_prompt_mlp;
    samc_mlp prompt_mlp;               /* ReLU between layers */
    bool prompt_mlp_residual;
    bool has_prompt_mlp_norm;
    samc_norm prompt_mlp_norm;         /* out_norm */
    samc_linear prompt_proj, hs_proj;
    bool clamp;
    float clamp_max;
} samc_sam3_scoring;

/* maskformer_segmentation.UniversalSegmentationHead + PixelDecoder + MaskPredictor. */
typedef struct samc_sam3_seg_head {
    bool present;                       /* the model has one (segmentation_head is not None) */
    int d_model;
    int feat_side;                      /* the side of its lowest-resolution input (op-test inputs) */
    bool has_cross_attend;
    samc_attention cross_attend_prompt; /* seq-first MultiheadAttention */
    samc_norm cross_attn_norm;
    int n_convs;                        /* conv_layers built (upsampling stages) */
    bool shared_conv;
    bool interp_nearest;                /* interpolation_mode "nearest" (the only one supported) */
    samc_conv2d convs[SAMC_SAM3_PIXDEC_MAX];
    samc_group_norm norms[SAMC_SAM3_PIXDEC_MAX];
    samc_conv2d instance_seg_head, semantic_seg_head;
    samc_mlp mask_embed;                /* MLP(d, d, d, 3) */
} samc_sam3_seg_head;

/* ---- signatures ---------------------------------------------------------- */

/* Sam3Processor.transform: uint8 HWC RGB -> (1,3,R,R): antialiased bilinear
 * resize of the uint8 image rounded back to uint8, /255, (x-0.5)/0.5. */
typedef samc_status samc_sam3_preprocess_fn(samc_ctx *ctx, const uint8_t *img, int h, int w, int R,
                                            samc_tensor *out);

/* PatchEmbed: (B,3,S,S) -> (B,S/p,S/p,C). */
typedef samc_status samc_sam3_vit_patch_embed_fn(samc_ctx *ctx, const samc_sam3_vit_embed *e, const samc_tensor *x,
                                                 samc_tensor *out);
/* ViT.forward between patch_embed and the blocks: x + tiled abs pos, ln_pre.
 * (B,H,W,C) -> (B,H,W,C). */
typedef samc_status samc_sam3_vit_pos_ln_pre_fn(samc_ctx *ctx, const samc_sam3_vit_embed *e, const samc_tensor *x,
                                                samc_tensor *out);
/* vitdet.Block: (B,H,W,C) -> (B,H,W,C). */
typedef samc_status samc_sam3_vit_block_fn(samc_ctx *ctx, const samc_sam3_vit_block *blk, const samc_tensor *x,
                                           samc_tensor *out);
/* One neck branch convs[i]: (B,C,H,W) -> (B,d,H*s,W*s). */
typedef samc_status samc_sam3_neck_level_fn(samc_ctx *ctx, const samc_sam3_neck_level *lvl, const samc_tensor *x,
                                            samc_tensor *out);

/* TextTransformer: token_embedding(ids) + positional_embedding[:L].
 * ids (B,L) as float -> (B,L,W). */
typedef samc_status samc_sam3_text_embed_fn(samc_ctx *ctx, const samc_sam3_text_encoder *enc, const samc_tensor *ids,
                                            samc_tensor *out);
/* ResidualAttentionBlock: x (B,L,W), attn_mask (L,L) additive float or
 * NULL -> (B,L,W). */
typedef samc_status samc_sam3_text_block_fn(samc_ctx *ctx, const samc_sam3_text_block *blk, const samc_tensor *x,
                                            const samc_tensor *attn_mask, samc_tensor *out);
/* TextTransformer tail: tokens = ln_final(x) (B,L,W); proj = tokens @
 * text_projection (B,L,P) (pool_type "none"; proj NULL: not computed). */
typedef samc_status samc_sam3_text_final_fn(samc_ctx *ctx, const samc_sam3_text_encoder *enc, const samc_tensor *x,
                                            samc_tensor *tokens, samc_tensor *proj);
/* VETextEncoder: resizer(tokens.transpose(0, 1)): (B,L,W) -> (L,B,d). */
typedef samc_status samc_sam3_text_resize_fn(samc_ctx *ctx, const samc_sam3_text_encoder *enc,
                                             const samc_tensor *tokens, samc_tensor *out);

/* SequenceGeometryEncoder.forward up to the layers: point / box encodings,
 * labels, CLS, padded concatenation, final_proj + norm.
 * points (Np,B,2), point_mask (B,Np), point_labels (Np,B); boxes (Nb,B,4)
 * cxcywh, box_mask (B,Nb), box_labels (Nb,B) (any of them may have N = 0);
 * img (HW,B,C) the raw seq-first P2 features of an H x W map.
 * -> embeds (Np+Nb+cls, B, C), mask (B, Np+Nb+cls). */
typedef samc_status samc_sam3_geo_prompt_fn(samc_ctx *ctx, const samc_sam3_geometry_encoder *g,
                                            const samc_tensor *points, const samc_tensor *point_mask,
                                            const samc_tensor *point_labels, const samc_tensor *boxes,
                                            const samc_tensor *box_mask, const samc_tensor *box_labels,
                                            const samc_tensor *img, int H, int W, samc_tensor *embeds,
                                            samc_tensor *mask);
/* TransformerEncoderLayer.forward_pre. tgt (L,B,C) or (B,L,C) by
 * layer->batch_first, memory likewise (S rows); tgt_kpm (B,L) and mem_kpm
 * (B,S) padding masks or NULL; pos (memory's) and query_pos (tgt's) or NULL. */
typedef samc_status samc_sam3_enc_layer_fn(samc_ctx *ctx, const samc_sam3_enc_layer *l, const samc_tensor *tgt,
                                           const samc_tensor *memory, const samc_tensor *tgt_kpm,
                                           const samc_tensor *mem_kpm, const samc_tensor *pos,
                                           const samc_tensor *query_pos, samc_tensor *out);

/* TransformerDecoderLayer.forward (no DAC): tgt (nq,B,d), query_pos
 * (nq,B,d), memory_text (T,B,d) with text_mask (B,T) or NULL, memory and
 * memory_pos (S,B,d), cross_attn_mask (B*heads, nq, S) additive or NULL,
 * presence (1,B,d) or NULL -> out (nq,B,d), presence_out (1,B,d). */
typedef samc_status samc_sam3_dec_layer_fn(samc_ctx *ctx, const samc_sam3_dec_layer *l, const samc_tensor *tgt,
                                           const samc_tensor *query_pos, const samc_tensor *memory_text,
                                           const samc_tensor *text_mask, const samc_tensor *memory,
                                           const samc_tensor *memory_pos, const samc_tensor *cross_attn_mask,
                                           const samc_tensor *presence, samc_tensor *out,
                                           samc_tensor *presence_out);
/* gen_sineembed_for_position(ref, d) and ref_point_head: ref (nq,B,4)
 * cxcywh in [0,1] -> sine (nq,B,2d), query_pos (nq,B,d). */
typedef samc_status samc_sam3_dec_query_pos_fn(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *ref,
                                               samc_tensor *sine, samc_tensor *query_pos);
/* TransformerDecoder._get_rpb_matrix(ref, (H, W)).flatten(0, 1):
 * ref (nq,B,4) -> (B*heads, nq, H*W). */
typedef samc_status samc_sam3_dec_boxrpb_fn(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *ref,
                                            int H, int W, samc_tensor *out);
/* After a layer: normed = norm(out) (nq,B,d); new_ref = sigmoid(bbox_embed(
 * normed) + inverse_sigmoid(ref)) (nq,B,4). */
typedef samc_status samc_sam3_dec_refine_fn(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *out,
                                            const samc_tensor *ref, samc_tensor *normed, samc_tensor *new_ref);

/* DotProductScoring.forward: hs (Ly,B,Q,d), prompt (T,B,d), prompt_mask
 * (B,T) -> (Ly,B,Q,1). */
typedef samc_status samc_sam3_dot_scoring_fn(samc_ctx *ctx, const samc_sam3_scoring *s, const samc_tensor *hs,
                                             const samc_tensor *prompt, const samc_tensor *prompt_mask,
                                             samc_tensor *out);

/* UniversalSegmentationHead: memory + cross_attend_prompt(cross_attn_norm(
 * memory), prompt, prompt, key_padding_mask): (S,B,d) -> (S,B,d). */
typedef samc_status samc_sam3_seg_cross_attend_fn(samc_ctx *ctx, const samc_sam3_seg_head *s,
                                                  const samc_tensor *memory, const samc_tensor *prompt,
                                                  const samc_tensor *prompt_mask, samc_tensor *out);
/* PixelDecoder.forward: feats[0..n-1] (B,d,H_i,W_i), high -> low resolution
 * -> (B,d,H_0,W_0). */
typedef samc_status samc_sam3_pixel_decoder_fn(samc_ctx *ctx, const samc_sam3_seg_head *s, const samc_tensor *feats,
                                               int n, samc_tensor *out);
/* instance_seg_head, mask_embed(queries) . instance embeds, and
 * semantic_seg_head: pixel (B,d,H,W), queries (B,Q,d) -> masks (B,Q,H,W),
 * semantic (B,1,H,W). */
typedef samc_status samc_sam3_seg_heads_fn(samc_ctx *ctx, const samc_sam3_seg_head *s, const samc_tensor *pixel,
                                           const samc_tensor *queries, samc_tensor *masks, samc_tensor *semantic);

/* Sam3Processor._forward_grounding: probs = sigmoid(logits) *
 * sigmoid(presence): logits (B,Q,1), presence (B,1) -> (B,Q). */
typedef samc_status samc_sam3_post_scores_fn(samc_ctx *ctx, const samc_tensor *logits, const samc_tensor *presence,
                                             samc_tensor *out);
/* cxcywh -> xyxy times (W,H,W,H): (M,4) -> (M,4). */
typedef samc_status samc_sam3_post_boxes_fn(samc_ctx *ctx, const samc_tensor *boxes, int H, int W, samc_tensor *out);
/* bilinear (align_corners False) to H x W, then sigmoid: (M,1,h,w) -> (M,1,H,W). */
typedef samc_status samc_sam3_post_masks_fn(samc_ctx *ctx, const samc_tensor *masks, int H, int W, samc_tensor *out);

/* ---- the ops table -------------------------------------------------------- */

/* The kinds, in table order, each prefixed sam3_ (its bodies are
 * samc_<impl>_sam3_<kind>: ref/sam3/, fast/sam3/). An implementation's
 * table lists each body by name (ref/ops_tables.c, fast/ops_tables.c);
 * tests/test_registry.c checks from this list that ref and fast leave none
 * out. SAM 3's LayerNorms and plain MLPs are the shared kinds of
 * core/nn/nn_ops.h. */
#define SAMC_SAM3_OPS(X)                                                                                    \
    X(sam3_preprocess) X(sam3_vit_patch_embed) X(sam3_vit_pos_ln_pre) X(sam3_vit_block) X(sam3_neck_level)   \
    X(sam3_text_embed) X(sam3_text_block) X(sam3_text_final) X(sam3_text_resize) X(sam3_geo_prompt)          \
    X(sam3_enc_layer) X(sam3_dec_layer) X(sam3_dec_query_pos) X(sam3_dec_boxrpb) X(sam3_dec_refine)          \
    X(sam3_dot_scoring) X(sam3_seg_cross_attend) X(sam3_pixel_decoder) X(sam3_seg_heads)                    \
    X(sam3_post_scores) X(sam3_post_boxes) X(sam3_post_masks)

typedef struct samc_sam3_ops {
#define SAMC_X(kind) samc_##kind##_fn *kind;
    SAMC_SAM3_OPS(SAMC_X)
#undef SAMC_X
} samc_sam3_ops;

#endif
