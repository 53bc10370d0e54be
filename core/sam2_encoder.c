/* sam2_encoder.c - the image encoder wired from layers
 * (SAM2ImagePredictor.set_image -> SAM2Base.forward_image -> ImageEncoder). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sam2_model.h"

#define TRY(x)              \
    do {                    \
        st = (x);           \
        if (st)             \
            goto done;      \
    } while (0)

static void emit(samc_sam2_model *m, const char *module, int n, const char *const *slots,
                 const samc_tensor *const *t)
{
    if (m->trace)
        m->trace(m->trace_user, module, n, slots, t);
}

static void emit1(samc_sam2_model *m, const char *module, const samc_tensor *t)
{
    static const char *const slot0[] = {"0"};
    emit(m, module, 1, slot0, &t);
}

static samc_status layer_failed(samc_error *err, samc_status st, const char *layer)
{
    return samc_fail(err, st, "%s failed (%s)", layer, samc_status_name(st));
}

/* (1,H,W,C) BHWC -> (1,C,H,W) NCHW, as Hiera.forward's permute(0,3,1,2). */
static samc_status bhwc_to_nchw(const samc_tensor *x, samc_tensor *y, samc_error *err)
{
    const int64_t B = x->shape[0], H = x->shape[1], W = x->shape[2], C = x->shape[3];
    samc_status st = samc_tensor_allocv(y, err, 4, B, C, H, W);
    if (st)
        return st;
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < H * W; i++)
            for (int64_t c = 0; c < C; c++)
                y->data[(b * C + c) * H * W + i] = x->data[(b * H * W + i) * C + c];
    return SAMC_OK;
}

/* Hiera.forward: patch embed, + pos embed, blocks, stage outputs (NCHW). */
samc_status samc_sam2_trunk(samc_sam2_model *m, const samc_tensor *x, samc_tensor *stage_out,
                            samc_error *err)
{
    const int G = m->grid, C = m->cfg.trunk.embed_dim;
    samc_tensor cur = {0}, nxt = {0};
    samc_status st;
    if (x->ndim != 4 || x->shape[0] != 1 || x->shape[1] != 3 || x->shape[2] != m->cfg.image_size ||
        x->shape[3] != m->cfg.image_size)
        return samc_fail(err, SAMC_ERR_SHAPE, "image encoder input must be (1,3,%d,%d)", m->cfg.image_size,
                         m->cfg.image_size);
    TRY(samc_tensor_allocv(&cur, err, 4, (int64_t)1, (int64_t)G, (int64_t)G, (int64_t)C));
    const char *pe_name = "image_encoder.trunk.patch_embed";
    if ((st = samc_sam2_ops_for(m, pe_name)->patch_embed(&m->ctx, &m->patch_embed, x, &cur)))
        return samc_tensor_release(&cur), layer_failed(err, st, pe_name);
    emit1(m, pe_name, &cur);
    for (int64_t i = 0; i < (int64_t)G * G * C; i++)
        cur.data[i] += m->pos_embed[i];
    int stage = 0;
    char name[SAMC_LAYER_NAME_MAX];
    for (int i = 0; i < m->depth; i++) {
        const samc_hiera_block *blk = &m->blocks[i];
        const int64_t s = blk->q_stride ? blk->q_stride : 1;
        TRY(samc_tensor_allocv(&nxt, err, 4, cur.shape[0], cur.shape[1] / s, cur.shape[2] / s,
                               (int64_t)blk->dim_out));
        snprintf(name, sizeof name, "image_encoder.trunk.blocks.%d", i);
        if ((st = samc_sam2_ops_for(m, name)->hiera_block(&m->ctx, blk, &cur, &nxt))) {
            st = layer_failed(err, st, name);
            goto done;
        }
        emit1(m, name, &nxt);
        samc_tensor_release(&cur);
        cur = nxt;
        memset(&nxt, 0, sizeof nxt);
        if (stage < m->n_stages && i == m->stage_ends[stage])
            TRY(bhwc_to_nchw(&cur, &stage_out[stage++], err));
    }
    static const char *const slots[] = {"0", "1", "2", "3"};
    const samc_tensor *outs[SAMC_MAX_STAGES];
    for (int k = 0; k < m->n_stages; k++)
        outs[k] = &stage_out[k];
    emit(m, "image_encoder.trunk", m->n_stages, slots, outs);
    st = SAMC_OK;
done:
    samc_tensor_release(&cur);
    samc_tensor_release(&nxt);
    return st;
}

