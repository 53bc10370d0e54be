/* SPDX-License-Identifier: Apache-2.0 */
/* ops_tables.c - the fast implementation's tables (the bf16 implementation
 * runs the same bodies on bf16-packed weights): every kind's body
 * samc_fast_K, generated from the kind lists (core/runtime/impl_bodies.h). A
 * row of a part names its kind (SAMC_BODY(samc_tracker_ops, cxblock)), so
 * grepping the kind finds the row and every implementation's body. */
#define SAMC_IMPL fast
#define SAMC_IMPL_TABLES
#include "core/runtime/impl_bodies.h"
