/* SPDX-License-Identifier: Apache-2.0 */
/* impl_bodies.h - one implementation's bodies and tables, generated from the
 * kind lists (core/nn/nn_ops.h, core/models/tracker/tracker_layers.h,
 * core/models/sam2/sam2_layers.h, core/models/sam3/sam3_layers.h): the body
 * of kind K is samc_<impl>_K, the tables samc_<impl>_nn_ops,
 * samc_<impl>_tracker_ops, samc_<impl>_sam2_ops, samc_<impl>_sam3_ops.
 *
 * Include it with SAMC_IMPL set to the implementation's name: it declares
 * every body and the four tables; with SAMC_IMPL_TABLES defined too it
 * defines the tables (once, in the implementation's ops_tables.c). Adding a
 * kind adds its bodies and nothing here; tests/test_registry.c checks that
 * no table misses one. No include guard: each implementation includes it
 * with its own name (it undefines SAMC_IMPL and SAMC_IMPL_TABLES at the end).
 */
#ifndef SAMC_IMPL
#error "set SAMC_IMPL (ref, fast, ...) before including core/runtime/impl_bodies.h"
#endif

#include "core/models/sam2/sam2_layers.h"
#include "core/models/sam3/sam3_layers.h"
#include "core/models/tracker/tracker_layers.h"
#include "core/nn/nn_ops.h"

#define SAMC__CAT3_(a, b, c) a##b##c
#define SAMC__CAT3(a, b, c) SAMC__CAT3_(a, b, c)
#define SAMC__BODY(kind) SAMC__CAT3(samc_, SAMC_IMPL, _##kind)

#define SAMC_X(kind) samc_nn_##kind##_fn SAMC__BODY(kind);
SAMC_NN_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) samc_tracker_##kind##_fn SAMC__BODY(kind);
SAMC_TRACKER_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) samc_sam2_##kind##_fn SAMC__BODY(kind);
SAMC_SAM2_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) samc_##kind##_fn SAMC__BODY(kind);
SAMC_SAM3_OPS(SAMC_X)
#undef SAMC_X

extern const samc_nn_ops SAMC__CAT3(samc_, SAMC_IMPL, _nn_ops);
extern const samc_tracker_ops SAMC__CAT3(samc_, SAMC_IMPL, _tracker_ops);
extern const samc_sam2_ops SAMC__CAT3(samc_, SAMC_IMPL, _sam2_ops);
extern const samc_sam3_ops SAMC__CAT3(samc_, SAMC_IMPL, _sam3_ops);

#ifdef SAMC_IMPL_TABLES
#define SAMC_X(kind) .kind = SAMC__BODY(kind),
const samc_nn_ops SAMC__CAT3(samc_, SAMC_IMPL, _nn_ops) = {SAMC_NN_OPS(SAMC_X)};
const samc_tracker_ops SAMC__CAT3(samc_, SAMC_IMPL, _tracker_ops) = {SAMC_TRACKER_OPS(SAMC_X)};
const samc_sam2_ops SAMC__CAT3(samc_, SAMC_IMPL, _sam2_ops) = {SAMC_SAM2_OPS(SAMC_X)};
const samc_sam3_ops SAMC__CAT3(samc_, SAMC_IMPL, _sam3_ops) = {SAMC_SAM3_OPS(SAMC_X)};
#undef SAMC_X
#undef SAMC_IMPL_TABLES
#endif

#undef SAMC__BODY
#undef SAMC_IMPL
