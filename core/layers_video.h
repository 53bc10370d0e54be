/* layers_video.h - the layer kinds of the SAM 2 memory path (video):
 * memory encoder, memory attention with axial RoPE, and the object-pointer
 * MLP. Same conventions as core/layers.h; a second ops table per
 * implementation (samc_video_ops) so the image predictor does not depend on
 * the memory path. */
#ifndef SAMC_CORE_LAYERS_VIDEO_H
#define SAMC_CORE_LAYERS_VIDEO_H

#include "layers.h"

#define SAMC_MAX_DOWNSAMPLE_LAYERS 8
/* memory_encoder.MaskDownSampler: n x [Conv2d(k, s, p) -> LayerNorm2d -> GELU], then Conv2d 1x1. */
typedef struct samc_mask_downsampler {
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
} samc_memory_attention;

typedef struct samc_video_ops {
    const char *name;

    /* MaskDownSampler.forward: (B,1,H,W) -> (B,E,H/total_stride,W/total_stride). */
    samc_status (*mask_downsampler)(samc_ctx *ctx, const samc_mask_downsampler *ds, const samc_tensor *x,
                                    samc_tensor *out);
    /* CXBlock.forward: (B,C,H,W) -> (B,C,H,W). */
    samc_status (*cxblock)(samc_ctx *ctx, const samc_cxblock *blk, const samc_tensor *x, samc_tensor *out);
    /* MemoryAttentionLayer.forward, batch-first: tgt (B,L,D), memory/pos
     * (B,Nk,Dkv), query_pos (B,L,D) or NULL; the last num_k_exclude_rope keys
     * are not rotated. out (B,L,D). */
    samc_status (*memory_attention_layer)(samc_ctx *ctx, const samc_memory_attention_layer *layer,
                                          const samc_tensor *tgt, const samc_tensor *memory,
                                          const samc_tensor *pos, const samc_tensor *query_pos,
                                          int num_k_exclude_rope, samc_tensor *out);
    /* nn.LayerNorm over the last dimension (MemoryAttention.norm). */
    samc_status (*layer_norm)(samc_ctx *ctx, const samc_norm *norm, const samc_tensor *x, samc_tensor *out);
    /* sam2_utils.MLP on rows (obj_ptr_proj): x (..., in) -> out (..., out). */
    samc_status (*mlp)(samc_ctx *ctx, const samc_mlp *mlp, const samc_tensor *x, samc_tensor *out);
} samc_video_ops;

extern const samc_video_ops samc_ref_video_ops;

#endif
