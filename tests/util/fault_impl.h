/* SPDX-License-Identifier: Apache-2.0 */
/* fault_impl.h - the test-only "fault" implementation (fault_impl.c). */
#ifndef SAMC_TESTS_FAULT_IMPL_H
#define SAMC_TESTS_FAULT_IMPL_H

#include "core/runtime/impl.h"

extern const samc_impl tu_fault_impl;
/* The planted fault's relative size (default 1e-4: element 0 += 1e-4 x max|out|). */
extern double tu_fault_size;
/* -1: every output of every wrapped body; 0 / 1 / 2: only the masks / IoU
 * predictions / object-score logit of the mask decoder heads (the rest of
 * an overridden subtree runs fast unchanged). */
extern int tu_fault_heads_only;

#endif
