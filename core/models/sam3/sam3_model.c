/* sam3_model.c - loading the SAM 3 image model: the config's `_target_`
 * tree and one walk over the state_dict (core/runtime/statedict.h) that
 * checks every key and shape and binds every record.
 *
 * Config values are read by path from the tree PARITY_DUMP_FORMAT.md
 * describes (the keyword arguments the official builder passes, nested by
 * argument name); an absent key takes the default of the official
 * constructor. Every shape (hidden widths included) comes from the config,
 * so a checkpoint that disagrees is named key by key before any compute.
 */
#include "core/models/sam3/sam3_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/axial_rope.h"
#include "core/runtime/statedict.h"
#include "core/text/clip_tokenizer.h"

/* ---- config by path -------------------------------------------------------- */

const cJSON *samc_json_path(const cJSON *root, const char *path)
{
    const cJSON *cur = root;
    const char *p = path;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        const size_t n = dot ? (size_t)(dot - p) : strlen(p);
        char key[128];
        if (n == 0 || n >= sizeof key)
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        if (cJSON_IsArray(cur)) {
            char *end;
            const long i = strtol(key, &end, 10);
            cur = (*end || i < 0) ? NULL : cJSON_GetArrayItem(cur, (int)i);
        } else {
            cur = cJSON_GetObjectItemCaseSensitive(cur, key);
        }
        p = dot ? dot + 1 : p + n;
    }
    return cur;
}

/* ---- the walk ------------------------------------------------------------- */

/* One walk over the config and the state_dict (core/runtime/statedict.h):
 * config problems fail at once (nothing can be described without them);
 * weight problems are collected by the walk and judged by samc_sd_finish. */
typedef struct bctx {
    const cJSON *cfg;
    samc_sd *sd;
    samc_error *err;
    samc_status st;
} bctx;

static bool ok(const bctx *b)
{
    return b->st == SAMC_OK;
}

static void fail(bctx *b, samc_status st, const char *fmt, ...) SAMC_PRINTF(3, 4);
static void fail(bctx *b, samc_status st, const char *fmt, ...)
{
    if (!ok(b))
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->st = samc_fail(b->err, st, "%s", msg);
}

/* A number at `path` (absent or null: def). Booleans read as 0/1. */
static double cfg_num(bctx *b, const char *path, double def)
{
    const cJSON *v = samc_json_path(b->cfg, path);
    if (!v || cJSON_IsNull(v))
        return def;
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? 1.0 : 0.0;
    if (!cJSON_IsNumber(v)) {
        fail(b, SAMC_ERR_FORMAT, "config: '%s' is not a number", path);
        return def;
    }
    return v->valuedouble;
}

static int cfg_int(bctx *b, const char *path, int def)
{
    const double v = cfg_num(b, path, def);
    if (v != floor(v) || fabs(v) > 1e9) {
        fail(b, SAMC_ERR_FORMAT, "config: '%s' is not an integer", path);
        return def;
    }
    return (int)v;
}

static bool cfg_bool(bctx *b, const char *path, bool def)
{
    return cfg_num(b, path, def ? 1.0 : 0.0) != 0.0;
}

static bool cfg_present(bctx *b, const char *path)
{
    const cJSON *v = samc_json_path(b->cfg, path);
    return v && !cJSON_IsNull(v);
}

/* A string at `path`, or def. */
static const char *cfg_str(bctx *b, const char *path, const char *def)
{
    const cJSON *v = samc_json_path(b->cfg, path);
    if (!v || cJSON_IsNull(v))
        return def;
    if (!cJSON_IsString(v)) {
        fail(b, SAMC_ERR_FORMAT, "config: '%s' is not a string", path);
        return def;
    }
    return v->valuestring;
}

/* ---- weights: every key through the statedict walk ------------------------------ */

/* The data of `key` with `nd` dims of the given sizes (NULL when missing,
 * mis-shaped or describing: the walk records which). */
static const float *tens_a(bctx *b, const char *key, const int64_t *want, int nd)
{
    return samc_sd_tensor(b->sd, nd, want, "%s", key);
}
#define tens(b, key, nd, ...) tens_a((b), (key), (const int64_t[]){__VA_ARGS__}, (nd))

static const char *K(char *buf, size_t n, const char *fmt, ...) SAMC_PRINTF(3, 4);
static const char *K(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return buf;
}
#define KEY(...) K(kb, sizeof kb, __VA_ARGS__)

static void linear(bctx *b, samc_linear *l, const char *prefix, int in, int out, bool bias)
{
    samc_sd_linear(b->sd, l, prefix, in, out, bias);
}

static void norm(bctx *b, samc_norm *n, const char *prefix, int dim, float eps)
{
    samc_sd_norm(b->sd, n, prefix, dim, eps);
}

static void conv(bctx *b, samc_conv2d *c, const char *prefix, int cin, int cout, int k, int stride,
                 int pad, bool bias)
{
    samc_sd_conv(b->sd, c, prefix, cin, cout, k, stride, pad, 1, bias);
}

