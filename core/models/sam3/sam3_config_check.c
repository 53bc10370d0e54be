/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_config_check.c - the JSON-level checks of a SAM 3 config that a
 * reader (today's path lookups in sam3_model.c, a typed reader tomorrow)
 * runs before it reads a value:
 *   - every key must be a parameter of the official constructors, i.e. a
 *     key at the same place in the released `_target_` tree
 *     (sam3_preset.c records every argument build_sam3_image_model passes),
 *     as Hydra's instantiate refuses an unexpected argument; the message
 *     names the full key path;
 *   - the sizes that multiply into allocations are bounded (img_size,
 *     window_size, pretrain_img_size and friends: img_size 10^6 made the
 *     RoPE tables side * side overflow).
 * Parsing (duplicates as Python, escaped NULs, trailing bytes) is
 * samc__json_parse_strict's (core/base/json_strict.h). */
#include "core/models/sam3/sam3_config_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/json_strict.h"
#include "core/models/sam3/sam3_config.h"

typedef struct bound {
    const char *path; /* under the Sam3Image tree */
    double lo, hi;
    int integer;
} bound;

static const bound BOUNDS[] = {
    {"backbone.visual.trunk.img_size", 1, SAMC_SAM3_MAX_IMAGE_SIZE, 1},
    {"backbone.visual.trunk.patch_size", 1, 64, 1},
    {"backbone.visual.trunk.window_size", 0, 256, 1},
    {"backbone.visual.trunk.pretrain_img_size", 1, SAMC_SAM3_MAX_IMAGE_SIZE, 1},
    {"backbone.visual.trunk.rope_pt_size", 0, 256, 1},
    {"backbone.visual.trunk.embed_dim", 1, 8192, 1},
    {"backbone.visual.trunk.depth", 1, SAMC_SAM3_MAX_BLOCKS, 1},
    {"backbone.visual.trunk.num_heads", 1, 1024, 1},
    {"backbone.visual.trunk.mlp_ratio", 1e-3, 16, 0},
    {"backbone.visual.trunk.in_chans", 1, 16, 1},
    {"backbone.visual.d_model", 1, 8192, 1},
    {"backbone.visual.position_encoding.num_pos_feats", 1, 8192, 1},
    {"backbone.visual.position_encoding.precompute_resolution", 1, SAMC_SAM3_MAX_IMAGE_SIZE, 1},
    {"backbone.text.width", 1, 8192, 1},
    {"backbone.text.heads", 1, 1024, 1},
    {"backbone.text.layers", 1, 64, 1},
    {"backbone.text.d_model", 1, 8192, 1},
    {"backbone.text.context_length", 1, 1024, 1},
    {"backbone.text.vocab_size", 1, 1 << 20, 1},
    {"transformer.d_model", 1, 8192, 1},
    {"transformer.encoder.num_layers", 0, 64, 1},
    {"transformer.encoder.layer.dim_feedforward", 1, 1 << 16, 1},
    {"transformer.decoder.num_layers", 1, 64, 1},
    {"transformer.decoder.num_queries", 1, 4096, 1},
    {"transformer.decoder.resolution", 1, SAMC_SAM3_MAX_IMAGE_SIZE, 1},
    {"transformer.decoder.stride", 1, 64, 1},
    {"transformer.decoder.layer.dim_feedforward", 1, 1 << 16, 1},
    {"input_geometry_encoder.num_layers", 0, 64, 1},
    {"input_geometry_encoder.roi_size", 1, 64, 1},
    {"dot_prod_scoring.prompt_mlp.num_layers", 1, 16, 1},
    {"dot_prod_scoring.prompt_mlp.hidden_dim", 1, 1 << 16, 1},
    {"segmentation_head.hidden_dim", 1, 8192, 1},
    {"segmentation_head.pixel_decoder.num_upsampling_stages", 1, 8, 1},
};

/* Every key of `o` must be in `ref` (the released tree at the same place);
 * values that are objects are checked below their key. */
static samc_status known_keys(const cJSON *o, const cJSON *ref, char *path, size_t len, size_t cap, const char *what,
                              samc_error *err)
{
    for (const cJSON *c = o->child; c; c = c->next) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(ref, c->string ? c->string : "");
        const int n = snprintf(path + len, cap - len, "%s%s", len ? "." : "", c->string ? c->string : "");
        const size_t here = n > 0 && (size_t)n < cap - len ? len + (size_t)n : cap - 1;
        if (!r)
            return samc_fail(err, SAMC_ERR_FORMAT,
                             "%s: unknown config key '%s' (misspelt, or not a parameter of the official constructor)",
                             what, path);
        if (cJSON_IsObject(c) && !cJSON_IsObject(r))
            return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: config key '%s' holds an object; samc supports only %s there",
                             what, path, cJSON_IsNull(r) ? "null" : "a plain value");
        if (cJSON_IsObject(c)) {
            samc_status st = known_keys(c, r, path, here, cap, what, err);
            if (st)
                return st;
        }
        path[len] = '\0';
    }
    return SAMC_OK;
}

