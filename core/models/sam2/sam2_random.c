/* sam2_random.c - seeded random weights for a config (benchmarks, op tests:
 * real-size models without a checkpoint). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/models/sam2/sam2_model.h"

static bool ends_with(const char *s, const char *suf)
{
    const size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* Seeded weights for every key the config implies, scaled like PyTorch's
 * default init (uniform +-1/sqrt(fan_in)); norm weights 1, norm biases 0, so
 * activations stay O(1) and no denormals distort the timing. */
samc_status samc_sam2_random_weights(const samc_sam2_config *cfg, uint64_t seed, samc_weights **out, samc_error *err)
{
    samc_key_list keys = {0};
    samc_status st = samc_sam2_expected_keys(cfg, &keys, err);
    samc_weights *w = st ? NULL : samc_weights_new("random");
    if (!st && !w)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < keys.count; i++) {
        const samc_key_spec *k = &keys.items[i];
        const int64_t n = samc_shape_numel(k->ndim, k->shape);
        float *d = malloc((size_t)(n ? n : 1) * sizeof *d);
        if (!d) {
            st = samc_fail(err, SAMC_ERR_NOMEM, "random weights: %s", k->key);
            break;
        }
        int64_t fan_in = 1;
        for (int j = 1; j < k->ndim; j++)
            fan_in *= k->shape[j];
        const bool norm = k->ndim == 1 && (strstr(k->key, "norm") != NULL || strstr(k->key, "output_upscaling.1") != NULL);
        const float bound = k->ndim >= 2 ? 1.0f / sqrtf((float)fan_in) : 0.02f;
        for (int64_t j = 0; j < n; j++)
            d[j] = norm ? (ends_with(k->key, ".weight") ? 1.0f : 0.0f) : bound * samc_rng_uniform(&seed);
        st = samc_weights_add(w, k->key, k->ndim, k->shape, d, err);
    }
    samc_key_list_free(&keys);
    if (st) {
        samc_weights_free(w);
        return st;
    }
    *out = w;
    return SAMC_OK;
}
