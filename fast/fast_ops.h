/* SPDX-License-Identifier: Apache-2.0 */
/* fast_ops.h - the fast implementation's bodies of every kind (samc_fast_K,
 * one file per official module under fast/nn/, fast/tracker/, fast/sam2/,
 * fast/sam3/) and its tables (defined in fast/ops_tables.c), declared
 * from the kind lists by core/runtime/impl_bodies.h. */
#ifndef SAMC_FAST_FAST_OPS_H
#define SAMC_FAST_FAST_OPS_H

#define SAMC_IMPL fast
#include "core/runtime/impl_bodies.h"

#endif
