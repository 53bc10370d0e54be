/* api_internal.h - what the files of core/api share (the model object, the
 * entry checks, the library's log), and what other parts of the library (the
 * batched and automatic-mask-generator API, core/amg/amg_api.c) reach inside a
 * samc_predictor: its model use, its current image's features, its options. */
#ifndef SAMC_CORE_API_INTERNAL_H
#define SAMC_CORE_API_INTERNAL_H

#include "core/base/error.h"
#include "core/models/sam2/sam2_model.h"
#include "samc.h"

struct samc_model {
    samc_sam2_model *sam2;     /* read-only once loaded; shared by every predictor and tracker */
};

/* Entry of every public call: clear the error record (so a reused record
 * never shows an old message) and refuse a NULL argument by name. */
#define SAMC_API_ENTER(err) samc_error_clear(err)
#define SAMC_API_NEED(ptr, err)                                                                                    \
    do {                                                                                                           \
        if (!(ptr))                                                                                                \
            return samc_fail((err), SAMC_ERR_ARG, "%s: argument '%s' is NULL", __func__, #ptr);                  \
    } while (0)

/* The implementation a params struct names (NULL: the default), resolved
 * and set on `x`; threads likewise. */
samc_status samc__api_setup_exec(samc_exec *x, const char *impl, int n_threads, samc_error *err);
/* The threads a use of the model runs on (ref: 1; 0 given: OpenMP's default). */
int samc__api_threads(const samc_exec *x);

/* printf-style message to the installed log callback, if `level` passes. */
void samc__log(samc_log_level level, const char *fmt, ...) SAMC_PRINTF(2, 3);

samc_exec *samc__predictor_exec(samc_predictor *p);
/* NULL when no image is set. */
const samc_sam2_features *samc__predictor_features(const samc_predictor *p);
const samc_sam2_image_opts *samc__predictor_opts(const samc_predictor *p);

#endif
