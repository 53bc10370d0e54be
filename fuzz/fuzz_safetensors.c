/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_safetensors.c - safetensors files (core/io/weights_safetensors.c, the
 * header JSON through cJSON) via samc_weights_open on a temporary file.
 * Seeds: fuzz/seeds/safetensors/ (small files by fuzz/make_seeds.py). */
#include <stdlib.h>

#include "core/io/weights.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_temp_file(data, size, ".safetensors");
    samc_error err = {0};
    samc_weights *w = NULL;
    samc_status st = samc_weights_open_safetensors(path, &w, &err);
    fuzz_check_error(st, &err, path, "samc_weights_open(.safetensors)");
    if (!st) {
        for (size_t i = 0; i < samc_weights_count(w); i++) {
            const samc_tensor *t = samc_weights_at(w, i);
            if (samc_weights_find(w, samc_weights_key(w, i)) != t)
                abort();
            fuzz_touch(t->data, (size_t)samc_numel(t));
        }
        samc_error e2 = {0};
        fuzz_check_error(samc_weights_check_finite(w, &e2), &e2, path, "samc_weights_check_finite");
    }
    samc_weights_free(w);
    return 0;
}
