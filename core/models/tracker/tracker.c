/* SPDX-License-Identifier: Apache-2.0 */
/* tracker.c - the tracker part itself (SAM2Base's own modules and
 * parameters, sam2/modeling/sam2_base.py): obj_ptr_proj, obj_ptr_tpos_proj,
 * mask_downsample, the temporal and no-memory embeddings, and the features
 * the SAM heads read. Rows relative to the tracker's root ("" in SAM 2,
 * "tracker" in SAM 3), weights, forwards, isolated runners and op-test
 * inputs. */
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/memory.h"
#include "core/models/tracker/sam_heads.h"
#include "core/nn/nn_ops.h"
#include "core/nn/nn_rows.h"

enum { OBJ_PTR_PROJ, OBJ_PTR_TPOS_PROJ, MASK_DOWNSAMPLE, NO_MEM_EMBED, MASK_FOR_MEMORY, NO_OBJ_EMBED, N_ROWS };

static int has_obj_ptr_proj(const void *self) { return ((const samc_tracker_model *)self)->has_obj_ptr_proj; }
static int has_tpos_proj(const void *self) { return ((const samc_tracker_model *)self)->has_obj_ptr_tpos_proj; }
static int has_no_mem_embed(const void *self)
{
    return ((const samc_tracker_model *)self)->cfg.directly_add_no_mem_embed;
}
static int has_no_obj_embed(const void *self) { return ((const samc_tracker_model *)self)->no_obj_embed_spatial != NULL; }
static int sam3_traced(const void *self) { return ((const samc_tracker_model *)self)->cfg.sam3.traced; }

static samc_isolated_body iso_obj_ptr_proj, iso_obj_ptr_tpos_proj, iso_mask_downsample, iso_mask_for_memory;
static samc_status ex_mask_for_memory(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_obj_ptr_proj(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_obj_ptr_tpos_proj(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status ex_mask_downsample(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def rows[N_ROWS] = {
    [OBJ_PTR_PROJ] = {.pattern = "obj_ptr_proj", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, mlp),
                      .parity = true, .count = has_obj_ptr_proj, .isolated = iso_obj_ptr_proj,
                      .example = ex_obj_ptr_proj},
    [OBJ_PTR_TPOS_PROJ] = {.pattern = "obj_ptr_tpos_proj", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, mlp),
                           .parity_if = sam3_traced, .count = has_tpos_proj, .isolated = iso_obj_ptr_tpos_proj,
                           .example = ex_obj_ptr_tpos_proj},
    [MASK_DOWNSAMPLE] = {.pattern = "mask_downsample", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, conv2d),
                         .parity_if = sam3_traced, .count = has_obj_ptr_proj, .isolated = iso_mask_downsample,
                         .example = ex_mask_downsample},
    /* _prepare_backbone_features / set_image: vision features + no_mem_embed */
    [NO_MEM_EMBED] = {.pattern = "@no_mem_embed", .table = SAMC_OPS_NN, .body = SAMC_BODY(samc_nn_ops, add_channel),
                      .count = has_no_mem_embed, .isolated = samc_nn_run_add_channel,
                      .example = samc_nn_example_add_channel},
    /* _encode_new_memory: the mask the memory encoder reads, then
     * + (1 - is_obj_appearing) * no_obj_embed_spatial on its output */
    [MASK_FOR_MEMORY] = {.pattern = "@mask_for_memory", .table = SAMC_OPS_TRACKER,
                         .body = SAMC_BODY(samc_tracker_ops, mask_for_memory), .isolated = iso_mask_for_memory,
                         .example = ex_mask_for_memory},
    [NO_OBJ_EMBED] = {.pattern = "@no_obj_embed_spatial", .table = SAMC_OPS_NN,
                      .body = SAMC_BODY(samc_nn_ops, add_channel), .count = has_no_obj_embed,
                      .isolated = samc_nn_run_add_channel, .example = samc_nn_example_add_channel},
};
const samc_part_def samc_tracker_part = {"SAM2Base", rows, N_ROWS, describe};

static const char *const slot0[] = {"0"};

/* ---- weights ---------------------------------------------------------------- */

/* SAM2Base's own parameters. */
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    (void)err;
    samc_tracker_model *tr = self;
    const samc_tracker_config *c = cfg;
    const int D = c->d_model, mem = samc_tracker_mem_dim(c);
    tr->emb = samc_tracker_emb(c), tr->mem_dim = mem;
    tr->maskmem_tpos_enc = samc_sd_tensor(sd, 4, (const int64_t[]){c->num_maskmem, 1, 1, mem}, "maskmem_tpos_enc");
    tr->has_obj_ptr_proj = c->use_obj_ptrs_in_encoder;
    if (c->use_obj_ptrs_in_encoder) {
        samc_sd_conv(sd, &tr->mask_downsample, "mask_downsample", 1, 1, 4, 4, 0, 1, true);
        if (c->use_mlp_for_obj_ptr_proj) {
            samc_sd_mlp(sd, &tr->obj_ptr_proj, "obj_ptr_proj", D, D, D, 3, false);
        } else {
            tr->obj_ptr_proj = (samc_mlp){.num_layers = 1};
            samc_sd_linear(sd, &tr->obj_ptr_proj.layers[0], "obj_ptr_proj", D, D, true);
        }
    }
    tr->has_obj_ptr_tpos_proj = c->proj_tpos_enc_in_obj_ptrs;
    if (c->proj_tpos_enc_in_obj_ptrs) {
        tr->obj_ptr_tpos_proj = (samc_mlp){.num_layers = 1};
        samc_sd_linear(sd, &tr->obj_ptr_tpos_proj.layers[0], "obj_ptr_tpos_proj", D, mem, true);
    }
    tr->no_obj_ptr = c->pred_obj_scores && c->use_obj_ptrs_in_encoder
                         ? samc_sd_tensor(sd, 2, (const int64_t[]){1, D}, "no_obj_ptr") : NULL;
    tr->no_obj_embed_spatial = c->no_obj_embed_spatial
                                   ? samc_sd_tensor(sd, 2, (const int64_t[]){1, mem}, "no_obj_embed_spatial") : NULL;
    tr->no_mem_embed = samc_sd_tensor(sd, 3, (const int64_t[]){1, 1, D}, "no_mem_embed");
    samc_sd_tensor(sd, 3, (const int64_t[]){1, 1, D}, "no_mem_pos_enc"); /* unused at inference */
    return SAMC_OK;
}

