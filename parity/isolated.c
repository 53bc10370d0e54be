/* isolated.c - run every recorded call alone on its recorded inputs, so an
 * error is measured per layer, without accumulation. Composite points
 * (trunk, image_encoder, transformer, mask decoder) run their whole subtree
 * from the recorded inputs of that point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/connected_components.h"
#include "core/error.h"
#include "core/sam2_video.h"
#include "isolated_internal.h"

static samc_status run_preprocess(parity_run *r, int rec, const samc_ops *ops, outputs *o, samc_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "/trace/%06d/in/0", r->recs[rec].index);
    uint8_t *img = NULL;
    int nd;
    int64_t dims[4];
    samc_status st = samc_dump_read_u8(r->dump, path, &img, &nd, dims, err);
    if (!st && (nd != 3 || dims[2] != 3))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: %s must be [H,W,3]", samc_dump_path(r->dump), path);
    const int64_t S = r->model->cfg.image_size;
    samc_tensor *y = out_slot(o, "0");
    if (!st && r->video) /* the video loader: PIL bicubic on uint8 */
        st = samc_video_preprocess_rgb(r->model, img, (int)dims[0], (int)dims[1], y, err);
    else if (!st && !(st = samc_tensor_allocv(y, err, 4, (int64_t)1, (int64_t)3, S, S)))
        st = ops->preprocess(&r->model->ctx, img, (int)dims[0], (int)dims[1], (int)S, y);
    free(img);
    return st;
}

static samc_status run_hiera(parity_run *r, int rec, const samc_ops *ops, int block, outputs *o, samc_error *err)
{
    samc_sam2_model *m = r->model;
    samc_tensor x = {0};
    samc_status st = read_in(r, rec, "x", "0", &x, err);
    samc_tensor *y = out_slot(o, "0");
    if (!st && block < 0) { /* patch embed */
        const int64_t G = x.ndim == 4 ? x.shape[2] / m->cfg.trunk.patch_stride : 0;
        if (!(st = samc_tensor_allocv(y, err, 4, x.shape[0], G, G, (int64_t)m->cfg.trunk.embed_dim)))
            st = ops->patch_embed(&m->ctx, &m->patch_embed, &x, y);
    } else if (!st) {
        const samc_hiera_block *b = &m->blocks[block];
        const int64_t s = b->q_stride ? b->q_stride : 1;
        if (x.ndim != 4 || x.shape[3] != b->dim)
            st = samc_fail(err, SAMC_ERR_SHAPE, "block %d: recorded input is not (B,H,W,%d)", block, b->dim);
        else if (!(st = samc_tensor_allocv(y, err, 4, x.shape[0], x.shape[1] / s, x.shape[2] / s, (int64_t)b->dim_out)))
            st = ops->hiera_block(&m->ctx, b, &x, y);
    }
    samc_tensor_release(&x);
    return st;
}

static samc_status run_neck(parity_run *r, int rec, const samc_ops *ops, outputs *o, samc_error *err)
{
    samc_sam2_model *m = r->model;
    const int L = m->neck.n_levels;
    samc_tensor xs[SAMC_FPN_MAX_LEVELS] = {{0}};
    samc_status st = SAMC_OK;
    char name[16], pos[16];
    for (int i = 0; !st && i < L; i++) {
        snprintf(name, sizeof name, "xs.%d", i), snprintf(pos, sizeof pos, "0.%d", i);
        st = read_in(r, rec, name, pos, &xs[i], err);
    }
    samc_tensor *feat[SAMC_FPN_MAX_LEVELS], *pe[SAMC_FPN_MAX_LEVELS];
    for (int i = 0; !st && i < L; i++) {
        snprintf(name, sizeof name, "0.%d", i), feat[i] = out_slot(o, name);
        st = samc_tensor_allocv(feat[i], err, 4, xs[i].shape[0], (int64_t)m->neck.d_model, xs[i].shape[2], xs[i].shape[3]);
    }
    for (int i = 0; !st && i < L; i++) {
        snprintf(name, sizeof name, "1.%d", i), pe[i] = out_slot(o, name);
        st = samc_tensor_allocv(pe[i], err, 4, xs[i].shape[0], (int64_t)m->neck.d_model, xs[i].shape[2], xs[i].shape[3]);
    }
    if (!st) { /* the op writes contiguous arrays of outputs */
        samc_tensor fo[SAMC_FPN_MAX_LEVELS], po[SAMC_FPN_MAX_LEVELS];
        for (int i = 0; i < L; i++)
            fo[i] = *feat[i], po[i] = *pe[i];
        st = ops->fpn_neck(&m->ctx, &m->neck, xs, fo, po);
    }
    for (int i = 0; i < L; i++)
        samc_tensor_release(&xs[i]);
    return st;
}

