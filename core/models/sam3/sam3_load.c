/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_load.c - a SAM 3 image model from a checkpoint: the released sam3.pt
 * layout (detector.* and tracker.* keys, zip or .safetensors), with the
 * config from a file or the built-in release.
 *
 * As build_sam3_image_model's loader does, the image model takes the
 * detector.* keys; the tracker.* keys are another model's. The detector of
 * sam3.pt also holds the tracker's neck copy (sam2_convs, built by
 * build_sam3_video_model): when the checkpoint has it, it is described and
 * bound too, so the strict check still accounts for every detector key.
 * A parity dump of the sam3_image task is a checkpoint too: its weights, its
 * /model/config_json and its tokenizer's vocabulary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/h5_meta.h"
#include "core/models/family.h"
#include "core/models/sam3/sam3_model.h"

/* The key prefix of the image model's state_dict in `w`, or an error naming
 * what the checkpoint is instead. */
static samc_status detect_base(const samc_weights *w, const char **base, samc_error *err)
{
    const char *src = samc_weights_source(w);
    if (samc_weights_has_prefix(w, "detector.backbone.")) {
        *base = "detector.";
        return SAMC_OK;
    }
    if (samc_weights_has_prefix(w, "backbone.vision_backbone.")) { /* an image model's own state_dict */
        *base = "";
        return SAMC_OK;
    }
    if (samc_weights_has_prefix(w, "image_encoder.trunk.") || samc_weights_has_prefix(w, "sam_mask_decoder."))
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "%s: this is a SAM 2 checkpoint (image_encoder.*, sam_mask_decoder.* keys), not SAM 3: "
                         "use it with the SAM 2 predictor", src);
    if (samc_weights_has_prefix(w, "tracker."))
        return samc_fail(err, SAMC_ERR_KEY, "%s: a SAM 3 checkpoint without its detector (only tracker.* keys)",
                         src);
    return samc_fail(err, SAMC_ERR_FORMAT,
                     "%s: not a SAM 3 checkpoint (no detector.backbone.* or backbone.vision_backbone.* keys; %zu "
                     "keys, the first '%s')", src, samc_weights_count(w),
                     samc_weights_count(w) ? samc_weights_key(w, 0) : "");
}

/* A SAM 3 parity dump: its config tree and vocabulary (both set on `*out`). */
static samc_status load_dump(const char *path, samc_sam3_model **out, samc_error *err)
{
    samc_h5_meta meta;
    samc_status st = samc_h5_meta_read(path, true, &meta, err);
    if (st)
        return st;
    char what[600];
    snprintf(what, sizeof what, "%s:/model/config_json", path);
    samc_sam3_config cfg;
    if (!meta.task || strcmp(meta.task, "sam3_image"))
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: a dump of task '%s', not SAM 3 (sam3_image)%s", path,
                       meta.task ? meta.task : "(none)",
                       meta.task && (!strcmp(meta.task, "image") || !strcmp(meta.task, "video") ||
                                     !strcmp(meta.task, "amg"))
                           ? ": its model is SAM 2, use it with the SAM 2 predictor" : "");
    else if (!meta.config_json)
        st = samc_fail(err, SAMC_ERR_KEY, "%s: the dump has no /model/config_json attribute", path);
    else
        st = samc_sam3_config_parse(meta.config_json, what, &cfg, err);
    samc_weights *w = NULL;
    if (!st)
        st = samc_weights_open_h5(path, &w, err);
    if (!st)
        st = samc_sam3_model_init(out, w, &cfg, "", what, err);
    if (!st && meta.vocab_gz)
        st = samc_sam3_model_set_vocab(*out, meta.vocab_gz, meta.vocab_n, NULL, err);
    if (st && *out) {
        samc_sam3_model_free(*out);
        *out = NULL;
    }
    samc_h5_meta_free(&meta);
    return st;
}

samc_status samc_sam3_model_load(const char *checkpoint, const char *config, samc_sam3_model **out,
                                 samc_error *err)
{
    *out = NULL;
    if (!checkpoint)
        return samc_fail(err, SAMC_ERR_ARG, "no checkpoint path given");
    samc_weights_format fmt = SAMC_WEIGHTS_UNKNOWN;
    samc_status st = samc_weights_detect(checkpoint, &fmt, err);
    if (!st && fmt == SAMC_WEIGHTS_H5) {
        if (config)
            return samc_fail(err, SAMC_ERR_ARG, "%s: a parity dump carries its own config; give no config file "
                             "with it (got %s)", checkpoint, config);
        return load_dump(checkpoint, out, err);
    }
    samc_weights *w = NULL;
    if (!st)
        st = samc_weights_open(checkpoint, &w, err);
    const char *base = "";
    if (!st)
        st = detect_base(w, &base, err);
    samc_sam3_config cfg;
    if (!st)
        st = config ? samc_sam3_config_from_file(config, &cfg, err) : samc_sam3_config_released(false, &cfg, err);
    /* the detector of sam3.pt holds the tracker's neck copy: described too */
    char pre[96];
    snprintf(pre, sizeof pre, "%sbackbone.vision_backbone.sam2_convs.", base);
    if (!st && samc_weights_has_prefix(w, pre))
        cfg.vision.neck.add_sam2_neck = true;
    if (st) {
        samc_weights_free(w);
        return st;
    }
    return samc_sam3_model_init(out, w, &cfg, base, config ? config : "sam3 (built-in release)", err);
}
