/* SPDX-License-Identifier: Apache-2.0 */
/* tracker_layers.h - the layer kinds of the SAM 2 tracker (SAM2Base's SAM
 * heads and memory path), which SAM 2 mounts at its own roots and SAM 3 at
 * tracker.*: weight records, one signature per kind, and the ops table
 * every implementation fills (core/runtime/impl.h, SAMC_OPS_TRACKER).
 *
 * Conventions: core/nn/records.h. Kinds both families use everywhere
 * (conv2d, layer_norm, mlp) are in core/nn/nn_ops.h. Each kind has one
 * body per implementation (ref/tracker/, fast/tracker/, same file names).
 */
#ifndef SAMC_MODELS_TRACKER_LAYERS_H
#define SAMC_MODELS_TRACKER_LAYERS_H

#include "core/nn/records.h"

struct samc_frame_features; /* tracker.h */

/* ---- SAM heads ---------------------------------------------------------- */

/* sam.prompt_encoder.PromptEncoder */
typedef struct samc_prompt_encoder {
    int embed_dim;
    int emb_h, emb_w;             /* image_embedding_size */
    int input_h, input_w;         /* input_image_size */
    const float *gauss;           /* positional_encoding_gaussian_matrix (2, embed_dim/2) */
    const float *point_embed[4];  /* (embed_dim) each: neg, pos, box TL, box BR */
    const float *not_a_point;     /* (embed_dim) */
    const float *no_mask;         /* (embed_dim) */
    samc_conv2d md_conv0;         /* mask_downscaling.0: 1 -> c/4, k2 s2 */
    samc_norm md_norm1;           /* mask_downscaling.1: LayerNorm2d */
    samc_conv2d md_conv3;         /* mask_downscaling.3: c/4 -> c, k2 s2 */
    samc_norm md_norm4;           /* mask_downscaling.4 */
    samc_conv2d md_conv6;         /* mask_downscaling.6: c -> embed_dim, k1 */
} samc_prompt_encoder;

/* sam.transformer.TwoWayAttentionBlock */
typedef struct samc_twoway_block {
    samc_attention self_attn, cross_t2i, cross_i2t;
    samc_linear mlp_fc1, mlp_fc2; /* ReLU between */
    samc_norm norm1, norm2, norm3, norm4;
    bool skip_first_layer_pe;
} samc_twoway_block;

#define SAMC_TWOWAY_MAX_DEPTH 8
typedef struct samc_twoway_transformer {
    int depth;
    samc_twoway_block layers[SAMC_TWOWAY_MAX_DEPTH];
    samc_attention final_attn;    /* final_attn_token_to_image */
    samc_norm norm_final;
} samc_twoway_transformer;

#define SAMC_MAX_MASK_TOKENS 8
/* sam.mask_decoder.MaskDecoder */
typedef struct samc_mask_decoder {
    int dim;                      /* transformer_dim */
    int emb;                      /* the image embedding's side (masks are 4 emb) */
    int num_mask_tokens;          /* num_multimask_outputs + 1 */
    bool pred_obj_scores, pred_obj_scores_mlp, use_high_res_features, iou_sigmoid;
    bool trace_high_res;          /* conv_s0/s1 are parity points (SAM 3's dump format) */
    bool dynamic_multimask_via_stability, use_multimask_token_for_obj_ptr;
    float dynamic_multimask_stability_delta, dynamic_multimask_stability_thresh;
    const float *iou_token;       /* (1, dim) */
    const float *mask_tokens;     /* (num_mask_tokens, dim) */
    const float *obj_score_token; /* (1, dim) or NULL */
    samc_twoway_transformer transformer;
    samc_conv_t2d up0;            /* output_upscaling.0: dim -> dim/4 */
    samc_norm up_norm;            /* output_upscaling.1: LayerNorm2d */
    samc_conv_t2d up1;            /* output_upscaling.3: dim/4 -> dim/8 */
    samc_conv2d conv_s0, conv_s1; /* high-res projections (used by forward_image) */
    samc_mlp hyper[SAMC_MAX_MASK_TOKENS];
    samc_mlp iou_head;
    samc_mlp obj_head;            /* 1 layer (Linear) when !pred_obj_scores_mlp */
} samc_mask_decoder;

