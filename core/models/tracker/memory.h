/* SPDX-License-Identifier: Apache-2.0 */
/* memory.h - the tracker's memory path, part by part: MemoryEncoder,
 * MemoryAttention, and the tracker's own object-pointer projections and
 * mask_downsample. Each forward takes the part instance it runs; the
 * memory bank and the tracking step (track_step.h) build on these. */
#ifndef SAMC_MODELS_TRACKER_MEMORY_H
#define SAMC_MODELS_TRACKER_MEMORY_H

#include "core/models/tracker/tracker.h"

/* MemoryEncoder.forward(pix_feat (B,C,h,w), masks (B,1,H,W), skip_mask_sigmoid)
 * -> features (B,out_dim,h,w) and pos (B,out_dim,h,w). */
samc_status samc_memory_encoder_forward(samc_exec *x, const samc_memory_encoder *e, const samc_scope *sc,
                                        const samc_tensor *pix_feat, const samc_tensor *masks,
                                        bool skip_mask_sigmoid, samc_tensor *features, samc_tensor *pos,
                                        samc_error *err);
/* The memory encoder's position encoding (1,out_dim,e,e), identical for
 * every frame (its position_encoding row). */
samc_status samc_memory_encoder_pos(samc_exec *x, const samc_memory_encoder *e, samc_tensor *pos, samc_error *err);

/* Sam3TrackerBase.frame_filter (memory selection): the frames whose
 * memories and pointers the tracking step of `in` may read, written to
 * `valid` (at most SAMC_TRACKER_MAX_VALID, ascending in time forward,
 * descending in reverse); traced as @frame_filter. Returns their count. */
#define SAMC_TRACKER_MAX_VALID 64
struct samc_track_in;
int samc_tracker_frame_filter(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                              const struct samc_track_in *in, int *valid);
extern const samc_part_def samc_frame_filter_part;

/* The encoder's name as mounted ("memory_encoder"): decisions name it. */
const char *samc_memory_encoder_name(const samc_exec *x, const samc_memory_encoder *e);
/* @prepare_memory_conditioned_features as mounted: the stored memory's
 * bf16 rounding (a decision) is reported there. */
const char *samc_memory_bank_name(const samc_exec *x, const samc_tracker_model *tr);

/* MemoryAttention.forward, sequence-first like the official call:
 * curr (L,B,D), memory (Nk,B,Dm), curr_pos (L,B,D), memory_pos (Nk,B,Dm)
 * -> out (L,B,D). */
samc_status samc_memory_attention_forward(samc_exec *x, const samc_memory_attention *ma, const samc_scope *sc,
                                          const samc_tensor *curr, const samc_tensor *memory,
                                          const samc_tensor *curr_pos, const samc_tensor *memory_pos,
                                          int num_obj_ptr_tokens, samc_tensor *out, samc_error *err);

/* obj_ptr_proj: (B,D) -> (B,D). */
samc_status samc_tracker_obj_ptr_proj(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                      const samc_tensor *tokens, samc_tensor *out, samc_error *err);
/* obj_ptr_tpos_proj on the temporal sine encodings: (n,D) -> (n,mem_dim). */
samc_status samc_tracker_obj_ptr_tpos_proj(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                           const samc_tensor *pe, samc_tensor *out, samc_error *err);
/* _encode_new_memory's mask (in place): sigmoid, or (> 0) when binarize,
 * then the config's scale and bias. */
samc_status samc_tracker_mask_for_memory(samc_exec *x, const samc_tracker_model *tr, samc_tensor *mask, bool binarize,
                                         samc_error *err);
/* maskmem += absent * no_obj_embed_spatial (absent: 0 or 1), in place. */
samc_status samc_tracker_no_obj_embed(samc_exec *x, const samc_tracker_model *tr, samc_tensor *maskmem, float absent,
                                      samc_error *err);
/* mask_downsample: (1,1,S,S) -> (1,1,S/4,S/4). */
samc_status samc_tracker_mask_downsample(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                         const samc_tensor *mask, samc_tensor *out, samc_error *err);

#endif
