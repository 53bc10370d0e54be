/* sam2_model.h - SAM 2 wired once: the loaded model (weights and bound
 * layer records, shared read-only by any number of uses) and the paths
 * through it, each a sequence of named layers called through a samc_exec
 * (core/runtime/exec.h: implementation per layer, trace, workspace).
 *
 * Layer names are the official module names ("image_encoder.trunk.blocks.3",
 * "sam_mask_decoder.transformer.layers.0", ...) plus the function points
 * "@preprocess", "@postprocess" and "@prepare_memory_conditioned_features".
 * Each model part (one file) holds its layers' rows of the registry, the
 * description of their weights, their isolated runners and their wiring:
 *   sam2_encoder.c     image encoder (Hiera trunk, FPN neck), conv_s0/s1
 *   sam2_decoder.c     prompt encoder, two-way transformer, mask decoder, @postprocess
 *   sam2_memory.c      memory encoder, memory attention, object-pointer projections
 *   sam2_memory_bank.c @prepare_memory_conditioned_features
 */
#ifndef SAMC_CORE_SAM2_MODEL_H
#define SAMC_CORE_SAM2_MODEL_H

#include "core/io/weights.h"
#include "core/models/sam2/config.h"
#include "core/models/sam2/sam2_layers.h"
#include "core/runtime/exec.h"
#include "core/runtime/statedict.h"

typedef struct samc_sam2_model {
    samc_model_base base;               /* weights, prepared copies */
    samc_sam2_config cfg;

    /* Bound layers (pointers into the weights). */
    samc_conv2d patch_embed;
    int depth;
    samc_hiera_block blocks[SAMC_MAX_BLOCKS];
    int n_stages, stage_ends[SAMC_MAX_STAGES];
    float *pos_embed;                   /* (Hp, Wp, C), precomputed at load */
    int grid;                           /* Hp == Wp == image_size / patch_stride */
    samc_fpn_neck neck;
    samc_prompt_encoder prompt_encoder;
    samc_mask_decoder mask_decoder;
    const float *no_mem_embed;          /* (D) */
    /* Memory path (video). */
    samc_memory_encoder memory_encoder;
    samc_memory_attention memory_attention;
    bool has_obj_ptr_proj;
    samc_mlp obj_ptr_proj;              /* 1 layer when !use_mlp_for_obj_ptr_proj */
    bool has_obj_ptr_tpos_proj;
    samc_mlp obj_ptr_tpos_proj;         /* one Linear */
    samc_conv2d mask_downsample;        /* Conv2d(1,1,4,4) for mask prompts */
    const float *maskmem_tpos_enc;      /* (num_maskmem, mem_dim) */
    const float *no_obj_ptr;            /* (D) or NULL */
    const float *no_obj_embed_spatial;  /* (mem_dim) or NULL */
    int mem_dim;
    int emb;                            /* image embedding side: image_size / backbone_stride */
} samc_sam2_model;

/* The registry: every layer of SAM 2 (core/runtime/exec.h). */
extern const samc_layer_family samc_sam2_family;

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

/* The parts' descriptions of their weights (sam2_model.c walks them in order). */
samc_status samc__sam2_describe_encoder(samc_sd *sd, samc_sam2_model *m, samc_error *err);
void samc__sam2_describe_decoder(samc_sd *sd, samc_sam2_model *m);
void samc__sam2_describe_memory(samc_sd *sd, samc_sam2_model *m);
extern const samc_layer_part samc__sam2_encoder_part, samc__sam2_decoder_part, samc__sam2_memory_part,
    samc__sam2_memory_bank_part;

/* ---- image path ------------------------------------------------------- */

typedef struct samc_sam2_features {
    int orig_h, orig_w;
    samc_tensor image_embed;            /* (1,D,e,e): vision_features + no_mem_embed */
    samc_tensor feat_s0, feat_s1;       /* conv_s0 / conv_s1 high-res features */
    samc_tensor vision_features;        /* (1,D,e,e) raw (for the video path) */
    samc_tensor vision_pos;             /* (1,D,e,e) sine PE of the e x e level */
} samc_sam2_features;

/* set_image: @preprocess, image encoder, conv_s0/s1, no_mem_embed. */
samc_status samc_sam2_encode_image(samc_exec *x, const uint8_t *rgb, int h, int w, samc_sam2_features *f,
                                   samc_error *err);
/* The image encoder from an already preprocessed (1,3,S,S) tensor. */
samc_status samc_sam2_encode_tensor(samc_exec *x, const samc_tensor *img, const samc_scope *sc,
                                    samc_sam2_features *f, samc_error *err);
void samc_sam2_features_release(samc_sam2_features *f);