/* The number at `path` (checked by BOUNDS), else the reader's default. */
static double num_or(const cJSON *cfg, const char *path, double def)
{
    const cJSON *v = samc__json_path(cfg, path);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static samc_status check_bounds(const cJSON *cfg, const char *shown, const char *what, samc_error *err)
{
    for (size_t i = 0; i < sizeof BOUNDS / sizeof BOUNDS[0]; i++) {
        const bound *b = &BOUNDS[i];
        const cJSON *v = samc__json_path(cfg, b->path);
        if (!v || cJSON_IsNull(v))
            continue;
        const double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        if (!cJSON_IsNumber(v) || (b->integer && d != floor(d)))
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: config key '%s%s' must be %s", what, shown, b->path,
                             b->integer ? "an integer" : "a number");
        if (!(d >= b->lo && d <= b->hi))
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: config key '%s%s' = %g is outside %g..%g", what, shown, b->path,
                             d, b->lo, b->hi);
    }
    /* what the trunk's sizes multiply into (absent keys: the reader's
     * defaults): one block's activations, grid^2 * embed_dim, and the RoPE
     * tables of all blocks, depth * grid^2 * head_dim, each at most 2^26
     * floats (the release: 5.3M and 10.6M) */
    const double img = num_or(cfg, "backbone.visual.trunk.img_size", 1024);
    const double patch = num_or(cfg, "backbone.visual.trunk.patch_size", 16);
    const double C = num_or(cfg, "backbone.visual.trunk.embed_dim", 768);
    const double depth = num_or(cfg, "backbone.visual.trunk.depth", 12);
    const double heads = num_or(cfg, "backbone.visual.trunk.num_heads", 12);
    if (img < patch)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: config key '%sbackbone.visual.trunk.img_size' = %g is smaller than "
                         "patch_size %g", what, shown, img, patch);
    const double grid = floor(img / patch), tokens = grid * grid;
    if (tokens * C > SAMC_SAM3_MAX_WORK || depth * tokens * (C / heads) > SAMC_SAM3_MAX_WORK)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED,
                         "%s: config '%sbackbone.visual.trunk' (img_size %g, patch_size %g, embed_dim %g, depth %g, "
                         "num_heads %g) sizes tensors past samc's budget of %.0f floats", what, shown, img, patch, C,
                         depth, heads, (double)SAMC_SAM3_MAX_WORK);
    return SAMC_OK;
}

samc_status samc__sam3_config_check(const cJSON *cfg, const char *shown, const char *what, samc_error *err)
{
    if (!cJSON_IsObject(cfg))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: a SAM 3 config must be a JSON object", what);
    cJSON *ref = cJSON_Parse(samc_sam3_released_config_json); /* the key tree every config must stay within */
    if (!ref)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory reading the released SAM 3 config");
    samc_status st;
    char path[1024];
    snprintf(path, sizeof path, "%s", shown);
    size_t len = strlen(path);
    if (len && path[len - 1] == '.')
        path[--len] = '\0';
    st = known_keys(cfg, ref, path, len, sizeof path, what, err);
    cJSON_Delete(ref);
    return st ? st : check_bounds(cfg, shown, what, err);
}
