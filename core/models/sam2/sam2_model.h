/* SPDX-License-Identifier: Apache-2.0 */
/* sam2_model.h - the SAM 2 family: its model (weights, config, the image
 * encoder and the tracker, shared read-only by any number of uses), the
 * mount table that names every part at its official root, and SAM 2's
 * own paths (set_image: SAM2Transforms and the Hiera + FPN image encoder,
 * which is also the feature source of its video predictor).
 *
 * Mounted parts (roots relative to SAM2Base):
 *   ""                  @preprocess (sam2_preprocess.c), the tracker's own
 *                       rows (core/models/tracker/)
 *   image_encoder       Hiera trunk + FPN neck (image_encoder.c)
 *   sam_prompt_encoder, sam_mask_decoder, memory_attention, memory_encoder
 *                       the tracker's parts
 */
#ifndef SAMC_CORE_SAM2_MODEL_H
#define SAMC_CORE_SAM2_MODEL_H

#include "core/io/weights.h"
#include "core/models/sam2/config.h"
#include "core/models/sam2/sam2_layers.h"
#include "core/models/tracker/image_predict.h"
#include "core/models/tracker/tracker.h"
#include "core/runtime/exec.h"
#include "core/runtime/statedict.h"

/* SAM2Transforms' preprocessing (sam2_preprocess.c): no weights. */
typedef struct samc_sam2_transforms {
    int image_size;
} samc_sam2_transforms;

typedef struct samc_sam2_model {
    samc_model_base base;               /* weights, prepared copies */
    samc_sam2_config cfg;
    samc_sam2_transforms transforms;
    samc_sam2_image_encoder image_encoder;
    samc_tracker_model tracker;               /* SAM heads and memory path; tracker.cfg derived from cfg */
} samc_sam2_model;

/* The registry: every part of SAM 2 at its root (core/runtime/exec.h). */
extern const samc_layer_family samc_sam2_family;
extern const samc_part_def samc_sam2_image_encoder_part, samc_sam2_preprocess_part;


/* Build from loaded weights (ownership of `w` passes to the model, also on
 * failure). cfg NULL: detect the preset from the weights. Every key and shape
 * is checked (one walk over the state_dict) before anything is computed. */
samc_status samc_sam2_model_init(samc_sam2_model **out, samc_weights *w, const samc_sam2_config *cfg,
                                 samc_error *err);
/* Open a checkpoint (any supported format) and build the model; config is a
 * preset name, a .json or .h5 path, or NULL: the dump's own config for a
 * parity dump, else detected from the weights. allow_nonfinite false refuses
 * weights holding NaN/Inf, naming the key. */
samc_status samc_sam2_model_load(const char *checkpoint, const char *config, bool allow_nonfinite,
                                 samc_sam2_model **out, samc_error *err);
/* The same for a file already told to be SAM 2 (samc_model_load): its keys
 * are not examined for SAM 3's again. */
samc_status samc_sam2_model_load_known(const char *checkpoint, const char *config, bool allow_nonfinite,
                                       samc_sam2_model **out, samc_error *err);
void samc_sam2_model_free(samc_sam2_model *m);

/* A use of the model (default implementation: the registry's default). */
samc_status samc_sam2_exec_init(samc_exec *x, samc_sam2_model *m, samc_error *err);

/* Every key of SAM2Base.state_dict() for this config, in module order. */
samc_status samc_sam2_expected_keys(const samc_sam2_config *cfg, samc_key_list *out, samc_error *err);
/* The strict check alone (load_state_dict(strict=True)). */
samc_status samc_sam2_check_weights(const samc_sam2_config *cfg, const samc_weights *w, samc_error *err);
/* Seeded weights for every key of the config, scaled like PyTorch's default
 * init (uniform +-1/sqrt(fan_in), norms 1 and 0): real-size models without a
 * checkpoint, for benchmarks and the op tests. */
samc_status samc_sam2_random_weights(const samc_sam2_config *cfg, uint64_t seed, samc_weights **out, samc_error *err);
/* Guess the preset from weight shapes (embed_dim, depth, 2.0 vs 2.1 keys). */
samc_status samc_sam2_detect_config(const samc_weights *w, samc_sam2_config *cfg, samc_error *err);

/* ---- SAM 2's image path ------------------------------------------------- */

/* set_image: @preprocess, image encoder, the tracker's features (conv_s0/s1,
 * no_mem_embed). */
samc_status samc_sam2_encode_image(samc_exec *x, const samc_sam2_model *m, const uint8_t *rgb, int h, int w,
                                   samc_frame_features *f, samc_error *err);
/* The image encoder and the tracker's features from an already
 * preprocessed (1,3,S,S) tensor. */
samc_status samc_sam2_encode_tensor(samc_exec *x, const samc_sam2_model *m, const samc_tensor *img,
                                    const samc_scope *sc, samc_frame_features *f, samc_error *err);
/* @preprocess: the image predictor's (video false) or the video loader's
 * transform of an RGB image -> (1,3,S,S); traced when asked. */
samc_status samc_sam2_preprocess(samc_exec *x, const samc_sam2_transforms *t, const samc_scope *sc, bool video,
                                 bool trace, const uint8_t *rgb, int h, int w, samc_tensor *out, samc_error *err);
/* The video predictor's frames through SAM 2's backbone. */
samc_feature_source samc_sam2_feature_source(const samc_sam2_model *m);

/* ImageEncoder.forward (Hiera + FPN + scalp) on a preprocessed image:
 * the levels after scalp (high to low resolution) and their PE; traced. */
samc_status samc_sam2_image_encoder_forward(samc_exec *x, const samc_sam2_image_encoder *e, const samc_scope *sc,
                                            const samc_tensor *img, samc_tensor *levels, samc_tensor *pos,
                                            int *n_levels, samc_error *err);
/* The image encoder's own row when its implementation runs the part and the
 * tracker's features in one body (samc_sam2_image_features_fn), else NULL. */
const samc_layer *samc_sam2_image_encoder_whole(const samc_exec *x, const samc_sam2_image_encoder *e);
/* That body on a preprocessed image: *f made whole (traced as the part). */
samc_status samc_sam2_image_features_whole(samc_exec *x, const samc_layer *W, const samc_tracker_feature_spec *spec,
                                           const samc_scope *sc, const samc_tensor *img, samc_frame_features *f,
                                           samc_error *err);

/* The transformers converters' name of an official SAM 2 key (sam2_hf.c). */
void samc_sam2_hf_key(const char *official, char *out, size_t n);
/* Whether `w` holds a SAM 2 checkpoint in the transformers naming. */
bool samc_sam2_is_hf(const samc_weights *w);
/* Make such a store answer to the official names: the point embeddings
 * split, the converter's copy of the positional matrix checked and dropped,
 * the key map set as its naming. */
samc_status samc_sam2_hf_adapt(samc_weights *w, samc_error *err);
/* samc_weights_open, then a transformers-format file adapted (the loaders
 * and `samc info` open SAM 2 checkpoints with this). */
samc_status samc_sam2_open_weights(const char *path, samc_weights **out, samc_error *err);

#endif