/* ---- forwards ------------------------------------------------------------------ */

static samc_status mlp_layer(samc_exec *x, const samc_tracker_model *tr, int row, const samc_scope *sc,
                             const samc_mlp *mlp, const samc_tensor *in, samc_tensor *out, samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, tr, &rows[row], 0);
    const samc_nn_ops *nn = L->ops;
    int64_t shape[SAMC_MAX_DIMS]; /* the input's leading dimensions, the last one the MLP's output */
    memcpy(shape, in->shape, sizeof shape);
    shape[in->ndim - 1] = mlp->layers[mlp->num_layers - 1].out;
    samc_status st = samc_tensor_alloc(out, in->ndim, shape, err);
    const samc_tensor *outs[] = {out};
    if (!st)
        st = samc_layer_done(x, L, sc, nn->mlp(samc_layer_ctx(x, L), mlp, in, out), err, 1, slot0, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

samc_status samc_tracker_obj_ptr_proj(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                      const samc_tensor *tokens, samc_tensor *out, samc_error *err)
{
    if (!tr->has_obj_ptr_proj)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "this config has no obj_ptr_proj (use_obj_ptrs_in_encoder false)");
    return mlp_layer(x, tr, OBJ_PTR_PROJ, sc, &tr->obj_ptr_proj, tokens, out, err);
}

samc_status samc_tracker_obj_ptr_tpos_proj(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                           const samc_tensor *pe, samc_tensor *out, samc_error *err)
{
    return mlp_layer(x, tr, OBJ_PTR_TPOS_PROJ, sc, &tr->obj_ptr_tpos_proj, pe, out, err);
}

