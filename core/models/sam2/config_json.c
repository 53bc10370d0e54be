/* SPDX-License-Identifier: Apache-2.0 */
/* config_json.c - the official `model:` YAML section, as JSON, into
 * samc_sam2_config. Keys absent from the JSON keep the constructor defaults
 * (config_defaults.c); keys of the wrong type are errors naming the key. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/config.h"
#include "core/models/sam2/config_internal.h"
#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/base/json_strict.h"

/* Parameters of the official constructors (SAM2Base, SAM2VideoPredictor,
 * SAM2Train and their modules) that samc accepts and does not need: any
 * other key samc does not read is refused, as Hydra's instantiate refuses
 * an unexpected argument. */
static const char *const SAM2_IGNORED_KEYS[] = {
    "compile_image_encoder", /* torch.compile: no effect on results */
    /* MemoryAttentionLayer / RoPEAttention arguments of the released
     * configs whose values samc's layers assume (dropout is inert at
     * inference; activation relu, downsample_rate 1, d_model and
     * embedding_dim = memory_attention.d_model: the weights' shapes check
     * the sizes) */
    "memory_attention.layer.activation", "memory_attention.layer.dropout", "memory_attention.layer.d_model",
    "memory_attention.layer.self_attention.embedding_dim", "memory_attention.layer.self_attention.dropout",
    "memory_attention.layer.self_attention.downsample_rate", "memory_attention.layer.cross_attention.embedding_dim",
    "memory_attention.layer.cross_attention.dropout", "memory_attention.layer.cross_attention.downsample_rate",
    NULL,
};

typedef struct jctx {
    const char *what; /* source, for messages */
    samc_error *err;
    samc_status st;
    samc_json_seen seen; /* keys read, for the unknown-key check */
} jctx;

static void jfail(jctx *j, const char *path, const char *expected)
{
    if (j->st == SAMC_OK)
        j->st = samc_fail(j->err, SAMC_ERR_FORMAT, "%s: config key '%s' must be %s", j->what, path,
                          expected);
}

/* `key` of the object at `parent` ("" for the model section), recorded as read. */
static const cJSON *jget(jctx *j, const cJSON *o, const char *key) { return samc__json_get(&j->seen, o, key); }

/* jfail for `parent`.`key`: messages name the full key path. */
static void jfail_key(jctx *j, const char *parent, const char *key, const char *expected)
{
    char path[256];
    snprintf(path, sizeof path, "%s%s%s", parent, *parent ? "." : "", key);
    jfail(j, path, expected);
}

static void get_int(jctx *j, const cJSON *o, const char *key, const char *path, int *out)
{
    const cJSON *v = jget(j, o, key);
    if (!v || cJSON_IsNull(v))
        return;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 1e9)
        return jfail_key(j, path, key, "an integer");
    *out = (int)v->valuedouble;
}

static void get_num(jctx *j, const cJSON *o, const char *key, const char *path, double *out)
{
    const cJSON *v = jget(j, o, key);
    if (!v || cJSON_IsNull(v))
        return;
    if (!cJSON_IsNumber(v))
        return jfail_key(j, path, key, "a number");
    *out = v->valuedouble;
}

static void get_bool(jctx *j, const cJSON *o, const char *key, const char *path, bool *out)
{
    const cJSON *v = jget(j, o, key);
    if (!v || cJSON_IsNull(v))
        return;
    if (!cJSON_IsBool(v))
        return jfail_key(j, path, key, "true or false");
    *out = cJSON_IsTrue(v);
}

/* Integer list of at most `max` entries; a scalar counts as [x, x] where
 * the official code accepts a pair (max == 2 and pair_ok). */
static void get_ints(jctx *j, const cJSON *o, const char *key, const char *path, int *out, int max,
                     int *count)
{
    const cJSON *v = jget(j, o, key);
    if (!v)
        return;
    if (cJSON_IsNull(v)) {
        if (count)
            *count = 0;
        return;
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > max)
        return jfail_key(j, path, key, "a list of integers (too long or not a list)");
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || fabs(e->valuedouble) > 1e9)
            return jfail_key(j, path, key, "a list of integers");
        out[n++] = (int)e->valuedouble;
    }
    if (count)
        *count = n;
}

