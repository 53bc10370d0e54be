/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_config.c - the typed SAM 3 config (sam3_config.h): its sources (a
 * tree, JSON text, a file, the built-in release), each read by
 * sam3_config_json.c and validated here (every bound the model's arrays
 * and allocations rely on, before any weight is bound). */
#include "core/models/sam3/sam3_config.h"

#include "core/base/json_strict.h"
#include "core/models/sam3/sam3_config_check.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/nn/records.h"

/* The largest tensor (in floats) a config may make the model allocate from
 * its sizes alone (RoPE tables, position embeddings): 4 GiB. */
#define MAX_FLOATS ((int64_t)1 << 30)

typedef struct vctx {
    const char *what;
    samc_error *err;
    samc_status st;
} vctx;

static bool bad(vctx *v, const char *key, const char *fmt, ...) SAMC_PRINTF(3, 4);
static bool bad(vctx *v, const char *key, const char *fmt, ...)
{
    if (v->st)
        return false;
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    v->st = samc_fail(v->err, SAMC_ERR_UNSUPPORTED, "%s: config: '%s' %s", v->what, key, msg);
    return false;
}

/* key's value in [lo, hi]. */
static bool range(vctx *v, const char *key, int64_t x, int64_t lo, int64_t hi)
{
    return (x >= lo && x <= hi) || bad(v, key, "is %lld, not in [%lld, %lld]", (long long)x, (long long)lo,
                                       (long long)hi);
}

/* Heads that split `dim` channels. */
static bool heads_split(vctx *v, const char *key, int heads, int dim)
{
    return !range(v, key, heads, 1, dim) || dim % heads == 0 ||
           bad(v, key, "(%d heads) does not divide %d channels", heads, dim);
}

static bool equal_d(vctx *v, const char *key, int x, int d)
{
    return x == d || bad(v, key, "is %d; every part's width must be transformer.d_model (%d)", x, d);
}

static void check_mha(vctx *v, const char *key, const samc_sam3_mha_config *a, int d, bool batch_first)
{
    char k[160];
    snprintf(k, sizeof k, "%s.embed_dim", key);
    equal_d(v, k, a->embed_dim, d);
    snprintf(k, sizeof k, "%s.num_heads", key);
    heads_split(v, k, a->num_heads, d);
    snprintf(k, sizeof k, "%s.batch_first", key);
    if (a->batch_first != batch_first)
        bad(v, k, "must be %s here (the layout samc's wiring feeds this layer)", batch_first ? "true" : "false");
}

static void check_enc_layer(vctx *v, const char *key, const samc_sam3_enc_layer_config *l, int d, bool batch_first)
{
    char k[160];
    snprintf(k, sizeof k, "%s.d_model", key);
    equal_d(v, k, l->d_model, d);
    snprintf(k, sizeof k, "%s.dim_feedforward", key);
    range(v, k, l->dim_feedforward, 1, SAMC_SAM3_MAX_DIM);
    snprintf(k, sizeof k, "%s.self_attention", key);
    check_mha(v, k, &l->self_attention, d, batch_first);
    snprintf(k, sizeof k, "%s.cross_attention", key);
    check_mha(v, k, &l->cross_attention, d, batch_first);
}

/* `multiple`: 4 for a 2-D map's encoding (x and y halves of sin/cos
 * pairs), 2 for the prompts' (PositionEmbeddingSine asserts even). */
static void check_sine(vctx *v, const char *key, const samc_sine_pe_config *pe, int d, int multiple)
{
    char k[160];
    snprintf(k, sizeof k, "%s.num_pos_feats", key);
    if (equal_d(v, k, pe->num_pos_feats, d) && pe->num_pos_feats % multiple)
        bad(v, k, "(%d) is not a multiple of %d", pe->num_pos_feats, multiple);
    snprintf(k, sizeof k, "%s.temperature", key);
    if (!(pe->temperature > 0))
        bad(v, k, "must be positive");
}

