/* SPDX-License-Identifier: Apache-2.0 */
/* sam2_layers.h - the layer kinds of SAM 2's own image encoder (Hiera trunk,
 * FPN neck, SAM2Transforms): weight records, one signature per kind, and
 * the ops table every implementation fills (core/runtime/impl.h,
 * SAMC_OPS_SAM2). The SAM heads and the memory path are the tracker's
 * (core/models/tracker/tracker_layers.h), primitives core/nn/nn_ops.h.
 *
 * Conventions: core/nn/records.h. Each kind has one body per
 * implementation (ref/sam2/, fast/sam2/, same file names).
 */
#ifndef SAMC_MODELS_SAM2_LAYERS_H
#define SAMC_MODELS_SAM2_LAYERS_H

#include "core/models/sam2/config.h"
#include "core/models/tracker/tracker_layers.h"
#include "core/nn/records.h"

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

/* ImageEncoder: the Hiera trunk and the FPN neck (the part, image_encoder.c). */
typedef struct samc_sam2_image_encoder {
    int image_size;
    samc_conv2d patch_embed;
    int depth;
    samc_hiera_block blocks[SAMC_MAX_BLOCKS];
    int n_stages, stage_ends[SAMC_MAX_STAGES];
    float *pos_embed;                   /* (Hp, Wp, C), computed at load (owned) */
    int grid;                           /* Hp == Wp == image_size / patch_stride */
    samc_fpn_neck neck;
    int scalp;                          /* ImageEncoder.scalp */
} samc_sam2_image_encoder;

/* ---- signatures ---------------------------------------------------------- */

/* SAM2Transforms: uint8 HWC RGB -> (1,3,size,size): /255, bilinear
 * antialiased resize (torchvision >= 0.17), (x-mean)/std. */
typedef samc_status samc_sam2_preprocess_fn(samc_ctx *ctx, const uint8_t *img, int h, int w, int size,
                                            samc_tensor *out);
/* The video loader (misc._load_img_as_tensor): PIL bicubic to size x size on
 * uint8, /255 in float64 stored as float32, (x-mean)/std -> (1,3,size,size). */
typedef samc_status samc_sam2_preprocess_frame_fn(samc_ctx *ctx, const uint8_t *img, int h, int w, int size,
                                                  samc_tensor *out);
/* PatchEmbed: (1,3,S,S) NCHW -> conv -> (1,S',S',C) BHWC. */
typedef samc_status samc_sam2_patch_embed_fn(samc_ctx *ctx, const samc_conv2d *proj, const samc_tensor *x,
                                             samc_tensor *out);
/* MultiScaleBlock: (B,H,W,dim) -> (B,H',W',dim_out), H' = H / q_stride. */
typedef samc_status samc_sam2_hiera_block_fn(samc_ctx *ctx, const samc_hiera_block *blk, const samc_tensor *x,
                                             samc_tensor *out);
/* FpnNeck: xs[i] (B,C_i,H_i,W_i) high->low resolution (n_levels of them)
 * -> out[i] (B,d_model,H_i,W_i) and pos[i] (B,d_model,H_i,W_i). */
typedef samc_status samc_sam2_fpn_neck_fn(samc_ctx *ctx, const samc_fpn_neck *neck, const samc_tensor *xs,
                                          samc_tensor *out, samc_tensor *pos);

/* ---- whole-part bodies ---------------------------------------------------------- */

/* SAM2Base.forward_image + _prepare_backbone_features in one call: the
 * ImageEncoder part's rows (trunk.*, neck, "", reported through ctx->emit)
 * and the tracker's features of `spec` (conv_s0/conv_s1, @no_mem_embed):
 * img (1,3,S,S) -> every tensor of *f (zeroed on entry). The body may make
 * them views of memory it owns, and keep its own copy of the features, both
 * attached to f->dev (released with f). For implementations that keep
 * activations to themselves; ref and fast run the part row by row. */
typedef samc_status samc_sam2_image_features_fn(samc_ctx *ctx, const samc_sam2_image_encoder *enc,
                                                const samc_tracker_feature_spec *spec, const samc_tensor *img,
                                                struct samc_frame_features *f);

/* ---- the ops table ---------------------------------------------------------- */

/* The kinds, in table order (see tracker_layers.h). */
#define SAMC_SAM2_OPS(X) X(preprocess) X(preprocess_frame) X(patch_embed) X(hiera_block) X(fpn_neck)
/* Whole-part bodies: optional for every implementation (samc_layer_def.whole). */
#define SAMC_SAM2_WHOLE_OPS(X) X(image_features)

typedef struct samc_sam2_ops {
#define SAMC_X(kind) samc_sam2_##kind##_fn *kind;
    SAMC_SAM2_OPS(SAMC_X)
    SAMC_SAM2_WHOLE_OPS(SAMC_X)
#undef SAMC_X
} samc_sam2_ops;

#endif
