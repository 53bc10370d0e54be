/* SPDX-License-Identifier: Apache-2.0 */
/* sam_heads.h - the tracker's SAM heads, part by part: the PromptEncoder
 * (prompt_encoder.c), the MaskDecoder with its TwoWayTransformer
 * (mask_decoder.c), and @postprocess, the resize of the low-res masks to
 * the image or video (postprocess.c). Each forward takes the part instance
 * it runs. */
#ifndef SAMC_MODELS_TRACKER_SAM_HEADS_H
#define SAMC_MODELS_TRACKER_SAM_HEADS_H

#include "core/models/tracker/tracker.h"

/* The exec's wire slots (samc_exec_wire) the SAM heads keep their large
 * activations in: the two-way transformer's key maps (ping-pong between
 * KEYS_A and KEYS_B across layers) and their PE, and the dense prompt
 * embedding (live from the prompt encoder to the mask decoder). */
enum { SAMC_WIRE_KEYS_A, SAMC_WIRE_KEYS_B, SAMC_WIRE_KEY_PE, SAMC_WIRE_DENSE };

/* PromptEncoder.forward for B prompts of n points each (the official
 * (B,n,2) tensors; n == 0: points=None, boxes=None): coords (B,n,2) in
 * model-input pixels, labels (B,n), mask (B,1,4e,4e) or NULL -> sparse
 * (B, n ? n+1 : 0, D), dense (B,D,e,e) (the dense map lives in a wire slot
 * of the exec until the next prompt encoding); traced. */
samc_status samc_prompt_encoder_forward(samc_exec *x, const samc_prompt_encoder *pe, const samc_scope *sc,
                                        const float *coords, const int32_t *labels, int B, int n,
                                        const samc_tensor *mask, samc_tensor *sparse, samc_tensor *dense,
                                        samc_error *err);
/* PromptEncoder.get_dense_pe: (1, D, e, e). */
samc_status samc_prompt_encoder_dense_pe(samc_exec *x, const samc_prompt_encoder *pe, samc_tensor *out,
                                         samc_error *err);

/* MaskDecoder.forward: image_embed (1 or B,D,e,e), image_pe (1,D,e,e),
 * sparse (B,Ns,D), dense (B,D,e,e), the high-res features or NULL ->
 * out[0] masks, out[1] iou, out[2] sam tokens, out[3] object score logits;
 * traced with its transformer. */
samc_status samc_mask_decoder_forward(samc_exec *x, const samc_mask_decoder *d, const samc_scope *sc,
                                      const samc_tensor *image_embed, const samc_tensor *image_pe,
                                      const samc_tensor *sparse, const samc_tensor *dense, bool multimask,
                                      bool repeat_image, const samc_tensor *feat_s0, const samc_tensor *feat_s1,
                                      samc_tensor out[4], samc_error *err);
/* The SAM heads' whole-part body (samc_tracker_sam_heads_fn): the decoder's
 * own row when the implementation asked for it has one and is asked for
 * every row of the decoder and of the prompt encoder, else NULL. */
const samc_layer *samc_sam_heads_whole(const samc_exec *x, const samc_prompt_encoder *pe, const samc_mask_decoder *d);
/* PromptEncoder.forward + MaskDecoder.forward through that body, on f's
 * image embedding and high-res features: coords (B,N,2) in model pixels,
 * labels (B,N), mask (B,1,4e,4e) or NULL -> out as samc_mask_decoder_forward
 * gives it; traced like the two parts. */
samc_status samc_sam_heads_forward_whole(samc_exec *x, const samc_layer *W, const samc_prompt_encoder *pe,
                                         const samc_scope *sc, const float *coords, const int32_t *labels, int B,
                                         int N, const samc_tensor *mask, const samc_frame_features *f,
                                         bool multimask, samc_tensor out[4], samc_error *err);
/* Whether `impl` is asked for every row of the prompt encoder. */
bool samc_prompt_encoder_served_by(const samc_exec *x, const samc_prompt_encoder *pe, const samc_impl *impl);
/* The decoder's name as mounted ("sam_mask_decoder"): decisions name it. */
const char *samc_mask_decoder_name(const samc_exec *x, const samc_mask_decoder *d);
/* The row of conv_s0 (level 0) / conv_s1 (level 1). */
const samc_layer *samc_mask_decoder_high_res_layer(const samc_exec *x, const samc_mask_decoder *d, int level);
/* forward_image's conv_s0 (level 0) / conv_s1 (level 1): (1,D,h,w) -> (1,D/8|D/4,h,w). */
samc_status samc_mask_decoder_high_res(samc_exec *x, const samc_mask_decoder *d, const samc_scope *sc, int level,
                                       const samc_tensor *in, samc_tensor *out, samc_error *err);

/* SAM2Transforms.postprocess_masks's resize: (1,C,h,w) -> (1,C,H,W), traced. */
samc_status samc_tracker_postprocess(samc_exec *x, const samc_tracker_model *tr, const samc_tensor *low, int H, int W,
                                     samc_tensor *out, samc_error *err);
/* The video predictor's resize to the video resolution (+ non-overlap),
 * traced as @postprocess with scope `sc` (NULL: not traced). */
samc_status samc_tracker_postprocess_video(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                           const samc_tensor *low, int H, int W, bool non_overlap,
                                           samc_tensor *out, samc_error *err);

#endif
