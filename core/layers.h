/* layers.h - one signature per layer kind, weights as plain structs.
 *
 * Every layer kind of the SAM 2 image path has exactly one signature here and
 * two bodies: ref/ (plain scalar loops, one thread) and fast/ (OpenMP, SIMD,
 * BLAS). The model wiring (core/sam2_model.c) reaches them only through a
 * samc_ops table, which can be chosen per model and overridden per layer.
 *
 * Conventions
 *  - Tensors are contiguous float32 in the layout the official PyTorch code
 *    has at that point: Hiera works in BHWC, everything else NCHW or
 *    (B, tokens, C).
 *  - Outputs are allocated by the caller with the exact output shape; a body
 *    writes every element of them and never reallocates.
 *  - Weight structs point into the weight store (core/weights.h); they are
 *    filled once at model load (core/sam2_bind.c) and are read-only.
 *  - Linear weights are (out, in), y = x W^T + b. Conv2d weights are
 *    (cout, cin/groups, kh, kw). ConvTranspose2d weights are (cin, cout, k, k).
 *  - A body returns SAMC_OK or an error (allocation failure, shape mismatch).
 */
#ifndef SAMC_CORE_LAYERS_H
#define SAMC_CORE_LAYERS_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

/* ---- primitive weight records ------------------------------------------ */

typedef struct samc_linear {
    const float *w; /* (out, in) */
    const float *b; /* (out) or NULL */
    int in, out;
} samc_linear;

typedef struct samc_norm { /* LayerNorm / LayerNorm2d over channels */
    const float *w, *b;    /* (dim) */
    int dim;
    float eps;             /* 1e-6 in Hiera and every LayerNorm2d, 1e-5 for nn.LayerNorm defaults */
} samc_norm;

typedef struct samc_conv2d {
    const float *w;        /* (cout, cin/groups, kh, kw) */
    const float *b;        /* (cout) or NULL */
    int cin, cout, kh, kw, stride, pad, groups;
} samc_conv2d;

typedef struct samc_conv_t2d { /* ConvTranspose2d with kernel == stride (no overlap) */
    const float *w;        /* (cin, cout, k, k) */
    const float *b;        /* (cout) */
    int cin, cout, k;
} samc_conv_t2d;

#define SAMC_MLP_MAX_LAYERS 4
typedef struct samc_mlp {  /* sam2_utils.MLP: Linear, act, ..., Linear (no act after last) */
    int num_layers;
    samc_linear layers[SAMC_MLP_MAX_LAYERS];
    bool sigmoid_output;
} samc_mlp;

/* ---- image encoder ------------------------------------------------------ */

/* hieradet.MultiScaleBlock (+ its MultiScaleAttention). */
typedef struct samc_hiera_block {
    int dim, dim_out, heads;
    int window;            /* 0 = global attention */
    int q_stride;          /* 0 = no q-pool, else pool stride (2) on q and on the shortcut */
    samc_norm norm1, norm2;
    samc_linear qkv;       /* dim -> 3*dim_out, [q|k|v], head-major inside each */
    samc_linear attn_proj; /* dim_out -> dim_out */
    samc_linear mlp_fc1, mlp_fc2; /* dim_out -> 4*dim_out -> dim_out, GELU(erf) between */
    bool has_proj;         /* dim != dim_out: shortcut = pool(proj(norm1(x))) */
    samc_linear proj;
} samc_hiera_block;

/* position_encoding.PositionEmbeddingSine */
typedef struct samc_sine_pe {
    int num_pos_feats;     /* output channels (d) */
    float temperature;
    bool normalize;
    float scale;           /* 2*pi when the config says null */
} samc_sine_pe;

#define SAMC_FPN_MAX_LEVELS 4
/* backbones.image_encoder.FpnNeck */
typedef struct samc_fpn_neck {
    int d_model;
    int n_levels;                         /* len(convs) == len(backbone_channel_list) */
    samc_conv2d convs[SAMC_FPN_MAX_LEVELS]; /* convs[k] takes xs[n_levels-1-k] (reversed, as official) */
    bool top_down[SAMC_FPN_MAX_LEVELS];   /* level i is in fpn_top_down_levels */
    bool fuse_avg;                        /* fuse_type "avg" (divide by 2) vs "sum" */
    bool interp_bilinear;                 /* fpn_interp_model "bilinear" (align_corners False) vs "nearest" */
    samc_sine_pe pe;
} samc_fpn_neck;

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

/* sam.transformer.Attention (q/k/v projections to internal_dim, heads split head-major) */
typedef struct samc_attention {
    samc_linear q, k, v, out;
    int heads;
    int internal_dim;
} samc_attention;

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
    int num_mask_tokens;          /* num_multimask_outputs + 1 */
    bool pred_obj_scores, pred_obj_scores_mlp, use_high_res_features, iou_sigmoid;
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

/* ---- the ops table ------------------------------------------------------ */

