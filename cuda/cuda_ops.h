/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_ops.h - the CUDA implementation's bodies (one per kind it has; the
 * others come from its fallback, fast) and its preparation, as the C side
 * of the plugin (plugin.c) sees them. Contracts: core/nn/nn_ops.h,
 * core/models/sam2/sam2_layers.h, core/models/tracker/tracker_layers.h. */
#ifndef SAMC_CUDA_CUDA_OPS_H
#define SAMC_CUDA_CUDA_OPS_H

#include "core/models/sam2/sam2_layers.h"
#include "core/models/tracker/tracker_layers.h"
#include "core/nn/nn_ops.h"
#include "core/runtime/impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds it has, per table (the tables in plugin.c are made from these
 * lists, so a body declared here is a body registered). */
#define SAMC_CUDA_NN_OPS(X)                                                                                    \
    X(conv2d) X(layer_norm) X(mlp) X(add) X(add_channel) X(transpose01) X(tokens_to_planes) X(planes_to_tokens)
#define SAMC_CUDA_SAM2_OPS(X) X(patch_embed) X(hiera_block) X(fpn_neck) X(image_features)
#define SAMC_CUDA_TRACKER_OPS(X)                                                                               \
    X(prompt_encoder) X(dense_pe) X(twoway_block) X(twoway_final) X(mask_decoder_heads) X(postprocess) X(sam_heads)

#define SAMC_X(kind) samc_nn_##kind##_fn samc_cuda_##kind;
SAMC_CUDA_NN_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) samc_sam2_##kind##_fn samc_cuda_##kind;
SAMC_CUDA_SAM2_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) samc_tracker_##kind##_fn samc_cuda_##kind;
SAMC_CUDA_TRACKER_OPS(SAMC_X)
#undef SAMC_X

samc_status samc__cuda_prepare_f32(const samc_param_list *params, int slot, void **arena, samc_error *err);
samc_status samc__cuda_prepare_bf16(const samc_param_list *params, int slot, void **arena, samc_error *err);
void samc__cuda_release(void *arena);
/* Whether a CUDA device this plugin can run on is there; why not. */
bool samc__cuda_available(const char **why);
/* Keep libsamc's table for the bodies (cu_runtime.cu). */
void samc__cuda_set_api(const void *api);

#ifdef __cplusplus
}
#endif
#endif
