/* SPDX-License-Identifier: Apache-2.0 */
/* nn_ops.h - the layer kinds every model family uses (torch.nn's own
 * modules and the few helpers both SAMs share): one signature each, one
 * body per implementation (ref/nn/, fast/nn/), reached through the
 * samc_nn_ops table (core/runtime/impl.h, SAMC_OPS_NN).
 *
 * A family's own tables (core/models/<family>/<family>_layers.h) hold
 * only what is specific to it; a row of any part may call these bodies.
 * Conventions: core/nn/records.h.
 */
#ifndef SAMC_CORE_NN_NN_OPS_H
#define SAMC_CORE_NN_NN_OPS_H

#include "core/nn/records.h"

/* nn.Conv2d, NCHW: (B,cin,H,W) -> (B,cout,H',W'). */
typedef samc_status samc_nn_conv2d_fn(samc_ctx *ctx, const samc_conv2d *conv, const samc_tensor *x,
                                      samc_tensor *out);
/* nn.LayerNorm over the last dimension: (..., dim) -> (..., dim). */
typedef samc_status samc_nn_layer_norm_fn(samc_ctx *ctx, const samc_norm *norm, const samc_tensor *x,
                                          samc_tensor *out);
/* sam2_utils.MLP (also SAM 3's MLP) on rows: x (..., in) -> out (..., out);
 * ReLU between layers, sigmoid after the last when the record says so. */
typedef samc_status samc_nn_mlp_fn(samc_ctx *ctx, const samc_mlp *mlp, const samc_tensor *x, samc_tensor *out);

/* The element-wise and layout steps a module's forward does between its
 * submodules (the "glue"): bodies too, so that an implementation that keeps
 * its activations elsewhere (a GPU) never hands them to the host between
 * two layers. All exact: any thread count gives the same bytes. */

/* PositionEmbeddingSine over out's (H, W) grid, repeated over its batch:
 * out (B, pe->num_pos_feats, H, W). */
typedef samc_status samc_nn_sine_pe_fn(samc_ctx *ctx, const samc_sine_pe *pe, samc_tensor *out);
/* out = a + scale * b, element-wise (b of a's size); out may be a. */
typedef samc_status samc_nn_add_fn(samc_ctx *ctx, const samc_tensor *a, const samc_tensor *b, float scale,
                                   samc_tensor *out);
/* out[b,c,...] = x[b,c,...] + scale * v[c] over (B, C, ...): a per-channel
 * vector added to every position; out may be x. */
typedef samc_status samc_nn_add_channel_fn(samc_ctx *ctx, const samc_tensor *x, const float *v, float scale,
                                           samc_tensor *out);
/* (A, B, C) -> (B, A, C): transpose(0, 1) (sequence-first <-> batch-first). */
typedef samc_status samc_nn_transpose01_fn(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out);
/* (B, H, W, C) -> (B, C, H, W): permute(0, 3, 1, 2) (token rows to planes). */
typedef samc_status samc_nn_tokens_to_planes_fn(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out);
/* (B, C, H, W) [+ add (b_out, C, H, W)] -> (b_out, H*W, C): flatten(2).
 * permute(0, 2, 1), the sum fused into the read; a source of batch 1
 * serves every output batch element (expand). add may be NULL. */
typedef samc_status samc_nn_planes_to_tokens_fn(samc_ctx *ctx, const samc_tensor *x, const samc_tensor *add,
                                                samc_tensor *out);

/* The kinds, in table order. An implementation's table lists each body by
 * name (ref/ops_tables.c, fast/ops_tables.c); tests/test_registry.c checks
 * from this list that ref and fast leave none out. */
#define SAMC_NN_OPS(X)                                                                              \
    X(conv2d) X(layer_norm) X(mlp) X(sine_pe) X(add) X(add_channel) X(transpose01) X(tokens_to_planes)    \
    X(planes_to_tokens)

typedef struct samc_nn_ops {
#define SAMC_X(kind) samc_nn_##kind##_fn *kind;
    SAMC_NN_OPS(SAMC_X)
#undef SAMC_X
} samc_nn_ops;

#endif