typedef struct samc_ctx {
    int num_threads;              /* fast/ only; ref ignores it. 0: OpenMP's default (OMP_NUM_THREADS) */
    /* fast/'s workspace, reused across calls (grown to the largest layer's
     * need, then no allocation in the hot path); released by the model with
     * scratch_free. Opaque to everything but fast/. */
    void *scratch;
    void (*scratch_free)(void *scratch);
} samc_ctx;

typedef struct samc_ops {
    const char *name;             /* "ref" or "fast" */

    /* SAM2Transforms: uint8 HWC RGB -> (1,3,size,size): /255, bilinear
     * antialiased resize (torchvision >= 0.17), (x-mean)/std. */
    samc_status (*preprocess)(samc_ctx *ctx, const uint8_t *img, int h, int w, int size,
                              samc_tensor *out);

    /* PatchEmbed: (1,3,S,S) NCHW -> conv -> (1,S',S',C) BHWC. */
    samc_status (*patch_embed)(samc_ctx *ctx, const samc_conv2d *proj, const samc_tensor *x,
                               samc_tensor *out);

    /* MultiScaleBlock: (B,H,W,dim) -> (B,H',W',dim_out), H' = H / q_stride. */
    samc_status (*hiera_block)(samc_ctx *ctx, const samc_hiera_block *blk, const samc_tensor *x,
                               samc_tensor *out);

    /* FpnNeck: xs[i] (B,C_i,H_i,W_i) high->low resolution (n_levels of them)
     * -> out[i] (B,d_model,H_i,W_i) and pos[i] (B,d_model,H_i,W_i). */
    samc_status (*fpn_neck)(samc_ctx *ctx, const samc_fpn_neck *neck, const samc_tensor *xs,
                            samc_tensor *out, samc_tensor *pos);

    /* Plain Conv2d, NCHW (used for conv_s0 / conv_s1). */
    samc_status (*conv2d)(samc_ctx *ctx, const samc_conv2d *conv, const samc_tensor *x,
                          samc_tensor *out);

    /* PromptEncoder.forward. coords (B,N,2) in input-image pixels, labels (B,N)
     * (N == 0: points=None). boxes (B,4) or NULL. masks (B,1,4*emb_h,4*emb_w) or
     * NULL. sparse: (B, N + (N>0 && !boxes) + 2*(boxes?1:0), embed_dim);
     * dense: (B, embed_dim, emb_h, emb_w). */
    samc_status (*prompt_encoder)(samc_ctx *ctx, const samc_prompt_encoder *pe, const float *coords,
                                  const int32_t *labels, int B, int N, const float *boxes,
                                  const samc_tensor *masks, samc_tensor *sparse, samc_tensor *dense);

    /* PromptEncoder.get_dense_pe: (1, embed_dim, emb_h, emb_w). */
    samc_status (*dense_pe)(samc_ctx *ctx, const samc_prompt_encoder *pe, samc_tensor *out);

    /* TwoWayAttentionBlock.forward: queries (B,Nq,D), keys (B,Nk,D) and their
     * pe -> q_out (B,Nq,D), k_out (B,Nk,D). */
    samc_status (*twoway_block)(samc_ctx *ctx, const samc_twoway_block *blk, const samc_tensor *q,
                                const samc_tensor *k, const samc_tensor *qpe, const samc_tensor *kpe,
                                samc_tensor *q_out, samc_tensor *k_out);

    /* TwoWayTransformer tail: q += final_attn(q+qpe, k+kpe, k); q = norm_final(q). */
    samc_status (*twoway_final)(samc_ctx *ctx, const samc_twoway_transformer *tr,
                                const samc_tensor *q, const samc_tensor *k, const samc_tensor *qpe,
                                const samc_tensor *kpe, samc_tensor *q_out);

    /* MaskDecoder.predict_masks after the transformer: hs (B,T,D) transformer
     * tokens, keys (B,emb_h*emb_w,D), feat_s0 (Bf,D/8,4h,4w) and feat_s1
     * (Bf,D/4,2h,2w) with Bf = 1 (broadcast) or B, or both NULL when
     * !use_high_res_features. Outputs all mask tokens: masks (B,M,4h,4w),
     * iou (B,M), obj (B,1) (10.0 when !pred_obj_scores). `s` = token offset
     * (1 when pred_obj_scores). */
    samc_status (*mask_decoder_heads)(samc_ctx *ctx, const samc_mask_decoder *dec,
                                      const samc_tensor *hs, const samc_tensor *keys, int emb_h,
                                      int emb_w, const samc_tensor *feat_s0,
                                      const samc_tensor *feat_s1, samc_tensor *masks,
                                      samc_tensor *iou, samc_tensor *obj);

    /* SAM2Transforms.postprocess_masks without hole/sprinkle filling (done in
     * core): (1,C,h,w) -> (1,C,H,W), bilinear, align_corners False, no antialias. */
    samc_status (*postprocess)(samc_ctx *ctx, const samc_tensor *lowres, int H, int W,
                               samc_tensor *out);
} samc_ops;

extern const samc_ops samc_ref_ops;

#endif
