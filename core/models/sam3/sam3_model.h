/* sam3_model.h - a SAM 3 image model as the layer bodies see it: every weight
 * record bound to a weight store, the few config values the wiring needs,
 * and the implementation the isolated runners call.
 *
 * Interim (branch sam3ref): the records are bound by a plain function from a
 * weight store keyed by the image model's state_dict names (a parity dump's
 * /weights, or sam3.pt keys with "detector." stripped) and the config is read
 * from the `_target_` tree of PARITY_DUMP_FORMAT.md ("SAM 3"). The lead's
 * one-walk state-dict description replaces samc_sam3_model_bind. */
#ifndef SAMC_CORE_MODELS_SAM3_MODEL_H
#define SAMC_CORE_MODELS_SAM3_MODEL_H

#include <cjson/cJSON.h>

#include "core/models/sam3/sam3_layers.h"
#include "core/io/weights.h"

#define SAMC_SAM3_MAX_BLOCKS 64

typedef struct samc_sam3_model {
    int resolution;                 /* Sam3Processor resolution (the trunk's img_size) */
    int grid;                       /* tokens per side: img_size / patch */

    samc_sam3_vit_embed vit_embed;  /* backbone.vision_backbone.trunk: patch_embed, pos_embed, ln_pre */
    int n_blocks;
    samc_sam3_vit_block blocks[SAMC_SAM3_MAX_BLOCKS];
    int last_block;                 /* full_attn_ids[-1]: the block whose output is returned */
    samc_sam3_neck neck;            /* backbone.vision_backbone.convs + position_encoding */
    bool has_sam2_neck;             /* add_sam2_neck: the tracker's copy, sam2_convs */
    samc_sam3_neck sam2_neck;
    samc_sam3_text_encoder text;    /* backbone.language_backbone */
    samc_sam3_geometry_encoder geo; /* geometry_encoder */
    samc_sam3_fusion_encoder enc;   /* transformer.encoder */
    samc_sam3_decoder dec;          /* transformer.decoder */
    samc_sam3_scoring scoring;      /* dot_prod_scoring */
    samc_sam3_seg_head seg;         /* segmentation_head */
    bool has_seg;

    /* What the isolated runners call: an implementation and its context
     * (the registry of implementations replaces this pair). */
    const samc_sam3_ops *ops;
    samc_ctx *ctx;

    /* RoPE tables computed because the store had no attn.freqs_cis. */
    float *owned[SAMC_SAM3_MAX_BLOCKS];
    int n_owned;
} samc_sam3_model;

/* The value at a dotted path of a config tree ("backbone.visual.trunk.embed_dim",
 * "backbone.visual.scale_factors.2"), or NULL. */
const cJSON *samc_json_path(const cJSON *root, const char *path);

/* Bind every record from `w` (kept alive by the caller) and the config tree
 * `cfg` (the root Sam3Image `_target_` object). Checks every key's shape
 * against the config; errors name the key or config path. */
samc_status samc_sam3_model_bind(samc_sam3_model *m, const cJSON *cfg, const samc_weights *w,
                                 samc_error *err);
void samc_sam3_model_free(samc_sam3_model *m);

#endif
