/* SPDX-License-Identifier: Apache-2.0 */
/* api_internal.h - what the files of core/api share (the model object, the
 * entry checks, the library's log), and what other parts of the library (the
 * batched and automatic-mask-generator API, core/amg/amg_api.c) reach inside a
 * samc_predictor: its model use, its current image's features, its options. */
#ifndef SAMC_CORE_API_INTERNAL_H
#define SAMC_CORE_API_INTERNAL_H

#include "core/base/error.h"
#include "core/base/log.h"
#include "core/models/sam2/sam2_model.h"
#include "core/models/sam3/sam3_model.h"
#include "core/models/sam3/sam3_predict.h"
#include "samc.h"

/* One of the two families, read-only once loaded: shared by every predictor
 * and tracker (SAM 2) or SAM 3 processor. */
struct samc_model {
    samc_family family;
    samc_sam2_model *sam2;     /* SAMC_FAMILY_SAM2, else NULL */
    samc_sam3_model *sam3;     /* SAMC_FAMILY_SAM3, else NULL */
    char config_name[256];     /* SAM 3: the config's name (SAM 2 keeps its own in cfg.name) */
};

/* An image's features apart from a predictor or processor (samc.h): the
 * family's own record, read-only once made. */
struct samc_embedding {
    const samc_model *model;
    int h, w;
    samc_frame_features sam2;   /* SAMC_FAMILY_SAM2: image_embed, feat_s0, feat_s1 */
    samc_sam3_image sam3;      /* SAMC_FAMILY_SAM3 */
};
/* A new empty embedding of `model` (freed with samc_embedding_free). */
samc_status samc__embedding_alloc(const samc_model *model, samc_embedding **out, samc_error *err);
/* Refuse an embedding of another model than `m`, by the entry point's name. */
samc_status samc__embedding_check(const samc_embedding *e, const samc_model *m, const char *what, samc_error *err);

/* The public description of a frame source (strings owned by f). */
typedef struct samc_frames samc_frames;
void samc__video_info(const samc_frames *f, samc_video_info *out);

/* Refuse a model of the other family: `what` (the entry point) needs `want`;
 * the message names both families. */
samc_status samc__api_need_family(const samc_model *m, samc_family want, const char *what, samc_error *err);
/* A samc_model around a SAM 3 model built by other means (tools that make
 * random-weight models); takes `m3` (freed also on failure). */
samc_status samc__model_wrap_sam3(samc_sam3_model *m3, const char *config_name, samc_model **out, samc_error *err);

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

/* The model that samc_predictor_load_ex / samc_tracker_load_ex load for the
 * predictor or tracker to own (the pre-samc_model entry points). */
samc_status samc__api_load_legacy(const char *checkpoint, const char *config, const samc_load_options *opts,
                                  samc_model **m, samc_error *err);


samc_exec *samc__predictor_exec(samc_predictor *p);
/* Mark p as running a call whose callbacks may call back into it (AMG's
 * progress): set_image, predict and the AMG/batch calls refuse it meanwhile.
 * samc__predictor_refuse_busy fails with the calling function's name. */
void samc__predictor_set_busy(samc_predictor *p, int busy);
samc_status samc__predictor_refuse_busy(const samc_predictor *p, const char *func, samc_error *err);
const samc_sam2_model *samc__predictor_sam2(const samc_predictor *p);
/* NULL when no image is set. */
const samc_frame_features *samc__predictor_features(const samc_predictor *p);
const samc_sam_image_opts *samc__predictor_opts(const samc_predictor *p);

/* samc_predict_request as the SAM heads' prompt (`mask` holds the view of
 * mask_input, s x s) and their prediction handed over to samc_masks (h x w
 * masks; logits: kept, else 0 / 1): SAM 2's predict and SAM 3's predict_inst. */
samc_status samc__api_prompt(const samc_predict_request *rq, int s, samc_tensor *mask, samc_sam_prompt *pr,
                             samc_error *err);
void samc__api_masks(samc_sam_prediction *res, int h, int w, int s, bool logits, samc_masks *out);

#endif