static const cJSON *get_obj(jctx *j, const cJSON *o, const char *key, const char *path)
{
    const cJSON *v = jget(j, o, key);
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsObject(v)) {
        jfail_key(j, path, key, "an object");
        return NULL;
    }
    return v;
}

/* `_target_` must name the expected official class (by its last component). */
static void check_target(jctx *j, const cJSON *o, const char *path, const char *cls)
{
    const cJSON *t = jget(j, o, "_target_");
    if (!t)
        return;
    const char *s = cJSON_IsString(t) ? t->valuestring : "";
    const char *dot = strrchr(s, '.');
    const char *last = dot ? dot + 1 : s;
    if (strcmp(last, cls) && j->st == SAMC_OK)
        j->st = samc_fail(j->err, SAMC_ERR_UNSUPPORTED, "%s: %s._target_ is '%s'; samc supports %s",
                          j->what, path, s, cls);
}

static void parse_sine(jctx *j, const cJSON *o, const char *path, samc_sine_pe_config *pe)
{
    if (!o)
        return;
    check_target(j, o, path, "PositionEmbeddingSine");
    get_int(j, o, "num_pos_feats", path, &pe->num_pos_feats);
    get_num(j, o, "temperature", path, &pe->temperature);
    get_bool(j, o, "normalize", path, &pe->normalize);
    get_num(j, o, "scale", path, &pe->scale);
}

static void parse_trunk(jctx *j, const cJSON *o, samc_hiera_config *h)
{
    const char *p = "image_encoder.trunk";
    check_target(j, o, p, "Hiera");
    get_int(j, o, "embed_dim", p, &h->embed_dim);
    get_int(j, o, "num_heads", p, &h->num_heads);
    get_ints(j, o, "stages", "image_encoder.trunk", h->stages, SAMC_MAX_STAGES, &h->num_stages);
    get_int(j, o, "q_pool", p, &h->q_pool);
    int qs[2] = {h->q_stride, h->q_stride}, nqs = 2;
    get_ints(j, o, "q_stride", "image_encoder.trunk", qs, 2, &nqs);
    if (nqs != 2 || qs[0] != qs[1])
        jfail(j, "image_encoder.trunk.q_stride", "a square pair [s, s]");
    h->q_stride = qs[0];
    get_num(j, o, "dim_mul", p, &h->dim_mul);
    get_num(j, o, "head_mul", p, &h->head_mul);
    int bkg[2] = {h->bkg_h, h->bkg_w}, nb = 2;
    get_ints(j, o, "window_pos_embed_bkg_spatial_size", "image_encoder.trunk",
             bkg, 2, &nb);
    if (nb != 2)
        jfail(j, "image_encoder.trunk.window_pos_embed_bkg_spatial_size", "a pair");
    h->bkg_h = bkg[0], h->bkg_w = bkg[1];
    int nw = h->num_stages;
    get_ints(j, o, "window_spec", "image_encoder.trunk", h->window_spec, SAMC_MAX_STAGES, &nw);
    if (nw != h->num_stages)
        jfail(j, "image_encoder.trunk.window_spec", "as long as stages");
    get_ints(j, o, "global_att_blocks", "image_encoder.trunk", h->global_att_blocks,
             SAMC_MAX_GLOBAL_BLOCKS, &h->n_global);
}