/* FpnNeck + ImageEncoder (scalp), traced under their module names. */
static samc_status neck_and_scalp(samc_sam2_model *m, samc_tensor *xs, samc_tensor *feat, samc_tensor *pos,
                                  samc_error *err)
{
    const int L = m->neck.n_levels, D = m->neck.d_model;
    samc_status st;
    for (int i = 0; i < L; i++) {
        if ((st = samc_tensor_allocv(&feat[i], err, 4, (int64_t)1, (int64_t)D, xs[i].shape[2], xs[i].shape[3])) ||
            (st = samc_tensor_allocv(&pos[i], err, 4, (int64_t)1, (int64_t)D, xs[i].shape[2], xs[i].shape[3])))
            return st;
    }
    if ((st = samc_sam2_ops_for(m, "image_encoder.neck")->fpn_neck(&m->ctx, &m->neck, xs, feat, pos)))
        return layer_failed(err, st, "image_encoder.neck");
    char names[2 * SAMC_FPN_MAX_LEVELS][8];
    const char *slots[2 * SAMC_FPN_MAX_LEVELS];
    const samc_tensor *t[2 * SAMC_FPN_MAX_LEVELS];
    for (int i = 0; i < L; i++) {
        snprintf(names[i], 8, "0.%d", i), slots[i] = names[i], t[i] = &feat[i];
        snprintf(names[L + i], 8, "1.%d", i), slots[L + i] = names[L + i], t[L + i] = &pos[i];
    }
    emit(m, "image_encoder.neck", 2 * L, slots, t);
    /* ImageEncoder.forward: drop the `scalp` lowest-resolution levels. */
    const int K = L - m->cfg.neck.scalp;
    char enames[1 + 2 * SAMC_FPN_MAX_LEVELS][24];
    int n = 0;
    snprintf(enames[n], 24, "vision_features"), slots[n] = enames[n], t[n++] = &feat[K - 1];
    for (int i = 0; i < K; i++)
        snprintf(enames[n], 24, "vision_pos_enc.%d", i), slots[n] = enames[n], t[n++] = &pos[i];
    for (int i = 0; i < K; i++)
        snprintf(enames[n], 24, "backbone_fpn.%d", i), slots[n] = enames[n], t[n++] = &feat[i];
    emit(m, "image_encoder", n, slots, t);
    return SAMC_OK;
}

