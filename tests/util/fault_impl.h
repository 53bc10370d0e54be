/* fault_impl.h - the test-only "fault" implementation (fault_impl.c). */
#ifndef SAMC_TESTS_FAULT_IMPL_H
#define SAMC_TESTS_FAULT_IMPL_H

#include "core/runtime/impl.h"

extern const samc_impl tu_fault_impl;

#endif