static void conv_t(bctx *b, samc_conv_t2d *c, const char *prefix, int cin, int cout)
{
    samc_sd_conv_t(b->sd, c, prefix, cin, cout, 2);
}

/* nn.MultiheadAttention: in_proj_weight (3d, d) as three row views. */
static void mha(bctx *b, samc_attention *a, const char *prefix, int d, int heads)
{
    char kb[256];
    if (heads < 1 || d % heads) {
        fail(b, SAMC_ERR_FORMAT, "config: %d heads do not divide %d channels (%s)", heads, d, prefix);
        return;
    }
    memset(a, 0, sizeof *a);
    const float *w = tens(b, KEY("%s.in_proj_weight", prefix), 2, (int64_t)3 * d, (int64_t)d);
    const float *bb = tens(b, KEY("%s.in_proj_bias", prefix), 1, (int64_t)3 * d);
    const int64_t dd = (int64_t)d * d;
    a->q = (samc_linear){.w = w, .b = bb, .in = d, .out = d};
    a->k = (samc_linear){.w = w ? w + dd : NULL, .b = bb ? bb + d : NULL, .in = d, .out = d};
    a->v = (samc_linear){.w = w ? w + 2 * dd : NULL, .b = bb ? bb + 2 * d : NULL, .in = d, .out = d};
    linear(b, &a->out, KEY("%s.out_proj", prefix), d, d, true);
    a->heads = heads, a->internal_dim = d;
}

/* model_misc.MLP at prefix.layers.{0..n-1}, ReLU between. */
static void mlp(bctx *b, samc_mlp *m, const char *prefix, int n, int in, int hidden, int out)
{
    if (n < 1 || n > SAMC_MLP_MAX_LAYERS) {
        fail(b, SAMC_ERR_UNSUPPORTED, "%s: %d MLP layers", prefix, n);
        return;
    }
    samc_sd_mlp(b->sd, m, prefix, in, hidden, out, n, false);
}

/* ---- sections --------------------------------------------------------------- */

static bool in_list(bctx *b, const char *path, int v)
{
    const cJSON *a = samc_json_path(b->cfg, path);
    const cJSON *e;
    cJSON_ArrayForEach(e, a) if (cJSON_IsNumber(e) && (int)e->valuedouble == v) return true;
    return false;
}

