/* SPDX-License-Identifier: Apache-2.0 */
/* random_weights.h - seeded weights for every key a family's walk
 * describes (samc_sd without a store): real-size models without a
 * checkpoint, for benchmarks and the op tests. Each family says how a key
 * is initialised; the values are drawn in key order from one seed. */
#ifndef SAMC_CORE_RUNTIME_RANDOM_WEIGHTS_H
#define SAMC_CORE_RUNTIME_RANDOM_WEIGHTS_H

#include "core/runtime/statedict.h"

typedef enum samc_weight_init {
    SAMC_INIT_UNIFORM, /* uniform +-1/sqrt(fan_in), fan_in the product of dims 1.. (PyTorch's default scale) */
    SAMC_INIT_SMALL,   /* uniform +-0.02 */
    SAMC_INIT_ONE,     /* 1 (norm weights) */
    SAMC_INIT_ZERO,    /* 0 (norm biases) */
    SAMC_INIT_SKIP,    /* not stored (a buffer the walk computes when absent) */
} samc_weight_init;

/* A store holding every key of `keys` initialised as `init` says. */
samc_status samc_random_weights(const samc_key_list *keys, uint64_t seed, samc_weight_init (*init)(const samc_key_spec *k),
                                samc_weights **out, samc_error *err);

#endif