/* ---- memory path (video) ------------------------------------------------ */

#define SAMC_MAX_DOWNSAMPLE_LAYERS 8
/* memory_encoder.MaskDownSampler: n x [Conv2d(k, s, p) -> LayerNorm2d -> GELU], then Conv2d 1x1. */
typedef struct samc_mask_downsampler {
    int interpol_h, interpol_w;                  /* the mask's size first (SAM 3's interpol_size), 0: as it is */
    int n_layers;
    samc_conv2d convs[SAMC_MAX_DOWNSAMPLE_LAYERS];
    samc_norm norms[SAMC_MAX_DOWNSAMPLE_LAYERS]; /* eps 1e-6 */
    samc_conv2d proj;                            /* final 1x1 to embed_dim */
} samc_mask_downsampler;

/* memory_encoder.CXBlock: x + gamma * pw2(GELU(pw1(LN2d(dwconv(x))))) */
typedef struct samc_cxblock {
    samc_conv2d dwconv;   /* groups == dim when use_dwconv */
    samc_norm norm;       /* LayerNorm2d, eps 1e-6 */
    samc_linear pw1, pw2; /* dim -> 4 dim -> dim, per pixel */
    const float *gamma;   /* (dim) or NULL when layer_scale_init_value <= 0 */
} samc_cxblock;

#define SAMC_MAX_FUSER_LAYERS 8
/* memory_encoder.MemoryEncoder */
typedef struct samc_memory_encoder {
    samc_mask_downsampler downsampler;
    samc_conv2d pix_feat_proj;  /* 1x1 in_dim -> in_dim */
    int n_fuser;
    samc_cxblock fuser[SAMC_MAX_FUSER_LAYERS];
    bool has_out_proj;          /* out_dim != in_dim */
    samc_conv2d out_proj;
    samc_sine_pe pe;            /* of the output (out_dim channels) */
    int in_dim, out_dim;
    int emb, image_size;        /* the feature map's and the masks' side */
} samc_memory_encoder;

/* sam.transformer.RoPEAttention */
typedef struct samc_rope_attention {
    samc_attention attn;        /* q: d_model -> internal, k/v: kv_in -> internal */
    float theta;
    bool rope_k_repeat;
    int feat_w, feat_h;         /* the table's grid when the query length matches */
} samc_rope_attention;

/* memory_attention.MemoryAttentionLayer (pre-norm, ReLU FFN) */
typedef struct samc_memory_attention_layer {
    samc_rope_attention self_attn, cross_attn;
    samc_linear linear1, linear2;
    samc_norm norm1, norm2, norm3;            /* nn.LayerNorm default eps 1e-5 */
    bool pos_enc_at_attn, pos_enc_at_cross_attn_queries, pos_enc_at_cross_attn_keys;
} samc_memory_attention_layer;

#define SAMC_MAX_MEMATTN_LAYERS 8
typedef struct samc_memory_attention {
    int n_layers;
    samc_memory_attention_layer layers[SAMC_MAX_MEMATTN_LAYERS];
    samc_norm norm;
    bool pos_enc_at_input;
    int d_model;
    int emb, mem_dim, num_maskmem; /* the frame's token grid, the memory's channels and frames */
    bool sam3_io;                  /* SAM 3's TransformerEncoderCrossAttention: in src / prompt (+ _pos),
                                      out {memory, pos_embed} */
} samc_memory_attention;

/* What SAM2Base makes of the backbone for the SAM heads (samc_tracker_
 * features): forward_image's conv_s0 / conv_s1 on levels 0 and 1 (NULL
 * when the config has no high-res features) and no_mem_embed added to the
 * last level for the image embedding (NULL: not added). */
typedef struct samc_tracker_feature_spec {
    const samc_conv2d *conv_s0, *conv_s1;
    const float *no_mem_embed;
    int emb;                      /* the last level's side */
} samc_tracker_feature_spec;

/* ---- signatures ---------------------------------------------------------- */