static void bind_trunk(bctx *b, samc_sam3_model *m)
{
    const char *T = "backbone.visual.trunk", *P = "backbone.vision_backbone.trunk";
    char kb[256], cp[256];
#define CFG(name) K(cp, sizeof cp, "%s.%s", T, name)
    if (!cfg_present(b, T)) {
        fail(b, SAMC_ERR_FORMAT, "config: no '%s'", T);
        return;
    }
    const int img = cfg_int(b, CFG("img_size"), 1024), patch = cfg_int(b, CFG("patch_size"), 16);
    const int C = cfg_int(b, CFG("embed_dim"), 768), depth = cfg_int(b, CFG("depth"), 12);
    const int heads = cfg_int(b, CFG("num_heads"), 12), window = cfg_int(b, CFG("window_size"), 14);
    const int pt_img = cfg_int(b, CFG("pretrain_img_size"), 224);
    const int rope_pt = cfg_int(b, CFG("rope_pt_size"), 0);
    const bool use_rope = cfg_bool(b, CFG("use_rope"), false), interp = cfg_bool(b, CFG("use_interp_rope"), false);
    if (!ok(b))
        return;
    if (cfg_bool(b, CFG("retain_cls_token"), true) || cfg_bool(b, CFG("ln_post"), false) ||
        cfg_bool(b, CFG("return_interm_layers"), false) ||
        cJSON_GetArraySize(samc_json_path(b->cfg, CFG("rel_pos_blocks"))) > 0 ||
        cJSON_IsTrue(samc_json_path(b->cfg, CFG("rel_pos_blocks"))) || cfg_present(b, CFG("init_values")))
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s uses retain_cls_token, ln_post, "
                                      "return_interm_layers, rel_pos_blocks or LayerScale", T);
    if (img < patch || patch < 1 || depth < 1 || depth > SAMC_SAM3_MAX_BLOCKS || heads < 1 ||
        C % heads)
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s: img_size %d, patch %d, depth %d, heads %d", T,
             img, patch, depth, heads);
    if (!ok(b))
        return;
    m->resolution = img, m->grid = img / patch;
    samc_sam3_vit_embed *e = &m->vit_embed;
    const int in_chans = cfg_int(b, CFG("in_chans"), 3);
    const bool patch_bias = cfg_bool(b, CFG("bias_patch_embed"), true);
    conv(b, &e->patch, K(kb, sizeof kb, "%s.patch_embed.proj", P), in_chans, C, patch, patch, 0,
         patch_bias);
    e->pos_has_cls = cfg_bool(b, CFG("pretrain_use_cls_token"), true);
    e->pos_tile = cfg_bool(b, CFG("tile_abs_pos"), true);
    if (cfg_bool(b, CFG("use_abs_pos"), true)) {
        const int g = pt_img / patch;
        e->pos_embed = tens(b, K(kb, sizeof kb, "%s.pos_embed", P), 3, 1,
                            (int64_t)g * g + (e->pos_has_cls ? 1 : 0), (int64_t)C);
        e->pos_grid = g;
    }
    e->has_ln_pre = cfg_bool(b, CFG("ln_pre"), false);
    if (e->has_ln_pre)
        norm(b, &e->ln_pre, K(kb, sizeof kb, "%s.ln_pre", P), C, 1e-5f);
    const bool qkv_bias = cfg_bool(b, CFG("qkv_bias"), true);
    m->n_blocks = depth, m->last_block = -1;
    for (int i = 0; i < depth && ok(b); i++) {
        samc_sam3_vit_block *blk = &m->blocks[i];
        char pre[160];
        snprintf(pre, sizeof pre, "%s.blocks.%d", P, i);
        const bool global = in_list(b, CFG("global_att_blocks"), i);
        blk->dim = C, blk->heads = heads, blk->window = global ? 0 : window;
        norm(b, &blk->norm1, KEY("%s.norm1", pre), C, 1e-5f);
        norm(b, &blk->norm2, KEY("%s.norm2", pre), C, 1e-5f);
        linear(b, &blk->qkv, KEY("%s.attn.qkv", pre), C, 3 * C, qkv_bias);
        linear(b, &blk->proj, KEY("%s.attn.proj", pre), C, C, true);
        const int hidden = (int)(C * cfg_num(b, CFG("mlp_ratio"), 4.0)); /* int(dim * mlp_ratio) */
        linear(b, &blk->fc1, KEY("%s.mlp.fc1", pre), C, hidden, true);
        linear(b, &blk->fc2, KEY("%s.mlp.fc2", pre), hidden, C, true);
        if (!use_rope || !ok(b))
            continue;
        /* Attention._setup_rope_freqs: input_size = grid (global) or window;
         * rope_pt_size = (window, window) unless given; scale = pt / input. */
        const int side = global ? m->grid : window, hd = C / heads;
        const int pt = rope_pt > 0 ? rope_pt : window;
        const float scale = interp ? (float)((double)pt / (double)side) : 1.0f;
        blk->rope_tokens = side * side;
        /* a buffer: described (and checked) when the store holds it */
        const char *fkey = KEY("%s%s.attn.freqs_cis", b->sd->base, pre);
        if (!b->sd->w || samc_weights_find(b->sd->w, fkey)) {
            blk->freqs_cis = tens(b, KEY("%s.attn.freqs_cis", pre), 3, (int64_t)side * side, (int64_t)hd / 2, 2);
        } else if (ok(b)) { /* not in the store (e.g. a converted checkpoint): compute it */
            float *t = malloc((size_t)side * side * hd * sizeof *t);
            if (!t) {
                fail(b, SAMC_ERR_NOMEM, "RoPE table of %s", pre);
                continue;
            }
            m->owned[m->n_owned++] = t;
            samc_status st = samc_axial_rope_cis(hd, side, side,
                                                 (float)cfg_num(b, CFG("rope_theta"), 10000.0),
                                                 scale, 0, t);
            if (st)
                fail(b, st, "RoPE table of %s: head dim %d", pre, hd);
            blk->freqs_cis = t;
        }
    }
    /* ViT.forward returns the output of block full_attn_ids[-1]: the last
     * entry of global_att_blocks as listed (blocks after it run unused) */
    const cJSON *ga = samc_json_path(b->cfg, CFG("global_att_blocks"));
    const cJSON *last = ga ? cJSON_GetArrayItem(ga, cJSON_GetArraySize(ga) - 1) : NULL;
    if (last && cJSON_IsNumber(last) && last->valuedouble >= 0 && last->valuedouble < depth)
        m->last_block = (int)last->valuedouble;
    if (ok(b) && m->last_block < 0)
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s has no usable global_att_blocks", T);
#undef CFG
}

