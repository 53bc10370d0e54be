/* sam2_memory.h - the memory path wired from layers, with the trace:
 * MemoryEncoder.forward, MemoryAttention.forward, the object-pointer
 * projections and mask_downsample. The video predictor (memory bank,
 * tracking) builds on these. */
#ifndef SAMC_CORE_SAM2_MEMORY_H
#define SAMC_CORE_SAM2_MEMORY_H

#include "core/models/sam2/sam2_model.h"

/* MemoryEncoder.forward(pix_feat (B,C,h,w), masks (B,1,H,W), skip_mask_sigmoid)
 * -> features (B,out_dim,h,w) and pos (B,out_dim,h,w). */
samc_status samc_sam2_memory_encoder(samc_exec *x, const samc_scope *sc, const samc_tensor *pix_feat,
                                     const samc_tensor *masks, bool skip_mask_sigmoid, samc_tensor *features,
                                     samc_tensor *pos, samc_error *err);

/* MemoryAttention.forward, sequence-first like the official call:
 * curr (L,B,D), memory (Nk,B,Dm), curr_pos (L,B,D), memory_pos (Nk,B,Dm)
 * -> out (L,B,D). */
samc_status samc_sam2_memory_attention(samc_exec *x, const samc_scope *sc, const samc_tensor *curr,
                                       const samc_tensor *memory, const samc_tensor *curr_pos,
                                       const samc_tensor *memory_pos, int num_obj_ptr_tokens, samc_tensor *out,
                                       samc_error *err);

/* obj_ptr_proj: (B,D) -> (B,D). */
samc_status samc_sam2_obj_ptr_proj(samc_exec *x, const samc_scope *sc, const samc_tensor *tokens, samc_tensor *out,
                                   samc_error *err);
/* obj_ptr_tpos_proj on the temporal sine encodings: (n,D) -> (n,mem_dim). */
samc_status samc_sam2_obj_ptr_tpos_proj(samc_exec *x, const samc_tensor *pe, samc_tensor *out, samc_error *err);
/* mask_downsample: (1,1,S,S) -> (1,1,S/4,S/4). */
samc_status samc_sam2_mask_downsample(samc_exec *x, const samc_tensor *mask, samc_tensor *out, samc_error *err);

/* The memory encoder's position encoding (1,mem_dim,e,e), identical for every frame. */
samc_status samc_sam2_maskmem_pos(const samc_sam2_model *m, samc_tensor *pos, samc_error *err);

#endif
