/* SPDX-License-Identifier: Apache-2.0 */
/* config.h - SAM 2 / 2.1 model configuration.
 *
 * One struct holds everything the official YAML `model:` section (plus the
 * builder's overrides and the class defaults) decides. It comes from
 *   - a built-in preset ("sam2.1_hiera_t", "sam2_hiera_b+", ...),
 *   - the JSON of a parity dump's /model/config_json or a NAME.config.json
 *     file written by tools/make_checkpoint.py (the `model` section with its
 *     `_target_` keys), or
 *   - detection from the weight shapes of a checkpoint.
 * Values absent from the JSON take the official constructor defaults
 * (hieradet.Hiera, SAM2Base, MaskDecoder, ...), not the preset values.
 */
#ifndef SAMC_CORE_CONFIG_H
#define SAMC_CORE_CONFIG_H

/* Largest image_size a SAM 2 config may ask for (released: 1024). */
#define SAMC_SAM2_MAX_IMAGE_SIZE 2048

#include <stdbool.h>

#include "core/models/tracker/tracker_config.h"
#include "samc_status.h"

#define SAMC_MAX_STAGES 4
#define SAMC_MAX_GLOBAL_BLOCKS 16
#define SAMC_MAX_BLOCKS 64

typedef struct samc_hiera_config {
    int embed_dim, num_heads;
    int num_stages;
    int stages[SAMC_MAX_STAGES];
    int q_pool;
    int q_stride;                       /* square stride (2) */
    double dim_mul, head_mul;
    int bkg_h, bkg_w;                   /* window_pos_embed_bkg_spatial_size */
    int window_spec[SAMC_MAX_STAGES];
    int n_global;
    int global_att_blocks[SAMC_MAX_GLOBAL_BLOCKS];
    int patch_kernel, patch_stride, patch_padding; /* PatchEmbed defaults 7, 4, 3 */
} samc_hiera_config;

typedef struct samc_neck_config {
    int d_model;
    int n_levels;
    int backbone_channel_list[SAMC_MAX_STAGES];
    int n_top_down;
    int fpn_top_down_levels[SAMC_MAX_STAGES];
    bool fuse_avg;                      /* fuse_type "avg" */
    bool interp_bilinear;               /* fpn_interp_model "bilinear" (else "nearest") */
    int conv_kernel, conv_stride, conv_padding;
    samc_sine_pe_config pe;
    int scalp;                          /* ImageEncoder.scalp */
} samc_neck_config;



typedef struct samc_sam2_config {
    char name[64];                      /* preset name or "custom" */
    samc_hiera_config trunk;
    samc_neck_config neck;
    samc_memory_attention_config mem_attn;
    samc_memory_encoder_config mem_enc;

    samc_tracker_video_config video;

    /* SAM2Base */
    int image_size, backbone_stride;
    SAMC_SAM2BASE_OPTIONS(SAMC_SAM2BASE_FIELD)
} samc_sam2_config;

/* Names of the built-in presets, NULL-terminated. */
extern const char *const samc_sam2_preset_names[];

/* Fill cfg from a built-in preset (as build_sam2 would build it, i.e. with
 * the dynamic multimask overrides). Unknown name -> SAMC_ERR_ARG listing the
 * valid names. */
samc_status samc_sam2_config_preset(const char *name, samc_sam2_config *cfg, samc_error *err);

/* Parse the `model` section JSON (with `_target_` keys). `what` names the
 * source in error messages (a file path or "dump.h5:/model/config_json"). */
samc_status samc_sam2_config_from_json(const char *json, const char *what, samc_sam2_config *cfg,
                                       samc_error *err);
/* Read a JSON file (NAME.config.json) and parse it. */
samc_status samc_sam2_config_from_json_file(const char *path, samc_sam2_config *cfg,
                                            samc_error *err);

/* The config_json of a parity dump (.h5). */
samc_status samc_sam2_config_from_h5(const char *path, samc_sam2_config *cfg, samc_error *err);

/* Resolve a --config argument: a preset name, a path to a JSON file, or a
 * parity dump (.h5) whose /model/config_json is used. */
samc_status samc_sam2_config_resolve(const char *name_or_path, samc_sam2_config *cfg,
                                     samc_error *err);

/* Derived quantities of the trunk. */
int samc_hiera_depth(const samc_hiera_config *h);
/* Per-block layout, as built by Hiera.__init__ (window lag, q-pool, dims). */
typedef struct samc_hiera_block_spec {
    int dim, dim_out, heads, window, q_stride;
} samc_hiera_block_spec;
samc_status samc_hiera_block_specs(const samc_hiera_config *h, samc_hiera_block_spec *specs,
                                   int max_blocks, samc_error *err);
/* Index of the last block of each stage (stage_ends). Returns count. */
int samc_hiera_stage_ends(const samc_hiera_config *h, int *ends);

/* The tracker's config section from SAM 2's (SAM2Base's options, the heads'
 * sizes, the video predictor's options). */
void samc_sam2_tracker_config(const samc_sam2_config *c, samc_tracker_config *out);

/* Check internal consistency (neck channels == trunk stage dims, positive
 * sizes, image_size divisible by the strides, ...). */
samc_status samc_sam2_config_validate(const samc_sam2_config *cfg, samc_error *err);

#endif
