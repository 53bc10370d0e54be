/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_random.c - seeded random weights for a SAM 3 config (benchmarks,
 * op tests: real-size models without a checkpoint). */
#include <string.h>

#include "core/models/sam3/sam3_model.h"
#include "core/runtime/random_weights.h"

/* PyTorch's default scale for matrices and kernels; every 1-D weight of the
 * detector is a norm's (1), 1-D biases small; the RoPE buffers are left to
 * the walk, which computes them from the config. */
static samc_weight_init init(const samc_key_spec *k)
{
    const size_t n = strlen(k->key);
    if (strstr(k->key, "freqs_cis"))
        return SAMC_INIT_SKIP;
    if (k->ndim >= 2)
        return SAMC_INIT_UNIFORM;
    return n > 7 && !strcmp(k->key + n - 7, ".weight") ? SAMC_INIT_ONE : SAMC_INIT_SMALL;
}

samc_status samc_sam3_random_weights(const samc_sam3_config *cfg, uint64_t seed, samc_weights **out,
                                     samc_error *err)
{
    samc_key_list keys = {0};
    samc_status st = samc_sam3_expected_keys(cfg, "", &keys, err);
    if (!st)
        st = samc_random_weights(&keys, seed, init, out, err);
    samc_key_list_free(&keys);
    return st;
}