/* The branches of Sam3DualViTDetNeck at weight prefix P (convs or sam2_convs). */
static void bind_neck_levels(bctx *b, samc_sam3_neck *nk, const char *P, int C)
{
    const char *N = "backbone.visual";
    char kb[256], cp[256];
    const int d = cfg_int(b, K(cp, sizeof cp, "%s.d_model", N), 256);
    const cJSON *sf = samc_json_path(b->cfg, K(cp, sizeof cp, "%s.scale_factors", N));
    const int n = sf ? cJSON_GetArraySize(sf) : 4;
    if (n < 1 || n > SAMC_SAM3_NECK_MAX) {
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s.scale_factors has %d entries", N, n);
        return;
    }
    nk->n_levels = n, nk->d_model = d;
    nk->scalp = cfg_int(b, "backbone.scalp", 0);
    for (int i = 0; i < n && ok(b); i++) {
        samc_sam3_neck_level *l = &nk->levels[i];
        const double defs[4] = {4.0, 2.0, 1.0, 0.5};
        const cJSON *v = sf ? cJSON_GetArrayItem(sf, i) : NULL;
        if (sf && !cJSON_IsNumber(v)) {
            fail(b, SAMC_ERR_FORMAT, "config: %s.scale_factors.%d is not a number", N, i);
            return;
        }
        l->scale = (float)(v ? v->valuedouble : defs[i]);
        int cin = C;
        if (l->scale == 4.0f) {
            conv_t(b, &l->dconv0, KEY("%s.%d.dconv_2x2_0", P, i), C, C / 2);
            conv_t(b, &l->dconv1, KEY("%s.%d.dconv_2x2_1", P, i), C / 2, C / 4);
            cin = l->dconv1.cout;
        } else if (l->scale == 2.0f) {
            conv_t(b, &l->dconv0, KEY("%s.%d.dconv_2x2", P, i), C, C / 2);
            cin = l->dconv0.cout;
        } else if (l->scale != 1.0f && l->scale != 0.5f) {
            fail(b, SAMC_ERR_UNSUPPORTED, "config: scale factor %g", (double)l->scale);
        }
        conv(b, &l->conv_1x1, KEY("%s.%d.conv_1x1", P, i), cin, d, 1, 1, 0, true);
        conv(b, &l->conv_3x3, KEY("%s.%d.conv_3x3", P, i), d, d, 3, 1, 1, true);
    }
    const char *pe = "backbone.visual.position_encoding";
    nk->pe.num_pos_feats = cfg_int(b, K(cp, sizeof cp, "%s.num_pos_feats", pe), d);
    nk->pe.temperature = (float)cfg_num(b, K(cp, sizeof cp, "%s.temperature", pe), 10000);
    nk->pe.normalize = cfg_bool(b, K(cp, sizeof cp, "%s.normalize", pe), true);
    nk->pe.scale = (float)cfg_num(b, K(cp, sizeof cp, "%s.scale", pe), 2.0 * M_PI);
}

static void bind_neck(bctx *b, samc_sam3_model *m)
{
    const int C = m->vit_embed.patch.cout;
    bind_neck_levels(b, &m->neck, "backbone.vision_backbone.convs", C);
    /* add_sam2_neck: a deep copy with its own weights (the tracker's neck) */
    m->has_sam2_neck = cfg_bool(b, "backbone.visual.add_sam2_neck", false);
    if (m->has_sam2_neck)
        bind_neck_levels(b, &m->sam2_neck, "backbone.vision_backbone.sam2_convs", C);
}

static void bind_text(bctx *b, samc_sam3_model *m)
{
    const char *T = "backbone.text", *P = "backbone.language_backbone";
    char kb[256], cp[256];
    if (!cfg_present(b, T))
        return; /* no language backbone */
#define CFG(name) K(cp, sizeof cp, "%s.%s", T, name)
    samc_sam3_text_encoder *t = &m->text;
    const int d = cfg_int(b, CFG("d_model"), 256);
    t->width = cfg_int(b, CFG("width"), 1024), t->heads = cfg_int(b, CFG("heads"), 16);
    t->n_layers = cfg_int(b, CFG("layers"), 24), t->context_length = cfg_int(b, CFG("context_length"), 32);
    t->vocab = cfg_int(b, CFG("vocab_size"), 49408), t->has_ln_final = cfg_bool(b, CFG("use_ln_post"), true);
    t->causal = true; /* VETextEncoder builds TextTransformer with the default no_causal_mask False */
#undef CFG
    if (!ok(b))
        return;
    if (t->n_layers < 1 || t->n_layers > SAMC_SAM3_TEXT_MAX_LAYERS || t->heads < 1 || t->width % t->heads) {
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s: %d layers, width %d, %d heads", T, t->n_layers,
             t->width, t->heads);
        return;
    }
    const int W = t->width;
    t->proj_dim = 512; /* VETextEncoder leaves TextTransformer's output_dim at its default */
    t->token_embedding = tens(b, KEY("%s.encoder.token_embedding.weight", P), 2, (int64_t)t->vocab, (int64_t)W);
    t->positional_embedding = tens(b, KEY("%s.encoder.positional_embedding", P), 2, (int64_t)t->context_length,
                                   (int64_t)W);
    t->text_projection = tens(b, KEY("%s.encoder.text_projection", P), 2, (int64_t)W, (int64_t)t->proj_dim);
    const int mlp_w = (int)(W * 4.0); /* ResidualAttentionBlock: int(d_model * mlp_ratio), ratio 4.0 */
    for (int i = 0; i < t->n_layers && ok(b); i++) {
        samc_sam3_text_block *blk = &t->layers[i];
        char pre[160];
        snprintf(pre, sizeof pre, "%s.encoder.transformer.resblocks.%d", P, i);
        blk->width = W, blk->heads = t->heads;
        norm(b, &blk->ln_1, KEY("%s.ln_1", pre), W, 1e-5f);
        norm(b, &blk->ln_2, KEY("%s.ln_2", pre), W, 1e-5f);
        mha(b, &blk->attn, KEY("%s.attn", pre), W, t->heads);
        linear(b, &blk->c_fc, KEY("%s.mlp.c_fc", pre), W, mlp_w, true);
        linear(b, &blk->c_proj, KEY("%s.mlp.c_proj", pre), mlp_w, W, true);
    }
    if (t->has_ln_final)
        norm(b, &t->ln_final, KEY("%s.encoder.ln_final", P), W, 1e-5f);
    linear(b, &t->resizer, KEY("%s.resizer", P), W, d, true);
}

