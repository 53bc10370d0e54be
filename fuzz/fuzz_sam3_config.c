/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_sam3_config.c - a SAM 3 config JSON (the Sam3Image `_target_` tree, or
 * {"image": tree}) through what samc_sam3_model_load does with it: the
 * strict parse (core/base/json_strict.c), the JSON-level checks
 * (core/models/sam3/sam3_config_check.c), the typed reader
 * (core/models/sam3/sam3_config.c) and, for an accepted config, the walk
 * that derives every expected state_dict key and shape from it
 * (samc_sam3_expected_keys: the RoPE tables of img_size 10^6 overflowed
 * side * side there). Seeds: fuzz/seeds/sam3_config/ (the released tree and
 * the fixture's tiny one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/json_strict.h"
#include "core/models/sam3/sam3_config_check.h"
#include "core/models/sam3/sam3_model.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1 << 20))
        return 0;
    cJSON *root = NULL;
    samc_error err = {0};
    samc_status st = samc__json_parse_strict((const char *)data, size, "fuzz.json", &root, &err);
    fuzz_check_error(st, &err, "fuzz.json", "samc__json_parse_strict");
    if (st)
        return 0;
    cJSON *image = cJSON_DetachItemFromObjectCaseSensitive(root, "image");
    if (image) {
        cJSON_Delete(root);
        root = image;
    }
    st = samc__sam3_config_check(root, image ? "image." : "", "fuzz.json", &err);
    fuzz_check_error(st, &err, "fuzz.json", "samc__sam3_config_check");
    samc_sam3_config cfg;
    if (!st) { /* the typed reader and its validation */
        st = samc_sam3_config_from_json(root, "fuzz.json", &cfg, &err);
        fuzz_check_error(st, &err, "fuzz.json", "samc_sam3_config_from_json");
    }
    if (!st) {
        samc_key_list keys = {0};
        samc_error ke = {0};
        st = samc_sam3_expected_keys(&cfg, "", &keys, &ke);
        fuzz_check_error(st, &ke, NULL, "samc_sam3_expected_keys");
        if (!st)
            fuzz_check_keys(&keys, "SAM 3");
        samc_key_list_free(&keys);
    }
    cJSON_Delete(root);
    return 0;
}
