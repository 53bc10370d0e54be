/* SPDX-License-Identifier: Apache-2.0 */
/* rng.h - a small seeded generator (splitmix64): reproducible test data and
 * random weights, identical on every platform. */
#ifndef SAMC_CORE_BASE_RNG_H
#define SAMC_CORE_BASE_RNG_H

#include <stdint.h>

uint64_t samc_rng_next(uint64_t *state);
/* Uniform in [-1, 1). */
float samc_rng_uniform(uint64_t *state);

#endif