static void check_trunk(vctx *v, const samc_sam3_vit_config *t)
{
    const char *T = "backbone.visual.trunk";
    char k[160];
#define KEY(name) (snprintf(k, sizeof k, "%s.%s", T, name), k)
    range(v, KEY("img_size"), t->img_size, 1, SAMC_SAM3_MAX_IMAGE);
    range(v, KEY("patch_size"), t->patch_size, 1, t->img_size);
    range(v, KEY("in_chans"), t->in_chans, 3, 3); /* Sam3Processor feeds RGB */
    range(v, KEY("embed_dim"), t->embed_dim, 1, SAMC_SAM3_MAX_DIM);
    range(v, KEY("depth"), t->depth, 1, SAMC_SAM3_MAX_BLOCKS);
    heads_split(v, KEY("num_heads"), t->num_heads, t->embed_dim);
    range(v, KEY("window_size"), t->window_size, 1, SAMC_SAM3_MAX_IMAGE);
    range(v, KEY("rope_pt_size"), t->rope_pt_size, 0, SAMC_SAM3_MAX_IMAGE);
    if (v->st)
        return;
    const int hd = t->embed_dim / t->num_heads;
    if (t->use_rope && hd % 4)
        bad(v, KEY("num_heads"), "gives a head width of %d: 2-D RoPE needs a multiple of 4", hd);
    const double hidden = (double)t->embed_dim * t->mlp_ratio; /* int(dim * mlp_ratio) */
    if (!(hidden >= 1 && hidden <= SAMC_SAM3_MAX_DIM))
        bad(v, KEY("mlp_ratio"), "makes an MLP width of %g, not in [1, %d]", hidden, SAMC_SAM3_MAX_DIM);
    if (t->use_abs_pos && range(v, KEY("pretrain_img_size"), t->pretrain_img_size, t->patch_size,
                                SAMC_SAM3_MAX_IMAGE)) {
        const int64_t g = t->pretrain_img_size / t->patch_size;
        if ((g * g + 1) * t->embed_dim > MAX_FLOATS)
            bad(v, KEY("pretrain_img_size"), "makes a position embedding of %lld floats",
                (long long)((g * g + 1) * t->embed_dim));
    }
    /* RoPE tables: side * side positions of head_dim / 2 complex values */
    const int64_t grid = t->img_size / t->patch_size;
    const int64_t side = grid > t->window_size ? grid : t->window_size;
    if (t->use_rope && side * side * hd > MAX_FLOATS)
        bad(v, KEY("img_size"), "makes RoPE tables of %lld floats", (long long)(side * side * hd));
    /* ViT.forward returns the output of block full_attn_ids[-1] */
    if (t->n_global < 1)
        bad(v, KEY("global_att_blocks"), "is empty: the trunk returns the last global block's output");
    else
        range(v, KEY("global_att_blocks"), t->global_att_blocks[t->n_global - 1], 0, t->depth - 1);
#undef KEY
}

static void check_vision(vctx *v, const samc_sam3_config *c, int d)
{
    check_trunk(v, &c->vision.trunk);
    const samc_sam3_neck_config *n = &c->vision.neck;
    equal_d(v, "backbone.visual.d_model", n->d_model, d);
    range(v, "backbone.visual.scale_factors", n->n_scales, 1, SAMC_SAM3_NECK_MAX);
    for (int i = 0; i < n->n_scales && !v->st; i++) {
        const double s = n->scale_factors[i];
        if (s != 4.0 && s != 2.0 && s != 1.0 && s != 0.5)
            bad(v, "backbone.visual.scale_factors", "holds %g: Sam3DualViTDetNeck supports 4, 2, 1, 0.5", s);
        else if (s >= 2.0 && c->vision.trunk.embed_dim < (s == 4.0 ? 4 : 2))
            bad(v, "backbone.visual.trunk.embed_dim", "is too narrow for a %gx neck level", s);
    }
    check_sine(v, "backbone.visual.position_encoding", &n->pe, d, 4);
    range(v, "backbone.scalp", c->vision.scalp, 0, n->n_scales - 1);
}

