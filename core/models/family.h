/* SPDX-License-Identifier: Apache-2.0 */
/* family.h - which model family (SAM 2 or SAM 3) a checkpoint or a parity
 * dump holds, so one loader (samc_model_load) takes either and each
 * family's loader can name the other family when given its checkpoint. */
#ifndef SAMC_CORE_MODELS_FAMILY_H
#define SAMC_CORE_MODELS_FAMILY_H

#include <stdbool.h>

#include "core/io/weights.h"
#include "samc.h"

/* Whether any key of `w` starts with `prefix`. */
bool samc_weights_has_prefix(const samc_weights *w, const char *prefix);

/* The family of opened weights by their keys (SAM 2: image_encoder.*,
 * sam_mask_decoder.*; SAM 3: detector.backbone.* as sam3.pt, or an image
 * model's own backbone.vision_backbone.*); false when neither. */
bool samc_weights_family(const samc_weights *w, samc_family *fam);

/* The family of the file at `path`: a parity dump by its task (image, video,
 * amg: SAM 2; sam3_image: SAM 3; an .h5 naming no task: by its keys), a
 * checkpoint by its keys. A dump of another task, or weights of neither
 * family, is an error naming the path and what it holds. */
samc_status samc_detect_family(const char *path, samc_family *fam, samc_error *err);

#endif
