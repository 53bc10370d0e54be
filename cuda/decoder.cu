/* SPDX-License-Identifier: Apache-2.0 */
/* decoder.cu - TwoWayTransformer and MaskDecoder.predict_masks' heads on
 * the device (sam/transformer.py, sam/mask_decoder.py), batched over the
 * prompts; and their per-kind bodies (host tensors in and out).
 *
 * Attention (sam.transformer.Attention): the q/k/v projections as
 * cuBLASLt linears over every prompt's rows at once, per head one batched
 * product for the scores, a row softmax, one batched product for the
 * values, then out_proj. The upscaling's transposed convolutions
 * (kernel = stride = 2) are GEMMs on tokens followed by one pass that
 * shuffles the pixels into place and adds the bias, the high-res feature,
 * the LayerNorm2d and the GELU. */
#include <cmath>
#include <string>

#include "cuda/decoder.h"
#include "cuda/fpn.h"

namespace {

/* The input of L's GEMM from fp32 rows ldx apart: itself, or its bf16 copy. */
const void *gemm_in(cu_dev *d, const cu_lin *L, const float *X, int64_t ldx, int64_t rows, cu_buf &cvt)
{
    if (L->prec != CU_BF16)
        return X;
    const int64_t n = (rows - 1) * ldx + L->in;
    if (cvt.bytes < (size_t)n * 2)
        cvt = cu_buf((size_t)n * 2, d->s);
    k_to_bf16(d->s, X, cvt.as<bf16>(), n);
    return cvt.p;
}

void lin(cu_dev *d, const cu_lin *L, const float *X, int64_t ldx, int64_t rows, float *Y, int64_t ldy, cu_buf &cvt)
{
    cu_linear_ld(d, L, gemm_in(d, L, X, ldx, rows, cvt), ldx, rows, Y, ldy, false, true, false);
}

/* Attention.forward for B prompts: q_in (B, Lq, D), k_in and v_in (B, Lk,
 * D) -> out (B, Lq, D). */
void attention(cu_dev *d, int slot, const samc_attention *a, int B, int Lq, int Lk, const float *q_in,
               const float *k_in, const float *v_in, float *out)
{
    const int C = a->internal_dim, hd = C / a->heads, D = a->q.in;
    const cu_lin *Lq_ = cu_prepared(&a->q, slot), *Lk_ = cu_prepared(&a->k, slot), *Lv = cu_prepared(&a->v, slot);
    const cu_lin *Lo = cu_prepared(&a->out, slot);
    cu_buf cvt, qp((size_t)B * Lq * C * 4, d->s), kp((size_t)B * Lk * C * 4, d->s), vp((size_t)B * Lk * C * 4, d->s);
    cu_buf o((size_t)B * Lq * C * 4, d->s), S((size_t)(B == 1 ? a->heads : B) * Lq * Lk * 4, d->s);
    lin(d, Lq_, q_in, D, (int64_t)B * Lq, qp.f(), C, cvt);
    lin(d, Lk_, k_in, Lk_->in, (int64_t)B * Lk, kp.f(), C, cvt);
    lin(d, Lv, v_in, Lv->in, (int64_t)B * Lk, vp.f(), C, cvt);
    const float scale = (float)(1.0 / std::sqrt((double)hd));
    if (B == 1) { /* one prompt: the heads are the batch (hd apart), three launches for all of them */
        cu_attn_scores(d, CU_F32, a->heads, Lq, Lk, hd, scale, qp.f(), C, hd, kp.f(), C, hd, S.f());
        k_softmax(d->s, S.f(), (int64_t)a->heads * Lq, Lk, S.f(), false);
        cu_attn_values(d, CU_F32, a->heads, Lq, Lk, hd, S.f(), vp.f(), C, hd, o.f(), C, hd);
    } else { /* B prompts: the prompts are the batch, head after head */
        for (int h = 0; h < a->heads; h++) {
            cu_attn_scores(d, CU_F32, B, Lq, Lk, hd, scale, qp.f() + h * hd, C, (int64_t)Lq * C, kp.f() + h * hd, C,
                           (int64_t)Lk * C, S.f());
            k_softmax(d->s, S.f(), (int64_t)B * Lq, Lk, S.f(), false);
            cu_attn_values(d, CU_F32, B, Lq, Lk, hd, S.f(), vp.f() + h * hd, C, (int64_t)Lk * C, o.f() + h * hd, C,
                           (int64_t)Lq * C);
        }
    }
    lin(d, Lo, o.f(), C, (int64_t)B * Lq, out, Lo->out, cvt);
}

/* y = x + pe, pe of batch B (pe_b) or 1. */
void add_pe(cu_dev *d, const float *x, const float *pe, bool pe_b, int64_t B, int64_t n, float *y)
{
    if (pe_b)
        k_add(d->s, x, pe, 1.0f, y, B * n);
    else
        k_add_bcast(d->s, x, pe, B, n, y);
}

void norm(cu_dev *d, cu_arena *A, const samc_norm *n, float *x, int64_t rows)
{
    k_ln_rows(d->s, x, rows, n->dim, cu_weight(A, n->w, n->dim), cu_weight(A, n->b, n->dim), n->eps, x, n->dim, false);
}

} // namespace

