/* fast_testing.h - test-only switches of fast/. Not part of the API.
 *
 * samc_fast_plant_fault("image_encoder.trunk.blocks.3") makes the fast body
 * serving exactly that layer (no prefix matching) perturb its outputs
 * (first element of every output slot, by 1e-2 * (1 + |x|)), so the parity
 * harness must name that layer as the first failure; an override
 * LAYER=ref on it removes the fault. NULL or "" clears it. Process-wide,
 * not thread-safe: for tests. */
#ifndef SAMC_FAST_TESTING_H
#define SAMC_FAST_TESTING_H

void samc_fast_plant_fault(const char *layer);

#endif
