/* sam3_runners.h - isolated runners of the SAM 3 image parity points
 * (PARITY_DUMP_FORMAT.md, "SAM 3"): each reads one recorded call's inputs
 * through a samc_layer_io, runs the layer (or, for composite points, its
 * subtree) with the bodies the exec resolved for each layer, and returns the
 * named output slots.
 *
 * Slot names are the dump's: "0", "1", "0.2", or dict keys ("memory",
 * "pred_masks", ...). Outputs recorded as None are not produced.
 *
 * One input is not in the record itself: backbone.language_backbone receives
 * the captions as strings, so its runner reads the token ids as in-slot
 * "input_ids" ((B, L), from the @tokenize call that precedes it); the caller's
 * samc_layer_io supplies it.
 */
#ifndef SAMC_CORE_MODELS_SAM3_RUNNERS_H
#define SAMC_CORE_MODELS_SAM3_RUNNERS_H

#include "core/models/sam3/sam3_model.h"
#include "core/runtime/layer_io.h"

/* The rows of the registry (sam3_runners.c: `defs`), one per layer: parity
 * points and the sub-steps composite points call. */
enum samc_sam3_row {
    S3_PREPROCESS, S3_PATCH_EMBED, S3_LN_PRE, S3_BLOCK, S3_TRUNK, S3_NECK, S3_SAM2_NECK, S3_VISION,
    S3_TOKENIZE, S3_TEXT_EMBED, S3_TEXT_BLOCK, S3_TEXT_FINAL, S3_TEXT_ENCODER, S3_TEXT_RESIZE, S3_LANGUAGE,
    S3_GEO_PROMPT, S3_GEO_LAYER, S3_GEO_NORM, S3_GEO, S3_ENC_LAYER, S3_ENC,
    S3_DEC_QPOS, S3_DEC_RPB, S3_DEC_LAYER, S3_DEC_REFINE, S3_DEC_PRESENCE_NORM, S3_DEC_PRESENCE, S3_DEC,
    S3_SCORING, S3_SEG_CROSS, S3_PIXDEC, S3_SEG_HEADS, S3_SEG,
    S3_POST_SCORES, S3_POST_BOXES, S3_POST_MASKS, S3_POST,
    S3_N_ROWS
};

/* The runners (samc_isolated_body: x->model is the samc_sam3_model; each
 * body comes from the implementation resolved for its layer). */
samc_isolated_body samc_sam3_run_preprocess;
samc_isolated_body samc_sam3_run_tokenize;
samc_isolated_body samc_sam3_run_patch_embed;
samc_isolated_body samc_sam3_run_vit_block;
samc_isolated_body samc_sam3_run_trunk;
samc_isolated_body samc_sam3_run_neck_level;
/* sam2_convs.{i}: the tracker's neck copy (add_sam2_neck); not an image parity point */
samc_isolated_body samc_sam3_run_sam2_neck_level;
samc_isolated_body samc_sam3_run_vision_backbone;
samc_isolated_body samc_sam3_run_text_block;
samc_isolated_body samc_sam3_run_text_encoder;
samc_isolated_body samc_sam3_run_language_backbone;
samc_isolated_body samc_sam3_run_geo_layer;
samc_isolated_body samc_sam3_run_geometry_encoder;
samc_isolated_body samc_sam3_run_enc_layer;
samc_isolated_body samc_sam3_run_fusion_encoder;
samc_isolated_body samc_sam3_run_dec_layer;
samc_isolated_body samc_sam3_run_decoder;
samc_isolated_body samc_sam3_run_dot_scoring;
samc_isolated_body samc_sam3_run_pixel_decoder;
samc_isolated_body samc_sam3_run_seg_head;
samc_isolated_body samc_sam3_run_postprocess;

/* The row `row` of the registry (the image wiring calls its runners). */
const samc_layer_def *samc__sam3_def(int row);

/* SimpleTokenizer(text) with the model's vocabulary: ids (1, context_length)
 * as float; traced as @tokenize. */
samc_status samc_sam3_tokenize(samc_exec *ex, const char *text, int context_length, samc_tensor *ids,
                               samc_error *err);

#endif
