/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_model.c - loading the SAM 3 image model: its typed config
 * (sam3_config.h, validated) and one walk over the state_dict
 * (core/runtime/statedict.h), each part's keys relative to its root, that
 * checks every key and shape and binds every record. Every shape (hidden
 * widths included) comes from the config, so a checkpoint that disagrees
 * is named key by key before any compute.
 */
#include "core/models/sam3/sam3_model.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/runtime/statedict.h"
#include "core/text/clip_tokenizer.h"

/* Every part at its root, in the order of the official module tree (and
 * of its state_dict). */
#define AT(part, cfg) .offset = offsetof(samc_sam3_model, part), .cfg_offset = offsetof(samc_sam3_model, cfg)
static const samc_mount mounts[] = {
    {.part = &samc_sam3_preprocess_part, .root = "", AT(processor, cfg)},
    {.part = &samc_sam3_vision_part, .root = "backbone.vision_backbone", AT(vision, cfg.vision)},
    {.part = &samc_sam3_tokenizer_part, .root = "", AT(language, cfg.text)},
    {.part = &samc_sam3_language_part, .root = "backbone.language_backbone", AT(language, cfg.text)},
    {.part = &samc_sam3_geometry_part, .root = "geometry_encoder", AT(geo, cfg.geo)},
    {.part = &samc_sam3_fusion_part, .root = "transformer.encoder", AT(enc, cfg.enc)},
    {.part = &samc_sam3_decoder_part, .root = "transformer.decoder", AT(dec, cfg.dec)},
    {.part = &samc_sam3_scoring_part, .root = "dot_prod_scoring", AT(scoring, cfg.scoring)},
    {.part = &samc_sam3_segmentation_part, .root = "segmentation_head", AT(seg, cfg.seg)},
    {.part = &samc_sam3_postprocess_part, .root = "", AT(processor, cfg)},
};
#undef AT
const samc_layer_family samc_sam3_family = {.name = "sam3", .mounts = mounts,
                                           .n_mounts = (int)(sizeof mounts / sizeof mounts[0])};

/* The side of the image level the DETR parts read: backbone_fpn[-1] after
 * the scalp (the trunk's grid at the released scale 1). */
static int feature_side(const samc_sam3_config *c)
{
    const int grid = c->vision.trunk.img_size / c->vision.trunk.patch_size;
    const double s = c->vision.neck.scale_factors[c->vision.neck.n_scales - 1 - c->vision.scalp];
    return s == 4.0 ? 4 * grid : s == 2.0 ? 2 * grid : s == 0.5 ? grid / 2 : grid;
}

/* The family whose mounts describe the model's weights: the image model,
 * or with the tracker the video model (or the inst-interactive image model). */
static const samc_layer_family *family_of(const samc_sam3_model *m)
{
    return !m->has_tracker ? &samc_sam3_family : m->video.has_loop ? &samc_sam3_video_family : &samc_sam3_inst_family;
}

/* The whole model, part by part at its root (the config set first). */
static samc_status describe(samc_sd *sd, samc_sam3_model *m, samc_error *err)
{
    m->processor.resolution = m->cfg.resolution;
    m->geo.feat_side = m->enc.feat_side = m->dec.feat_side = m->seg.feat_side = feature_side(&m->cfg);
    return samc_sd_family(sd, family_of(m), m, err);
}

/* One walk over `w` (NULL: describe only) with m->cfg; the walk's verdict
 * (strict key/shape check). */
static samc_status walk(samc_sam3_model *m, const samc_weights *w, const char *base, const char *what,
                        samc_param_list *params, samc_key_list *keys, samc_error *err)
{
    samc_sd sd;
    samc_sd_begin(&sd, w, base, params);
    samc_status st = describe(&sd, m, err);
    if (!st)
        st = samc_sd_finish(&sd, what, err);
    if (!st && keys)
        *keys = sd.keys, memset(&sd.keys, 0, sizeof sd.keys);
    samc_sd_free(&sd);
    return st;
}

samc_status samc_sam3_expected_keys(const samc_sam3_config *cfg, const char *base, samc_key_list *out,
                                    samc_error *err)
{
    memset(out, 0, sizeof *out);
    samc_status st = samc_sam3_config_validate(cfg, "sam3", err);
    samc_sam3_model *m = st ? NULL : calloc(1, sizeof *m);
    if (!st && !m)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st) {
        m->cfg = *cfg;
        st = walk(m, NULL, base, "sam3", NULL, out, err);
        samc_sam3_vision_release(&m->vision);
    }
    free(m);
    return st;
}

/* The model of `cfg` (and, with `video`, its tracker) bound to `w`. */
static samc_status init(samc_sam3_model **out, samc_weights *w, const samc_sam3_config *cfg,
                        const samc_sam3_video_config *video, const char *base, const char *what, samc_error *err)
{
    *out = NULL;
    samc_sam3_model *m = calloc(1, sizeof *m);
    if (!m) {
        samc_weights_free(w);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    samc_model_base_init(&m->base);
    m->base.weights = w;
    m->cfg = *cfg;
    if (video) { /* its config section set before the weights are described */
        m->has_tracker = true, m->video = *video, m->tracker.cfg = video->tracker;
        m->cfg.joint_box_scores = false; /* the image task's Sam3Image (the video detector's: m->video.detector) */
    }
    samc_status st = samc_sam3_config_validate(cfg, what, err);
    if (!st)
        st = walk(m, w, base, what, &m->base.params, NULL, err);
    if (st) {
        samc_sam3_model_free(m);
        return st;
    }
    *out = m;
    return SAMC_OK;
}

samc_status samc_sam3_model_init(samc_sam3_model **out, samc_weights *w, const samc_sam3_config *cfg,
                                 const char *base, const char *what, samc_error *err)
{
    return init(out, w, cfg, NULL, base, what, err);
}

samc_status samc_sam3_model_init_video(samc_sam3_model **out, samc_weights *w, const samc_sam3_video_config *cfg,
                                       const char *what, samc_error *err)
{
    return init(out, w, &cfg->detector, cfg, "", what, err);
}

samc_status samc_sam3_model_set_vocab(samc_sam3_model *m, const void *gz, size_t n, const char *path,
                                      samc_error *err)
{
    samc_clip_tokenizer *tok = NULL;
    samc_status st = gz ? samc_clip_tokenizer_load_gz_mem(gz, n, &tok, err) : samc_clip_tokenizer_load(path, &tok, err);
    if (st)
        return st;
    samc_clip_tokenizer_free(m->language.tok);
    m->language.tok = tok;
    return SAMC_OK;
}

void samc_sam3_model_free(samc_sam3_model *m)
{
    if (!m)
        return;
    samc_clip_tokenizer_free(m->language.tok);
    samc_sam3_vision_release(&m->vision);
    samc_model_base_free(&m->base);
    free(m);
}

samc_status samc_sam3_exec_init(samc_exec *x, samc_sam3_model *m, const char *impl, samc_error *err)
{
    /* the image model's parts, whatever else the model has (its tracker:
     * samc_sam3_inst_exec_init and samc_sam3_video_exec_init) */
    return samc_exec_init_impl(x, &samc_sam3_family, m, &m->base, impl, err);
}

samc_status samc_sam3_video_exec_init(samc_exec *x, samc_sam3_model *m, const char *impl, samc_error *err)
{
    if (!m->has_tracker || !m->video.has_loop)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "sam3: this model has no video loop (its tracker half and the "
                         "video config are needed: sam3.pt, or a sam3_video dump)");
    return samc_exec_init_impl(x, &samc_sam3_video_family, m, &m->base, impl, err);
}
