/* SPDX-License-Identifier: Apache-2.0 */
/* tracker.h - the SAM 2 tracker as mountable parts: SAM2Base's SAM heads
 * (prompt encoder, mask decoder), memory encoder, memory attention and its
 * own parameters (object pointers, mask_downsample, temporal encodings).
 *
 * A family embeds one samc_tracker_model in its model and mounts the parts at
 * roots of its choice (core/runtime/exec.h): SAM 2 at the official SAM2Base
 * names ("sam_mask_decoder", "memory_attention", ...; the tracker's own
 * rows at the top), SAM 3 under "tracker." with its own names for two of
 * them ("tracker.maskmem_backbone", "tracker.transformer.encoder"). The
 * parts know only names relative to their roots and their config section
 * (tracker_config.h); the frames' features come from the family
 * (samc_frame_features, samc_feature_source).
 *
 * Parts and their files (core/models/tracker/):
 *   tracker.c          the tracker itself: obj_ptr_proj, obj_ptr_tpos_proj,
 *                      mask_downsample, @prepare_memory_conditioned_features
 *                      (memory_bank.c), @postprocess (postprocess.c), the
 *                      features the SAM heads read (conv_s0/s1, no_mem_embed)
 *   prompt_encoder.c   PromptEncoder
 *   mask_decoder.c     MaskDecoder + TwoWayTransformer
 *   memory_encoder.c   MemoryEncoder
 *   memory_attention.c MemoryAttention
 * and what runs them: track_step.c (SAM2Base.track_step), video*.c
 * (SAM2VideoPredictor's state machine).
 */
#ifndef SAMC_MODELS_TRACKER_TRACKER_H
#define SAMC_MODELS_TRACKER_TRACKER_H

#include <stddef.h>

#include "core/models/tracker/tracker_config.h"
#include "core/models/tracker/tracker_layers.h"
#include "core/runtime/exec.h"
#include "core/runtime/statedict.h"

typedef struct samc_tracker_model {
    samc_tracker_config cfg;            /* set by the family before the weights are described */
    int emb;                            /* feature side: image_size / backbone_stride */
    int mem_dim;                        /* the memory's channels */
    /* the parts (each mounted at its own root) */
    samc_prompt_encoder prompt_encoder;
    samc_mask_decoder mask_decoder;
    samc_memory_encoder memory_encoder;
    samc_memory_attention memory_attention;
    /* SAM2Base's own parameters (the tracker part) */
    const float *no_mem_embed;          /* (D) */
    bool has_obj_ptr_proj;
    samc_mlp obj_ptr_proj;              /* 1 layer when !use_mlp_for_obj_ptr_proj */
    bool has_obj_ptr_tpos_proj;
    samc_mlp obj_ptr_tpos_proj;         /* one Linear */
    samc_conv2d mask_downsample;        /* Conv2d(1,1,4,4) for mask prompts */
    const float *maskmem_tpos_enc;      /* (num_maskmem, mem_dim) */
    const float *no_obj_ptr;            /* (D) or NULL */
    const float *no_obj_embed_spatial;  /* (mem_dim) or NULL */
} samc_tracker_model;

/* The parts, for a family's mount table (their rows and describe). The
 * tracker's own rows are three parts on the one instance (the tracker
 * model), mounted at the tracker's root: samc_tracker_part (its modules
 * and parameters), samc_memory_bank_part (@prepare_memory_conditioned_
 * features) and samc_postprocess_part (@postprocess). */
extern const samc_part_def samc_tracker_part, samc_memory_bank_part, samc_postprocess_part, samc_prompt_encoder_part,
    samc_mask_decoder_part, samc_memory_encoder_part, samc_memory_attention_part;

/* Sizes every part derives from the config. */
static inline int samc_tracker_emb(const samc_tracker_config *c) { return c->image_size / c->backbone_stride; }
static inline int samc_tracker_mem_dim(const samc_tracker_config *c)
{
    return c->mem_enc.out_dim != c->mem_enc.in_dim ? c->mem_enc.out_dim : c->d_model;
}

/* ---- the features of one image or frame ---------------------------------- */

/* What the SAM heads and the tracking step read of an image (SAM2Base's
 * _prepare_backbone_features + forward_image's high-res convs): the family
 * provides the backbone's levels, the tracker makes the rest. */
typedef struct samc_frame_features {
    int orig_h, orig_w;
    samc_tensor image_embed;            /* (1,D,e,e): vision_features + no_mem_embed */
    samc_tensor feat_s0, feat_s1;       /* conv_s0 / conv_s1 high-res features */
    samc_tensor vision_features;        /* (1,D,e,e) raw (the tracking step's pix_feat) */
    samc_tensor vision_pos;             /* (1,D,e,e) sine PE of the e x e level */
    /* A device implementation's copy of these features, made with them by a
     * whole-part body (samc_sam2_image_features_fn) and released with them
     * by dev_release(dev); the tensors above may be views of memory it owns.
     * The features are never written after they are made. NULL: none. */
    void *dev;
    void (*dev_release)(void *dev);
} samc_frame_features;

void samc_frame_features_release(samc_frame_features *f);

/* From the backbone's levels after scalp (high to low resolution; the last
 * is e x e): conv_s0/conv_s1 on levels 0 and 1 when the config uses
 * high-res features, the last level as vision features (+ no_mem_embed
 * for the image embedding). The levels are not kept. */
samc_status samc_tracker_features(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                  const samc_tensor *levels, const samc_tensor *pos, int n_levels,
                                  samc_frame_features *f, samc_error *err);

/* Whether every row samc_tracker_features calls is asked of `impl`
 * (conv_s0/conv_s1, @no_mem_embed: those the config builds). */
bool samc_tracker_features_served_by(const samc_exec *x, const samc_tracker_model *tr, const samc_impl *impl);
/* Those rows' records, for a body that makes the features itself. */
void samc_tracker_feature_records(const samc_tracker_model *tr, samc_tracker_feature_spec *spec);

/* Where a video's frames get their features: the family's backbone. */
typedef struct samc_feature_source {
    void *user;
    /* Frame t's features (scope {t, -1}); `rgb` is the decoded frame. */
    samc_status (*encode)(void *user, samc_exec *x, int t, const uint8_t *rgb, int h, int w,
                          samc_frame_features *f, samc_error *err);
    /* The frame loader's preprocessing of frame t as the parity record
     * @preprocess has it (NULL: the family has no such record). */
    samc_status (*preprocess)(void *user, samc_exec *x, int t, const uint8_t *rgb, int h, int w,
                              samc_tensor *out, samc_error *err);
} samc_feature_source;

#endif
