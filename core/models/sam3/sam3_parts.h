/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_parts.h - the parts of the SAM 3 image model (the detector of
 * sam3.pt), each in its own file with its rows (named relative to its
 * root), its weights (described over relative keys from its typed config
 * section, sam3_config.h), its forward, its isolated runners and op-test
 * inputs. The family mounts them (sam3_model.c):
 *
 *   ""                           @preprocess (sam3_processor.c)
 *   backbone.vision_backbone     ViT trunk, convs and sam2_convs necks (vision_backbone.c)
 *   ""                           @tokenize (language_backbone.c)
 *   backbone.language_backbone   text transformer and resizer (language_backbone.c)
 *   geometry_encoder             the geometric prompt encoder (geometry_encoder.c)
 *   transformer.encoder          the fusion encoder (fusion_encoder.c)
 *   transformer.decoder          the DETR decoder (decoder.c)
 *   dot_prod_scoring             the scoring head (scoring.c)
 *   segmentation_head            pixel decoder and mask heads (segmentation_head.c)
 *   ""                           @postprocess (sam3_processor.c)
 *
 * A forward takes its part instance and the exec; it calls each layer
 * through the body the exec resolved for it and reports every parity point
 * it completes to the exec's trace under its official name. Outputs are
 * allocated by the forward and released by the caller; a forward that
 * fails leaves none allocated.
 */
#ifndef SAMC_CORE_MODELS_SAM3_PARTS_H
#define SAMC_CORE_MODELS_SAM3_PARTS_H

#include "core/models/sam3/sam3_layers.h"
#include "core/runtime/exec.h"
#include "core/runtime/statedict.h"

struct samc_clip_tokenizer;

/* ---- part instances ---------------------------------------------------------- */

/* Sam3Processor's transforms (@preprocess, @postprocess): no weights. */
typedef struct samc_sam3_transforms {
    int resolution;
} samc_sam3_transforms;

/* Sam3DualViTDetNeck with its vitdet.ViT trunk (backbone.vision_backbone). */
typedef struct samc_sam3_vision_backbone {
    int resolution, grid;               /* img_size, tokens per side */
    samc_sam3_vit_embed embed;          /* trunk.patch_embed, pos_embed, ln_pre */
    int n_blocks;
    samc_sam3_vit_block blocks[SAMC_SAM3_MAX_BLOCKS];
    int last_block;                     /* full_attn_ids[-1]: the block whose output is returned */
    samc_sam3_neck neck;                /* convs + position_encoding */
    bool has_sam2_neck;                 /* add_sam2_neck: the tracker's copy, sam2_convs */
    samc_sam3_neck sam2_neck;
    int scalp;                          /* SAM3VLBackbone drops this many of the lowest levels */
    float *rope[SAMC_SAM3_MAX_BLOCKS];  /* RoPE tables computed (the store had no attn.freqs_cis), owned */
} samc_sam3_vision_backbone;

/* VETextEncoder (backbone.language_backbone) and its tokenizer (@tokenize). */
typedef struct samc_sam3_language_backbone {
    samc_sam3_text_encoder text;
    struct samc_clip_tokenizer *tok;    /* the vocabulary (owned; NULL until set) */
} samc_sam3_language_backbone;

extern const samc_part_def samc_sam3_preprocess_part, samc_sam3_vision_part, samc_sam3_tokenizer_part,
    samc_sam3_language_part, samc_sam3_geometry_part, samc_sam3_fusion_part, samc_sam3_decoder_part,
    samc_sam3_scoring_part, samc_sam3_segmentation_part, samc_sam3_postprocess_part;

/* What describe left for the model to free (computed RoPE tables). */
void samc_sam3_vision_release(samc_sam3_vision_backbone *v);

/* ---- vision ------------------------------------------------------------------ */

/* @preprocess: Sam3Processor.transform of an RGB image (h, w, 3) -> out
 * (1, 3, R, R); traced. */
samc_status samc_sam3_preprocess(samc_exec *x, const samc_sam3_transforms *t, const uint8_t *rgb, int h, int w,
                                 samc_tensor *out, samc_error *err);