void cu_twoway_block(cu_dev *d, int slot, const samc_twoway_block *blk, int B, int Nq, int Nk, float *Q, float *K,
                     const float *qpe, bool qpe_b, const float *kpe, bool kpe_b)
{
    const int D = blk->norm1.dim, hidden = blk->mlp_fc1.out;
    const int64_t nq = (int64_t)Nq * D, nk = (int64_t)Nk * D;
    cu_arena *A = cu_prepared(&blk->mlp_fc1, slot)->arena;
    cu_buf qq((size_t)B * nq * 4, d->s), kk((size_t)B * nk * 4, d->s), cvt;
    cu_buf tmp((size_t)B * (nq > nk ? nq : nk) * 4, d->s), mlp((size_t)B * Nq * hidden * 4, d->s);
    if (blk->skip_first_layer_pe) { /* queries = self_attn(q=queries, k=queries, v=queries) */
        attention(d, slot, &blk->self_attn, B, Nq, Nq, Q, Q, Q, tmp.f());
        CU(cudaMemcpyAsync(Q, tmp.p, (size_t)B * nq * 4, cudaMemcpyDeviceToDevice, d->s));
    } else { /* queries = queries + self_attn(q + qpe, q + qpe, queries) */
        add_pe(d, Q, qpe, qpe_b, B, nq, qq.f());
        attention(d, slot, &blk->self_attn, B, Nq, Nq, qq.f(), qq.f(), Q, tmp.f());
        k_add(d->s, Q, tmp.f(), 1.0f, Q, B * nq);
    }
    norm(d, A, &blk->norm1, Q, (int64_t)B * Nq);
    /* cross attention, tokens to image */
    add_pe(d, Q, qpe, qpe_b, B, nq, qq.f());
    add_pe(d, K, kpe, kpe_b, B, nk, kk.f());
    attention(d, slot, &blk->cross_t2i, B, Nq, Nk, qq.f(), kk.f(), K, tmp.f());
    k_add(d->s, Q, tmp.f(), 1.0f, Q, B * nq);
    norm(d, A, &blk->norm2, Q, (int64_t)B * Nq);
    /* MLP: Linear, ReLU, Linear */
    lin(d, cu_prepared(&blk->mlp_fc1, slot), Q, D, (int64_t)B * Nq, mlp.f(), hidden, cvt);
    k_relu(d->s, mlp.f(), (int64_t)B * Nq * hidden);
    lin(d, cu_prepared(&blk->mlp_fc2, slot), mlp.f(), hidden, (int64_t)B * Nq, tmp.f(), D, cvt);
    k_add(d->s, Q, tmp.f(), 1.0f, Q, B * nq);
    norm(d, A, &blk->norm3, Q, (int64_t)B * Nq);
    /* cross attention, image to tokens: keys += attn(q=k+kpe, k=q+qpe, v=queries) */
    add_pe(d, Q, qpe, qpe_b, B, nq, qq.f());
    attention(d, slot, &blk->cross_i2t, B, Nk, Nq, kk.f(), qq.f(), Q, tmp.f());
    k_add(d->s, K, tmp.f(), 1.0f, K, B * nk);
    norm(d, A, &blk->norm4, K, (int64_t)B * Nk);
}

void cu_twoway_final(cu_dev *d, int slot, const samc_twoway_transformer *tr, int B, int Nq, int Nk, float *Q,
                     const float *K, const float *qpe, bool qpe_b, const float *kpe, bool kpe_b)
{
    const int D = tr->norm_final.dim;
    const int64_t nq = (int64_t)Nq * D, nk = (int64_t)Nk * D;
    cu_buf qq((size_t)B * nq * 4, d->s), kk((size_t)B * nk * 4, d->s), tmp((size_t)B * nq * 4, d->s);
    add_pe(d, Q, qpe, qpe_b, B, nq, qq.f());
    add_pe(d, K, kpe, kpe_b, B, nk, kk.f());
    attention(d, slot, &tr->final_attn, B, Nq, Nk, qq.f(), kk.f(), K, tmp.f());
    k_add(d->s, Q, tmp.f(), 1.0f, Q, B * nq);
    norm(d, cu_prepared(&tr->final_attn.q, slot)->arena, &tr->norm_final, Q, (int64_t)B * Nq);
}