samc_status samc_tracker_mask_downsample(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                         const samc_tensor *mask, samc_tensor *out, samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, tr, &rows[MASK_DOWNSAMPLE], 0);
    const samc_nn_ops *nn = L->ops;
    const samc_conv2d *c = &tr->mask_downsample;
    samc_status st = samc_tensor_allocv(out, err, 4, mask->shape[0], (int64_t)1, mask->shape[2] / c->stride,
                                        mask->shape[3] / c->stride);
    const samc_tensor *outs[] = {out};
    if (!st)
        st = samc_layer_done(x, L, sc, nn->conv2d(samc_layer_ctx(x, L), c, mask, out), err, 1, slot0, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

samc_status samc_tracker_features(samc_exec *x, const samc_tracker_model *tr, const samc_scope *sc,
                                  const samc_tensor *levels, const samc_tensor *pos, int n_levels,
                                  samc_frame_features *f, samc_error *err)
{
    const int K = n_levels;
    samc_status st;
    if (tr->cfg.use_high_res_features_in_sam) {
        if (K < 3)
            return samc_fail(err, SAMC_ERR_UNSUPPORTED, "high-res features need 3 levels after scalp, have %d", K);
        if ((st = samc_mask_decoder_high_res(x, &tr->mask_decoder, sc, 0, &levels[0], &f->feat_s0, err)) ||
            (st = samc_mask_decoder_high_res(x, &tr->mask_decoder, sc, 1, &levels[1], &f->feat_s1, err)))
            return st;
    }
    const samc_tensor *top = &levels[K - 1];
    if (top->shape[2] != tr->emb || top->shape[3] != tr->emb)
        return samc_fail(err, SAMC_ERR_SHAPE, "image embedding is %lldx%lld, expected %dx%d", (long long)top->shape[2],
                         (long long)top->shape[3], tr->emb, tr->emb);
    if ((st = samc_tensor_copy(&f->vision_features, top, err)) ||
        (st = samc_tensor_copy(&f->vision_pos, &pos[K - 1], err)))
        return st;
    if (!tr->cfg.directly_add_no_mem_embed)
        return samc_tensor_copy(&f->image_embed, top, err);
    const samc_layer *L = samc_part_layer(x, tr, &rows[NO_MEM_EMBED], 0);
    if ((st = samc_tensor_alloc(&f->image_embed, top->ndim, top->shape, err)))
        return st;
    return samc_layer_done(x, L, NULL,
                           ((const samc_nn_ops *)L->ops)->add_channel(samc_layer_ctx(x, L), top, tr->no_mem_embed,
                                                                      1.0f, &f->image_embed),
                           err, 0, NULL, NULL);
}

bool samc_tracker_features_served_by(const samc_exec *x, const samc_tracker_model *tr, const samc_impl *impl)
{
    if (tr->cfg.directly_add_no_mem_embed && samc_part_layer(x, tr, &rows[NO_MEM_EMBED], 0)->asked != impl)
        return false;
    for (int level = 0; tr->cfg.use_high_res_features_in_sam && level < 2; level++)
        if (samc_mask_decoder_high_res_layer(x, &tr->mask_decoder, level)->asked != impl)
            return false;
    return true;
}

void samc_tracker_feature_records(const samc_tracker_model *tr, samc_tracker_feature_spec *spec)
{
    const bool hr = tr->cfg.use_high_res_features_in_sam;
    *spec = (samc_tracker_feature_spec){.conv_s0 = hr ? &tr->mask_decoder.conv_s0 : NULL,
                                        .conv_s1 = hr ? &tr->mask_decoder.conv_s1 : NULL,
                                        .no_mem_embed = tr->cfg.directly_add_no_mem_embed ? tr->no_mem_embed : NULL,
                                        .emb = tr->emb};
}

samc_status samc_tracker_mask_for_memory(samc_exec *x, const samc_tracker_model *tr, samc_tensor *mask, bool binarize,
                                         samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, tr, &rows[MASK_FOR_MEMORY], 0);
    const samc_tracker_ops *ops = L->ops;
    return samc_layer_done(x, L, NULL,
                           ops->mask_for_memory(samc_layer_ctx(x, L), mask, binarize,
                                                (float)tr->cfg.sigmoid_scale_for_mem_enc,
                                                (float)tr->cfg.sigmoid_bias_for_mem_enc, mask),
                           err, 0, NULL, NULL);
}