/* A TransformerEncoderLayer config at `cfgp`, weights at `pre`. */
static void enc_layer(bctx *b, samc_sam3_enc_layer *l, const char *cfgp, const char *pre, int d)
{
    char kb[256], cp[256];
#define CFG(name) K(cp, sizeof cp, "%s.%s", cfgp, name)
    if (!cfg_bool(b, CFG("pre_norm"), false) || strcmp(cfg_str(b, CFG("activation"), "relu"), "relu"))
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s: only pre_norm layers with ReLU are implemented", cfgp);
    l->d_model = d;
    l->heads = cfg_int(b, CFG("self_attention.num_heads"), 8);
    const int ch = cfg_int(b, CFG("cross_attention.num_heads"), 8);
    const bool bf = cfg_bool(b, CFG("self_attention.batch_first"), false);
    if (bf != cfg_bool(b, CFG("cross_attention.batch_first"), false))
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s: self and cross attention differ in batch_first", cfgp);
    l->batch_first = bf;
    l->pos_at_attn = cfg_bool(b, CFG("pos_enc_at_attn"), false);
    l->pos_at_cross_queries = cfg_bool(b, CFG("pos_enc_at_cross_attn_queries"), false);
    l->pos_at_cross_keys = cfg_bool(b, CFG("pos_enc_at_cross_attn_keys"), false);
    const int ff = cfg_int(b, CFG("dim_feedforward"), 2048);
#undef CFG
    mha(b, &l->self_attn, KEY("%s.self_attn", pre), d, l->heads);
    mha(b, &l->cross_attn, KEY("%s.cross_attn_image", pre), d, ch);
    linear(b, &l->linear1, KEY("%s.linear1", pre), d, ff, true);
    linear(b, &l->linear2, KEY("%s.linear2", pre), ff, d, true);
    norm(b, &l->norm1, KEY("%s.norm1", pre), d, 1e-5f);
    norm(b, &l->norm2, KEY("%s.norm2", pre), d, 1e-5f);
    norm(b, &l->norm3, KEY("%s.norm3", pre), d, 1e-5f);
}

static void bind_geo(bctx *b, samc_sam3_model *m)
{
    const char *G = "input_geometry_encoder", *P = "geometry_encoder";
    char kb[256], cp[256];
    if (!cfg_present(b, G))
        return;
#define CFG(name) K(cp, sizeof cp, "%s.%s", G, name)
    samc_sam3_geometry_encoder *g = &m->geo;
    const int d = g->d_model = cfg_int(b, CFG("d_model"), 256);
    g->roi_size = cfg_int(b, CFG("roi_size"), 7);
    if (cfg_bool(b, CFG("encode_boxes_as_points"), false) || cfg_present(b, CFG("mask_encoder")))
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s: boxes encoded as points or a mask encoder", G);
    g->label_embed = tens(b, KEY("%s.label_embed.weight", P), 2, 2, (int64_t)d);
    if (cfg_bool(b, CFG("add_cls"), true))
        g->cls_embed = tens(b, KEY("%s.cls_embed.weight", P), 2, 1, (int64_t)d);
    if (cfg_bool(b, CFG("points_direct_project"), false))
        linear(b, &g->points_direct, KEY("%s.points_direct_project", P), 2, d, true);
    if (cfg_bool(b, CFG("points_pool"), false))
        linear(b, &g->points_pool, KEY("%s.points_pool_project", P), d, d, true);
    if (cfg_bool(b, CFG("points_pos_enc"), false))
        linear(b, &g->points_pos, KEY("%s.points_pos_enc_project", P), d, d, true);
    if (cfg_bool(b, CFG("boxes_direct_project"), false))
        linear(b, &g->boxes_direct, KEY("%s.boxes_direct_project", P), 4, d, true);
    if (cfg_bool(b, CFG("boxes_pool"), false))
        conv(b, &g->boxes_pool, KEY("%s.boxes_pool_project", P), d, d, g->roi_size, 1, 0, true);
    if (cfg_bool(b, CFG("boxes_pos_enc"), false))
        linear(b, &g->boxes_pos, KEY("%s.boxes_pos_enc_project", P), d + 2, d, true);
    g->has_final_proj = cfg_bool(b, CFG("add_post_encode_proj"), true);
    if (g->has_final_proj) {
        linear(b, &g->final_proj, KEY("%s.final_proj", P), d, d, true);
        norm(b, &g->norm, KEY("%s.norm", P), d, 1e-5f);
    }
    /* LayerNorm when either pooling projection is built (from the config: a
     * describe-only walk binds no data) */
    g->has_img_pre_norm = cfg_bool(b, CFG("points_pool"), false) || cfg_bool(b, CFG("boxes_pool"), false);
    if (g->has_img_pre_norm)
        norm(b, &g->img_pre_norm, KEY("%s.img_pre_norm", P), d, 1e-5f);
    g->pe.num_pos_feats = cfg_int(b, CFG("pos_enc.num_pos_feats"), d);
    g->pe.temperature = (float)cfg_num(b, CFG("pos_enc.temperature"), 10000);
    g->pe.normalize = cfg_bool(b, CFG("pos_enc.normalize"), true);
    g->pe.scale = (float)cfg_num(b, CFG("pos_enc.scale"), 2.0 * M_PI);
    g->n_layers = cfg_int(b, CFG("num_layers"), 0);
    if (g->n_layers < 0 || g->n_layers > SAMC_SAM3_MAX_ENC_LAYERS)
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s.num_layers %d", G, g->n_layers);
    for (int i = 0; i < g->n_layers && ok(b); i++) {
        char pre[160];
        snprintf(pre, sizeof pre, "%s.encode.%d", P, i);
        enc_layer(b, &g->layers[i], CFG("layer"), pre, d);
    }
    if (g->n_layers > 0)
        norm(b, &g->encode_norm, KEY("%s.encode_norm", P), d, 1e-5f);
#undef CFG
}