/* ConvTranspose2d (kernel = stride = k) as the GEMM over input tokens:
 * W (cin, cout, k, k) read as (cout * k * k) rows of cin, made once. */
static cu_lin convt_lin(cu_arena *A, const samc_conv_t2d *c)
{
    const int n = c->cout * c->k * c->k;
    char key[64];
    snprintf(key, sizeof key, "convt %p", (const void *)c->w);
    cu_lin L = {};
    L.w = cu_derived(A, key, (size_t)n * c->cin, [&](float *o) {
        for (int r = 0; r < n; r++)
            for (int ci = 0; ci < c->cin; ci++)
                o[(size_t)r * c->cin + ci] = c->w[(size_t)ci * n + r];
    });
    L.in = c->cin, L.out = n, L.kpad = c->cin, L.prec = CU_F32, L.arena = A;
    return L;
}

void cu_mask_heads(cu_dev *d, int slot, const samc_mask_decoder *dec, int B, int T, const float *hs, const float *keys,
                   int h, int w, const float *feat_s0, const float *feat_s1, bool feat_b, float *masks, float *iou,
                   float *obj)
{
    const int D = dec->dim, M = dec->num_mask_tokens, c1 = dec->up0.cout, c2 = dec->up1.cout;
    const int s = dec->pred_obj_scores ? 1 : 0;
    const int64_t hw = (int64_t)h * w, HW = 16 * hw;
    if (dec->up0.k != 2 || dec->up1.k != 2)
        cu_fail(SAMC_ERR_UNSUPPORTED, "mask decoder: the cuda body upscales with kernel-2 transposed convs only");
    cu_arena *A = cu_prepared(&dec->transformer.final_attn.q, slot)->arena;
    const cu_lin L0 = convt_lin(A, &dec->up0), L1 = convt_lin(A, &dec->up1);
    const bool hr = dec->use_high_res_features;
    /* output_upscaling: dc1, (+ feat_s1), LN2d, GELU, dc2, (+ feat_s0), GELU */
    cu_buf g0((size_t)B * hw * c1 * 4 * 4, d->s), u1((size_t)B * 4 * hw * c1 * 4, d->s);
    cu_linear_ld(d, &L0, keys, D, (int64_t)B * hw, g0.f(), L0.out, false, false, false);
    k_convt_shuffle(d->s, g0.f(), B, h, w, c1, cu_weight(A, dec->up0.b, c1), hr ? feat_s1 : nullptr, feat_b,
                    cu_weight(A, dec->up_norm.w, c1), cu_weight(A, dec->up_norm.b, c1), dec->up_norm.eps, true, u1.f());
    g0 = cu_buf();
    cu_buf g1((size_t)B * 4 * hw * c2 * 4 * 4, d->s), up((size_t)B * HW * c2 * 4, d->s);
    cu_linear_ld(d, &L1, u1.f(), c1, (int64_t)B * 4 * hw, g1.f(), L1.out, false, false, false);
    k_convt_shuffle(d->s, g1.f(), B, 2 * h, 2 * w, c2, cu_weight(A, dec->up1.b, c2), hr ? feat_s0 : nullptr, feat_b,
                    nullptr, nullptr, 0.0f, true, up.f());
    /* hypernetworks: one MLP per mask token, on that token of every prompt */
    int widest = D; /* the MLPs' hidden widths (the IoU head's may exceed D) */
    const samc_mlp *all[SAMC_MAX_MASK_TOKENS + 2] = {&dec->iou_head, &dec->obj_head};
    for (int t = 0; t < M; t++)
        all[2 + t] = &dec->hyper[t];
    for (int k = 0; k < M + 2; k++)
        for (int i = 0; i < all[k]->num_layers; i++)
            widest = all[k]->layers[i].out > widest ? all[k]->layers[i].out : widest;
    cu_buf cvt, hyper((size_t)B * M * c2 * 4, d->s), t0((size_t)B * widest * 4, d->s), t1((size_t)B * widest * 4, d->s);
    auto mlp = [&](const samc_mlp *m, const float *x, int64_t ldx, float *y, int64_t ldy) {
        const float *cur = x;
        int64_t ld = ldx;
        for (int i = 0; i < m->num_layers; i++) {
            const cu_lin *L = cu_prepared(&m->layers[i], slot);
            const bool last = i == m->num_layers - 1;
            float *dst = last ? y : (i % 2 ? t1.f() : t0.f());
            lin(d, L, cur, ld, B, dst, last ? ldy : L->out, cvt);
            if (!last)
                k_relu(d->s, dst, (int64_t)B * L->out);
            cur = dst, ld = L->out;
        }
    };
    for (int t = 0; t < M; t++)
        mlp(&dec->hyper[t], hs + (int64_t)(s + 1 + t) * D, (int64_t)T * D, hyper.f() + (int64_t)t * c2, (int64_t)M * c2);
    /* masks[b] (M, HW) = hyper[b] (M, c2) up[b]^T: column-major masks^T (HW, M) = up (c2 x HW)^T hyper (c2 x M) */
    cu_gemm_batched_f32(d, true, false, (int)HW, M, c2, up.f(), c2, HW * c2, hyper.f(), c2, (int64_t)M * c2, masks, HW,
                        (int64_t)M * HW, B);
    mlp(&dec->iou_head, hs + (int64_t)s * D, (int64_t)T * D, iou, M);
    if (dec->pred_obj_scores && obj)
        mlp(&dec->obj_head, hs, (int64_t)T * D, obj, 1);
}

