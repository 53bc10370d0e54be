/* SPDX-License-Identifier: Apache-2.0 */
/* config_internal.h - shared between the config sources. */
#ifndef SAMC_CORE_CONFIG_INTERNAL_H
#define SAMC_CORE_CONFIG_INTERNAL_H
#include "core/models/sam2/config.h"
/* The official constructor defaults (before any YAML value). */
void samc_sam2_config_defaults(samc_sam2_config *cfg);
#endif
