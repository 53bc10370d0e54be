/* sam2_memory.h - the memory path wired from layers, with the trace:
 * MemoryEncoder.forward, MemoryAttention.forward, obj_ptr_proj. The video
 * predictor (memory bank, tracking) builds on these. */
#ifndef SAMC_CORE_SAM2_MEMORY_H
#define SAMC_CORE_SAM2_MEMORY_H

#include "sam2_model.h"

/* MemoryEncoder.forward(pix_feat (B,C,h,w), masks (B,1,H,W), skip_mask_sigmoid)
 * -> features (B,out_dim,h,w) and pos (B,out_dim,h,w). */
samc_status samc_sam2_memory_encoder(samc_sam2_model *m, const samc_tensor *pix_feat, const samc_tensor *masks,
                                     bool skip_mask_sigmoid, samc_tensor *features, samc_tensor *pos,
                                     samc_error *err);

/* MemoryAttention.forward, sequence-first like the official call:
 * curr (L,B,D), memory (Nk,B,Dm), curr_pos (L,B,D), memory_pos (Nk,B,Dm)
 * -> out (L,B,D). */
samc_status samc_sam2_memory_attention(samc_sam2_model *m, const samc_tensor *curr, const samc_tensor *memory,
                                       const samc_tensor *curr_pos, const samc_tensor *memory_pos,
                                       int num_obj_ptr_tokens, samc_tensor *out, samc_error *err);

/* obj_ptr_proj: (B,D) -> (B,D). */
samc_status samc_sam2_obj_ptr_proj(samc_sam2_model *m, const samc_tensor *tokens, samc_tensor *out,
                                   samc_error *err);

#endif
