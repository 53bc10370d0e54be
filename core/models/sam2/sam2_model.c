/* SPDX-License-Identifier: Apache-2.0 */
/* sam2_model.c - the SAM 2 family: its parts at their roots, loading (the
 * config, one walk over the state_dict that checks and binds every part's
 * weights). */
#include "core/models/sam2/sam2_model.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/family.h"

/* Every part at its root, in the order of SAM2Base's state_dict. */
#define AT(part, cfg) .offset = offsetof(samc_sam2_model, part), .cfg_offset = offsetof(samc_sam2_model, cfg)
static const samc_mount mounts[] = {
    {.part = &samc_sam2_preprocess_part, .root = "", AT(transforms, cfg)},
    {.part = &samc_sam2_image_encoder_part, .root = "image_encoder", AT(image_encoder, cfg)},
    {.part = &samc_prompt_encoder_part, .root = "sam_prompt_encoder", AT(tracker.prompt_encoder, tracker.cfg)},
    {.part = &samc_mask_decoder_part, .root = "sam_mask_decoder", AT(tracker.mask_decoder, tracker.cfg)},
    {.part = &samc_memory_attention_part, .root = "memory_attention", AT(tracker.memory_attention, tracker.cfg)},
    {.part = &samc_memory_encoder_part, .root = "memory_encoder", AT(tracker.memory_encoder, tracker.cfg)},
    {.part = &samc_tracker_part, .root = "", AT(tracker, tracker.cfg)},
    {.part = &samc_memory_bank_part, .root = "", AT(tracker, tracker.cfg)},
    {.part = &samc_postprocess_part, .root = "", AT(tracker, tracker.cfg)},
};
#undef AT
const samc_layer_family samc_sam2_family = {.name = "sam2", .mounts = mounts,
                                           .n_mounts = (int)(sizeof mounts / sizeof mounts[0])};

/* The whole state_dict of SAM2Base, part by part (the config set first). */
static samc_status describe(samc_sd *sd, samc_sam2_model *m, samc_error *err)
{
    m->transforms.image_size = m->cfg.image_size;
    samc_sam2_tracker_config(&m->cfg, &m->tracker.cfg);
    return samc_sd_family(sd, &samc_sam2_family, m, err);
}

/* The walk on a throw-away model (keys only, or the check alone). */
static samc_status walk_only(const samc_sam2_config *cfg, const samc_weights *w, samc_key_list *keys,
                             samc_error *err)
{
    samc_sam2_model *m = calloc(1, sizeof *m);
    if (!m)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    m->cfg = *cfg;
    samc_sd sd;
    samc_sd_begin(&sd, w, "", NULL);
    samc_status st = describe(&sd, m, err);
    if (!st)
        st = samc_sd_finish(&sd, cfg->name, err);
    if (!st && keys)
        *keys = sd.keys, memset(&sd.keys, 0, sizeof sd.keys);
    samc_sd_free(&sd);
    free(m->image_encoder.pos_embed);
    free(m);
    return st;
}

samc_status samc_sam2_expected_keys(const samc_sam2_config *cfg, samc_key_list *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    return walk_only(cfg, NULL, out, err);
}

samc_status samc_sam2_check_weights(const samc_sam2_config *cfg, const samc_weights *w, samc_error *err)
{
    return walk_only(cfg, w, NULL, err);
}

samc_status samc_sam2_model_init(samc_sam2_model **out, samc_weights *w, const samc_sam2_config *cfg,
                                 samc_error *err)
{
    *out = NULL;
    samc_sam2_model *m = calloc(1, sizeof *m);
    if (!m) {
        samc_weights_free(w);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    samc_model_base_init(&m->base);
    m->base.weights = w;
    samc_status st = cfg ? (m->cfg = *cfg, samc_sam2_config_validate(cfg, err)) : samc_sam2_detect_config(w, &m->cfg, err);
    samc_sd sd;
    samc_sd_begin(&sd, w, "", &m->base.params);
    if (!st)
        st = describe(&sd, m, err);
    if (!st)
        st = samc_sd_finish(&sd, m->cfg.name, err);
    samc_sd_free(&sd);
    if (st) {
        samc_sam2_model_free(m);
        return st;
    }
    *out = m;
    return SAMC_OK;
}

static samc_status load(const char *checkpoint, const char *config, bool allow_nonfinite, bool check_family,
                        samc_sam2_model **out, samc_error *err)
{
    *out = NULL;
    if (!checkpoint)
        return samc_fail(err, SAMC_ERR_ARG, "no checkpoint path given");
    samc_weights_format fmt = SAMC_WEIGHTS_UNKNOWN;
    samc_status st = samc_weights_detect(checkpoint, &fmt, err);
    samc_sam2_config cfg;
    /* A parity dump carries its own config: use it unless one is named. */
    const char *cfg_src = config ? config : fmt == SAMC_WEIGHTS_H5 ? checkpoint : NULL;
    if (!st && cfg_src)
        st = config ? samc_sam2_config_resolve(config, &cfg, err) : samc_sam2_config_from_h5(checkpoint, &cfg, err);
    samc_weights *w = NULL;
    if (!st)
        st = samc_sam2_open_weights(checkpoint, &w, err); /* the hub's transformers format too */
    samc_family fam;
    if (!st && check_family && samc_weights_family(w, &fam) && fam == SAMC_FAMILY_SAM3) {
        samc_weights_free(w);
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: this is a SAM 3 checkpoint (detector.backbone.* keys), not "
                         "SAM 2: load it as a SAM 3 model (samc_model_load detects the family)", checkpoint);
    }
    if (!st && !allow_nonfinite) { /* NaN/Inf weights: refused unless asked for (--allow-nonfinite) */
        samc_error fe = {0};
        if ((st = samc_weights_check_finite(w, &fe))) {
            samc_weights_free(w);
            return samc_fail(err, st, "%s (refused; --allow-nonfinite or samc_load_options.allow_nonfinite loads it anyway)",
                             fe.msg);
        }
    }
    if (!st)
        st = samc_sam2_model_init(out, w, cfg_src ? &cfg : NULL, err);
    return st;
}

samc_status samc_sam2_model_load(const char *checkpoint, const char *config, bool allow_nonfinite,
                                 samc_sam2_model **out, samc_error *err)
{
    return load(checkpoint, config, allow_nonfinite, true, out, err);
}

samc_status samc_sam2_model_load_known(const char *checkpoint, const char *config, bool allow_nonfinite,
                                       samc_sam2_model **out, samc_error *err)
{
    return load(checkpoint, config, allow_nonfinite, false, out, err);
}

void samc_sam2_model_free(samc_sam2_model *m)
{
    if (!m)
        return;
    samc_model_base_free(&m->base);
    free(m->image_encoder.pos_embed);
    free(m);
}

samc_status samc_sam2_exec_init(samc_exec *x, samc_sam2_model *m, samc_error *err)
{
    return samc_exec_init(x, &samc_sam2_family, m, &m->base, err);
}