/* forward_image's conv_s0/conv_s1 and set_image's no_mem_embed. */
static samc_status heads_inputs(samc_sam2_model *m, samc_tensor *feat, samc_tensor *pos, samc_sam2_features *f,
                                samc_error *err)
{
    const int K = m->neck.n_levels - m->cfg.neck.scalp, D = m->neck.d_model;
    samc_status st;
    if (m->cfg.use_high_res_features_in_sam) {
        if (K < 3)
            return samc_fail(err, SAMC_ERR_UNSUPPORTED, "high-res features need 3 levels after scalp, have %d", K);
        const samc_conv2d *c0 = &m->mask_decoder.conv_s0, *c1 = &m->mask_decoder.conv_s1;
        if ((st = samc_tensor_allocv(&f->feat_s0, err, 4, (int64_t)1, (int64_t)c0->cout, feat[0].shape[2], feat[0].shape[3])) ||
            (st = samc_tensor_allocv(&f->feat_s1, err, 4, (int64_t)1, (int64_t)c1->cout, feat[1].shape[2], feat[1].shape[3])))
            return st;
        if ((st = samc_sam2_ops_for(m, "sam_mask_decoder.conv_s0")->conv2d(&m->ctx, c0, &feat[0], &f->feat_s0)))
            return layer_failed(err, st, "sam_mask_decoder.conv_s0");
        if ((st = samc_sam2_ops_for(m, "sam_mask_decoder.conv_s1")->conv2d(&m->ctx, c1, &feat[1], &f->feat_s1)))
            return layer_failed(err, st, "sam_mask_decoder.conv_s1");
    }
    const samc_tensor *top = &feat[K - 1];
    if (top->shape[2] != m->emb || top->shape[3] != m->emb)
        return samc_fail(err, SAMC_ERR_SHAPE, "image embedding is %lldx%lld, expected %dx%d",
                         (long long)top->shape[2], (long long)top->shape[3], m->emb, m->emb);
    if ((st = samc_tensor_copy(&f->vision_features, top, err)) || (st = samc_tensor_copy(&f->vision_pos, &pos[K - 1], err)) ||
        (st = samc_tensor_copy(&f->image_embed, top, err)))
        return st;
    const int64_t hw = (int64_t)m->emb * m->emb;
    if (m->cfg.directly_add_no_mem_embed)
        for (int c = 0; c < D; c++)
            for (int64_t i = 0; i < hw; i++)
                f->image_embed.data[c * hw + i] += m->no_mem_embed[c];
    return SAMC_OK;
}

samc_status samc_sam2_encode_tensor(samc_sam2_model *m, const samc_tensor *x, samc_sam2_features *f,
                                    samc_error *err)
{
    samc_tensor xs[SAMC_MAX_STAGES] = {{0}}, feat[SAMC_FPN_MAX_LEVELS] = {{0}}, pos[SAMC_FPN_MAX_LEVELS] = {{0}};
    samc_status st = samc_sam2_trunk(m, x, xs, err);
    if (!st)
        st = neck_and_scalp(m, xs, feat, pos, err);
    if (!st)
        st = heads_inputs(m, feat, pos, f, err);
    for (int i = 0; i < SAMC_MAX_STAGES; i++)
        samc_tensor_release(&xs[i]), samc_tensor_release(&feat[i]), samc_tensor_release(&pos[i]);
    if (st)
        samc_sam2_features_release(f);
    return st;
}

samc_status samc_sam2_encode_image(samc_sam2_model *m, const uint8_t *rgb, int h, int w,
                                   samc_sam2_features *f, samc_error *err)
{
    memset(f, 0, sizeof *f);
    if (!rgb || h <= 0 || w <= 0)
        return samc_fail(err, SAMC_ERR_ARG, "image is empty (%dx%d)", w, h);
    const int S = m->cfg.image_size;
    samc_tensor x = {0};
    samc_status st = samc_tensor_allocv(&x, err, 4, (int64_t)1, (int64_t)3, (int64_t)S, (int64_t)S);
    if (st)
        return st;
    if ((st = samc_sam2_ops_for(m, "@preprocess")->preprocess(&m->ctx, rgb, h, w, S, &x))) {
        samc_tensor_release(&x);
        return layer_failed(err, st, "@preprocess");
    }
    emit1(m, "@preprocess", &x);
    st = samc_sam2_encode_tensor(m, &x, f, err);
    samc_tensor_release(&x);
    f->orig_h = h;
    f->orig_w = w;
    return st;
}

void samc_sam2_features_release(samc_sam2_features *f)
{
    samc_tensor_release(&f->image_embed);
    samc_tensor_release(&f->feat_s0);
    samc_tensor_release(&f->feat_s1);
    samc_tensor_release(&f->vision_features);
    samc_tensor_release(&f->vision_pos);
}
