/* sam2_model.c - loading SAM 2: the config, one walk over the state_dict
 * that checks and binds every layer's weights, and the registry. */
#include "core/models/sam2/sam2_model.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/family.h"

static const samc_layer_part *const parts[] = {&samc__sam2_encoder_part, &samc__sam2_decoder_part,
                                               &samc__sam2_memory_part, &samc__sam2_memory_bank_part};
const samc_layer_family samc_sam2_family = {"sam2", parts, (int)(sizeof parts / sizeof parts[0])};

/* The whole state_dict of SAM2Base, part by part. */
static samc_status describe(samc_sd *sd, samc_sam2_model *m, samc_error *err)
{
    m->emb = m->cfg.image_size / m->cfg.backbone_stride;
    samc_status st = samc__sam2_describe_encoder(sd, m, err);
    if (st)
        return st;
    samc__sam2_describe_decoder(sd, m);
    samc__sam2_describe_memory(sd, m);
    const int64_t D = m->cfg.neck.d_model;
    samc_sd_prefix(sd, "%s", "");
    m->no_mem_embed = samc_sd_tensor(sd, 3, (const int64_t[]){1, 1, D}, "no_mem_embed");
    samc_sd_tensor(sd, 3, (const int64_t[]){1, 1, D}, "no_mem_pos_enc"); /* unused at inference */
    return SAMC_OK;
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
    free(m->pos_embed);
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

samc_status samc_sam2_model_load(const char *checkpoint, const char *config, bool allow_nonfinite,
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
        st = samc_weights_open(checkpoint, &w, err);
    samc_family fam;
    if (!st && samc_weights_family(w, &fam) && fam == SAMC_FAMILY_SAM3) {
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

void samc_sam2_model_free(samc_sam2_model *m)
{
    if (!m)
        return;
    samc_model_base_free(&m->base);
    free(m->pos_embed);
    free(m);
}

const char *samc_sam2_kind_name(int table, size_t offset)
{
#define SAMC_X(kind)                                                                                     \
    if (table == SAMC_OPS_SAM2_IMAGE && offset == offsetof(samc_sam2_image_ops, kind))                   \
        return #kind;
    SAMC_SAM2_IMAGE_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind)                                                                                     \
    if (table == SAMC_OPS_SAM2_VIDEO && offset == offsetof(samc_sam2_video_ops, kind))                   \
        return #kind;
    SAMC_SAM2_VIDEO_OPS(SAMC_X)
#undef SAMC_X
    return NULL;
}

samc_status samc_sam2_exec_init(samc_exec *x, samc_sam2_model *m, samc_error *err)
{
    return samc_exec_init(x, &samc_sam2_family, m, &m->base, err);
}
