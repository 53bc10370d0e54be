/* SPDX-License-Identifier: Apache-2.0 */
/* rng.c - a small seeded generator (splitmix64) for test data and random weights. */
#include "core/base/rng.h"

uint64_t samc_rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float samc_rng_uniform(uint64_t *s) { return (float)((samc_rng_next(s) >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f; }
