/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_model.h - a loaded SAM 3 image model: its parts (sam3_parts.h), each
 * bound by the one state_dict walk over its root (sam3_model.c), and the
 * family that mounts them.
 *
 * The config is typed (sam3_config.h), read once from the `_target_`
 * tree of PARITY_DUMP_FORMAT.md ("SAM 3"): a dump's /model/config_json, a
 * config file, or the built-in released preset. */
#ifndef SAMC_CORE_MODELS_SAM3_MODEL_H
#define SAMC_CORE_MODELS_SAM3_MODEL_H

#include "core/io/weights.h"
#include "core/models/sam3/sam3_config.h"
#include "core/models/sam3/sam3_parts.h"
#include "core/models/sam3/sam3_video_config.h"
#include "core/models/tracker/tracker.h"
#include "core/runtime/exec.h"
#include "core/runtime/statedict.h"

typedef struct samc_sam3_model {
    samc_model_base base;               /* weights, prepared records (core/runtime/exec.h) */
    samc_sam3_config cfg;
    samc_sam3_transforms processor;     /* @preprocess, @postprocess */
    samc_sam3_vision_backbone vision;   /* backbone.vision_backbone */
    samc_sam3_language_backbone language; /* backbone.language_backbone, @tokenize */
    samc_sam3_geometry_encoder geo;     /* geometry_encoder */
    samc_sam3_fusion_encoder enc;       /* transformer.encoder */
    samc_sam3_decoder dec;              /* transformer.decoder */
    samc_sam3_scoring scoring;          /* dot_prod_scoring */
    samc_sam3_seg_head seg;             /* segmentation_head */
    /* The video model (sam3.pt with its tracker half, build_sam3_video_model)
     * or an image model with its interactive predictor: the tracker, mounted
     * at "tracker.*", and the video config (sam3_video_model.c). */
    bool has_tracker;
    samc_sam3_video_config video;
    samc_tracker_model tracker;
} samc_sam3_model;

/* The family: every part of the image model at its root (sam3_model.c).
 * Keys and parity names share the roots; a sam3.pt's detector.* keys are
 * read with the walk's key base "detector." (see samc_sam3_model_init). */
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
/* Seeded weights for every key of the config (RoPE buffers left out: the
 * walk computes them), scaled like PyTorch's default init (uniform
 * +-1/sqrt(fan_in), norms 1 and 0): real-size models without a checkpoint,
 * for benchmarks and the op tests. */
samc_status samc_sam3_random_weights(const samc_sam3_config *cfg, uint64_t seed, samc_weights **out,
                                     samc_error *err);
/* A use of the model (implementation choice, trace): core/runtime/exec.h;
 * `impl` the default implementation (NULL: the registry's default). The
 * image task's (with the tracker: predict_inst's too). */
samc_status samc_sam3_exec_init(samc_exec *x, samc_sam3_model *m, const char *impl, samc_error *err);
/* The video loop's (sam3_video.h): the model needs its tracker and loop. */
samc_status samc_sam3_video_exec_init(samc_exec *x, samc_sam3_model *m, const char *impl, samc_error *err);

/* The video model (build_sam3_video_model: keys "detector.*" and
 * "tracker.*") or the inst-interactive image model, from its config
 * (sam3_video_config.h); strict like samc_sam3_model_init. */
samc_status samc_sam3_model_init_video(samc_sam3_model **out, samc_weights *w, const samc_sam3_video_config *cfg,
                                       const char *what, samc_error *err);
/* The model with its tracker from weights `w` (owned from here on) and the
 * video config: JSON text `json`, else the file `config` (a video or inst
 * tree, or {"video": tree}), else the built-in release (sam3_video_model.c). */
samc_status samc__sam3_load_video(samc_weights *w, const char *config, const char *json, samc_sam3_model **out,
                                  samc_error *err);
/* Whether the config file holds the video model's (or predict_inst's) tree. */
bool samc__sam3_config_names_tracker(const char *path);
/* The families of a model with its tracker (sam3_video_model.c): the video
 * loop's parts, and the image model's with predict_inst. */
extern const samc_layer_family samc_sam3_video_family, samc_sam3_inst_family;

#endif
