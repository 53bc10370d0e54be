/* SPDX-License-Identifier: Apache-2.0 */
/* sam2_hf.c - SAM 2 checkpoints in the transformers format (the hub's
 * model.safetensors beside the official .pt): the key map of transformers'
 * converters (src/transformers/models/sam2/convert_sam2_to_hf.py and
 * sam2_video/convert_sam2_video_to_hf.py, `replace_keys`), ported rule for
 * rule: the same ordered substring replacements (Python's str.replace: every
 * occurrence), then the same regular expressions (re.match: anchored at the
 * start) in the same order. The store keeps the file's names; lookups by
 * official name go through this map (samc_weights_set_naming), so config
 * detection, the strict key and shape walk and every message work as for an
 * official file, the messages naming keys as the file does. What the map
 * alone does not cover the converter does after it: the four point
 * embeddings stacked into one (4, D) tensor, and the prompt encoder's
 * positional matrix duplicated as shared_image_embedding's. */
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/sam2_model.h"

/* KEYS_TO_MODIFY_MAPPING, in its order. */
static const char *const REPLACE[][2] = {
    {"iou_prediction_head.layers.0", "iou_prediction_head.proj_in"},
    {"iou_prediction_head.layers.1", "iou_prediction_head.layers.0"},
    {"iou_prediction_head.layers.2", "iou_prediction_head.proj_out"},
    {"mask_decoder.output_upscaling.0", "mask_decoder.upscale_conv1"},
    {"mask_decoder.output_upscaling.1", "mask_decoder.upscale_layer_norm"},
    {"mask_decoder.output_upscaling.3", "mask_decoder.upscale_conv2"},
    {"mask_downscaling.0", "mask_embed.conv1"},
    {"mask_downscaling.1", "mask_embed.layer_norm1"},
    {"mask_downscaling.3", "mask_embed.conv2"},
    {"mask_downscaling.4", "mask_embed.layer_norm2"},
    {"mask_downscaling.6", "mask_embed.conv3"},
    {"dwconv", "depthwise_conv"},
    {"pwconv", "pointwise_conv"},
    {"fuser", "memory_fuser"},
    {"point_embeddings", "point_embed"},
    {"pe_layer.positional_encoding_gaussian_matrix", "shared_embedding.positional_embedding"},
    {"obj_ptr_tpos_proj", "temporal_positional_encoding_projection_layer"},
    {"no_obj_embed_spatial", "occlusion_spatial_embedding_parameter"},
    {"sam_prompt_encoder", "prompt_encoder"},
    {"sam_mask_decoder", "mask_decoder"},
    {"maskmem_tpos_enc", "memory_temporal_positional_encoding"},
    {"gamma", "scale"},
    {"image_encoder.neck", "vision_encoder.neck"},
    {"image_encoder", "vision_encoder.backbone"},
    {"neck.0", "neck.conv1"},
    {"neck.1", "neck.layer_norm1"},
    {"neck.2", "neck.conv2"},
    {"neck.3", "neck.layer_norm2"},
    {"pix_feat_proj", "feature_projection"},
    {"patch_embed.proj", "patch_embed.projection"},
    {"no_mem_embed", "no_memory_embedding"},
    {"no_mem_pos_enc", "no_memory_positional_encoding"},
    {"obj_ptr", "object_pointer"},
    {".norm", ".layer_norm"},
    {"trunk.", ""},
    {"out_proj", "o_proj"},
};

/* The patterns of replace_keys, in its order ("\d" written [0-9], "^" for re.match). */
enum { VISION_MLP, DECODER_MLP, SCORE_HEAD, HYPERNET_MLP, NECK_CONV, MEM_PROJ, OBJ_PTR_PROJ, MASK_DOWNSAMPLER, N_RE };
static const char *const PATTERNS[N_RE] = {
    "^vision_encoder.backbone.blocks.([0-9]+).mlp.layers.([0-9]+).*",
    "^mask_decoder.transformer.layers.([0-9]+).mlp.layers.([0-9]+).*",
    "^mask_decoder.pred_obj_score_head.layers.([0-9]+).*",
    "^.*.output_hypernetworks_mlps.([0-9]+).layers.([0-9]+).*",
    "^vision_encoder.neck.convs.([0-9]+).conv",
    "^memory_encoder.o_proj.*",
    "^object_pointer_proj.layers.([0-9]+).*",
    "^memory_encoder.mask_downsampler.encoder.([0-9]+).*",
};
static regex_t compiled[N_RE];
static int compile_failed;
static pthread_once_t compile_once = PTHREAD_ONCE_INIT;

