/* SPDX-License-Identifier: Apache-2.0 */
/* family.c - SAM 2 or SAM 3: the family of a checkpoint or dump (family.h). */
#include "core/models/family.h"

#include <string.h>

#include "core/base/error.h"
#include "core/io/h5_meta.h"
#include "core/models/sam2/sam2_model.h"
#include "core/models/sam3/sam3_hf.h"

bool samc_weights_has_prefix(const samc_weights *w, const char *prefix)
{
    const size_t n = strlen(prefix);
    for (size_t i = 0; i < samc_weights_count(w); i++)
        if (!strncmp(samc_weights_key(w, i), prefix, n))
            return true;
    return false;
}

bool samc_weights_family(const samc_weights *w, samc_family *fam)
{
    if (samc_weights_has_prefix(w, "detector.backbone.") || samc_weights_has_prefix(w, "backbone.vision_backbone.") ||
        samc_sam3_is_hf(w)) { /* the last: transformers' Sam3Model (sam3_hf.c) */
        *fam = SAMC_FAMILY_SAM3;
        return true;
    }
    if (samc_weights_has_prefix(w, "image_encoder.trunk.") || samc_weights_has_prefix(w, "sam_mask_decoder.") ||
        samc_sam2_is_hf(w)) { /* the last: the transformers naming (sam2_hf.c) */
        *fam = SAMC_FAMILY_SAM2;
        return true;
    }
    return false;
}

/* A dump by its task; *known false when it names none (an .h5 of weights
 * only: told by its keys). */
static samc_status dump_family(const char *path, samc_family *fam, bool *known, samc_error *err)
{
    samc_h5_meta meta;
    samc_status st = samc_h5_meta_read(path, false, &meta, err);
    if (st)
        return st;
    const char *t = meta.task;
    *known = t != NULL;
    if (*known && (!strcmp(t, "sam3_image") || !strcmp(t, "sam3_video") || !strcmp(t, "sam3_inst")))
        *fam = SAMC_FAMILY_SAM3; /* the video and predict_inst dumps hold sam3.pt's layout */
    else if (*known && (!strcmp(t, "image") || !strcmp(t, "video") || !strcmp(t, "amg")))
        *fam = SAMC_FAMILY_SAM2;
    else if (*known)
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: a dump of task '%s', which holds no SAM 2 or SAM 3 model (model "
                       "dumps have /inputs task image, video, amg, sam3_image, sam3_video or sam3_inst)", path, t);
    samc_h5_meta_free(&meta);
    return st;
}

samc_status samc_detect_family(const char *path, samc_family *fam, samc_error *err)
{
    samc_weights_format fmt = SAMC_WEIGHTS_UNKNOWN;
    samc_status st = samc_weights_detect(path, &fmt, err);
    if (st)
        return st;
    bool known = false;
    if (fmt == SAMC_WEIGHTS_H5 && ((st = dump_family(path, fam, &known, err)) || known))
        return st;
    samc_weights *w = NULL; /* .pt / .safetensors: the index only, tensors stay mapped, unread */
    if ((st = samc_weights_open(path, &w, err)))
        return st;
    if (!samc_weights_family(w, fam))
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: neither a SAM 2 checkpoint (image_encoder.*, sam_mask_decoder.* "
                       "keys, or transformers' vision_encoder.backbone.*) nor a SAM 3 one (detector.backbone.* keys, or transformers' vision_encoder.backbone.embeddings.*); %zu keys, the first '%s'", path,
                       samc_weights_count(w), samc_weights_count(w) ? samc_weights_key(w, 0) : "");
    samc_weights_free(w);
    return st;
}
