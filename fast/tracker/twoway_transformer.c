/* SPDX-License-Identifier: Apache-2.0 */
/* twoway_transformer.c - TwoWayAttentionBlock.forward and the TwoWayTransformer tail
 * (sam/transformer.py), fast bodies: projections as threaded sgemm over
 * token rows, multi-head attention by (head, row block) tasks
 * (attention.c), vectorised adds and LayerNorms. Same steps as
 * ref/tracker/twoway_transformer.c. */
#include <math.h>
#include <string.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"
#include "fast/tracker/twoway_folded.h"

typedef struct tw_buf {
    float *q, *k, *tmp, *mlp; /* q+pe (Nq,D), k+pe (Nk,D), attention / MLP output, MLP hidden */
    float *qp, *kp, *vp, *o;  /* projections and heads output (max(Nq,Nk), C) */
    float *s;                 /* score blocks, per thread */
    float *f;                 /* the folded cross attentions' rows (twoway_folded.c) */
} tw_buf;

/* Scratch of attention a with Lk keys. */
static size_t att_need(int nt, const samc_attention *a, int Lk)
{
    return samc__fast_attention_mh_scratch(nt, Lk, a->heads, a->internal_dim / a->heads);
}

static samc_status tw_buf_get(samc_ctx *ctx, int nt, int Nq, int Nk, int D, int C, int hidden, size_t s_need,
                              size_t f_need, tw_buf *b)
{
    (void)nt;
    const size_t big = (size_t)(Nq > Nk ? Nq : Nk);
    const size_t counts[10] = {(size_t)Nq * D, (size_t)Nk * D, big * D, (size_t)Nq * (hidden > 0 ? hidden : 1),
                               big * C, big * C, big * C, big * C, s_need, f_need ? f_need : 1};
    float *p[10];
    samc_status st = samc__fast_ws_get(ctx, 10, counts, p);
    if (st)
        return st;
    *b = (tw_buf){p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9]};
    return SAMC_OK;
}

/* Floats of tw_buf.f for the cross attentions that may fold. */
static size_t fold_need(const samc_attention *a, int Nq, int Nk, int D)
{
    return samc__fast_twoway_fold_ok(a, Nq) ? samc__fast_twoway_fold_need(a, Nk, D) : 0;
}


/* Attention.forward for one batch element: q (Lq, D), k, v (Lk, D) -> out (Lq, D). */
static void attention(const samc_ctx *ctx, int nt, const samc_attention *a, const float *q, int Lq, const float *k, const float *v,
                      int Lk, float *out, tw_buf *b)
{
    const int C = a->internal_dim, hd = C / a->heads;
    const float scale = (float)(1.0 / sqrt((double)hd));
    samc__fast_linear_x(ctx, nt, q, a->q.in, Lq, &a->q, b->qp, C, 0);
    samc__fast_linear_x(ctx, nt, k, a->k.in, Lk, &a->k, b->kp, C, 0);
    samc__fast_linear_x(ctx, nt, v, a->v.in, Lk, &a->v, b->vp, C, 0);
    samc__fast_attention_mh(nt, b->qp, C, b->kp, C, b->vp, C, Lq, Lk, a->heads, hd, scale, b->o, C, b->s);
    samc__fast_linear_x(ctx, nt, b->o, C, Lq, &a->out, out, a->out.out, 0);
}

/* tokens (Lq) -> image (Lk) attention, folded when that pays. */
static void attention_t2i(const samc_ctx *ctx, int nt, const samc_attention *a, const float *q, int Lq,
                          const float *k, const float *v, int Lk, float *out, tw_buf *b)
{
    if (samc__fast_twoway_fold_ok(a, Lq))
        samc__fast_t2i_folded(ctx, nt, a, q, Lq, k, v, Lk, out, b->qp, b->vp, b->f);
    else
        attention(ctx, nt, a, q, Lq, k, v, Lk, out, b);
}