static void parse_neck(jctx *j, const cJSON *o, samc_neck_config *n)
{
    const char *p = "image_encoder.neck";
    check_target(j, o, p, "FpnNeck");
    get_int(j, o, "d_model", p, &n->d_model);
    get_ints(j, o, "backbone_channel_list", "image_encoder.neck",
             n->backbone_channel_list, SAMC_MAX_STAGES, &n->n_levels);
    get_ints(j, o, "fpn_top_down_levels", "image_encoder.neck",
             n->fpn_top_down_levels, SAMC_MAX_STAGES, &n->n_top_down);
    get_int(j, o, "kernel_size", p, &n->conv_kernel);
    get_int(j, o, "stride", p, &n->conv_stride);
    get_int(j, o, "padding", p, &n->conv_padding);
    const cJSON *v = jget(j, o, "fpn_interp_model");
    if (v && !(cJSON_IsString(v) && (!strcmp(v->valuestring, "nearest") || !strcmp(v->valuestring, "bilinear"))))
        jfail(j, "image_encoder.neck.fpn_interp_model", "\"nearest\" or \"bilinear\"");
    else if (v)
        n->interp_bilinear = !strcmp(v->valuestring, "bilinear");
    v = jget(j, o, "fuse_type");
    if (v && !(cJSON_IsString(v) && (!strcmp(v->valuestring, "sum") || !strcmp(v->valuestring, "avg"))))
        jfail(j, "image_encoder.neck.fuse_type", "\"sum\" or \"avg\"");
    else if (v)
        n->fuse_avg = !strcmp(v->valuestring, "avg");
    parse_sine(j, get_obj(j, o, "position_encoding", "image_encoder.neck"),
               "image_encoder.neck.position_encoding", &n->pe);
}

static void parse_rope(jctx *j, const cJSON *o, const char *path, int *heads, bool *k_repeat,
                       samc_memory_attention_config *ma)
{
    if (!o)
        return;
    check_target(j, o, path, "RoPEAttention");
    get_int(j, o, "num_heads", path, heads);
    get_num(j, o, "rope_theta", path, &ma->rope_theta);
    if (k_repeat)
        get_bool(j, o, "rope_k_repeat", path, k_repeat);
    int fs[2] = {ma->feat_h, ma->feat_w}, n = 2;
    get_ints(j, o, "feat_sizes", path, fs, 2, &n);
    ma->feat_h = fs[0], ma->feat_w = fs[1];
    if (k_repeat)
        get_int(j, o, "kv_in_dim", path, &ma->kv_in_dim);
}

static void parse_mem_attn(jctx *j, const cJSON *o, samc_memory_attention_config *ma)
{
    const char *p = "memory_attention";
    check_target(j, o, p, "MemoryAttention");
    get_int(j, o, "d_model", p, &ma->d_model);
    get_bool(j, o, "pos_enc_at_input", p, &ma->pos_enc_at_input);
    get_int(j, o, "num_layers", p, &ma->num_layers);
    const cJSON *l = get_obj(j, o, "layer", "memory_attention");
    if (!l)
        return;
    p = "memory_attention.layer";
    check_target(j, l, p, "MemoryAttentionLayer");
    get_int(j, l, "dim_feedforward", p, &ma->dim_feedforward);
    get_bool(j, l, "pos_enc_at_attn", p, &ma->pos_enc_at_attn);
    get_bool(j, l, "pos_enc_at_cross_attn_keys", p, &ma->pos_enc_at_cross_attn_keys);
    get_bool(j, l, "pos_enc_at_cross_attn_queries", p, &ma->pos_enc_at_cross_attn_queries);
    parse_rope(j, get_obj(j, l, "self_attention", "memory_attention.layer"),
               "memory_attention.layer.self_attention", &ma->self_heads, NULL, ma);
    parse_rope(j, get_obj(j, l, "cross_attention", "memory_attention.layer"),
               "memory_attention.layer.cross_attention", &ma->cross_heads, &ma->rope_k_repeat, ma);
}

