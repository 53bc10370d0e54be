/* api_internal.h - what other parts of the library (the batched and
 * automatic-mask-generator API, core/amg/amg_api.c) reach inside a
 * samc_predictor: its model use, its current image's features, its options. */
#ifndef SAMC_CORE_API_INTERNAL_H
#define SAMC_CORE_API_INTERNAL_H

#include "core/models/sam2/sam2_model.h"
#include "samc.h"

samc_exec *samc__predictor_exec(samc_predictor *p);
/* NULL when no image is set. */
const samc_sam2_features *samc__predictor_features(const samc_predictor *p);
const samc_sam2_image_opts *samc__predictor_opts(const samc_predictor *p);

#endif
