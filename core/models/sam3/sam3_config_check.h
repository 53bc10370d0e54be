/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_config_check.h - JSON-level checks of a SAM 3 config before any value
 * is read (core/models/sam3/sam3_config_check.c). */
#ifndef SAMC_CORE_SAM3_CONFIG_CHECK_H
#define SAMC_CORE_SAM3_CONFIG_CHECK_H

#include <cjson/cJSON.h>

#include "samc_status.h"

/* Largest image size (trunk img_size, pretrain_img_size, the position
 * encoding's and decoder's resolution) a SAM 3 config may ask for (the
 * release: 1008). */
#define SAMC_SAM3_MAX_IMAGE_SIZE 2016
/* Floats one trunk block's activations, and all blocks' RoPE tables, may
 * take (2^26; the release takes 5.3M and 10.6M). */
#define SAMC_SAM3_MAX_WORK (1 << 26)

/* `cfg` is the Sam3Image tree; `shown` prefixes its key paths in messages
 * ("image." when the file wraps it, else ""). Refused: keys that are not
 * where the released tree has them, objects where it has values, sizes out
 * of their bounds. */
samc_status samc__sam3_config_check(const cJSON *cfg, const char *shown, const char *what, samc_error *err);

#endif