samc_status samc_tracker_no_obj_embed(samc_exec *x, const samc_tracker_model *tr, samc_tensor *maskmem, float absent,
                                      samc_error *err)
{
    const samc_layer *L = samc_part_layer(x, tr, &rows[NO_OBJ_EMBED], 0);
    return samc_layer_done(x, L, NULL,
                           ((const samc_nn_ops *)L->ops)->add_channel(samc_layer_ctx(x, L), maskmem,
                                                                      tr->no_obj_embed_spatial, absent, maskmem),
                           err, 0, NULL, NULL);
}

void samc_frame_features_release(samc_frame_features *f)
{
    samc_tensor_release(&f->image_embed);
    samc_tensor_release(&f->feat_s0);
    samc_tensor_release(&f->feat_s1);
    samc_tensor_release(&f->vision_features);
    samc_tensor_release(&f->vision_pos);
    if (f->dev_release)
        f->dev_release(f->dev);
    f->dev = NULL, f->dev_release = NULL;
}

/* ---- isolated runners ------------------------------------------------------- */

static samc_status iso_obj_ptr_proj(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                    samc_error *err)
{
    samc_tensor a = {0};
    samc_status st = samc_io_tensor(in, "input", "0", &a, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st)
        st = samc_tracker_obj_ptr_proj(x, L->self, &samc_no_scope, &a, y, err);
    samc_tensor_release(&a);
    return st;
}

static samc_status iso_obj_ptr_tpos_proj(samc_exec *x, const samc_layer *L, const samc_layer_io *in,
                                         samc_layer_out *out, samc_error *err)
{
    samc_tensor a = {0};
    samc_status st = samc_io_tensor(in, "0", NULL, &a, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st)
        st = samc_tracker_obj_ptr_tpos_proj(x, L->self, &samc_no_scope, &a, y, err);
    samc_tensor_release(&a);
    return st;
}

static samc_status iso_mask_downsample(samc_exec *x, const samc_layer *L, const samc_layer_io *in,
                                       samc_layer_out *out, samc_error *err)
{
    samc_tensor a = {0};
    samc_status st = samc_io_tensor(in, "0", NULL, &a, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st)
        st = samc_tracker_mask_downsample(x, L->self, &samc_no_scope, &a, y, err);
    samc_tensor_release(&a);
    return st;
}

static samc_status iso_mask_for_memory(samc_exec *x, const samc_layer *L, const samc_layer_io *in,
                                       samc_layer_out *out, samc_error *err)
{
    samc_tensor *y = samc_layer_out_slot(out, "0");
    samc_status st = samc_io_tensor(in, "x", "0", y, err);
    if (!st)
        st = samc_tracker_mask_for_memory(x, L->self, y, samc_io_scalar_or(in, "binarize", NULL, 0) != 0, err);
    return st;
}

/* ---- op-test inputs ------------------------------------------------------------ */

static samc_status ex_obj_ptr_proj(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                   samc_error *err)
{
    (void)index, (void)full;
    const samc_tracker_model *tr = self;
    return samc_inputs_random(in, "input", seed, -2, 2, err, 2, (int64_t)1, (int64_t)tr->cfg.d_model)
               ? SAMC_OK : SAMC_ERR_NOMEM;
}

static samc_status ex_obj_ptr_tpos_proj(const void *self, int index, uint64_t seed, bool full,
                                        samc_layer_inputs *in, samc_error *err)
{
    (void)index, (void)full;
    const samc_tracker_model *tr = self;
    return samc_inputs_random(in, "0", seed, -1, 1, err, 2, (int64_t)15, (int64_t)tr->cfg.d_model)
               ? SAMC_OK : SAMC_ERR_NOMEM;
}

static samc_status ex_mask_downsample(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                      samc_error *err)
{
    (void)index;
    const int64_t S = full ? ((const samc_tracker_model *)self)->cfg.image_size : 256;
    return samc_inputs_random(in, "0", seed, 0, 1, err, 4, (int64_t)1, (int64_t)1, S, S) ? SAMC_OK : SAMC_ERR_NOMEM;
}

static samc_status ex_mask_for_memory(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                      samc_error *err)
{
    (void)index;
    const int64_t S = full ? ((const samc_tracker_model *)self)->cfg.image_size : 256;
    SAMC_INPUT_RANDOM("x", -10, 10, 4, (int64_t)1, (int64_t)1, S, S);
    return samc_inputs_scalar(in, "binarize", 0, err);
}
