/* ops_tables.c - the fast implementation's tables (the bf16 implementation
 * runs the same bodies on bf16-packed weights), generated from the kind
 * lists: the body of kind K is samc_fast_K (declared in fast/fast_ops.h,
 * defined in the file of its module under fast/nn/, fast/tracker/,
 * fast/sam2/, fast/sam3/). A row names
 * its kind (SAMC_BODY(samc_tracker_ops, cxblock)), so grepping the kind
 * finds the row and every implementation's body; adding a kind adds its
 * bodies and nothing here. tests/test_registry.c checks that no kind is
 * left out. */
#include "fast/fast_ops.h"

const samc_nn_ops samc_fast_nn_ops = {
#define SAMC_X(kind) .kind = samc_fast_##kind,
    SAMC_NN_OPS(SAMC_X)
#undef SAMC_X
};

const samc_tracker_ops samc_fast_tracker_ops = {
#define SAMC_X(kind) .kind = samc_fast_##kind,
    SAMC_TRACKER_OPS(SAMC_X)
#undef SAMC_X
};

const samc_sam2_ops samc_fast_sam2_ops = {
#define SAMC_X(kind) .kind = samc_fast_##kind,
    SAMC_SAM2_OPS(SAMC_X)
#undef SAMC_X
};

const samc_sam3_ops samc_fast_sam3_ops = {
#define SAMC_X(kind) .kind = samc_fast_##kind,
    SAMC_SAM3_OPS(SAMC_X)
#undef SAMC_X
};