/* PromptEncoder.forward. coords (B,N,2) in input-image pixels, labels (B,N)
 * (N == 0: points=None). boxes (B,4) or NULL. masks (B,1,4*emb_h,4*emb_w) or
 * NULL. sparse: (B, N + (N>0 && !boxes) + 2*(boxes?1:0), embed_dim);
 * dense: (B, embed_dim, emb_h, emb_w). */
typedef samc_status samc_tracker_prompt_encoder_fn(samc_ctx *ctx, const samc_prompt_encoder *pe, const float *coords,
                                                const int32_t *labels, int B, int N, const float *boxes,
                                                const samc_tensor *masks, samc_tensor *sparse, samc_tensor *dense);
/* PromptEncoder.get_dense_pe: (1, embed_dim, emb_h, emb_w). */
typedef samc_status samc_tracker_dense_pe_fn(samc_ctx *ctx, const samc_prompt_encoder *pe, samc_tensor *out);
/* TwoWayAttentionBlock.forward: queries (B,Nq,D), keys (B,Nk,D) and their
 * pe -> q_out (B,Nq,D), k_out (B,Nk,D). */
typedef samc_status samc_tracker_twoway_block_fn(samc_ctx *ctx, const samc_twoway_block *blk, const samc_tensor *q,
                                              const samc_tensor *k, const samc_tensor *qpe, const samc_tensor *kpe,
                                              samc_tensor *q_out, samc_tensor *k_out);
/* TwoWayTransformer tail: q += final_attn(q+qpe, k+kpe, k); q = norm_final(q). */
typedef samc_status samc_tracker_twoway_final_fn(samc_ctx *ctx, const samc_twoway_transformer *tr,
                                              const samc_tensor *q, const samc_tensor *k, const samc_tensor *qpe,
                                              const samc_tensor *kpe, samc_tensor *q_out);
/* MaskDecoder.predict_masks after the transformer: hs (B,T,D) transformer
 * tokens, keys (B,emb_h*emb_w,D), feat_s0 (Bf,D/8,4h,4w) and feat_s1
 * (Bf,D/4,2h,2w) with Bf = 1 (broadcast) or B, or both NULL when
 * !use_high_res_features. Outputs all mask tokens: masks (B,M,4h,4w),
 * iou (B,M), obj (B,1) (10.0 when !pred_obj_scores). */
typedef samc_status samc_tracker_mask_decoder_heads_fn(samc_ctx *ctx, const samc_mask_decoder *dec,
                                                    const samc_tensor *hs, const samc_tensor *keys, int emb_h,
                                                    int emb_w, const samc_tensor *feat_s0,
                                                    const samc_tensor *feat_s1, samc_tensor *masks,
                                                    samc_tensor *iou, samc_tensor *obj);
/* SAM2Transforms.postprocess_masks without hole/sprinkle filling (done in
 * core): (1,C,h,w) -> (1,C,H,W), bilinear, align_corners False, no antialias. */
typedef samc_status samc_tracker_postprocess_fn(samc_ctx *ctx, const samc_tensor *lowres, int H, int W,
                                             samc_tensor *out);
/* A mask's logits as the memory encoder reads them: sigmoid (MemoryEncoder.
 * forward; _encode_new_memory) or, when `binarize`, (x > 0) as 0/1
 * (binarize_mask_from_pts_for_mem_enc), then * scale + bias
 * (sigmoid_scale/bias_for_mem_enc): (...) -> (...), out may be x. */
typedef samc_status samc_tracker_mask_for_memory_fn(samc_ctx *ctx, const samc_tensor *x, bool binarize, float scale,
                                                    float bias, samc_tensor *out);
/* SimpleMaskDownSampler.forward's F.interpolate(x, interpol_size, bilinear,
 * align_corners=False, antialias=True): (B,1,h,w) -> out (B,1,H,W). */
typedef samc_status samc_tracker_mask_interpolate_fn(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out);
/* MaskDownSampler.forward: (B,1,H,W) -> (B,E,H/total_stride,W/total_stride). */
typedef samc_status samc_tracker_mask_downsampler_fn(samc_ctx *ctx, const samc_mask_downsampler *ds,
                                                  const samc_tensor *x, samc_tensor *out);