static void bind_transformer(bctx *b, samc_sam3_model *m)
{
    const char *E = "transformer.encoder", *D = "transformer.decoder";
    char kb[256], cp[256];
    const int d = cfg_int(b, "transformer.d_model", 256);
    /* fusion encoder */
    samc_sam3_fusion_encoder *enc = &m->enc;
    enc->d_model = d, enc->n_layers = cfg_int(b, K(cp, sizeof cp, "%s.num_layers", E), 6);
    if (cfg_bool(b, K(cp, sizeof cp, "%s.add_pooled_text_to_img_feat", E), true) ||
        cfg_int(b, K(cp, sizeof cp, "%s.num_feature_levels", E), 1) != 1 || enc->n_layers < 0 ||
        enc->n_layers > SAMC_SAM3_MAX_ENC_LAYERS)
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s: pooled text addition, several feature levels "
                                      "or %d layers", E, enc->n_layers);
    for (int i = 0; i < enc->n_layers && ok(b); i++) {
        char pre[160], lc[160];
        snprintf(pre, sizeof pre, "%s.layers.%d", E, i);
        snprintf(lc, sizeof lc, "%s.layer", E);
        enc_layer(b, &enc->layers[i], lc, pre, d);
    }
    /* decoder */
#define CFG(name) K(cp, sizeof cp, "%s.%s", D, name)
    samc_sam3_decoder *dec = &m->dec;
    dec->d_model = d;
    dec->n_layers = cfg_int(b, CFG("num_layers"), 6);
    dec->num_queries = cfg_int(b, CFG("num_queries"), 200);
    const int heads = cfg_int(b, CFG("layer.n_heads"), 8);
    const int ch = cfg_int(b, CFG("layer.cross_attention.num_heads"), 8);
    dec->heads = ch; /* boxRPB: nheads = layers[0].cross_attn.num_heads */
    if (dec->n_layers < 1 || dec->n_layers > SAMC_SAM3_MAX_ENC_LAYERS ||
        strcmp(cfg_str(b, CFG("layer.activation"), "relu"), "relu") ||
        !cfg_bool(b, CFG("box_refine"), false) || !cfg_bool(b, CFG("return_intermediate"), false) ||
        cfg_present(b, CFG("interaction_layer")) || cfg_bool(b, CFG("instance_query"), false) ||
        cfg_int(b, CFG("num_o2m_queries"), 0) != 0)
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s: needs box_refine, return_intermediate, ReLU, "
                                      "no interaction layer / instance query / o2m queries", D);
    const char *rpb = cfg_str(b, CFG("boxRPB"), "none");
    dec->boxrpb = !strcmp(rpb, "log") ? SAMC_SAM3_RPB_LOG
                  : !strcmp(rpb, "linear") ? SAMC_SAM3_RPB_LINEAR
                  : !strcmp(rpb, "both") ? SAMC_SAM3_RPB_BOTH : SAMC_SAM3_RPB_NONE;
    dec->normed_output_consistently = cfg_bool(b, CFG("use_normed_output_consistently"), true);
    dec->has_presence = cfg_bool(b, CFG("presence_token"), false);
    const bool text_ca = cfg_bool(b, CFG("layer.use_text_cross_attention"), false);
    const int ff = cfg_int(b, CFG("layer.dim_feedforward"), 2048);
