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

/* The kinds, in table order. An implementation's table lists each body by
 * name (ref/ops_tables.c, fast/ops_tables.c); tests/test_registry.c checks
 * from this list that ref and fast leave none out. */
#define SAMC_NN_OPS(X) X(conv2d) X(layer_norm) X(mlp)

typedef struct samc_nn_ops {
#define SAMC_X(kind) samc_nn_##kind##_fn *kind;
    SAMC_NN_OPS(SAMC_X)
#undef SAMC_X
} samc_nn_ops;

#endif
