/* SPDX-License-Identifier: Apache-2.0 */
/* sam2_random.c - seeded random weights for a config (benchmarks, op tests:
 * real-size models without a checkpoint). */
#include <stdbool.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/sam2_model.h"
#include "core/runtime/random_weights.h"

static bool ends_with(const char *s, const char *suf)
{
    const size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* PyTorch's default scale (uniform +-1/sqrt(fan_in)); norm weights 1, norm
 * biases 0, so activations stay O(1) and no denormals distort the timing. */
static samc_weight_init init(const samc_key_spec *k)
{
    const bool norm = k->ndim == 1 && (strstr(k->key, "norm") != NULL || strstr(k->key, "output_upscaling.1") != NULL);
    return norm ? (ends_with(k->key, ".weight") ? SAMC_INIT_ONE : SAMC_INIT_ZERO)
                : k->ndim >= 2 ? SAMC_INIT_UNIFORM : SAMC_INIT_SMALL;
}

samc_status samc_sam2_random_weights(const samc_sam2_config *cfg, uint64_t seed, samc_weights **out, samc_error *err)
{
    samc_key_list keys = {0};
    samc_status st = samc_sam2_expected_keys(cfg, &keys, err);
    if (!st)
        st = samc_random_weights(&keys, seed, init, out, err);
    samc_key_list_free(&keys);
    return st;
}