#undef CFG
    for (int i = 0; i < dec->n_layers && ok(b); i++) {
        samc_sam3_dec_layer *l = &dec->layers[i];
        char pre[160];
        snprintf(pre, sizeof pre, "%s.layers.%d", D, i);
        l->d_model = d, l->heads = ch, l->use_text_cross_attention = text_ca;
        mha(b, &l->self_attn, KEY("%s.self_attn", pre), d, heads);
        if (text_ca) {
            mha(b, &l->ca_text, KEY("%s.ca_text", pre), d, heads);
            norm(b, &l->catext_norm, KEY("%s.catext_norm", pre), d, 1e-5f);
        }
        mha(b, &l->cross_attn, KEY("%s.cross_attn", pre), d, ch);
        norm(b, &l->norm1, KEY("%s.norm1", pre), d, 1e-5f);
        norm(b, &l->norm2, KEY("%s.norm2", pre), d, 1e-5f);
        norm(b, &l->norm3, KEY("%s.norm3", pre), d, 1e-5f);
        linear(b, &l->linear1, KEY("%s.linear1", pre), d, ff, true);
        linear(b, &l->linear2, KEY("%s.linear2", pre), ff, d, true);
    }
    norm(b, &dec->norm, KEY("%s.norm", D), d, 1e-5f);
    mlp(b, &dec->bbox_embed, KEY("%s.bbox_embed", D), 3, d, d, 4);
    dec->query_embed = tens(b, KEY("%s.query_embed.weight", D), 2, (int64_t)dec->num_queries, (int64_t)d);
    dec->reference_points = tens(b, KEY("%s.reference_points.weight", D), 2, (int64_t)dec->num_queries, 4);
    if (dec->boxrpb != SAMC_SAM3_RPB_NONE) {
        const int n_in = dec->boxrpb == SAMC_SAM3_RPB_BOTH ? 4 : 2;
        mlp(b, &dec->boxrpb_x, KEY("%s.boxRPB_embed_x", D), 2, n_in, d, ch);
        mlp(b, &dec->boxrpb_y, KEY("%s.boxRPB_embed_y", D), 2, n_in, d, ch);
    }
    if (dec->has_presence) {
        dec->presence_token = tens(b, KEY("%s.presence_token.weight", D), 2, 1, (int64_t)d);
        mlp(b, &dec->presence_head, KEY("%s.presence_token_head", D), 3, d, d, 1);
        norm(b, &dec->presence_out_norm, KEY("%s.presence_token_out_norm", D), d, 1e-5f);
    }
    mlp(b, &dec->ref_point_head, KEY("%s.ref_point_head", D), 2, 2 * d, d, d);
}

static void bind_heads(bctx *b, samc_sam3_model *m)
{
    char kb[256], cp[256];
    /* dot_prod_scoring */
    const char *S = "dot_prod_scoring";
#define CFG(name) K(cp, sizeof cp, "%s.%s", S, name)
    samc_sam3_scoring *s = &m->scoring;
    const int d = s->d_model = cfg_int(b, CFG("d_model"), 256);
    s->d_proj = cfg_int(b, CFG("d_proj"), 256);
    s->clamp = cfg_bool(b, CFG("clamp_logits"), true);
    s->clamp_max = (float)cfg_num(b, CFG("clamp_max_val"), 12.0);
    s->has_prompt_mlp = cfg_present(b, CFG("prompt_mlp"));
    if (s->has_prompt_mlp) {
        mlp(b, &s->prompt_mlp, KEY("%s.prompt_mlp", S), cfg_int(b, CFG("prompt_mlp.num_layers"), 2), d,
            cfg_int(b, CFG("prompt_mlp.hidden_dim"), d), d);
        s->prompt_mlp_residual = cfg_bool(b, CFG("prompt_mlp.residual"), false);
        s->has_prompt_mlp_norm = cfg_present(b, CFG("prompt_mlp.out_norm"));
        if (s->has_prompt_mlp_norm)
            norm(b, &s->prompt_mlp_norm, KEY("%s.prompt_mlp.out_norm", S), d,
                 (float)cfg_num(b, CFG("prompt_mlp.out_norm.eps"), 1e-5));
    }
    linear(b, &s->prompt_proj, KEY("%s.prompt_proj", S), d, s->d_proj, true);
    linear(b, &s->hs_proj, KEY("%s.hs_proj", S), d, s->d_proj, true);
#undef CFG
    /* segmentation_head */
    const char *H = "segmentation_head";
#define CFG(name) K(cp, sizeof cp, "%s.%s", H, name)
    m->has_seg = cfg_present(b, H);
    if (!m->has_seg)
        return;
    samc_sam3_seg_head *g = &m->seg;
    const int hd = g->d_model = cfg_int(b, CFG("hidden_dim"), 256);
    if (cfg_bool(b, CFG("no_dec"), false) || cfg_bool(b, CFG("aux_masks"), false) ||
        cfg_bool(b, CFG("presence_head"), false))
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s: no_dec, aux_masks or presence_head", H);
    g->has_cross_attend = cfg_present(b, CFG("cross_attend_prompt"));
    if (g->has_cross_attend) {
        mha(b, &g->cross_attend_prompt, KEY("%s.cross_attend_prompt", H), hd,
            cfg_int(b, CFG("cross_attend_prompt.num_heads"), 8));
        norm(b, &g->cross_attn_norm, KEY("%s.cross_attn_norm", H), hd, 1e-5f);
    }
    g->shared_conv = cfg_bool(b, CFG("pixel_decoder.shared_conv"), false);
    g->interp_nearest = !strcmp(cfg_str(b, CFG("pixel_decoder.interpolation_mode"), "nearest"), "nearest");
    g->n_convs = g->shared_conv ? 1 : cfg_int(b, CFG("pixel_decoder.num_upsampling_stages"), 3);
    if (g->n_convs < 1 || g->n_convs > SAMC_SAM3_PIXDEC_MAX)
        fail(b, SAMC_ERR_UNSUPPORTED, "config: %s: %d pixel decoder convs", H, g->n_convs);
    for (int i = 0; i < g->n_convs && ok(b); i++) {
        conv(b, &g->convs[i], KEY("%s.pixel_decoder.conv_layers.%d", H, i), hd, hd, 3, 1, 1, true);
        const float *w = tens(b, KEY("%s.pixel_decoder.norms.%d.weight", H, i), 1, (int64_t)hd);
        const float *bb = tens(b, KEY("%s.pixel_decoder.norms.%d.bias", H, i), 1, (int64_t)hd);
        g->norms[i] = (samc_group_norm){w, bb, hd, 8, 1e-5f};
        if (ok(b) && hd % 8)
            fail(b, SAMC_ERR_UNSUPPORTED, "GroupNorm(8, %d): channels not divisible by 8", hd);
    }
    conv(b, &g->instance_seg_head, KEY("%s.instance_seg_head", H), hd, hd, 1, 1, 0, true);
    conv(b, &g->semantic_seg_head, KEY("%s.semantic_seg_head", H), hd, 1, 1, 1, 0, true);
    mlp(b, &g->mask_embed, KEY("%s.mask_predictor.mask_embed", H), 3, hd, hd, hd);
#undef CFG
}

