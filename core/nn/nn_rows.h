/* SPDX-License-Identifier: Apache-2.0 */
/* nn_rows.h - isolated runners and op-test inputs of the shared glue kinds
 * (core/nn/nn_ops.h). The kinds need no part's shapes, so a row of any
 * part that calls one uses these: inputs "a", "b" and scalar "scale" (add),
 * "x", "v", "scale" (add_channel), "x" (and "add") for the layout kinds; output "0"; fixed small op-test
 * shapes that still cover a batch and uneven sizes. */
#ifndef SAMC_CORE_NN_NN_ROWS_H
#define SAMC_CORE_NN_NN_ROWS_H

#include "core/nn/nn_ops.h"
#include "core/runtime/exec.h"

samc_isolated_body samc_nn_run_add, samc_nn_run_add_channel, samc_nn_run_transpose01, samc_nn_run_tokens_to_planes,
    samc_nn_run_planes_to_tokens;
samc_status samc_nn_example_add_channel(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                        samc_error *err);
samc_status samc_nn_example_add(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                samc_error *err);
samc_status samc_nn_example_transpose01(const void *self, int index, uint64_t seed, bool full,
                                        samc_layer_inputs *in, samc_error *err);
samc_status samc_nn_example_tokens_to_planes(const void *self, int index, uint64_t seed, bool full,
                                             samc_layer_inputs *in, samc_error *err);
samc_status samc_nn_example_planes_to_tokens(const void *self, int index, uint64_t seed, bool full,
                                             samc_layer_inputs *in, samc_error *err);

#endif