static void check_text(vctx *v, const samc_sam3_text_config *t, int d)
{
    equal_d(v, "backbone.text.d_model", t->d_model, d);
    range(v, "backbone.text.width", t->width, 1, SAMC_SAM3_MAX_DIM / 4); /* the MLP is 4 wide */
    heads_split(v, "backbone.text.heads", t->heads, t->width);
    range(v, "backbone.text.layers", t->layers, 1, SAMC_SAM3_TEXT_MAX_LAYERS);
    range(v, "backbone.text.context_length", t->context_length, 2, 512); /* the tokenizer's row */
    range(v, "backbone.text.vocab_size", t->vocab_size, 1, 1 << 20);
}

static void check_geometry(vctx *v, const samc_sam3_geometry_config *g, int d)
{
    const char *G = "input_geometry_encoder";
    char k[160];
#define KEY(name) (snprintf(k, sizeof k, "%s.%s", G, name), k)
    equal_d(v, KEY("d_model"), g->d_model, d);
    range(v, KEY("num_layers"), g->num_layers, 0, SAMC_SAM3_MAX_ENC_LAYERS);
    range(v, KEY("roi_size"), g->roi_size, 1, 64);
    if (!g->points_direct_project && !g->points_pool && !g->points_pos_enc)
        bad(v, KEY("points_direct_project"), "and points_pool and points_pos_enc are all false (the official "
            "encoder asserts one)");
    if (!g->boxes_direct_project && !g->boxes_pool && !g->boxes_pos_enc)
        bad(v, KEY("boxes_direct_project"), "and boxes_pool and boxes_pos_enc are all false (the official "
            "encoder asserts one)");
    if (g->num_layers > 0 && !g->add_cls)
        bad(v, KEY("add_cls"), "must be true with encoder layers (the official encoder asserts it)");
    if (g->points_pos_enc || g->boxes_pos_enc)
        check_sine(v, KEY("pos_enc"), &g->pos_enc, d, 2);
    if (g->num_layers > 0) /* seq-first, as SequenceGeometryEncoder calls them */
        check_enc_layer(v, KEY("layer"), &g->layer, d, false);
#undef KEY
}

static void check_transformer(vctx *v, const samc_sam3_config *c, int d)
{
    range(v, "transformer.encoder.num_layers", c->enc.num_layers, 0, SAMC_SAM3_MAX_ENC_LAYERS);
    /* batch-first, as TransformerEncoderFusion's layers are built */
    check_enc_layer(v, "transformer.encoder.layer", &c->enc.layer, d, true);
    const samc_sam3_decoder_config *dc = &c->dec;
    equal_d(v, "transformer.decoder.d_model", dc->d_model, d);
    range(v, "transformer.decoder.num_layers", dc->num_layers, 1, SAMC_SAM3_MAX_ENC_LAYERS);
    range(v, "transformer.decoder.num_queries", dc->num_queries, 1, SAMC_SAM3_MAX_DIM);
    range(v, "transformer.decoder.layer.dim_feedforward", dc->dim_feedforward, 1, SAMC_SAM3_MAX_DIM);
    heads_split(v, "transformer.decoder.layer.n_heads", dc->n_heads, d);
    check_mha(v, "transformer.decoder.layer.cross_attention", &dc->cross_attention, d, false);
}

static void check_heads(vctx *v, const samc_sam3_config *c, int d)
{
    const samc_sam3_scoring_config *s = &c->scoring;
    equal_d(v, "dot_prod_scoring.d_model", s->d_model, d);
    range(v, "dot_prod_scoring.d_proj", s->d_proj, 1, SAMC_SAM3_MAX_DIM);
    if (s->has_prompt_mlp) {
        range(v, "dot_prod_scoring.prompt_mlp.num_layers", s->mlp_layers, 1, SAMC_MLP_MAX_LAYERS);
        range(v, "dot_prod_scoring.prompt_mlp.hidden_dim", s->mlp_hidden, 1, SAMC_SAM3_MAX_DIM);
        if (s->mlp_out_norm && !(s->mlp_out_norm_eps > 0))
            bad(v, "dot_prod_scoring.prompt_mlp.out_norm.eps", "must be positive");
    }
    const samc_sam3_seg_config *g = &c->seg;
    if (!g->present)
        return;
    if (equal_d(v, "segmentation_head.hidden_dim", g->hidden_dim, d) && g->hidden_dim % 8)
        bad(v, "segmentation_head.hidden_dim", "(%d) is not divisible by GroupNorm's 8 groups", g->hidden_dim);
    if (!g->shared_conv)
        range(v, "segmentation_head.pixel_decoder.num_upsampling_stages", g->num_upsampling_stages, 1,
              SAMC_SAM3_PIXDEC_MAX);
    if (g->has_cross_attend)
        check_mha(v, "segmentation_head.cross_attend_prompt", &g->cross_attend_prompt, d, false);
}

