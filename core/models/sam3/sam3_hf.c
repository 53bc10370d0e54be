/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_hf.c - SAM 3 checkpoints in the transformers format (the hub's
 * model.safetensors of Sam3Model): the key map of transformers' converter
 * (src/transformers/models/sam3/convert_sam3_to_hf.py), ported rule for rule:
 * ORIGINAL_TO_CONVERTED_KEY_MAPPING's regular expressions in their order,
 * each re.sub anchored at the start of the key ("\d" written [0-9]), applied
 * to the detector's own names (build_sam3_image_model's loader strips
 * "detector."). The store keeps the file's names; lookups by official name
 * go through this map (samc_weights_set_naming), so the strict key and shape
 * walk names keys as the file does. What the converter does besides
 * renaming is undone here: split_qkv's q_proj / k_proj / v_proj (torch.chunk
 * of the fused attn.qkv and in_proj_* along dim 0) concatenated back, the cls
 * row it strips from pos_embed put back (zeros: the ViT drops that row,
 * get_abs_pos), text_projection transposed back. The RoPE tables
 * (rotary_emb.rope_embeddings) that the transformers model does not keep are
 * computed by the vision backbone when absent. */
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_hf.h"

/* ORIGINAL_TO_CONVERTED_KEY_MAPPING, in its order: pattern, replacement. */
static const char *const MAP[][2] = {
    {"^sam3_model\\.", ""},
    {"^backbone\\.vision_backbone\\.trunk\\.", "vision_encoder.backbone."},
    {"^vision_encoder\\.backbone\\.pos_embed", "vision_encoder.backbone.embeddings.position_embeddings"},
    {"^vision_encoder\\.backbone\\.patch_embed\\.proj\\.", "vision_encoder.backbone.embeddings.patch_embeddings.projection."},
    {"^vision_encoder\\.backbone\\.ln_pre\\.", "vision_encoder.backbone.layer_norm."},
    {"^vision_encoder\\.backbone\\.blocks\\.([0-9]+)\\.norm1\\.", "vision_encoder.backbone.layers.\\1.layer_norm1."},
    {"^vision_encoder\\.backbone\\.blocks\\.([0-9]+)\\.norm2\\.", "vision_encoder.backbone.layers.\\1.layer_norm2."},
    {"^vision_encoder\\.backbone\\.blocks\\.([0-9]+)\\.attn\\.qkv\\.", "vision_encoder.backbone.layers.\\1.attention.qkv."},
    {"^vision_encoder\\.backbone\\.blocks\\.([0-9]+)\\.attn\\.proj\\.", "vision_encoder.backbone.layers.\\1.attention.o_proj."},
    {"^vision_encoder\\.backbone\\.blocks\\.([0-9]+)\\.attn\\.freqs_cis", "vision_encoder.backbone.layers.\\1.rotary_emb.rope_embeddings"},
    {"^vision_encoder\\.backbone\\.blocks\\.([0-9]+)\\.mlp\\.fc1\\.", "vision_encoder.backbone.layers.\\1.mlp.fc1."},
    {"^vision_encoder\\.backbone\\.blocks\\.([0-9]+)\\.mlp\\.fc2\\.", "vision_encoder.backbone.layers.\\1.mlp.fc2."},
    {"^backbone\\.vision_backbone\\.neck\\.fpn\\.([0-9]+)\\.", "vision_encoder.neck.fpn_layers.\\1."},
    {"^backbone\\.vision_backbone\\.convs\\.([0-9]+)\\.dconv_2x2_0\\.", "vision_encoder.neck.fpn_layers.\\1.scale_layers.0."},
    {"^backbone\\.vision_backbone\\.convs\\.([0-9]+)\\.dconv_2x2_1\\.", "vision_encoder.neck.fpn_layers.\\1.scale_layers.2."},
    {"^backbone\\.vision_backbone\\.convs\\.([0-9]+)\\.dconv_2x2\\.", "vision_encoder.neck.fpn_layers.\\1.scale_layers.0."},
    {"^backbone\\.vision_backbone\\.convs\\.([0-9]+)\\.maxpool_2x2\\.", "vision_encoder.neck.fpn_layers.\\1.scale_layers.0."},
    {"^backbone\\.vision_backbone\\.convs\\.([0-9]+)\\.conv_1x1\\.", "vision_encoder.neck.fpn_layers.\\1.proj1."},
    {"^backbone\\.vision_backbone\\.convs\\.([0-9]+)\\.conv_3x3\\.", "vision_encoder.neck.fpn_layers.\\1.proj2."},
    {"^backbone\\.language_backbone\\.encoder\\.", "text_encoder."},
    {"^text_encoder\\.token_embedding\\.", "text_encoder.text_model.embeddings.token_embedding."},
    {"^text_encoder\\.positional_embedding", "text_encoder.text_model.embeddings.position_embedding.weight"},
    {"^text_encoder\\.ln_final\\.", "text_encoder.text_model.final_layer_norm."},
    {"^text_encoder\\.text_projection", "text_encoder.text_projection.weight"},
    {"^text_encoder\\.transformer\\.resblocks\\.([0-9]+)\\.attn\\.in_proj_", "text_encoder.text_model.encoder.layers.\\1.self_attn.in_proj_"},
    {"^text_encoder\\.transformer\\.resblocks\\.([0-9]+)\\.attn\\.out_proj\\.", "text_encoder.text_model.encoder.layers.\\1.self_attn.out_proj."},
    {"^text_encoder\\.transformer\\.resblocks\\.([0-9]+)\\.ln_1\\.", "text_encoder.text_model.encoder.layers.\\1.layer_norm1."},
    {"^text_encoder\\.transformer\\.resblocks\\.([0-9]+)\\.ln_2\\.", "text_encoder.text_model.encoder.layers.\\1.layer_norm2."},
    {"^text_encoder\\.transformer\\.resblocks\\.([0-9]+)\\.mlp\\.c_fc\\.", "text_encoder.text_model.encoder.layers.\\1.mlp.fc1."},
    {"^text_encoder\\.transformer\\.resblocks\\.([0-9]+)\\.mlp\\.c_proj\\.", "text_encoder.text_model.encoder.layers.\\1.mlp.fc2."},
    {"^backbone\\.language_backbone\\.resizer\\.", "text_projection."},
    {"^geometry_encoder\\.encode\\.([0-9]+)\\.cross_attn_image\\.out_proj\\.", "geometry_encoder.layers.\\1.cross_attn.o_proj."},
    {"^geometry_encoder\\.encode\\.([0-9]+)\\.cross_attn_image\\.", "geometry_encoder.layers.\\1.cross_attn."},
    {"^geometry_encoder\\.encode\\.([0-9]+)\\.self_attn\\.out_proj\\.", "geometry_encoder.layers.\\1.self_attn.o_proj."},
    {"^geometry_encoder\\.encode\\.([0-9]+)\\.self_attn\\.", "geometry_encoder.layers.\\1.self_attn."},
    {"^geometry_encoder\\.encode\\.([0-9]+)\\.linear1\\.", "geometry_encoder.layers.\\1.mlp.fc1."},
    {"^geometry_encoder\\.encode\\.([0-9]+)\\.linear2\\.", "geometry_encoder.layers.\\1.mlp.fc2."},
    {"^geometry_encoder\\.encode\\.([0-9]+)\\.norm1\\.", "geometry_encoder.layers.\\1.layer_norm1."},
    {"^geometry_encoder\\.encode\\.([0-9]+)\\.norm2\\.", "geometry_encoder.layers.\\1.layer_norm2."},
    {"^geometry_encoder\\.encode\\.([0-9]+)\\.norm3\\.", "geometry_encoder.layers.\\1.layer_norm3."},
    {"^geometry_encoder\\.img_pre_norm\\.", "geometry_encoder.vision_layer_norm."},
    {"^geometry_encoder\\.norm\\.", "geometry_encoder.prompt_layer_norm."},
    {"^geometry_encoder\\.encode_norm\\.", "geometry_encoder.output_layer_norm."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.cross_attn_image\\.out_proj\\.", "detr_encoder.layers.\\1.cross_attn.o_proj."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.cross_attn_image\\.", "detr_encoder.layers.\\1.cross_attn."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.self_attn\\.out_proj\\.", "detr_encoder.layers.\\1.self_attn.o_proj."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.self_attn\\.", "detr_encoder.layers.\\1.self_attn."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.cross_attn\\.out_proj\\.", "detr_encoder.layers.\\1.cross_attn.o_proj."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.cross_attn\\.", "detr_encoder.layers.\\1.cross_attn."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.linear1\\.", "detr_encoder.layers.\\1.mlp.fc1."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.linear2\\.", "detr_encoder.layers.\\1.mlp.fc2."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.norm1\\.", "detr_encoder.layers.\\1.layer_norm1."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.norm2\\.", "detr_encoder.layers.\\1.layer_norm2."},
    {"^transformer\\.encoder\\.layers\\.([0-9]+)\\.norm3\\.", "detr_encoder.layers.\\1.layer_norm3."},
    {"^transformer\\.decoder\\.query_embed\\.", "detr_decoder.query_embed."},
    {"^transformer\\.decoder\\.reference_points\\.", "detr_decoder.reference_points."},
    {"^transformer\\.decoder\\.instance_query_embed\\.", "detr_decoder.instance_query_embed."},
    {"^transformer\\.decoder\\.instance_reference_points\\.", "detr_decoder.instance_reference_points."},
    {"^transformer\\.decoder\\.presence_token\\.", "detr_decoder.presence_token."},
    {"^transformer\\.decoder\\.presence_token_head\\.layers\\.0\\.", "detr_decoder.presence_head.layer1."},
    {"^transformer\\.decoder\\.presence_token_head\\.layers\\.1\\.", "detr_decoder.presence_head.layer2."},
    {"^transformer\\.decoder\\.presence_token_head\\.layers\\.2\\.", "detr_decoder.presence_head.layer3."},
    {"^transformer\\.decoder\\.presence_token_out_norm\\.", "detr_decoder.presence_layer_norm."},
    {"^transformer\\.decoder\\.norm\\.", "detr_decoder.output_layer_norm."},
    {"^transformer\\.decoder\\.bbox_embed\\.layers\\.0\\.", "detr_decoder.box_head.layer1."},
    {"^transformer\\.decoder\\.bbox_embed\\.layers\\.1\\.", "detr_decoder.box_head.layer2."},
    {"^transformer\\.decoder\\.bbox_embed\\.layers\\.2\\.", "detr_decoder.box_head.layer3."},
    {"^transformer\\.decoder\\.instance_bbox_embed\\.layers\\.0\\.", "detr_decoder.instance_box_head.layer1."},
    {"^transformer\\.decoder\\.instance_bbox_embed\\.layers\\.1\\.", "detr_decoder.instance_box_head.layer2."},
    {"^transformer\\.decoder\\.instance_bbox_embed\\.layers\\.2\\.", "detr_decoder.instance_box_head.layer3."},
    {"^transformer\\.decoder\\.ref_point_head\\.layers\\.0\\.", "detr_decoder.ref_point_head.layer1."},
    {"^transformer\\.decoder\\.ref_point_head\\.layers\\.1\\.", "detr_decoder.ref_point_head.layer2."},
    {"^transformer\\.decoder\\.boxRPB_embed_x\\.layers\\.0\\.", "detr_decoder.box_rpb_embed_x.layer1."},
    {"^transformer\\.decoder\\.boxRPB_embed_x\\.layers\\.1\\.", "detr_decoder.box_rpb_embed_x.layer2."},
    {"^transformer\\.decoder\\.boxRPB_embed_y\\.layers\\.0\\.", "detr_decoder.box_rpb_embed_y.layer1."},
    {"^transformer\\.decoder\\.boxRPB_embed_y\\.layers\\.1\\.", "detr_decoder.box_rpb_embed_y.layer2."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.self_attn\\.out_proj\\.", "detr_decoder.layers.\\1.self_attn.o_proj."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.self_attn\\.", "detr_decoder.layers.\\1.self_attn."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.ca_text\\.out_proj\\.", "detr_decoder.layers.\\1.text_cross_attn.o_proj."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.ca_text\\.", "detr_decoder.layers.\\1.text_cross_attn."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.cross_attn\\.out_proj\\.", "detr_decoder.layers.\\1.vision_cross_attn.o_proj."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.cross_attn\\.", "detr_decoder.layers.\\1.vision_cross_attn."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.linear1\\.", "detr_decoder.layers.\\1.mlp.fc1."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.linear2\\.", "detr_decoder.layers.\\1.mlp.fc2."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.norm1\\.", "detr_decoder.layers.\\1.vision_cross_attn_layer_norm."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.catext_norm\\.", "detr_decoder.layers.\\1.text_cross_attn_layer_norm."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.norm2\\.", "detr_decoder.layers.\\1.self_attn_layer_norm."},
    {"^transformer\\.decoder\\.layers\\.([0-9]+)\\.norm3\\.", "detr_decoder.layers.\\1.mlp_layer_norm."},
    {"^dot_prod_scoring\\.prompt_mlp\\.layers\\.0\\.", "dot_product_scoring.text_mlp.layer1."},
    {"^dot_prod_scoring\\.prompt_mlp\\.layers\\.1\\.", "dot_product_scoring.text_mlp.layer2."},
    {"^dot_prod_scoring\\.prompt_mlp\\.out_norm\\.", "dot_product_scoring.text_mlp_out_norm."},
    {"^dot_prod_scoring\\.prompt_proj\\.", "dot_product_scoring.text_proj."},
    {"^dot_prod_scoring\\.hs_proj\\.", "dot_product_scoring.query_proj."},
    {"^segmentation_head\\.pixel_decoder\\.conv_layers\\.([0-9]+)\\.", "mask_decoder.pixel_decoder.conv_layers.\\1."},
    {"^segmentation_head\\.pixel_decoder\\.norms\\.([0-9]+)\\.", "mask_decoder.pixel_decoder.norms.\\1."},
    {"^segmentation_head\\.mask_embed\\.layers\\.([0-9]+)\\.", "mask_decoder.mask_embedder.layers.\\1."},
    {"^segmentation_head\\.mask_predictor\\.mask_embed\\.layers\\.([0-9]+)\\.", "mask_decoder.mask_embedder.layers.\\1."},
    {"^segmentation_head\\.instance_seg_head\\.", "mask_decoder.instance_projection."},
    {"^segmentation_head\\.semantic_seg_head\\.", "mask_decoder.semantic_projection."},
    {"^segmentation_head\\.cross_attend_prompt\\.out_proj\\.", "mask_decoder.prompt_cross_attn.o_proj."},
    {"^segmentation_head\\.cross_attend_prompt\\.", "mask_decoder.prompt_cross_attn."},
    {"^segmentation_head\\.cross_attn_norm\\.", "mask_decoder.prompt_cross_attn_norm."},
};
enum { N_MAP = sizeof MAP / sizeof MAP[0] };
static regex_t compiled[N_MAP];
static int compile_failed;
static pthread_once_t compile_once = PTHREAD_ONCE_INIT;

static void compile_patterns(void)
{
    for (int i = 0; i < N_MAP; i++)
        compile_failed |= regcomp(&compiled[i], MAP[i][0], REG_EXTENDED) != 0;
}

/* re.sub(pattern, replacement, key) for a pattern anchored at the start:
 * the match replaced, "\1" standing for group 1. */
static void sub_one(int i, char *k, size_t n)
{
    regmatch_t m[2];
    if (regexec(&compiled[i], k, 2, m, 0))
        return;
    char out[512];
    size_t o = 0;
    for (const char *r = MAP[i][1]; *r && o + 1 < sizeof out; r++) {
        if (r[0] == '\\' && r[1] == '1' && m[1].rm_so >= 0) {
            for (regoff_t j = m[1].rm_so; j < m[1].rm_eo && o + 1 < sizeof out; j++)
                out[o++] = k[j];
            r++;
        } else {
            out[o++] = *r;
        }
    }
    snprintf(out + o, sizeof out - o, "%s", k + m[0].rm_eo);
    snprintf(k, n, "%s", out);
}

void samc_sam3_hf_key(const char *official, char *k, size_t n)
{
    pthread_once(&compile_once, compile_patterns);
    snprintf(k, n, "%s", official);
    for (int i = 0; !compile_failed && i < N_MAP; i++)
        sub_one(i, k, n);
}

#define HF_PATCH "vision_encoder.backbone.embeddings.patch_embeddings.projection.weight"
#define HF_POS "vision_encoder.backbone.embeddings.position_embeddings"
#define HF_TEXT_PROJ "text_encoder.text_projection.weight"

bool samc_sam3_is_hf(const samc_weights *w) { return samc_weights_find_file(w, HF_PATCH) != NULL; }

/* The fused tensor `fused` from `q` and the k, v beside it (the file's
 * names: q with "q_proj" where k and v have "k_proj", "v_proj"), as
 * torch.cat along dim 0 (split_qkv's torch.chunk undone). */
static samc_status fuse(samc_weights *w, const char *q, const char *fused, samc_error *err)
{
    const char *src = samc_weights_source(w);
    char names[3][512];
    const char *at = strstr(q, "q_proj");
    const samc_tensor *t[3];
    int64_t rows = 0;
    for (int p = 0; p < 3; p++) {
        snprintf(names[p], sizeof names[p], "%.*s%c_proj%s", (int)(at - q), q, "qkv"[p], at + 6);
        t[p] = samc_weights_find_file(w, names[p]);
        if (!t[p])
            return samc_fail(err, SAMC_ERR_KEY, "%s (transformers names): key '%s' missing (the converter's split_qkv "
                             "writes '%s' as q_proj, k_proj and v_proj)", src, names[p], fused);
        char a[96], b[96];
        if (!samc_shape_equal(t[p]->ndim, t[p]->shape, t[0]->ndim, t[0]->shape))
            return samc_fail(err, SAMC_ERR_SHAPE, "%s (transformers names): key '%s' is %s but '%s' is %s (thirds "
                             "of '%s')", src, names[p], samc_shape_str(t[p]->ndim, t[p]->shape, a, sizeof a), names[0],
                             samc_shape_str(t[0]->ndim, t[0]->shape, b, sizeof b), fused);
        rows += t[p]->shape[0];
    }
    const int64_t third = samc_numel(t[0]);
    float *data = malloc((size_t)(3 * third) * sizeof *data);
    if (!data)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    int64_t shape[SAMC_MAX_DIMS];
    memcpy(shape, t[0]->shape, sizeof shape);
    shape[0] = rows;
    const int ndim = t[0]->ndim;
    for (int p = 0; p < 3; p++) {
        memcpy(data + p * third, samc_weights_find_file(w, names[p])->data, (size_t)third * sizeof *data);
    }
    samc_status st = samc_weights_add(w, fused, ndim, shape, data, err);
    for (int p = 0; !st && p < 3; p++)
        st = samc_weights_remove(w, names[p], err);
    return st;
}

/* Every q_proj the converter split: ".attention.q_proj." (the ViT's
 * attn.qkv), else "q_proj.weight" / "q_proj.bias" (an in_proj_weight /
 * in_proj_bias of nn.MultiheadAttention). */
static samc_status fuse_all(samc_weights *w, samc_error *err)
{
    const size_t n = samc_weights_count(w);
    char **qs = calloc(n ? n : 1, sizeof *qs);
    size_t nq = 0;
    samc_status st = qs ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < n; i++) {
        const char *k = samc_weights_key(w, i);
        const size_t len = strlen(k);
        if (strstr(k, ".attention.q_proj.") || (len >= 13 && !strcmp(k + len - 13, "q_proj.weight")) ||
            (len >= 11 && !strcmp(k + len - 11, "q_proj.bias")))
            if (!(qs[nq++] = strdup(k)))
                st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; !st && i < nq; i++) {
        char fused[512];
        const char *at = strstr(qs[i], ".attention.q_proj.");
        if (at)
            snprintf(fused, sizeof fused, "%.*s.attention.qkv.%s", (int)(at - qs[i]), qs[i], at + 18);
        else
            snprintf(fused, sizeof fused, "%.*sin_proj_%s", (int)(strstr(qs[i], "q_proj.") - qs[i]), qs[i],
                     strstr(qs[i], "q_proj.") + 7);
        st = fuse(w, qs[i], fused, err);
    }
    for (size_t i = 0; qs && i < nq; i++)
        free(qs[i]);
    free(qs);
    return st;
}