static samc_status check_qk(samc_error *err, const samc_tensor *q, const samc_tensor *k, const samc_tensor *qpe,
                            const samc_tensor *kpe, int D)
{
    const int64_t B = q->shape[0];
    if (q->ndim != 3 || k->ndim != 3 || qpe->ndim != 3 || kpe->ndim != 3 || k->shape[0] != B ||
        q->shape[2] != D || k->shape[2] != D || qpe->shape[1] != q->shape[1] || kpe->shape[1] != k->shape[1] ||
        qpe->shape[2] != D || kpe->shape[2] != D || (qpe->shape[0] != B && qpe->shape[0] != 1) ||
        (kpe->shape[0] != B && kpe->shape[0] != 1))
        return samc_fail(err, SAMC_ERR_SHAPE, "two-way: want q (B,Nq,%d), k (B,Nk,%d) and pe", D, D);
    return SAMC_OK;
}

static int attn_ok(const samc_attention *a, int D)
{
    return a->heads > 0 && a->internal_dim % a->heads == 0 && a->q.in == D && a->k.in == D && a->v.in == D &&
           a->q.out == a->internal_dim && a->k.out == a->internal_dim && a->v.out == a->internal_dim &&
           a->out.in == a->internal_dim && a->out.out == D;
}

samc_status samc_fast_twoway_block(samc_ctx *ctx, const samc_twoway_block *blk, const samc_tensor *q,
                                   const samc_tensor *k, const samc_tensor *qpe, const samc_tensor *kpe,
                                   samc_tensor *q_out, samc_tensor *k_out)
{
    const int D = blk->norm1.dim;
    samc_status st = check_qk(ctx->err, q, k, qpe, kpe, D);
    if (st)
        return st;
    if (!samc_tensor_same_shape(q, q_out) || !samc_tensor_same_shape(k, k_out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "two-way block: outputs must match q and k");
    if (!attn_ok(&blk->self_attn, D) || !attn_ok(&blk->cross_t2i, D) || !attn_ok(&blk->cross_i2t, D))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "two-way block: attention weights do not match dim %d", D);
    const int B = (int)q->shape[0], Nq = (int)q->shape[1], Nk = (int)k->shape[1], nt = samc__fast_threads(ctx);
    int C = blk->self_attn.internal_dim;
    C = blk->cross_t2i.internal_dim > C ? blk->cross_t2i.internal_dim : C;
    C = blk->cross_i2t.internal_dim > C ? blk->cross_i2t.internal_dim : C;
    const int hidden = blk->mlp_fc1.out;
    tw_buf s;
    size_t s_need = att_need(nt, &blk->self_attn, Nq), n2 = att_need(nt, &blk->cross_t2i, Nk);
    s_need = n2 > s_need ? n2 : s_need;
    n2 = att_need(nt, &blk->cross_i2t, Nq);
    s_need = n2 > s_need ? n2 : s_need;
    size_t f_need = fold_need(&blk->cross_t2i, Nq, Nk, D);
    n2 = fold_need(&blk->cross_i2t, Nq, Nk, D);
    f_need = n2 > f_need ? n2 : f_need;
    if ((st = tw_buf_get(ctx, nt, Nq, Nk, D, C, hidden, s_need, f_need, &s)))
        return st;
    const int64_t nq = (int64_t)Nq * D, nk = (int64_t)Nk * D;
    memcpy(q_out->data, q->data, (size_t)(B * nq) * sizeof(float));
    for (int b = 0; b < B; b++) {
        /* keys are read from k and written once, k_out = norm4(k + i2t):
         * no serial copy of the (Nk, D) map first */
        float *Q = q_out->data + b * nq, *Ko = k_out->data + b * nk;
        const float *K = k->data + b * nk;
        const float *qp = qpe->data + (qpe->shape[0] == 1 ? 0 : b * nq);
        const float *kp = kpe->data + (kpe->shape[0] == 1 ? 0 : b * nk);
        /* self attention */
        if (blk->skip_first_layer_pe) {
            attention(ctx, nt, &blk->self_attn, Q, Nq, Q, Q, Nq, s.tmp, &s);
            memcpy(Q, s.tmp, (size_t)nq * sizeof *Q);
        } else {
            samc__fast_add(s.q, Q, qp, nq);
            attention(ctx, nt, &blk->self_attn, s.q, Nq, s.q, Q, Nq, s.tmp, &s);
            samc__fast_add(Q, Q, s.tmp, nq);
        }
        samc__fast_layer_norm(nt, Q, Nq, &blk->norm1, Q);
        /* cross attention, tokens to image */
        samc__fast_add(s.q, Q, qp, nq);
        samc__fast_add_mt(nt, s.k, K, kp, nk);
        attention_t2i(ctx, nt, &blk->cross_t2i, s.q, Nq, s.k, K, Nk, s.tmp, &s);
        samc__fast_add(Q, Q, s.tmp, nq);
        samc__fast_layer_norm(nt, Q, Nq, &blk->norm2, Q);
        /* MLP (ReLU) */
        samc__fast_linear_x(ctx, nt, Q, D, Nq, &blk->mlp_fc1, s.mlp, hidden, 0);
        samc__fast_relu(s.mlp, (int64_t)Nq * hidden);
        samc__fast_linear_x(ctx, nt, s.mlp, hidden, Nq, &blk->mlp_fc2, s.tmp, D, 0);
        samc__fast_add(Q, Q, s.tmp, nq);
        samc__fast_layer_norm(nt, Q, Nq, &blk->norm3, Q);
        /* cross attention, image to tokens (k + kpe is unchanged: K was not updated yet) */
        samc__fast_add(s.q, Q, qp, nq);
        if (samc__fast_twoway_fold_ok(&blk->cross_i2t, Nq))
            samc__fast_i2t_folded(ctx, nt, &blk->cross_i2t, s.k, Nk, s.q, Q, Nq, s.tmp, s.kp, s.vp, s.f);
        else
            attention(ctx, nt, &blk->cross_i2t, s.k, Nk, s.q, Q, Nq, s.tmp, &s);
        samc__fast_add_mt(nt, Ko, K, s.tmp, nk);
        samc__fast_layer_norm(nt, Ko, Nk, &blk->norm4, Ko);
    }
    return SAMC_OK;
}

