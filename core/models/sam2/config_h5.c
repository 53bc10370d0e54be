/* SPDX-License-Identifier: Apache-2.0 */
/* config_h5.c - the config of a parity dump (/model attribute config_json),
 * so a dump can serve as a checkpoint + config pair. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/io/h5_meta.h"
#include "core/models/sam2/config.h"

samc_status samc_sam2_config_from_h5(const char *path, samc_sam2_config *cfg, samc_error *err)
{
    samc_h5_meta meta;
    samc_status st = samc_h5_meta_read(path, false, &meta, err);
    if (st)
        return st;
    if (meta.task && !strcmp(meta.task, "sam3_image"))
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: a SAM 3 dump (task sam3_image), not SAM 2: load it as a SAM 3 "
                       "model (samc_model_load detects the family)", path);
    else if (!meta.config_json)
        st = samc_fail(err, SAMC_ERR_KEY, "%s: no /model/config_json attribute holding one string", path);
    else
        st = samc_sam2_config_from_json(meta.config_json, path, cfg, err);
    if (!st) { /* named as the dump names its model, else by the file, as a .json config is */
        const char *base = strrchr(path, '/');
        snprintf(cfg->name, sizeof cfg->name, "%s",
                 meta.variant && *meta.variant ? meta.variant : base ? base + 1 : path);
    }
    samc_h5_meta_free(&meta);
    return st;
}