static void compile_patterns(void)
{
    for (int i = 0; i < N_RE; i++)
        compile_failed |= regcomp(&compiled[i], PATTERNS[i], REG_EXTENDED) != 0;
}

/* Python's s.replace(from, to) in place (every non-overlapping occurrence,
 * left to right); the result is cut to n - 1 bytes. */
static void replace_all(char *s, size_t n, const char *from, const char *to)
{
    const size_t lf = strlen(from), lt = strlen(to);
    char out[512];
    size_t o = 0;
    for (const char *p = s; *p && o + 1 < sizeof out;) {
        if (!strncmp(p, from, lf)) {
            for (size_t k = 0; k < lt && o + 1 < sizeof out; k++)
                out[o++] = to[k];
            p += lf;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    snprintf(s, n, "%s", out);
}

/* Group g of a match as a number (re.match(...).group(g)); -1 if no match. */
static int match_group(int re, const char *key, int g)
{
    regmatch_t m[3];
    if (compile_failed || regexec(&compiled[re], key, 3, m, 0) || m[g].rm_so < 0)
        return -1;
    return atoi(key + m[g].rm_so);
}

static bool matches(int re, const char *key)
{
    return !compile_failed && regexec(&compiled[re], key, 0, NULL, 0) == 0;
}

/* The three-layer MLP rule (score head, hypernetworks, object pointer). */
static void mlp3(char *k, size_t n, int layer)
{
    if (layer == 0)
        replace_all(k, n, "layers.0", "proj_in");
    else if (layer == 1)
        replace_all(k, n, "layers.1", "layers.0");
    else if (layer == 2)
        replace_all(k, n, "layers.2", "proj_out");
}

void samc_sam2_hf_key(const char *official, char *k, size_t n)
{
    pthread_once(&compile_once, compile_patterns);
    snprintf(k, n, "%s", official);
    for (size_t i = 0; i < sizeof REPLACE / sizeof REPLACE[0]; i++)
        if (strstr(k, REPLACE[i][0]))
            replace_all(k, n, REPLACE[i][0], REPLACE[i][1]);
    int l;
    if ((l = match_group(VISION_MLP, k, 2)) == 0)
        replace_all(k, n, "layers.0", "proj_in");
    else if (l == 1)
        replace_all(k, n, "layers.1", "proj_out");
    if ((l = match_group(DECODER_MLP, k, 2)) == 0)
        replace_all(k, n, "mlp.layers.0", "mlp.proj_in");
    else if (l == 1)
        replace_all(k, n, "mlp.layers.1", "mlp.proj_out");
    if ((l = match_group(SCORE_HEAD, k, 1)) >= 0)
        mlp3(k, n, l);
    if ((l = match_group(HYPERNET_MLP, k, 2)) >= 0)
        mlp3(k, n, l);
    if (matches(NECK_CONV, k))
        replace_all(k, n, ".conv.", ".");
    if (matches(MEM_PROJ, k))
        replace_all(k, n, ".o_proj.", ".projection.");
    if ((l = match_group(OBJ_PTR_PROJ, k, 1)) >= 0)
        mlp3(k, n, l);
    if ((l = match_group(MASK_DOWNSAMPLER, k, 1)) >= 0) {
        char from[32], to[48];
        snprintf(from, sizeof from, "encoder.%d", l);
        if (l == 12)
            snprintf(to, sizeof to, "final_conv");
        else if (l % 3 == 0)
            snprintf(to, sizeof to, "layers.%d.conv", l / 3);
        else
            snprintf(to, sizeof to, "layers.%d.layer_norm", l / 3);
        if (l == 12 || l % 3 != 2)
            replace_all(k, n, from, to);
    }
}

#define HF_POINT_EMBED "prompt_encoder.point_embed.weight"
#define HF_PE "prompt_encoder.shared_embedding.positional_embedding"
#define HF_PE_COPY "shared_image_embedding.positional_embedding"

bool samc_sam2_is_hf(const samc_weights *w)
{
    return samc_weights_find_file(w, "vision_encoder.backbone.patch_embed.projection.weight") != NULL ||
           samc_weights_find_file(w, HF_POINT_EMBED) != NULL;
}

/* The converter's torch.cat of the four (1, D) point embeddings, undone:
 * four entries under the map's names for them (copies of the rows). */
static samc_status split_point_embed(samc_weights *w, const char *src, samc_error *err)
{
    const samc_tensor *t = samc_weights_find_file(w, HF_POINT_EMBED);
    if (!t || t->ndim != 2 || t->shape[0] != 4) {
        char s[96] = "absent";
        if (t)
            samc_shape_str(t->ndim, t->shape, s, sizeof s);
        return samc_fail(err, t ? SAMC_ERR_SHAPE : SAMC_ERR_KEY, "%s (transformers names): key '%s' must be the "
                         "four point embeddings stacked, (4, D); got %s", src, HF_POINT_EMBED, s);
    }
    const int64_t d = t->shape[1], shape[2] = {1, d};
    for (int i = 0; i < 4; i++) {
        float *row = malloc((size_t)d * sizeof *row);
        if (!row)
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        t = samc_weights_find_file(w, HF_POINT_EMBED); /* the entries may have moved */
        memcpy(row, t->data + i * d, (size_t)d * sizeof *row);
        char official[64], key[96];
        snprintf(official, sizeof official, "sam_prompt_encoder.point_embeddings.%d.weight", i);
        samc_sam2_hf_key(official, key, sizeof key);
        samc_status st = samc_weights_add(w, key, 2, shape, row, err);
        if (st)
            return st;
    }
    return samc_weights_remove(w, HF_POINT_EMBED, err);
}

/* shared_image_embedding.positional_embedding is the converter's copy of the
 * prompt encoder's matrix: it must equal it, and is dropped. */
static samc_status drop_pe_copy(samc_weights *w, const char *src, samc_error *err)
{
    const samc_tensor *copy = samc_weights_find_file(w, HF_PE_COPY), *pe = samc_weights_find_file(w, HF_PE);
    if (!copy)
        return SAMC_OK;
    if (!pe || !samc_shape_equal(copy->ndim, copy->shape, pe->ndim, pe->shape) ||
        memcmp(copy->data, pe->data, (size_t)samc_numel(pe) * sizeof *pe->data))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s (transformers names): '%s' differs from '%s', of which the "
                         "converter writes it as a copy", src, HF_PE_COPY, HF_PE);
    return samc_weights_remove(w, HF_PE_COPY, err);
}

samc_status samc_sam2_hf_adapt(samc_weights *w, samc_error *err)
{
    const char *src = samc_weights_source(w);
    pthread_once(&compile_once, compile_patterns);
    if (compile_failed)
        return samc_fail(err, SAMC_ERR_INTERNAL, "the transformers key patterns did not compile");
    samc_status st = split_point_embed(w, src, err);
    if (!st)
        st = drop_pe_copy(w, src, err);
    if (!st)
        samc_weights_set_naming(w, samc_sam2_hf_key, "transformers");
    return st;
}

samc_status samc_sam2_open_weights(const char *path, samc_weights **out, samc_error *err)
{
    samc_status st = samc_weights_open(path, out, err);
    if (!st && samc_sam2_is_hf(*out) && (st = samc_sam2_hf_adapt(*out, err))) {
        samc_weights_free(*out);
        *out = NULL;
    }
    return st;
}