static samc_status run_prompt_encoder(parity_run *r, int rec, const samc_ops *ops, outputs *o, samc_error *err)
{
    samc_sam2_model *m = r->model;
    samc_tensor coords = {0}, labels = {0}, boxes = {0}, masks = {0};
    samc_status st = SAMC_OK;
    const bool pts = has_in(r, rec, "points.0") || has_in(r, rec, "0.0");
    if (pts && !(st = read_in(r, rec, "points.0", "0.0", &coords, err)))
        st = read_in(r, rec, "points.1", "0.1", &labels, err);
    if (!st && (has_in(r, rec, "boxes") || has_in(r, rec, "1")))
        st = read_in(r, rec, "boxes", "1", &boxes, err);
    if (!st && (has_in(r, rec, "masks") || has_in(r, rec, "2")))
        st = read_in(r, rec, "masks", "2", &masks, err);
    const int64_t B = pts ? coords.shape[0] : boxes.data ? boxes.shape[0] : masks.data ? masks.shape[0] : 1;
    const int64_t N = pts ? coords.shape[1] : 0, D = m->prompt_encoder.embed_dim;
    int32_t *lab = NULL;
    if (!st && pts && !(lab = malloc((size_t)(B * N) * sizeof *lab)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; lab && i < B * N; i++)
        lab[i] = (int32_t)labels.data[i];
    samc_tensor *sp = out_slot(o, "0"), *de = out_slot(o, "1");
    const int64_t ns = N + (N > 0 && !boxes.data) + (boxes.data ? 2 : 0);
    if (!st && !(st = samc_tensor_allocv(sp, err, 3, B, ns, D)) &&
        !(st = samc_tensor_allocv(de, err, 4, B, D, (int64_t)m->emb, (int64_t)m->emb)))
        st = ops->prompt_encoder(&m->ctx, &m->prompt_encoder, coords.data, lab, (int)B, (int)N, boxes.data,
                                 masks.data ? &masks : NULL, sp, de);
    free(lab);
    samc_tensor_release(&coords), samc_tensor_release(&labels), samc_tensor_release(&boxes), samc_tensor_release(&masks);
    return st;
}

static samc_status run_twoway_layer(parity_run *r, int rec, const samc_ops *ops, int layer, outputs *o,
                                    samc_error *err)
{
    samc_sam2_model *m = r->model;
    samc_tensor q = {0}, k = {0}, qpe = {0}, kpe = {0};
    samc_status st = read_in(r, rec, "queries", "0", &q, err);
    if (!st)
        st = read_in(r, rec, "keys", "1", &k, err);
    if (!st)
        st = read_in(r, rec, "query_pe", "2", &qpe, err);
    if (!st)
        st = read_in(r, rec, "key_pe", "3", &kpe, err);
    samc_tensor *qo = out_slot(o, "0"), *ko = out_slot(o, "1");
    if (!st && !(st = samc_tensor_alloc(qo, q.ndim, q.shape, err)) && !(st = samc_tensor_alloc(ko, k.ndim, k.shape, err)))
        st = ops->twoway_block(&m->ctx, &m->mask_decoder.transformer.layers[layer], &q, &k, &qpe, &kpe, qo, ko);
    samc_tensor_release(&q), samc_tensor_release(&k), samc_tensor_release(&qpe), samc_tensor_release(&kpe);
    return st;
}

/* Video: _get_orig_video_res_output on (n,1,s,s) -> (n,1,H,W), H and W of
 * the dump's frames; the non-overlap constraint when the dump used it. */
static samc_status run_video_postprocess(parity_run *r, int rec, outputs *o, samc_error *err)
{
    samc_tensor x = {0};
    int64_t dims[4];
    int nd = 0;
    uint8_t *frames = NULL;
    double nov = 0;
    samc_status st = read_in(r, rec, "any_res_masks", "0", &x, err);
    if (!st) /* the video size (the frames are small in dumps) */
        st = samc_dump_read_u8(r->dump, "/inputs/frames_u8", &frames, &nd, dims, err);
    free(frames);
    if (!st && samc_dump_has_attr(r->dump, "/inputs", "non_overlap_masks"))
        st = samc_dump_attr_num(r->dump, "/inputs", "non_overlap_masks", &nov, NULL, err);
    samc_tensor *y = out_slot(o, "0");
    if (!st && (x.ndim != 4 || nd != 4))
        st = samc_fail(err, SAMC_ERR_SHAPE, "video @postprocess: unexpected shapes");
    if (!st && !(st = samc_tensor_allocv(y, err, 4, x.shape[0], x.shape[1], dims[1], dims[2])))
        st = samc_video_resize_to_video(&x, (int)dims[1], (int)dims[2], nov != 0, y->data, err);
    samc_tensor_release(&x);
    return st;
}

static samc_status run_postprocess(parity_run *r, int rec, const samc_ops *ops, outputs *o, samc_error *err)
{
    if (r->video)
        return run_video_postprocess(r, rec, o, err);
    samc_tensor x = {0};
    double h = 0, w = 0;
    samc_status st = read_in(r, rec, "masks", "0", &x, err);
    if (!st)
        st = in_attr(r, rec, "1.0", NULL, &h, NULL, err);
    if (!st)
        st = in_attr(r, rec, "1.1", NULL, &w, NULL, err);
    samc_tensor *y = out_slot(o, "0");
    if (!st && x.ndim != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "@postprocess input must be 4-D");
    const samc_sam2_model *m = r->model;
    if (!st && (m->max_hole_area > 0 || m->max_sprinkle_area > 0))
        st = samc_fill_holes_image_predictor(&x, 0.0f, m->max_hole_area, m->max_sprinkle_area);
    if (!st && !(st = samc_tensor_allocv(y, err, 4, x.shape[0], x.shape[1], (int64_t)h, (int64_t)w)))
        st = ops->postprocess(&r->model->ctx, &x, (int)h, (int)w, y);
    samc_tensor_release(&x);
    return st;
}

/* Composite points: run the subtree with a capturing trace. */
static samc_status run_composite(parity_run *r, int rec, const char *module, outputs *o, samc_error *err)
{
    samc_sam2_model *m = r->model;
    o->target = module;
    samc_sam2_set_trace(m, capture, o);
    samc_tensor a = {0}, b = {0}, c = {0}, d = {0}, s0 = {0}, s1 = {0}, res[4] = {{0}};
    samc_status st = SAMC_OK;
    if (!strcmp(module, "image_encoder.trunk") || !strcmp(module, "image_encoder")) {
        samc_sam2_features f = {0};
        samc_tensor stages[SAMC_MAX_STAGES] = {{0}};
        const bool trunk_only = !strcmp(module, "image_encoder.trunk");
        if (!(st = read_in(r, rec, trunk_only ? "x" : "sample", "0", &a, err)))
            st = trunk_only ? samc_sam2_trunk(m, &a, stages, err) : samc_sam2_encode_tensor(m, &a, &f, err);
        for (int i = 0; i < SAMC_MAX_STAGES; i++)
            samc_tensor_release(&stages[i]);
        samc_sam2_features_release(&f);
    } else if (!strcmp(module, "sam_mask_decoder.transformer")) {
        if (!(st = read_in(r, rec, "image_embedding", "0", &a, err)) && !(st = read_in(r, rec, "image_pe", "1", &b, err)) &&
            !(st = read_in(r, rec, "point_embedding", "2", &c, err)))
            st = samc_sam2_twoway_transformer(m, &a, &b, &c, &res[0], &res[1], err);
    } else { /* sam_mask_decoder */
        double mm = 0, rep = 0;
        const bool hr = has_in(r, rec, "high_res_features.0");
        if (!(st = read_in(r, rec, "image_embeddings", "0", &a, err)) && !(st = read_in(r, rec, "image_pe", "1", &b, err)) &&
            !(st = read_in(r, rec, "sparse_prompt_embeddings", "2", &c, err)) &&
            !(st = read_in(r, rec, "dense_prompt_embeddings", "3", &d, err)) &&
            !(st = in_attr(r, rec, "multimask_output", "4", &mm, NULL, err)) &&
            !(st = in_attr(r, rec, "repeat_image", "5", &rep, NULL, err)) &&
            (!hr || (!(st = read_in(r, rec, "high_res_features.0", NULL, &s0, err)) &&
                     !(st = read_in(r, rec, "high_res_features.1", NULL, &s1, err)))))
            st = samc_sam2_mask_decoder(m, &a, &b, &c, &d, mm != 0, rep != 0, hr ? &s0 : NULL, hr ? &s1 : NULL, res, err);
    }
    samc_sam2_set_trace(m, NULL, NULL);
    samc_tensor *all[] = {&a, &b, &c, &d, &s0, &s1, &res[0], &res[1], &res[2], &res[3]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        samc_tensor_release(all[i]);
    if (!st && o->n == 0)
        st = samc_fail(err, SAMC_ERR_INTERNAL, "%s produced no trace output", module);
    return st;
}

static samc_status run_one(parity_run *r, int rec, outputs *o, samc_error *err)
{
    const char *mod = r->recs[rec].module;
    const samc_ops *ops = samc_sam2_ops_for(r->model, mod);
    int idx = -1;
    if (!strcmp(mod, "@preprocess"))
        return run_preprocess(r, rec, ops, o, err);
    if (!strcmp(mod, "@postprocess"))
        return run_postprocess(r, rec, ops, o, err);
    if (!strcmp(mod, "image_encoder.trunk.patch_embed"))
        return run_hiera(r, rec, ops, -1, o, err);
    if (sscanf(mod, "image_encoder.trunk.blocks.%d", &idx) == 1)
        return run_hiera(r, rec, ops, idx, o, err);
    if (!strcmp(mod, "image_encoder.neck"))
        return run_neck(r, rec, ops, o, err);
    if (!strcmp(mod, "sam_prompt_encoder"))
        return run_prompt_encoder(r, rec, ops, o, err);
    if (sscanf(mod, "sam_mask_decoder.transformer.layers.%d", &idx) == 1)
        return run_twoway_layer(r, rec, ops, idx, o, err);
    if (!strncmp(mod, "memory_", 7) || !strcmp(mod, "obj_ptr_proj") || !strcmp(mod, "@prepare_memory_conditioned_features"))
        return run_video_point(r, rec, mod, o, err);
    return run_composite(r, rec, mod, o, err);
}

samc_status parity_run_isolated(parity_run *r, samc_error *err)
{
    for (int i = 0; i < r->n_recs && !r->st; i++) {
        if (!parity_is_point(r->model, r->recs[i].module))
            continue;
        r->seen[i] = true;
        outputs o = {0};
        samc_error e = {0};
        samc_status st = run_one(r, i, &o, &e);
        if (st) {
            samc_parity_row *row = parity_add_row(r, r->recs[i].index, r->recs[i].module, r->recs[i].call, "*");
            if (row) {
                row->state = SAMC_PARITY_ERROR;
                snprintf(row->note, sizeof row->note, "%s", e.msg[0] ? e.msg : samc_status_name(st));
            }
        } else {
            const char *names[MAX_OUT];
            const samc_tensor *t[MAX_OUT];
            for (int k = 0; k < o.n; k++)
                names[k] = o.names[k], t[k] = &o.t[k];
            parity_compare_record(r, i, o.n, names, t);
        }
        outputs_free(&o);
    }
    (void)err;
    return SAMC_OK;
}
