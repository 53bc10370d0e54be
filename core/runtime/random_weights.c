/* SPDX-License-Identifier: Apache-2.0 */
/* random_weights.c - seeded weights for a key list (random_weights.h). */
#include "core/runtime/random_weights.h"

#include <math.h>
#include <stdlib.h>

#include "core/base/error.h"
#include "core/base/rng.h"

samc_status samc_random_weights(const samc_key_list *keys, uint64_t seed, samc_weight_init (*init)(const samc_key_spec *k),
                                samc_weights **out, samc_error *err)
{
    *out = NULL;
    samc_weights *w = samc_weights_new("random");
    samc_status st = w ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < keys->count; i++) {
        const samc_key_spec *k = &keys->items[i];
        const samc_weight_init how = init(k);
        if (how == SAMC_INIT_SKIP)
            continue;
        const int64_t n = samc_shape_numel(k->ndim, k->shape);
        float *d = malloc((size_t)(n ? n : 1) * sizeof *d);
        if (!d) {
            st = samc_fail(err, SAMC_ERR_NOMEM, "random weights: %s", k->key);
            break;
        }
        int64_t fan_in = 1;
        for (int j = 1; j < k->ndim; j++)
            fan_in *= k->shape[j];
        const float bound = how == SAMC_INIT_UNIFORM ? 1.0f / sqrtf((float)fan_in) : 0.02f;
        for (int64_t j = 0; j < n; j++)
            d[j] = how == SAMC_INIT_ONE ? 1.0f : how == SAMC_INIT_ZERO ? 0.0f : bound * samc_rng_uniform(&seed);
        st = samc_weights_add(w, k->key, k->ndim, k->shape, d, err);
    }
    if (st) {
        samc_weights_free(w);
        return st;
    }
    *out = w;
    return SAMC_OK;
}