/* Replace file key `key` by `data` of `shape` (the store owns data). */
static samc_status replace(samc_weights *w, const char *key, int ndim, const int64_t *shape, float *data,
                           samc_error *err)
{
    samc_status st = samc_weights_remove(w, key, err);
    if (st) {
        free(data);
        return st;
    }
    return samc_weights_add(w, key, ndim, shape, data, err);
}

/* position_embeddings[:, 1:, :] undone: a (zero) cls row first again. */
static samc_status restore_cls_row(samc_weights *w, samc_error *err)
{
    const samc_tensor *t = samc_weights_find_file(w, HF_POS);
    if (!t)
        return SAMC_OK; /* the strict walk names it when the config needs it */
    if (t->ndim != 3 || t->shape[0] != 1) {
        char s[96];
        return samc_fail(err, SAMC_ERR_SHAPE, "%s (transformers names): key '%s' must be (1, N, C), got %s",
                         samc_weights_source(w), HF_POS, samc_shape_str(t->ndim, t->shape, s, sizeof s));
    }
    const int64_t c = t->shape[2], rows = t->shape[1], shape[3] = {1, rows + 1, c};
    float *data = calloc((size_t)((rows + 1) * c), sizeof *data);
    if (!data)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    memcpy(data + c, t->data, (size_t)(rows * c) * sizeof *data);
    return replace(w, HF_POS, 3, shape, data, err);
}

/* text_projection.weight = text_projection.T undone. */
static samc_status untranspose_text_projection(samc_weights *w, samc_error *err)
{
    const samc_tensor *t = samc_weights_find_file(w, HF_TEXT_PROJ);
    if (!t || t->ndim != 2)
        return SAMC_OK; /* absent or of another rank: the strict walk names it */
    const int64_t r = t->shape[0], c = t->shape[1], shape[2] = {c, r};
    float *data = malloc((size_t)(r * c) * sizeof *data);
    if (!data)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++)
            data[j * r + i] = t->data[i * c + j];
    return replace(w, HF_TEXT_PROJ, 2, shape, data, err);
}

samc_status samc_sam3_hf_adapt(samc_weights *w, samc_error *err)
{
    pthread_once(&compile_once, compile_patterns);
    if (compile_failed)
        return samc_fail(err, SAMC_ERR_INTERNAL, "the SAM 3 transformers key patterns did not compile");
    samc_status st = fuse_all(w, err);
    if (!st)
        st = restore_cls_row(w, err);
    if (!st)
        st = untranspose_text_projection(w, err);
    if (!st)
        samc_weights_set_naming(w, samc_sam3_hf_key, "transformers");
    return st;
}
