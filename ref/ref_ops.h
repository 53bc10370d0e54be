/* SPDX-License-Identifier: Apache-2.0 */
/* ref_ops.h - the scalar reference's bodies of every kind (samc_ref_K,
 * one file per official module under ref/nn/, ref/tracker/, ref/sam2/,
 * ref/sam3/) and its tables (defined in ref/ops_tables.c), declared
 * from the kind lists by core/runtime/impl_bodies.h. */
#ifndef SAMC_REF_REF_OPS_H
#define SAMC_REF_REF_OPS_H

#define SAMC_IMPL ref
#include "core/runtime/impl_bodies.h"

#endif
