/* SPDX-License-Identifier: Apache-2.0 */
/* kinds.c - the name of the kind a row's body is ("hiera_block"), from the
 * kind lists of every table (samc info --layers, tests/test_registry.c). */
#include "core/runtime/impl.h"

#include "core/models/sam2/sam2_layers.h"
#include "core/models/sam3/sam3_layers.h"
#include "core/models/tracker/tracker_layers.h"
#include "core/nn/nn_ops.h"

const char *samc_kind_name(int table, size_t body)
{
    if (!body)
        return NULL;
#define SAMC_X(kind)                                                                                      \
    if (body - 1 == offsetof(TABLE_TYPE, kind))                                                           \
        return #kind;
    switch (table) {
    case SAMC_OPS_NN:
#define TABLE_TYPE samc_nn_ops
        SAMC_NN_OPS(SAMC_X)
#undef TABLE_TYPE
        break;
    case SAMC_OPS_TRACKER:
#define TABLE_TYPE samc_tracker_ops
        SAMC_TRACKER_OPS(SAMC_X)
        SAMC_TRACKER_WHOLE_OPS(SAMC_X)
#undef TABLE_TYPE
        break;
    case SAMC_OPS_SAM2:
#define TABLE_TYPE samc_sam2_ops
        SAMC_SAM2_OPS(SAMC_X)
        SAMC_SAM2_WHOLE_OPS(SAMC_X)
#undef TABLE_TYPE
        break;
    case SAMC_OPS_SAM3:
#define TABLE_TYPE samc_sam3_ops
        SAMC_SAM3_OPS(SAMC_X)
#undef TABLE_TYPE
        break;
    default:
        break;
    }
#undef SAMC_X
    return NULL;
}