static void parse_mem_enc(jctx *j, const cJSON *o, samc_memory_encoder_config *me)
{
    const char *p = "memory_encoder";
    check_target(j, o, p, "MemoryEncoder");
    get_int(j, o, "out_dim", p, &me->out_dim);
    get_int(j, o, "in_dim", p, &me->in_dim);
    parse_sine(j, get_obj(j, o, "position_encoding", "memory_encoder"),
               "memory_encoder.position_encoding", &me->pe);
    const cJSON *d = get_obj(j, o, "mask_downsampler", "memory_encoder");
    if (d) {
        p = "memory_encoder.mask_downsampler";
        check_target(j, d, p, "MaskDownSampler");
        get_int(j, d, "kernel_size", p, &me->ds_kernel);
        get_int(j, d, "stride", p, &me->ds_stride);
        get_int(j, d, "padding", p, &me->ds_padding);
        get_int(j, d, "total_stride", p, &me->ds_total_stride);
        get_int(j, d, "embed_dim", p, &me->ds_embed_dim);
    }
    const cJSON *f = get_obj(j, o, "fuser", "memory_encoder");
    if (!f)
        return;
    p = "memory_encoder.fuser";
    check_target(j, f, p, "Fuser");
    get_int(j, f, "num_layers", p, &me->fuser_layers);
    bool inproj = false;
    get_bool(j, f, "input_projection", p, &inproj);
    if (inproj && j->st == SAMC_OK)
        j->st = samc_fail(j->err, SAMC_ERR_UNSUPPORTED, "%s: memory_encoder.fuser.input_projection=true is not supported", j->what);
    const cJSON *l = get_obj(j, f, "layer", "memory_encoder.fuser");
    if (!l)
        return;
    p = "memory_encoder.fuser.layer";
    check_target(j, l, p, "CXBlock");
    get_int(j, l, "dim", p, &me->fuser_dim);
    get_int(j, l, "kernel_size", p, &me->fuser_kernel);
    get_int(j, l, "padding", p, &me->fuser_padding);
    get_num(j, l, "layer_scale_init_value", p, &me->layer_scale_init_value);
    get_bool(j, l, "use_dwconv", p, &me->use_dwconv);
}

static void parse_base(jctx *j, const cJSON *m, samc_sam2_config *c)
{
    const char *p = "";
#define I(k) get_int(j, m, #k, p, &c->k)
#define N(k) get_num(j, m, #k, p, &c->k)
#define B(k) get_bool(j, m, #k, p, &c->k)
    I(num_maskmem); I(image_size); I(backbone_stride);
    N(sigmoid_scale_for_mem_enc); N(sigmoid_bias_for_mem_enc);
    B(binarize_mask_from_pts_for_mem_enc); B(use_mask_input_as_output_without_sam);
    I(max_cond_frames_in_attn); B(directly_add_no_mem_embed); B(use_high_res_features_in_sam);
    B(multimask_output_in_sam); I(multimask_min_pt_num); I(multimask_max_pt_num);
    B(multimask_output_for_tracking); B(use_multimask_token_for_obj_ptr);
    B(iou_prediction_use_sigmoid); I(memory_temporal_stride_for_eval);
    B(non_overlap_masks_for_mem_enc); B(use_obj_ptrs_in_encoder); I(max_obj_ptrs_in_encoder);
    B(add_tpos_enc_to_obj_ptrs); B(proj_tpos_enc_in_obj_ptrs); B(use_signed_tpos_enc_to_obj_ptrs);
    B(only_obj_ptrs_in_the_past_for_eval); B(pred_obj_scores); B(pred_obj_scores_mlp);
    B(fixed_no_obj_ptr); B(soft_no_obj_ptr); B(use_mlp_for_obj_ptr_proj); B(no_obj_embed_spatial);
    /* SAM2VideoPredictor.__init__ */
    get_num(j, m, "fill_hole_area", p, &c->video.fill_hole_area);
    get_bool(j, m, "non_overlap_masks", p, &c->video.non_overlap_masks);
    get_bool(j, m, "clear_non_cond_mem_around_input", p, &c->video.clear_non_cond_mem_around_input);
    get_bool(j, m, "add_all_frames_to_correct_as_cond", p, &c->video.add_all_frames_to_correct_as_cond);
#undef I
#undef N
#undef B
    const cJSON *x = get_obj(j, m, "sam_mask_decoder_extra_args", "");
    if (x) {
        p = "sam_mask_decoder_extra_args";
        get_bool(j, x, "dynamic_multimask_via_stability", p, &c->dynamic_multimask_via_stability);
        get_num(j, x, "dynamic_multimask_stability_delta", p, &c->dynamic_multimask_stability_delta);
        get_num(j, x, "dynamic_multimask_stability_thresh", p, &c->dynamic_multimask_stability_thresh);
    }
}