typedef struct samc_sam2_prompt {
    int n_points;
    const float *points;                /* (n_points, 2) x, y in original-image pixels */
    const int32_t *labels;              /* (n_points): 1 pos, 0 neg (-1..3 accepted) */
    bool has_box;
    float box[4];                       /* x0, y0, x1, y1 in original-image pixels */
    const samc_tensor *mask_input;      /* (1, 4e, 4e) or (1,1,4e,4e) logits, or NULL */
    bool multimask;
    /* Points outside the image are rejected unless this is set (the
     * official predictor accepts them; the parity harness replays dumps
     * exactly). Boxes may always extend past the image, as in the official
     * predictor; they must be ordered and finite. */
    bool allow_points_outside;
} samc_sam2_prompt;

/* SAM2ImagePredictor(max_hole_area, max_sprinkle_area): 0 = off (default). */
typedef struct samc_sam2_image_opts {
    double max_hole_area, max_sprinkle_area;
} samc_sam2_image_opts;

typedef struct samc_sam2_prediction {
    int num_masks;
    samc_tensor masks;                  /* (C, H, W) logits at original size */
    samc_tensor iou;                    /* (C) */
    samc_tensor low_res;                /* (C, 4e, 4e) logits clamped to [-32, 32] */
    float object_score;                 /* logit (ignored by the image predictor) */
} samc_sam2_prediction;

/* Validate a prompt against the image (points inside, finite, labels in
 * -1..3, box ordered, mask size). Messages name the argument. */
samc_status samc_sam2_check_prompt(const samc_sam2_model *m, const samc_sam2_features *f,
                                   const samc_sam2_prompt *p, samc_error *err);
/* SAM2ImagePredictor.predict(return_logits=True) on the features. */
samc_status samc_sam2_predict(samc_exec *x, const samc_sam2_features *f, const samc_sam2_prompt *p,
                              const samc_sam2_image_opts *opts, samc_sam2_prediction *out, samc_error *err);
void samc_sam2_prediction_release(samc_sam2_prediction *p);

/* Pieces of predict, reused by the video path and the isolated runners. */
samc_status samc_sam2_mask_decoder(samc_exec *x, const samc_scope *sc, const samc_tensor *image_embed,
                                   const samc_tensor *image_pe, const samc_tensor *sparse,
                                   const samc_tensor *dense, bool multimask, bool repeat_image,
                                   const samc_tensor *feat_s0, const samc_tensor *feat_s1,
                                   samc_tensor out[4], samc_error *err);
/* PromptEncoder.forward(points=(coords, labels) or None when n == 0,
 * boxes=None, masks): coords (1,n,2) in model-input pixels, mask (1,1,4e,4e)
 * or NULL -> sparse (1, n ? n+1 : 0, D), dense (1,D,e,e); traced. */
samc_status samc_sam2_prompt_encoder(samc_exec *x, const samc_scope *sc, const float *coords,
                                     const int32_t *labels, int n, const samc_tensor *mask, samc_tensor *sparse,
                                     samc_tensor *dense, samc_error *err);
/* The same for B prompts of n points each (the official (B,n,2) tensors):
 * coords (B,n,2), labels (B,n), mask (B,1,4e,4e) or NULL -> sparse
 * (B, n ? n+1 : 0, D), dense (B,D,e,e). */
samc_status samc_sam2_prompt_encoder_batch(samc_exec *x, const samc_scope *sc, const float *coords,
                                           const int32_t *labels, int B, int n, const samc_tensor *mask,
                                           samc_tensor *sparse, samc_tensor *dense, samc_error *err);
/* PromptEncoder.get_dense_pe: (1, D, e, e). */
samc_status samc_sam2_dense_pe(samc_exec *x, samc_tensor *pe, samc_error *err);
/* SAM2Transforms.postprocess_masks's resize: (1,C,h,w) -> (1,C,H,W), traced. */
samc_status samc_sam2_postprocess(samc_exec *x, const samc_tensor *low, int H, int W, samc_tensor *out,
                                  samc_error *err);
/* The video predictor's resize to the video resolution (+ non-overlap),
 * traced as @postprocess with scope `sc` (NULL: not traced). */
samc_status samc_sam2_postprocess_video(samc_exec *x, const samc_scope *sc, const samc_tensor *low, int H, int W,
                                        bool non_overlap, samc_tensor *out, samc_error *err);
/* The video loader's frame preprocessing (PIL bicubic), traced when asked. */
samc_status samc_sam2_preprocess_frame(samc_exec *x, const samc_scope *sc, bool trace, const uint8_t *rgb, int h,
                                       int w, samc_tensor *out, samc_error *err);

#endif
