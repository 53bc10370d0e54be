/* fast_ops.h - the fast implementation's bodies of every kind of the shared,
 * tracker, SAM 2 and SAM 3 tables (one file per official module under fast/nn/,
 * fast/tracker/, fast/sam2/, fast/sam3/; contracts in core/nn/nn_ops.h,
 * core/models/tracker/tracker_layers.h, core/models/sam2/sam2_layers.h,
 * core/models/sam3/sam3_layers.h) and the tables themselves
 * (fast/ops_tables.c). */
#ifndef SAMC_FAST_FAST_OPS_H
#define SAMC_FAST_FAST_OPS_H

#include "core/models/sam2/sam2_layers.h"
#include "core/models/sam3/sam3_layers.h"
#include "core/models/tracker/tracker_layers.h"
#include "core/nn/nn_ops.h"

#define SAMC_X(kind) samc_nn_##kind##_fn samc_fast_##kind;
SAMC_NN_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) samc_tracker_##kind##_fn samc_fast_##kind;
SAMC_TRACKER_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) samc_sam2_##kind##_fn samc_fast_##kind;
SAMC_SAM2_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) samc_##kind##_fn samc_fast_##kind;
SAMC_SAM3_OPS(SAMC_X)
#undef SAMC_X

extern const samc_nn_ops samc_fast_nn_ops;
extern const samc_tracker_ops samc_fast_tracker_ops;
extern const samc_sam2_ops samc_fast_sam2_ops;
extern const samc_sam3_ops samc_fast_sam3_ops;

#endif