/* CXBlock.forward: (B,C,H,W) -> (B,C,H,W). */
typedef samc_status samc_tracker_cxblock_fn(samc_ctx *ctx, const samc_cxblock *blk, const samc_tensor *x,
                                         samc_tensor *out);
/* MemoryAttentionLayer.forward, batch-first: tgt (B,L,D), memory/pos
 * (B,Nk,Dkv), query_pos (B,L,D) or NULL; the last num_k_exclude_rope keys
 * are not rotated. out (B,L,D). */
typedef samc_status samc_tracker_memory_attention_layer_fn(samc_ctx *ctx, const samc_memory_attention_layer *layer,
                                                        const samc_tensor *tgt, const samc_tensor *memory,
                                                        const samc_tensor *pos, const samc_tensor *query_pos,
                                                        int num_k_exclude_rope, samc_tensor *out);

/* ---- whole-part bodies ---------------------------------------------------------- */

/* MemoryAttention.forward in one call (its part's rows: @batch_first,
 * @pos_enc_at_input, layers.#, norm, @seq_first), sequence-first like the
 * official call: curr (L,B,D), memory (Nk,B,Dm), curr_pos (L,B,D) or NULL,
 * memory_pos (Nk,B,Dm) or NULL -> out (L,B,D). For implementations that keep
 * activations to themselves; ref and fast run the part row by row. */
typedef samc_status samc_tracker_memory_attention_fn(samc_ctx *ctx, const samc_memory_attention *ma,
                                                    const samc_tensor *curr, const samc_tensor *memory,
                                                    const samc_tensor *curr_pos, const samc_tensor *memory_pos,
                                                    int num_obj_ptr_tokens, samc_tensor *out);

/* The SAM heads on one image in one call (SAM2ImagePredictor._predict and
 * SAM2Base._forward_sam_heads up to the choice among the mask tokens):
 * PromptEncoder.forward with get_dense_pe (the rows of the prompt encoder
 * part on `pe`, reported with ctx->emit_at) and MaskDecoder.predict_masks
 * (this part's rows @image_tokens, transformer.layers.#, transformer,
 * reported with ctx->emit). coords (B,N,2) in model pixels and labels (B,N)
 * as samc_tracker_prompt_encoder_fn takes them, mask (B,1,4e,4e) or NULL;
 * the image embedding and high-res features are f's (batch 1, repeated
 * over B) -> hs (B,T,D) the transformer's tokens, masks (B,M,4e,4e),
 * iou (B,M), obj (B,1) of every mask token. */
typedef samc_status samc_tracker_sam_heads_fn(samc_ctx *ctx, const samc_prompt_encoder *pe,
                                              const samc_mask_decoder *dec, const float *coords,
                                              const int32_t *labels, int B, int N, const samc_tensor *mask,
                                              const struct samc_frame_features *f, samc_tensor *hs,
                                              samc_tensor *masks, samc_tensor *iou, samc_tensor *obj);

/* ---- the ops table ---------------------------------------------------------- */

/* The kinds, in table order. An implementation's table lists each body by
 * name (ref/ops_tables.c, fast/ops_tables.c); tests/test_registry.c checks
 * from this list that ref and fast leave none out. */
#define SAMC_TRACKER_OPS(X)                                                                         \
    X(prompt_encoder) X(dense_pe) X(twoway_block) X(twoway_final) X(mask_decoder_heads)            \
    X(postprocess) X(mask_for_memory) X(mask_interpolate) X(mask_downsampler) X(cxblock) X(memory_attention_layer)

/* Whole-part bodies: optional for every implementation (samc_layer_def.whole). */
#define SAMC_TRACKER_WHOLE_OPS(X) X(memory_attention) X(sam_heads)

typedef struct samc_tracker_ops {
#define SAMC_X(kind) samc_tracker_##kind##_fn *kind;
    SAMC_TRACKER_OPS(SAMC_X)
    SAMC_TRACKER_WHOLE_OPS(SAMC_X)
#undef SAMC_X
} samc_tracker_ops;

#endif
