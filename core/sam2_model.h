/* sam2_model.h - SAM 2 wired once: named layers, an ops table per
 * implementation with per-layer overrides, and a trace of every parity point.
 *
 * Layer names are the official module names: "image_encoder.trunk.blocks.3",
 * "sam_mask_decoder.transformer.layers.0", ... plus the function points
 * "@preprocess" and "@postprocess". An override names a layer or any prefix
 * of one at a '.' boundary ("image_encoder.trunk" covers every block).
 */
#ifndef SAMC_CORE_SAM2_MODEL_H
#define SAMC_CORE_SAM2_MODEL_H

#include "config.h"
#include "layers.h"
#include "layers_video.h"
#include "weights.h"

/* Called once per completed parity point with its output slots, in
 * completion order (children before parents), like the dump's /trace. */
typedef void (*samc_trace_fn)(void *user, const char *module, int nslots, const char *const *slots,
                              const samc_tensor *const *tensors);

#define SAMC_MAX_OVERRIDES 64
#define SAMC_LAYER_NAME_MAX 96

typedef struct samc_impl_override {
    char layer[SAMC_LAYER_NAME_MAX];
    const samc_ops *ops;
} samc_impl_override;

typedef struct samc_sam2_model {
    samc_sam2_config cfg;
    samc_weights *weights;
    bool owns_weights;

    const samc_ops *ops;                /* default implementation */
    samc_impl_override overrides[SAMC_MAX_OVERRIDES];
    int n_overrides;
    samc_ctx ctx;
    samc_trace_fn trace;
    void *trace_user;
    /* Video: the frame and object id the current calls work on (-1: none),
     * for trace consumers (the dump's frame_idx / obj_id attributes). */
    int trace_frame_idx, trace_obj_id;

    /* Bound layers (pointers into `weights`). */
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
    samc_linear obj_ptr_tpos_proj;
    samc_conv2d mask_downsample;        /* Conv2d(1,1,4,4) for mask prompts */
    const float *maskmem_tpos_enc;      /* (num_maskmem, mem_dim) */
    const float *no_obj_ptr;            /* (D) or NULL */
    const float *no_obj_embed_spatial;  /* (mem_dim) or NULL */
    int mem_dim;
    /* SAM2ImagePredictor(max_hole_area, max_sprinkle_area): 0 = off (default). */
    double max_hole_area, max_sprinkle_area;
    int emb;                            /* image embedding side: image_size / backbone_stride */
} samc_sam2_model;

/* Build from loaded weights (ownership of `w` passes to the model, also on
 * failure). cfg NULL: detect the preset from the weights. Every key and shape
 * is checked before anything is computed. */
samc_status samc_sam2_model_init(samc_sam2_model **out, samc_weights *w, const samc_sam2_config *cfg,
                                 samc_error *err);
/* Open a checkpoint (any supported format) and build the model; config is a
 * preset name, a .json or .h5 path, or NULL to detect it from the weights. */
samc_status samc_sam2_model_load(const char *checkpoint, const char *config, samc_sam2_model **out, samc_error *err);
/* The same; allow_nonfinite false refuses weights holding NaN/Inf (as
 * samc_sam2_model_load does), naming the key. */
samc_status samc_sam2_model_load_opts(const char *checkpoint, const char *config, bool allow_nonfinite,
                                      samc_sam2_model **out, samc_error *err);
void samc_sam2_model_free(samc_sam2_model *m);

/* The memory-path ops of the implementation serving `layer`. */
const samc_video_ops *samc_sam2_video_ops_for(const samc_sam2_model *m, const char *layer);

/* Implementation choice: "ref" or "fast". */
const samc_ops *samc_ops_by_name(const char *name);
samc_status samc_sam2_set_impl(samc_sam2_model *m, const char *name, samc_error *err);
/* Parse "LAYER=IMPL" and add it; an unknown layer or impl is an error. */
samc_status samc_sam2_add_override(samc_sam2_model *m, const char *spec, samc_error *err);
/* The ops serving `layer`: the longest matching override, else the default. */
const samc_ops *samc_sam2_ops_for(const samc_sam2_model *m, const char *layer);
/* Whether `layer` names a layer (or a prefix of layers) of this model. */
bool samc_sam2_is_layer_name(const samc_sam2_model *m, const char *layer);

void samc_sam2_set_trace(samc_sam2_model *m, samc_trace_fn fn, void *user);

/* ---- image path ------------------------------------------------------- */

typedef struct samc_sam2_features {
    int orig_h, orig_w;
    samc_tensor image_embed;            /* (1,D,e,e): vision_features + no_mem_embed */
    samc_tensor feat_s0, feat_s1;       /* conv_s0 / conv_s1 high-res features */
    samc_tensor vision_features;        /* (1,D,e,e) raw (for the video path) */
    samc_tensor vision_pos;             /* (1,D,e,e) sine PE of the e x e level */
} samc_sam2_features;

/* set_image: preprocess, image encoder, conv_s0/s1, no_mem_embed. */
samc_status samc_sam2_encode_image(samc_sam2_model *m, const uint8_t *rgb, int h, int w,
                                   samc_sam2_features *f, samc_error *err);
/* Image encoder from an already preprocessed (1,3,S,S) tensor. */
samc_status samc_sam2_encode_tensor(samc_sam2_model *m, const samc_tensor *x, samc_sam2_features *f,
                                    samc_error *err);
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
samc_status samc_sam2_predict(samc_sam2_model *m, const samc_sam2_features *f,
                              const samc_sam2_prompt *p, samc_sam2_prediction *out, samc_error *err);
void samc_sam2_prediction_release(samc_sam2_prediction *p);

/* Pieces of predict, reused by the parity harness's isolated mode. */
samc_status samc_sam2_mask_decoder(samc_sam2_model *m, const samc_tensor *image_embed,
                                   const samc_tensor *image_pe, const samc_tensor *sparse,
                                   const samc_tensor *dense, bool multimask, bool repeat_image,
                                   const samc_tensor *feat_s0, const samc_tensor *feat_s1,
                                   samc_tensor out[4], samc_error *err);
/* PromptEncoder.forward(points=(coords, labels) or None when n == 0,
 * boxes=None, masks): coords (1,n,2) in model-input pixels, mask (1,1,4e,4e)
 * or NULL -> sparse (1, n ? n+1 : 0, D), dense (1,D,e,e); traced. */
samc_status samc_sam2_prompt_encoder(samc_sam2_model *m, const float *coords, const int32_t *labels, int n,
                                     const samc_tensor *mask, samc_tensor *sparse, samc_tensor *dense,
                                     samc_error *err);
samc_status samc_sam2_twoway_transformer(samc_sam2_model *m, const samc_tensor *image_embedding,
                                         const samc_tensor *image_pe, const samc_tensor *tokens,
                                         samc_tensor *q_out, samc_tensor *k_out, samc_error *err);
samc_status samc_sam2_trunk(samc_sam2_model *m, const samc_tensor *x, samc_tensor *stage_out,
                            samc_error *err);

#endif
