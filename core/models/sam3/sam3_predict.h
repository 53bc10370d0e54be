/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_predict.h - Sam3Processor's image path (sam3/model/sam3_image_processor.py)
 * on the parts' forwards (sam3_parts.h): set_image, the text encoding, and
 * one grounding (Sam3Image.forward_grounding + the processor's
 * post-processing). Every parity point is traced under its official name,
 * so the parity harness runs this wiring as the chained mode of the
 * sam3_image task.
 *
 * A session mirrors the processor's state: reset clears the text and the
 * boxes; set_text encodes the text; add_box appends a box (encoding the
 * text "visual" first when no text was set); each grounds the prompt. */
#ifndef SAMC_CORE_MODELS_SAM3_PREDICT_H
#define SAMC_CORE_MODELS_SAM3_PREDICT_H

#include "core/models/sam3/sam3_model.h"

/* After set_image: the backbone's levels, and the level the DETR parts
 * read (backbone_fpn[-1] after the scalp) seq-first. */
typedef struct samc_sam3_image {
    int h, w;                     /* the original image size */
    samc_sam3_features f;         /* backbone.vision_backbone: the levels and their positions (NCHW) */
    samc_tensor src, src_pos;     /* backbone_fpn[-1] and its position encoding, (H*W, B, d) */
    int feat_h, feat_w;
} samc_sam3_image;

#define SAMC_SAM3_MAX_BOXES 64

typedef struct samc_sam3_session {
    bool has_text;
    samc_sam3_text text;          /* backbone.language_backbone's outputs */
    int n_boxes;
    float boxes[SAMC_SAM3_MAX_BOXES][4]; /* normalised cx, cy, w, h */
    int labels[SAMC_SAM3_MAX_BOXES];     /* 1 positive, 0 negative */
} samc_sam3_session;

/* One grounding's results. */
typedef struct samc_sam3_result {
    samc_sam3_detections post;    /* @postprocess: scores [M], boxes [M,4] xyxy pixels, masks [M,1,H,W] */
    samc_tensor pred_logits;      /* [Q] */
    samc_tensor pred_boxes;       /* [Q,4] normalised cx, cy, w, h */
    samc_tensor presence_logit;   /* [1] */
    samc_tensor pred_masks;       /* [Q,h,w] low-resolution mask logits */
} samc_sam3_result;

samc_status samc_sam3_set_image(samc_exec *x, const uint8_t *rgb, int h, int w, samc_sam3_image *img,
                                samc_error *err);
/* The vision backbone on a preprocessed image `pre` (1,3,R,R) of an h x w
 * original; sam2: the tracker's neck too (the video detector, predict_inst). */
samc_status samc_sam3_encode_image(samc_exec *x, const samc_tensor *pre, bool sam2, int h, int w, samc_sam3_image *img,
                                   samc_error *err);
void samc_sam3_image_release(samc_sam3_image *img);

void samc_sam3_session_reset(samc_sam3_session *s);
/* set_text_prompt: encode `text`, then ground. */
samc_status samc_sam3_set_text(samc_exec *x, const samc_sam3_image *img, samc_sam3_session *s, const char *text,
                               float threshold, samc_sam3_result *res, samc_error *err);
/* add_geometric_prompt: one box (cx, cy, w, h normalised), then ground. */
samc_status samc_sam3_add_box(samc_exec *x, const samc_sam3_image *img, samc_sam3_session *s, const float box[4],
                              bool positive, float threshold, samc_sam3_result *res, samc_error *err);
/* Sam3Image.forward_grounding on the image: the prompt's text features
 * (L,1,d) and padding mask (1,L), and n_boxes boxes (cx, cy, w, h
 * normalised, labels 1/0) -> res's model outputs (pred_logits: the class
 * logits of the last layer; presence_logit; pred_boxes; pred_masks), no
 * post-processing. */
samc_status samc_sam3_forward_grounding(samc_exec *x, const samc_sam3_image *img, const samc_tensor *text,
                                        const samc_tensor *text_mask, int n_boxes, const float (*boxes)[4],
                                        const int *labels, samc_sam3_result *res, samc_error *err);
/* Ground the session's prompt again (set_confidence_threshold on a state
 * that has results). */
samc_status samc_sam3_ground(samc_exec *x, const samc_sam3_image *img, const samc_sam3_session *s, float threshold,
                             samc_sam3_result *res, samc_error *err);
void samc_sam3_result_release(samc_sam3_result *res);

#endif
