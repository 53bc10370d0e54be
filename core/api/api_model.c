/* api_model.c - samc_model: a checkpoint loaded once and shared read-only. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api_internal.h"

samc_model_params samc_model_default_params(void) { return (samc_model_params){.config = NULL, .allow_nonfinite = 0}; }

const char *samc_default_impl(void) { return samc_impl_default()->name; }

samc_status samc_model_load(const char *path, const samc_model_params *params, samc_model **out, samc_error *err)
{
    SAMC_API_ENTER(err);
    SAMC_API_NEED(out, err);
    *out = NULL;
    SAMC_API_NEED(path, err);
    const samc_model_params mp = params ? *params : samc_model_default_params();
    samc_model *m = calloc(1, sizeof *m);
    if (!m)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    samc_status st = samc_sam2_model_load(path, mp.config, mp.allow_nonfinite != 0, &m->sam2, err);
    if (st) {
        free(m);
        return st;
    }
    samc__log(SAMC_LOG_INFO, "%s: loaded (config %s, image size %d)", path, m->sam2->cfg.name,
              m->sam2->cfg.image_size);
    *out = m;
    return SAMC_OK;
}

void samc_model_free(samc_model *model)
{
    if (!model)
        return;
    samc_sam2_model_free(model->sam2);
    free(model);
}

const char *samc_model_config_name(const samc_model *model) { return model ? model->sam2->cfg.name : ""; }

int samc_model_image_size(const samc_model *model) { return model ? model->sam2->cfg.image_size : 0; }

samc_status samc__api_setup_exec(samc_exec *x, const char *impl, int n_threads, samc_error *err)
{
    if (n_threads < 0)
        return samc_fail(err, SAMC_ERR_ARG, "n_threads must be >= 0 (0: OpenMP's default), got %d", n_threads);
    samc_exec_set_threads(x, n_threads);
    return samc_exec_set_impl(x, impl ? impl : samc_default_impl(), err);
}

int samc__api_threads(const samc_exec *x)
{
    if (!strcmp(x->impl->name, "ref"))
        return 1;
    return x->ctx.num_threads > 0 ? x->ctx.num_threads : omp_get_max_threads();
}