void cu_mask_heads_finish(const samc_mask_decoder *dec, int B, float *iou, float *obj)
{
    const int M = dec->num_mask_tokens;
    if (dec->iou_head.sigmoid_output || dec->iou_sigmoid)
        for (int i = 0; i < B * M; i++)
            iou[i] = 1.0f / (1.0f + expf(-iou[i]));
    if (!dec->pred_obj_scores) /* 10.0 * iou_pred.new_ones(b, 1) */
        for (int b = 0; b < B; b++)
            obj[b] = 10.0f;
}

/* ---- per-kind bodies ---------------------------------------------------------- */

static bool pe_ok(const samc_tensor *pe, const samc_tensor *x)
{
    return pe->ndim == 3 && (pe->shape[0] == x->shape[0] || pe->shape[0] == 1) && pe->shape[1] == x->shape[1] &&
           pe->shape[2] == x->shape[2];
}

static void check_qk(const samc_tensor *q, const samc_tensor *k, const samc_tensor *qpe, const samc_tensor *kpe, int D)
{
    if (q->ndim != 3 || k->ndim != 3 || q->shape[2] != D || k->shape[2] != D || k->shape[0] != q->shape[0] ||
        !pe_ok(qpe, q) || !pe_ok(kpe, k))
        cu_fail(SAMC_ERR_SHAPE, "two-way: want q (B,Nq,%d), k (B,Nk,%d) and pe", D, D);
}

extern "C" samc_status samc_cuda_twoway_block(samc_ctx *ctx, const samc_twoway_block *blk, const samc_tensor *q,
                                              const samc_tensor *k, const samc_tensor *qpe, const samc_tensor *kpe,
                                              samc_tensor *q_out, samc_tensor *k_out)
{
    return cu_guard(ctx->err, [&] {
        check_qk(q, k, qpe, kpe, blk->norm1.dim);
        if (cu_numel(q_out) != cu_numel(q) || cu_numel(k_out) != cu_numel(k))
            cu_fail(SAMC_ERR_SHAPE, "two-way block: outputs must match q and k");
        cu_dev *d = cu_dev_of(ctx);
        cu_buf Q = cu_upload_tensor(d, q), K = cu_upload_tensor(d, k), QP = cu_upload_tensor(d, qpe);
        cu_buf KP = cu_upload_tensor(d, kpe);
        cu_twoway_block(d, ctx->prep_slot, blk, (int)q->shape[0], (int)q->shape[1], (int)k->shape[1], Q.f(), K.f(),
                        QP.f(), qpe->shape[0] != 1 || q->shape[0] == 1, KP.f(), kpe->shape[0] != 1 || k->shape[0] == 1);
        cu_download_tensor(d, q_out, Q.p);
        cu_download_tensor(d, k_out, K.p);
    });
}