/* The whole image model: config sections and their keys, in the order of
 * the official module tree. */
static void describe(bctx *b, samc_sam3_model *m)
{
    if (!b->cfg || !cJSON_IsObject(b->cfg))
        fail(b, SAMC_ERR_FORMAT, "config: not a JSON object");
    if (ok(b) && (cfg_bool(b, "supervise_joint_box_scores", false) || cfg_bool(b, "use_instance_query", false)))
        fail(b, SAMC_ERR_UNSUPPORTED, "config: supervise_joint_box_scores or use_instance_query (training options) "
                                      "are not implemented");
    if (ok(b))
        bind_trunk(b, m);
    if (ok(b))
        bind_neck(b, m);
    if (ok(b))
        bind_text(b, m);
    if (ok(b))
        bind_geo(b, m);
    if (ok(b))
        bind_transformer(b, m);
    if (ok(b))
        bind_heads(b, m);
}

/* One walk over `w` (NULL: describe only); the config problems first, then
 * the walk's verdict (strict key/shape check). */
static samc_status walk(samc_sam3_model *m, const cJSON *cfg, const samc_weights *w, const char *base,
                        const char *what, samc_param_list *params, samc_key_list *keys, samc_error *err)
{
    samc_sd sd;
    samc_sd_begin(&sd, w, base, params);
    bctx b = {cfg, &sd, err, SAMC_OK};
    describe(&b, m);
    samc_status st = b.st ? b.st : samc_sd_finish(&sd, what, err);
    if (!st && keys)
        *keys = sd.keys, memset(&sd.keys, 0, sizeof sd.keys);
    samc_sd_free(&sd);
    return st;
}

static void free_owned(samc_sam3_model *m)
{
    for (int i = 0; i < m->n_owned; i++)
        free(m->owned[i]);
    m->n_owned = 0;
}

samc_status samc_sam3_expected_keys(const cJSON *cfg, const char *base, samc_key_list *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    samc_sam3_model *m = calloc(1, sizeof *m);
    if (!m)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    samc_status st = walk(m, cfg, NULL, base, "sam3", NULL, out, err);
    free_owned(m);
    free(m);
    return st;
}

samc_status samc_sam3_model_init(samc_sam3_model **out, samc_weights *w, const cJSON *cfg, const char *base,
                                 const char *what, samc_error *err)
{
    *out = NULL;
    samc_sam3_model *m = calloc(1, sizeof *m);
    if (!m) {
        samc_weights_free(w);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    samc_model_base_init(&m->base);
    m->base.weights = w;
    samc_status st = walk(m, cfg, w, base, what, &m->base.params, NULL, err);
    if (st) {
        samc_sam3_model_free(m);
        return st;
    }
    *out = m;
    return SAMC_OK;
}

samc_status samc_sam3_model_set_vocab(samc_sam3_model *m, const void *gz, size_t n, const char *path,
                                      samc_error *err)
{
    samc_clip_tokenizer *tok = NULL;
    samc_status st = gz ? samc_clip_tokenizer_load_gz_mem(gz, n, &tok, err) : samc_clip_tokenizer_load(path, &tok, err);
    if (st)
        return st;
    samc_clip_tokenizer_free(m->tok);
    m->tok = tok;
    return SAMC_OK;
}

void samc_sam3_model_free(samc_sam3_model *m)
{
    if (!m)
        return;
    samc_clip_tokenizer_free(m->tok);
    free_owned(m);
    samc_model_base_free(&m->base);
    free(m);
}
