/* chained_sam3.c - the SAM 3 image task (PARITY_DUMP_FORMAT.md, "SAM 3"):
 * loading its model from the dump, and the chained run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/io/weights.h"
#include "harness_internal.h"

samc_status samc__parity_load_sam3(parity_run *r, const char *path, const char *impl, samc_error *err)
{
    char *json = NULL;
    samc_status st = samc_dump_has_attr(r->dump, "/model", "config_json")
                         ? samc_dump_attr_str(r->dump, "/model", "config_json", &json, err)
                         : samc_fail(err, SAMC_ERR_KEY, "%s: the dump has no /model/config_json attribute", path);
    cJSON *cfg = NULL;
    if (!st && !(cfg = cJSON_Parse(json)))
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s:/model/config_json is not valid JSON", path);
    free(json);
    char what[600];
    snprintf(what, sizeof what, "%s:/model/config_json", path);
    samc_weights *w = NULL;
    if (!st)
        st = samc_weights_open_h5(path, &w, err);
    if (!st)
        st = samc_sam3_model_init(&r->model3, w, cfg, "", what, err);
    cJSON_Delete(cfg);
    if (!st)
        st = samc_sam3_exec_init(&r->x, r->model3, impl, err);
    return st;
}

samc_status samc__parity_run_sam3(parity_run *r, samc_error *err)
{
    return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: the chained run of the sam3_image task is not implemented yet "
                     "(use --isolated)", samc_dump_path(r->dump));
}
