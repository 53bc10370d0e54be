/* sam3_model.h - a loaded SAM 3 image model: every weight record bound by
 * the one state_dict walk (sam3_model.c), the few config values the wiring
 * needs, and the registry of its layers (sam3_runners.c).
 *
 * The config is typed (sam3_config.h), read once from the `_target_`
 * tree of PARITY_DUMP_FORMAT.md ("SAM 3"): a dump's /model/config_json, a
 * config file, or the built-in released preset. */
#ifndef SAMC_CORE_MODELS_SAM3_MODEL_H
#define SAMC_CORE_MODELS_SAM3_MODEL_H

#include "core/io/weights.h"
#include "core/models/sam3/sam3_config.h"
#include "core/models/sam3/sam3_layers.h"
#include "core/runtime/exec.h"
#include "core/runtime/statedict.h"

typedef struct samc_sam3_model {
    samc_model_base base;           /* weights, prepared records (core/runtime/exec.h) */
    samc_sam3_config cfg;
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

    /* The tokenizer's vocabulary (owned; NULL until given: samc_sam3_model_set_vocab). */
    struct samc_clip_tokenizer *tok;

    /* RoPE tables computed because the store had no attn.freqs_cis. */
    float *owned[SAMC_SAM3_MAX_BLOCKS];
    int n_owned;
} samc_sam3_model;

/* The layers of the SAM 3 image model (one part: sam3_runners.c). */
extern const samc_layer_family samc_sam3_family;

/* Load from `w` (owned by the model from here on, also on failure) with the
 * config `cfg` (validated here); keys are
 * "<base><state_dict name>" ("detector." in sam3.pt, "" in a dump). The
 * strict check (every key, every shape, no unexpected key under `base`)
 * runs before anything is computed; `what` names the config in messages. */
samc_status samc_sam3_model_init(samc_sam3_model **out, samc_weights *w, const samc_sam3_config *cfg,
                                 const char *base, const char *what, samc_error *err);
void samc_sam3_model_free(samc_sam3_model *m);
/* The tokenizer vocabulary (bpe_simple_vocab_16e6.txt.gz) from its gzip bytes
 * (a dump's /model/bpe_vocab_gz) or, when gz is NULL, from the file `path`. */
samc_status samc_sam3_model_set_vocab(samc_sam3_model *m, const void *gz, size_t n, const char *path,
                                      samc_error *err);
/* Load sam3.pt / .safetensors (detector.* keys, or an image model's own
 * state_dict) with the config file `config` (a Sam3Image tree, or the
 * {"image": ...} file of tools/make_sam3_checkpoint.py; NULL: the built-in
 * release). A SAM 2 checkpoint, a tracker-only one or a parity dump is
 * refused with a message saying what it is. The tokenizer vocabulary is
 * set separately (samc_sam3_model_set_vocab). */
samc_status samc_sam3_model_load(const char *checkpoint, const char *config, samc_sam3_model **out,
                                 samc_error *err);
/* The keys and shapes the config expects (checkpoint makers, info). */
samc_status samc_sam3_expected_keys(const samc_sam3_config *cfg, const char *base, samc_key_list *out,
                                    samc_error *err);
/* A use of the model (implementation choice, trace): core/runtime/exec.h;
 * `impl` the default implementation (NULL: the registry's default). */
samc_status samc_sam3_exec_init(samc_exec *x, samc_sam3_model *m, const char *impl, samc_error *err);

#endif