samc_status samc_sam2_config_from_json(const char *json, const char *what, samc_sam2_config *c,
                                       samc_error *err)
{
    samc_sam2_config_defaults(c);
    cJSON *root = NULL;
    samc_status ps = samc__json_parse_strict(json, strlen(json), what, &root, err);
    if (ps)
        return ps;
    jctx j = {what, err, SAMC_OK, {0}};
    /* Accept either the model section itself or a document with a "model"
     * key (a whole Hydra config: its other sections are not samc's). */
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!m || !cJSON_IsObject(m))
        m = root;
    if (!cJSON_IsObject(m)) {
        cJSON_Delete(root);
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: config must be a JSON object", what);
    }
    check_target(&j, m, "model", "SAM2Base");
    if (j.st == SAMC_ERR_UNSUPPORTED) { /* SAM2VideoPredictor / SAM2Train are SAM2Base too */
        const cJSON *t = jget(&j, m, "_target_");
        if (cJSON_IsString(t) && strstr(t->valuestring, "sam2")) {
            samc_error_clear(err);
            j.st = SAMC_OK;
        }
    }
    const cJSON *ie = get_obj(&j, m, "image_encoder", "");
    if (!ie && j.st == SAMC_OK)
        j.st = samc_fail(err, SAMC_ERR_FORMAT, "%s: config has no image_encoder section", what);
    if (ie) {
        check_target(&j, ie, "image_encoder", "ImageEncoder");
        get_int(&j, ie, "scalp", "image_encoder", &c->neck.scalp);
        const cJSON *t = get_obj(&j, ie, "trunk", "image_encoder");
        const cJSON *n = get_obj(&j, ie, "neck", "image_encoder");
        if ((!t || !n) && j.st == SAMC_OK)
            j.st = samc_fail(err, SAMC_ERR_FORMAT, "%s: config lacks image_encoder.trunk or .neck", what);
        if (t)
            parse_trunk(&j, t, &c->trunk);
        if (n)
            parse_neck(&j, n, &c->neck);
    }
    const cJSON *ma = get_obj(&j, m, "memory_attention", "");
    if (ma)
        parse_mem_attn(&j, ma, &c->mem_attn);
    const cJSON *me = get_obj(&j, m, "memory_encoder", "");
    if (me)
        parse_mem_enc(&j, me, &c->mem_enc);
    parse_base(&j, m, c);
    if (!j.st)
        j.st = samc__json_refuse_unknown(m, m == root ? "" : "model", &j.seen, SAM2_IGNORED_KEYS, what, err);
    samc__json_seen_free(&j.seen);
    cJSON_Delete(root);
    if (j.st)
        return j.st;
    samc_status st = samc_sam2_config_validate(c, err);
    if (st) /* name the source: "ckpt.config.json: config: ..." */
        samc_error_prefix(err, "%s", what);
    return st;
}

samc_status samc_sam2_config_from_json_file(const char *path, samc_sam2_config *cfg, samc_error *err)
{
    samc_status rs = samc_check_regular(path, err); /* never block on a FIFO */
    if (rs)
        return rs;
    FILE *f = fopen(path, "rb");
    if (!f)
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open config: %s", path, strerror(errno));
    char *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && n < (16 << 20) && fseek(f, 0, SEEK_SET) == 0)
        buf = malloc((size_t)n + 1);
    size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!buf || got != (size_t)n) {
        free(buf);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot read config (empty, unreadable or over 16 MiB)", path);
    }
    buf[n] = '\0';
    samc_status st = samc_sam2_config_from_json(buf, path, cfg, err);
    free(buf);
    if (st == SAMC_OK) {
        const char *base = strrchr(path, '/');
        snprintf(cfg->name, sizeof cfg->name, "%s", base ? base + 1 : path);
    }
    return st;
}
