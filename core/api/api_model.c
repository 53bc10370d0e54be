/* SPDX-License-Identifier: Apache-2.0 */
/* api_model.c - samc_model: a checkpoint of either family loaded once and
 * shared read-only. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/api/api_internal.h"
#include "core/runtime/threads.h"
#include "core/models/family.h"

samc_model_params samc_model_default_params(void)
{
    return (samc_model_params){.config = NULL, .allow_nonfinite = 0, .vocab = NULL, .family = 0};
}

const char *samc_default_impl(void) { return samc_impl_default()->name; }

static char system_info[256];

static void fill_system_info(void) { samc__impl_system_info(system_info, sizeof system_info); }

const char *samc_system_info(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fill_system_info);
    return system_info;
}

const char *samc_family_name(samc_family family) { return family == SAMC_FAMILY_SAM3 ? "SAM 3" : "SAM 2"; }

/* SAM 3: the model, then its tokenizer's vocabulary (the file given, else
 * the one a dump carries). */
static samc_status load_sam3(const char *path, const samc_model_params *mp, samc_model *m, samc_error *err)
{
    samc_status st = samc_sam3_model_load(path, mp->config, &m->sam3, err);
    samc_error fe = {0};
    if (!st && !mp->allow_nonfinite && samc_weights_check_finite(m->sam3->base.weights, &fe))
        st = samc_fail(err, fe.status, "%s (refused; --allow-nonfinite or samc_model_params.allow_nonfinite loads it "
                       "anyway)", fe.msg);
    if (!st && mp->vocab)
        st = samc_sam3_model_set_vocab(m->sam3, NULL, 0, mp->vocab, err);
    else if (!st && !m->sam3->language.tok)
        st = samc_fail(err, SAMC_ERR_ARG, "%s: a SAM 3 model needs the tokenizer's vocabulary "
                       "bpe_simple_vocab_16e6.txt.gz: give it with --vocab FILE (samc_model_params.vocab)", path);
    if (mp->config)
        snprintf(m->config_name, sizeof m->config_name, "%s", mp->config);
    else if (m->sam3 && samc_weights_get_format(m->sam3->base.weights) == SAMC_WEIGHTS_H5)
        snprintf(m->config_name, sizeof m->config_name, "%s:/model/config_json", path);
    else
        snprintf(m->config_name, sizeof m->config_name, "sam3 (built-in release)");
    return st;
}

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
    /* The family is told once: by the caller, else here; the loaders do not look again. */
    samc_status st = SAMC_OK;
    if (mp.family == SAMC_FAMILY_SAM2 || mp.family == SAMC_FAMILY_SAM3)
        m->family = mp.family;
    else if (mp.family)
        st = samc_fail(err, SAMC_ERR_ARG, "samc_model_params.family: %d is no family (0, SAMC_FAMILY_SAM2 or "
                       "SAMC_FAMILY_SAM3)", (int)mp.family);
    else
        st = samc_detect_family(path, &m->family, err);
    if (!st && m->family == SAMC_FAMILY_SAM3)
        st = load_sam3(path, &mp, m, err);
    else if (!st)
        st = samc_sam2_model_load_known(path, mp.config, mp.allow_nonfinite != 0, &m->sam2, err);
    if (st) {
        samc_model_free(m);
        return st;
    }
    samc__log(SAMC_LOG_INFO, "%s: %s model loaded (config %s, image size %d)", path, samc_family_name(m->family),
              samc_model_config_name(m), samc_model_image_size(m));
    *out = m;
    return SAMC_OK;
}

samc_status samc__model_wrap_sam3(samc_sam3_model *m3, const char *config_name, samc_model **out, samc_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out) {
        samc_sam3_model_free(m3);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    (*out)->family = SAMC_FAMILY_SAM3, (*out)->sam3 = m3;
    snprintf((*out)->config_name, sizeof (*out)->config_name, "%s", config_name);
    return SAMC_OK;
}

void samc_model_free(samc_model *model)
{
    if (!model)
        return;
    samc_sam2_model_free(model->sam2);
    samc_sam3_model_free(model->sam3);
    free(model);
}

samc_family samc_model_family(const samc_model *model) { return model ? model->family : SAMC_FAMILY_SAM2; }

const char *samc_model_config_name(const samc_model *model)
{
    if (!model)
        return "";
    return model->family == SAMC_FAMILY_SAM3 ? model->config_name : model->sam2->cfg.name;
}

int samc_model_image_size(const samc_model *model)
{
    if (!model)
        return 0;
    return model->family == SAMC_FAMILY_SAM3 ? model->sam3->cfg.resolution : model->sam2->cfg.image_size;
}

samc_status samc__api_need_family(const samc_model *m, samc_family want, const char *what, samc_error *err)
{
    if (m->family == want)
        return SAMC_OK;
    return samc_fail(err, SAMC_ERR_ARG, "%s: the model is a %s model; it needs a %s one (%s models: %s)", what,
                     samc_family_name(m->family), samc_family_name(want), samc_family_name(m->family),
                     m->family == SAMC_FAMILY_SAM3 ? "samc_sam3_processor_new, text and box-exemplar prompts"
                                                   : "samc_predictor_new / samc_tracker_new, point, box and mask "
                                                     "prompts");
}

samc_status samc__api_setup_exec(samc_exec *x, const char *impl, int n_threads, samc_error *err)
{
    if (n_threads < 0 || n_threads > SAMC_MAX_THREADS)
        return samc_fail(err, SAMC_ERR_ARG, "n_threads must be 0..%d (0: OpenMP's default), got %d", SAMC_MAX_THREADS,
                         n_threads);
    samc_exec_set_threads(x, n_threads);
    return samc_exec_set_impl(x, impl ? impl : samc_default_impl(), err);
}

int samc__api_threads(const samc_exec *x)
{
    if (x->impl->single_threaded) /* the registry says so; no implementation is named here */
        return 1;
    return samc__threads_resolve(x->ctx.num_threads);
}

samc_status samc__api_load_legacy(const char *checkpoint, const char *config, const samc_load_options *opts,
                                  samc_model **m, samc_error *err)
{
    samc_model_params mp = samc_model_default_params();
    mp.config = config;
    mp.allow_nonfinite = opts && opts->allow_nonfinite;
    return samc_model_load(checkpoint, &mp, m, err);
}
