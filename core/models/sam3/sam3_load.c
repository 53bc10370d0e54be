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
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/h5_meta.h"
#include "core/models/family.h"
#include "core/models/sam3/sam3_hf.h"
#include "core/models/sam3/sam3_model.h"
#include "core/models/sam3/sam3_video_config.h"

/* The key prefix of the image model's state_dict in `w`, or an error naming
 * what the checkpoint is instead. */
static samc_status detect_base(const samc_weights *w, const char **base, samc_error *err)
{
    const char *src = samc_weights_source(w);
    if (samc_weights_naming(w)) { /* transformers' Sam3Model: the detector's own names, mapped (sam3_hf.c) */
        *base = "";
        return SAMC_OK;
    }
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

/* A config file: the video tree (or an inst image tree), or
 * {"video": tree, ...} (tools/make_sam3_checkpoint.py). */
static samc_status config_file(const char *path, samc_sam3_video_config *cfg, samc_error *err)
{
    samc_mapped_file mf;
    samc_status st = samc_check_regular(path, err);
    if (!st)
        st = samc_file_map(path, &mf, err);
    if (st)
        return st;
    cJSON *root = cJSON_ParseWithLength((const char *)mf.data, mf.size);
    samc_file_unmap(&mf);
    if (!root)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not valid JSON", path);
    const cJSON *tree = cJSON_GetObjectItemCaseSensitive(root, "video");
    /* {"image": ..., "video": ...}: the image model's section is checked as
     * strictly as when it is loaded alone (a file is valid whole or not at all) */
    samc_sam3_config image;
    if (tree && cJSON_GetObjectItemCaseSensitive(root, "image"))
        st = samc_sam3_config_from_file(path, &image, err);
    if (!st)
        st = samc_sam3_video_config_from_json(tree ? tree : root, path, cfg, err);
    cJSON_Delete(root);
    return st;
}

bool samc__sam3_config_names_tracker(const char *path)
{
    samc_mapped_file mf;
    if (samc_file_map(path, &mf, NULL))
        return false;
    cJSON *root = cJSON_ParseWithLength((const char *)mf.data, mf.size);
    samc_file_unmap(&mf);
    bool yes = cJSON_GetObjectItemCaseSensitive(root, "video") != NULL;
    if (root && !yes) {
        char *text = cJSON_PrintUnformatted(root);
        yes = text && samc_sam3_video_config_is_tracker_tree(text);
        free(text);
    }
    cJSON_Delete(root);
    return yes;
}

samc_status samc__sam3_load_video(samc_weights *w, const char *config, const char *json, samc_sam3_model **out,
                                  samc_error *err)
{
    samc_sam3_video_config cfg;
    const char *what = config ? config : json ? "the dump's config" : "sam3 video (built-in release)";
    samc_status st = json ? samc_sam3_video_config_parse(json, what, &cfg, err)
                     : config ? config_file(config, &cfg, err) : samc_sam3_video_config_released(&cfg, err);
    if (st) {
        samc_weights_free(w);
        return st;
    }
    return samc_sam3_model_init_video(out, w, &cfg, what, err);
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
    const bool tracker = meta.task && (!strcmp(meta.task, "sam3_video") || !strcmp(meta.task, "sam3_inst"));
    if (tracker) { /* the video model or predict_inst's: detector.* and tracker.* keys */
        samc_weights *w = NULL;
        st = meta.config_json ? samc_weights_open_h5(path, &w, err)
                              : samc_fail(err, SAMC_ERR_KEY, "%s: the dump has no /model/config_json attribute", path);
        if (!st)
            st = samc__sam3_load_video(w, NULL, meta.config_json, out, err);
        if (!st && meta.vocab_gz)
            st = samc_sam3_model_set_vocab(*out, meta.vocab_gz, meta.vocab_n, NULL, err);
        if (st && *out)
            samc_sam3_model_free(*out), *out = NULL;
        samc_h5_meta_free(&meta);
        return st;
    }
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
    if (!st && samc_sam3_is_hf(w))
        st = samc_sam3_hf_adapt(w, err);
    const char *base = "";
    if (!st)
        st = detect_base(w, &base, err);
    /* sam3.pt with its tracker half: the video model (both halves strictly),
     * unless the config given is an image model's alone */
    if (!st && !strcmp(base, "detector.") && samc_weights_has_prefix(w, "tracker.") &&
        (!config || samc__sam3_config_names_tracker(config)))
        return samc__sam3_load_video(w, config, NULL, out, err);
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