/* The vision backbone's outputs for one image batch. */
typedef struct samc_sam3_features {
    int n_levels;                       /* neck levels, high to low resolution (before the scalp) */
    samc_tensor level[SAMC_SAM3_NECK_MAX], pos[SAMC_SAM3_NECK_MAX]; /* (B, d, H_i, W_i) each */
    int n_sam2;                         /* the tracker neck's levels, when computed */
    samc_tensor sam2_level[SAMC_SAM3_NECK_MAX], sam2_pos[SAMC_SAM3_NECK_MAX];
} samc_sam3_features;
void samc_sam3_features_release(samc_sam3_features *f);

/* ViT.forward: image (B,3,S,S) -> out (B,C,h,w) NCHW after block
 * full_attn_ids[-1]; traced (patch_embed, blocks, trunk). */
samc_status samc_sam3_trunk_forward(samc_exec *x, const samc_sam3_vision_backbone *v, const samc_tensor *img,
                                    samc_tensor *out, samc_error *err);
/* Sam3DualViTDetNeck.forward: the trunk, every convs level and its sine
 * position encoding; the sam2_convs levels too when the model has them and
 * `sam2` asks (always while a trace listens: they are the point's outputs). */
samc_status samc_sam3_vision_forward(samc_exec *x, const samc_sam3_vision_backbone *v, const samc_tensor *img,
                                     bool sam2, samc_sam3_features *f, samc_error *err);

/* ---- text -------------------------------------------------------------------- */

/* @tokenize: SimpleTokenizer(text) with the model's vocabulary -> ids
 * (1, context_length) as float; traced. */
samc_status samc_sam3_tokenize(samc_exec *x, const samc_sam3_language_backbone *lb, const char *text,
                               int context_length, samc_tensor *ids, samc_error *err);
/* The same for n texts -> ids (n, context_length), one @tokenize record
 * (the video model encodes its text and "visual" together). */
samc_status samc_sam3_tokenize_batch(samc_exec *x, const samc_sam3_language_backbone *lb, const char *const *texts,
                                     int n, int context_length, samc_tensor *ids, samc_error *err);

/* VETextEncoder.forward's outputs. */
typedef struct samc_sam3_text {
    samc_tensor mask;                   /* (B, L): 1 where the token is padding */
    samc_tensor memory;                 /* (L, B, d): the resized tokens */
    samc_tensor embeds;                 /* (L, B, W): token_embedding(ids) */
} samc_sam3_text;
void samc_sam3_text_release(samc_sam3_text *t);

/* VETextEncoder.forward on token ids (B, L); traced (resblocks, encoder, the
 * backbone's outputs). */
samc_status samc_sam3_language_forward(samc_exec *x, const samc_sam3_language_backbone *lb, const samc_tensor *ids,
                                       samc_sam3_text *out, samc_error *err);

/* ---- prompt, encoder, decoder -------------------------------------------------- */

/* A geometric prompt as SequenceGeometryEncoder takes it (any may be NULL
 * or have 0 entries): points (Np,B,2), point_mask (B,Np), point_labels
 * (Np,B); boxes (Nb,B,4) cxcywh, box_mask (B,Nb), box_labels (Nb,B). */
typedef struct samc_sam3_geometry_prompt {
    const samc_tensor *points, *point_mask, *point_labels;
    const samc_tensor *boxes, *box_mask, *box_labels;
} samc_sam3_geometry_prompt;

/* SequenceGeometryEncoder.forward on the seq-first features img (HW,B,C) of
 * an H x W map and their position encoding img_pos (or NULL: zeros) ->
 * embeds (N,B,C), mask (B,N); traced (encode layers, the encoder). */
samc_status samc_sam3_geometry_forward(samc_exec *x, const samc_sam3_geometry_encoder *g,
                                       const samc_sam3_geometry_prompt *p, const samc_tensor *img,
                                       const samc_tensor *img_pos, int H, int W, samc_tensor *embeds,
                                       samc_tensor *mask, samc_error *err);