samc_status samc_fast_twoway_final(samc_ctx *ctx, const samc_twoway_transformer *tr, const samc_tensor *q,
                                   const samc_tensor *k, const samc_tensor *qpe, const samc_tensor *kpe,
                                   samc_tensor *q_out)
{
    const int D = tr->norm_final.dim;
    samc_status st = check_qk(ctx->err, q, k, qpe, kpe, D);
    if (st)
        return st;
    if (!samc_tensor_same_shape(q, q_out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "two-way final: output must match q");
    if (!attn_ok(&tr->final_attn, D))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "two-way final: attention weights do not match dim %d", D);
    const int B = (int)q->shape[0], Nq = (int)q->shape[1], Nk = (int)k->shape[1], nt = samc__fast_threads(ctx);
    tw_buf s;
    if ((st = tw_buf_get(ctx, nt, Nq, Nk, D, tr->final_attn.internal_dim, 0, att_need(nt, &tr->final_attn, Nk),
                         fold_need(&tr->final_attn, Nq, Nk, D), &s)))
        return st;
    const int64_t nq = (int64_t)Nq * D, nk = (int64_t)Nk * D;
    for (int b = 0; b < B; b++) {
        const float *Q = q->data + b * nq, *K = k->data + b * nk;
        float *O = q_out->data + b * nq;
        samc__fast_add(s.q, Q, qpe->data + (qpe->shape[0] == 1 ? 0 : b * nq), nq);
        samc__fast_add_mt(nt, s.k, K, kpe->data + (kpe->shape[0] == 1 ? 0 : b * nk), nk);
        attention_t2i(ctx, nt, &tr->final_attn, s.q, Nq, s.k, K, Nk, s.tmp, &s);
        samc__fast_add(O, Q, s.tmp, nq);
        samc__fast_layer_norm(nt, O, Nq, &tr->norm_final, O);
    }
    return SAMC_OK;
}
