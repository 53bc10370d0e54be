/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_config_json.c - model config JSON (core/models/sam2/config_json.c through cJSON,
 * then core/models/sam2/config.c validation and, for accepted configs, the full list of
 * expected state_dict keys, the describe walk of core/runtime/statedict.h). Seeds: the fixture
 * *.config.json files and fuzz/seeds/config_json/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/config.h"
#include "core/models/sam2/sam2_model.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1 << 20))
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    samc_sam2_config cfg;
    samc_error err = {0};
    samc_status st = samc_sam2_config_from_json(s, "fuzz.json", &cfg, &err);
    fuzz_check_error(st, &err, "fuzz.json", "samc_sam2_config_from_json");
    if (!st) {
        samc_key_list keys = {0};
        samc_error ke = {0};
        st = samc_sam2_expected_keys(&cfg, &keys, &ke);
        fuzz_check_error(st, &ke, NULL, "samc_sam2_expected_keys");
        if (!st)
            fuzz_check_keys(&keys, "SAM 2");
        samc_key_list_free(&keys);
    }
    free(s);
    return 0;
}
