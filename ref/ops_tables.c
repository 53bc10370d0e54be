/* SPDX-License-Identifier: Apache-2.0 */
/* ops_tables.c - the scalar reference's tables: every kind's body
 * samc_ref_K, generated from the kind lists (core/runtime/impl_bodies.h). A
 * row of a part names its kind (SAMC_BODY(samc_tracker_ops, cxblock)), so
 * grepping the kind finds the row and every implementation's body. */
#define SAMC_IMPL ref
#define SAMC_IMPL_TABLES
#include "core/runtime/impl_bodies.h"