/* TransformerEncoderFusion.forward on one level: src and src_pos (HW,B,C)
 * seq-first, the prompt (T,B,C) and its padding mask (B,T) or NULL ->
 * memory (HW,B,C); traced (layers, the encoder's output dict). */
samc_status samc_sam3_fusion_forward(samc_exec *x, const samc_sam3_fusion_encoder *enc, const samc_tensor *src,
                                     const samc_tensor *src_pos, const samc_tensor *prompt,
                                     const samc_tensor *prompt_mask, int H, int W, samc_tensor *memory,
                                     samc_error *err);

/* TransformerDecoder.forward's outputs. */
typedef struct samc_sam3_decoded {
    samc_tensor hs;                     /* (layers, nq, B, d): out_norm of every layer's output */
    samc_tensor refs;                   /* (layers, nq, B, 4): the boxes entering each layer */
    samc_tensor presence_logits;        /* (layers, 1, B), with a presence token */
    samc_tensor presence_feats;         /* (1, B, d), with a presence token */
    samc_tensor boxes;                  /* (nq, B, 4): the last layer's refined boxes (pred_boxes) */
} samc_sam3_decoded;
void samc_sam3_decoded_release(samc_sam3_decoded *d);

/* TransformerDecoder.forward: tgt (nq,B,d), memory and pos (HW,B,d) of an
 * H x W level, memory_text (T,B,d) and text_mask (B,T) or NULL; traced
 * (layers, the decoder). */
samc_status samc_sam3_decoder_forward(samc_exec *x, const samc_sam3_decoder *dec, const samc_tensor *tgt,
                                      const samc_tensor *memory, const samc_tensor *pos,
                                      const samc_tensor *memory_text, const samc_tensor *text_mask, int H, int W,
                                      samc_sam3_decoded *out, samc_error *err);

/* ---- heads ------------------------------------------------------------------- */

/* DotProductScoring.forward: hs (layers,B,Q,d), prompt (T,B,d), prompt_mask
 * (B,T) -> out (layers,B,Q,1); traced. */
samc_status samc_sam3_scoring_forward(samc_exec *x, const samc_sam3_scoring *s, const samc_tensor *hs,
                                      const samc_tensor *prompt, const samc_tensor *prompt_mask, samc_tensor *out,
                                      samc_error *err);

/* UniversalSegmentationHead.forward: the backbone levels feats[0..n-1]
 * (B,d,H_i,W_i) high to low resolution, obj_queries (layers,B,Q,d), the
 * encoder's memory (HW,B,d) (its first H_{n-1} W_{n-1} rows are the visual
 * tokens), prompt (T,B,d) and its mask (B,T) or NULL -> pred_masks
 * (B,Q,H_0,W_0), semantic (B,1,H_0,W_0); traced (pixel_decoder, the head). */
samc_status samc_sam3_segmentation_forward(samc_exec *x, const samc_sam3_seg_head *s, const samc_tensor *feats,
                                           int n, const samc_tensor *obj_queries, const samc_tensor *memory,
                                           const samc_tensor *prompt, const samc_tensor *prompt_mask,
                                           samc_tensor *pred_masks, samc_tensor *semantic, samc_error *err);

/* Sam3Processor._forward_grounding's post-processing. */
typedef struct samc_sam3_detections {
    samc_tensor scores;                 /* (M) */
    samc_tensor boxes;                  /* (M, 4) xyxy in pixels */
    samc_tensor masks;                  /* (M, 1, H, W) probabilities */
} samc_sam3_detections;
void samc_sam3_detections_release(samc_sam3_detections *d);

/* @postprocess: logits (B,Q,1), boxes (B,Q,4) cxcywh, masks (B,Q,h,w),
 * presence (B,1) -> the detections above `threshold` at H x W; traced. */
samc_status samc_sam3_postprocess(samc_exec *x, const samc_sam3_transforms *t, const samc_tensor *logits,
                                  const samc_tensor *boxes, const samc_tensor *masks, const samc_tensor *presence,
                                  int H, int W, float threshold, samc_sam3_detections *out, samc_error *err);

#endif