samc_status samc_sam3_config_validate(const samc_sam3_config *c, const char *what, samc_error *err)
{
    vctx v = {what ? what : "sam3", err, SAMC_OK};
    const int d = c->enc.d_model; /* transformer.d_model */
    if (range(&v, "transformer.d_model", d, 1, SAMC_SAM3_MAX_DIM)) {
        check_vision(&v, c, d);
        check_text(&v, &c->text, d);
        check_geometry(&v, &c->geo, d);
        check_transformer(&v, c, d);
        check_heads(&v, c, d);
    }
    if (!v.st && c->resolution != c->vision.trunk.img_size)
        bad(&v, "backbone.visual.trunk.img_size", "differs from the processor's resolution %d", c->resolution);
    return v.st;
}

/* ---- sources ------------------------------------------------------------------ */

samc_status samc_sam3_config_from_json(const cJSON *root, const char *what, samc_sam3_config *out, samc_error *err)
{
    samc_status st = samc__sam3_config_read(root, what, out, err);
    return st ? st : samc_sam3_config_validate(out, what, err);
}

/* Strict JSON (duplicate keys: the last wins, as in Python), then the
 * JSON-level checks (unknown keys, bounds) before any value is read. */
samc_status samc_sam3_config_parse(const char *json, const char *what, samc_sam3_config *out, samc_error *err)
{
    what = what ? what : "sam3 config";
    if (!json)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: no JSON", what);
    cJSON *root = NULL;
    samc_status st = samc__json_parse_strict(json, strlen(json), what, &root, err);
    if (!st)
        st = samc__sam3_config_check(root, "", what, err);
    if (!st)
        st = samc_sam3_config_from_json(root, what, out, err);
    cJSON_Delete(root);
    return st;
}

samc_status samc_sam3_config_released(bool with_sam2_neck, samc_sam3_config *out, samc_error *err)
{
    samc_status st = samc_sam3_config_parse(samc_sam3_released_config_json, "sam3 (built-in release)", out, err);
    if (!st)
        out->vision.neck.add_sam2_neck = with_sam2_neck;
    return st;
}

samc_status samc_sam3_config_from_file(const char *path, samc_sam3_config *out, samc_error *err)
{
    samc_mapped_file mf;
    samc_status st = samc_check_regular(path, err);
    if (!st)
        st = samc_file_map(path, &mf, err);
    if (st)
        return st;
    cJSON *root = NULL;
    st = samc__json_parse_strict((const char *)mf.data, mf.size, path, &root, err);
    samc_file_unmap(&mf);
    if (st)
        return st;
    const cJSON *image = cJSON_GetObjectItemCaseSensitive(root, "image"); /* tools/make_sam3_checkpoint.py */
    const cJSON *tree = image ? image : root;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(tree, "_target_");
    if (!cJSON_IsString(t) || strcmp(t->valuestring, "sam3.model.sam3_image.Sam3Image"))
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: not a SAM 3 image config (its _target_ must be "
                       "sam3.model.sam3_image.Sam3Image)", path);
    if (!st)
        st = samc__sam3_config_check(tree, image ? "image." : "", path, err);
    if (!st)
        st = samc_sam3_config_from_json(tree, path, out, err);
    cJSON_Delete(root);
    return st;
}