extern "C" samc_status samc_cuda_twoway_final(samc_ctx *ctx, const samc_twoway_transformer *tr, const samc_tensor *q,
                                              const samc_tensor *k, const samc_tensor *qpe, const samc_tensor *kpe,
                                              samc_tensor *q_out)
{
    return cu_guard(ctx->err, [&] {
        check_qk(q, k, qpe, kpe, tr->norm_final.dim);
        if (cu_numel(q_out) != cu_numel(q))
            cu_fail(SAMC_ERR_SHAPE, "two-way final: output must match q");
        cu_dev *d = cu_dev_of(ctx);
        cu_buf Q = cu_upload_tensor(d, q), K = cu_upload_tensor(d, k), QP = cu_upload_tensor(d, qpe);
        cu_buf KP = cu_upload_tensor(d, kpe);
        cu_twoway_final(d, ctx->prep_slot, tr, (int)q->shape[0], (int)q->shape[1], (int)k->shape[1], Q.f(), K.f(),
                        QP.f(), qpe->shape[0] != 1 || q->shape[0] == 1, KP.f(), kpe->shape[0] != 1 || k->shape[0] == 1);
        cu_download_tensor(d, q_out, Q.p);
    });
}

static bool feat_ok(const samc_tensor *f, int64_t B, int c, int h, int w)
{
    return f && f->ndim == 4 && (f->shape[0] == 1 || f->shape[0] == B) && f->shape[1] == c && f->shape[2] == h &&
           f->shape[3] == w;
}

extern "C" samc_status samc_cuda_mask_decoder_heads(samc_ctx *ctx, const samc_mask_decoder *dec, const samc_tensor *hs,
                                                    const samc_tensor *keys, int emb_h, int emb_w,
                                                    const samc_tensor *feat_s0, const samc_tensor *feat_s1,
                                                    samc_tensor *masks, samc_tensor *iou, samc_tensor *obj)
{
    return cu_guard(ctx->err, [&] {
        const int64_t B = hs->ndim == 3 ? hs->shape[0] : -1, M = dec->num_mask_tokens, D = dec->dim;
        const int s = dec->pred_obj_scores ? 1 : 0;
        if (hs->ndim != 3 || hs->shape[2] != D || hs->shape[1] < s + 1 + M || keys->ndim != 3 || keys->shape[0] != B ||
            keys->shape[1] != (int64_t)emb_h * emb_w || keys->shape[2] != D)
            cu_fail(SAMC_ERR_SHAPE, "mask decoder: want hs (B,T,%lld), keys (B,%d,%lld)", (long long)D, emb_h * emb_w,
                    (long long)D);
        if (masks->ndim != 4 || masks->shape[0] != B || masks->shape[1] != M || masks->shape[2] != 4 * emb_h ||
            masks->shape[3] != 4 * emb_w || cu_numel(iou) != B * M || cu_numel(obj) != B)
            cu_fail(SAMC_ERR_SHAPE, "mask decoder: outputs must be masks (B,M,4h,4w), iou (B,M), obj (B,1)");
        const bool hr = dec->use_high_res_features;
        if (hr && (!feat_ok(feat_s0, B, dec->up1.cout, 4 * emb_h, 4 * emb_w) ||
                   !feat_ok(feat_s1, B, dec->up0.cout, 2 * emb_h, 2 * emb_w) || feat_s0->shape[0] != feat_s1->shape[0]))
            cu_fail(SAMC_ERR_SHAPE, "mask decoder: want feat_s0 (1|B,%d,%d,%d), feat_s1 (1|B,%d,%d,%d)", dec->up1.cout,
                    4 * emb_h, 4 * emb_w, dec->up0.cout, 2 * emb_h, 2 * emb_w);
        cu_dev *d = cu_dev_of(ctx);
        cu_buf H = cu_upload_tensor(d, hs), K = cu_upload_tensor(d, keys), s0, s1;
        if (hr)
            s0 = cu_upload_tensor(d, feat_s0), s1 = cu_upload_tensor(d, feat_s1);
        cu_buf m((size_t)cu_numel(masks) * 4, d->s), io((size_t)B * M * 4, d->s), ob((size_t)B * 4, d->s);
        cu_mask_heads(d, ctx->prep_slot, dec, (int)B, (int)hs->shape[1], H.f(), K.f(), emb_h, emb_w, s0.f(), s1.f(),
                      hr && feat_s0->shape[0] != 1, m.f(), io.f(), ob.f());
        cu_download_tensor(d, masks, m.p);
        cu_download_tensor(d, iou, io.p);
        cu_download_tensor(d, obj, ob.p);
        cu_mask_heads_finish(dec, (int)B, iou->data, obj->data);
    });
}
