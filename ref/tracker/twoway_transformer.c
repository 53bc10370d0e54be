/* SPDX-License-Identifier: Apache-2.0 */
/* twoway_transformer.c - sam/transformer.py: TwoWayAttentionBlock.forward,
 * the tail of TwoWayTransformer.forward, and their Attention. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "ref/prims.h"
#include "ref/ref_ops.h"

/* Attention.forward for one batch element: q (Lq, D), k and v (Lk, kv_in)
 * -> out (Lq, D). q/k/v projections to internal_dim, heads split head-major
 * (_separate_heads: head h owns channels [h*hd, (h+1)*hd)), SDPA with scale
 * 1/sqrt(hd), _recombine_heads, out_proj. */
static samc_status attention(samc_error *err, const samc_attention *a, const float *q, int Lq, const float *k,
                             const float *v, int Lk, float *out)
{
    const int C = a->internal_dim, hd = C / a->heads;
    const float scale = (float)(1.0 / sqrt((double)hd)); /* SDPA's default scale */
    float *qp = malloc((size_t)Lq * C * sizeof *qp), *o = malloc((size_t)Lq * C * sizeof *o);
    float *kp = malloc((size_t)Lk * C * sizeof *kp), *vp = malloc((size_t)Lk * C * sizeof *vp);
    samc_status st = SAMC_OK;
    if (!qp || !o || !kp || !vp) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "attention: %dx%d tokens", Lq, Lk);
        goto done;
    }
    samc_ref_linear(q, Lq, &a->q, qp);
    samc_ref_linear(k, Lk, &a->k, kp);
    samc_ref_linear(v, Lk, &a->v, vp);
    for (int h = 0; h < a->heads && !st; h++)
        st = samc_ref_attention_head(qp + h * hd, C, kp + h * hd, C, vp + h * hd, C, Lq, Lk, hd, hd,
                                     scale, o + h * hd, C);
    if (!st)
        samc_ref_linear(o, Lq, &a->out, out);
done:
    free(qp), free(o), free(kp), free(vp);
    return st;
}

static void add_to(float *y, const float *a, const float *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

/* Per-call scratch, sized for one batch element. */
typedef struct block_buf {
    float *q, *k, *tmp, *mlp; /* q+pe (Nq,D), k+pe (Nk,D), attention/MLP out, MLP hidden */
} block_buf;

static void block_buf_free(block_buf *s)
{
    free(s->q), free(s->k), free(s->tmp), free(s->mlp);
}

static samc_status block_buf_alloc(samc_error *err, block_buf *s, int Nq, int Nk, int D, int hidden)
{
    const int64_t big = (int64_t)(Nq > Nk ? Nq : Nk) * D;
    s->q = malloc((size_t)Nq * D * sizeof(float));
    s->k = malloc((size_t)Nk * D * sizeof(float));
    s->tmp = malloc((size_t)big * sizeof(float));
    s->mlp = malloc((size_t)Nq * (hidden > 0 ? hidden : 1) * sizeof(float));
    if (s->q && s->k && s->tmp && s->mlp)
        return SAMC_OK;
    block_buf_free(s);
    return samc_fail(err, SAMC_ERR_NOMEM, "two-way block scratch");
}

/* Steps 1-3 of TwoWayAttentionBlock.forward on the queries (Nq, D). */
static samc_status block_queries(samc_error *err, const samc_twoway_block *blk, float *Q, const float *K,
                                 const float *qpe, const float *kpe, int Nq, int Nk, int D,
                                 block_buf *s)
{
    const int64_t nq = (int64_t)Nq * D;
    samc_status st;
    if (blk->skip_first_layer_pe) { /* queries = self_attn(q=queries, k=queries, v=queries) */
        if ((st = attention(err, &blk->self_attn, Q, Nq, Q, Q, Nq, s->tmp)))
            return st;
        memcpy(Q, s->tmp, (size_t)nq * sizeof *Q);
    } else { /* q = queries + query_pe; queries = queries + self_attn(q, q, queries) */
        add_to(s->q, Q, qpe, nq);
        if ((st = attention(err, &blk->self_attn, s->q, Nq, s->q, Q, Nq, s->tmp)))
            return st;
        add_to(Q, Q, s->tmp, nq);
    }
    samc_ref_layer_norm_rows(Q, Nq, &blk->norm1, Q);
    /* cross attention, tokens to image */
    add_to(s->q, Q, qpe, nq);
    add_to(s->k, K, kpe, (int64_t)Nk * D);
    if ((st = attention(err, &blk->cross_t2i, s->q, Nq, s->k, K, Nk, s->tmp)))
        return st;
    add_to(Q, Q, s->tmp, nq);
    samc_ref_layer_norm_rows(Q, Nq, &blk->norm2, Q);
    /* MLP: Linear, ReLU, Linear */
    samc_ref_linear(Q, Nq, &blk->mlp_fc1, s->mlp);
    samc_ref_relu(s->mlp, (int64_t)Nq * blk->mlp_fc1.out);
    samc_ref_linear(s->mlp, Nq, &blk->mlp_fc2, s->tmp);
    add_to(Q, Q, s->tmp, nq);
    samc_ref_layer_norm_rows(Q, Nq, &blk->norm3, Q);
    return SAMC_OK;
}

/* Step 4: cross attention, image to tokens: keys += attn(q=k+kpe, k=q+qpe, v=queries). */
static samc_status block_keys(samc_error *err, const samc_twoway_block *blk, const float *Q, float *K,
                              const float *qpe, const float *kpe, int Nq, int Nk, int D,
                              block_buf *s)
{
    add_to(s->q, Q, qpe, (int64_t)Nq * D);
    add_to(s->k, K, kpe, (int64_t)Nk * D);
    samc_status st = attention(err, &blk->cross_i2t, s->k, Nk, s->q, Q, Nq, s->tmp);
    if (st)
        return st;
    add_to(K, K, s->tmp, (int64_t)Nk * D);
    samc_ref_layer_norm_rows(K, Nk, &blk->norm4, K);
    return SAMC_OK;
}

/* q, k (B,N,D); their pe have batch B or 1 (broadcast). */
static samc_status check_qk(samc_error *err, const samc_tensor *q, const samc_tensor *k, const samc_tensor *qpe,
                            const samc_tensor *kpe, int D)
{
    const int64_t B = q->shape[0];
    if (q->ndim != 3 || k->ndim != 3 || qpe->ndim != 3 || kpe->ndim != 3 || k->shape[0] != B ||
        q->shape[2] != D || k->shape[2] != D || qpe->shape[1] != q->shape[1] ||
        kpe->shape[1] != k->shape[1] || qpe->shape[2] != D || kpe->shape[2] != D ||
        (qpe->shape[0] != B && qpe->shape[0] != 1) || (kpe->shape[0] != B && kpe->shape[0] != 1))
        return samc_fail(err, SAMC_ERR_SHAPE, "two-way: want q (B,Nq,%d), k (B,Nk,%d) and pe", D,
                         D);
    return SAMC_OK;
}

samc_status samc_ref_twoway_block(samc_ctx *ctx, const samc_twoway_block *blk, const samc_tensor *q,
                                  const samc_tensor *k, const samc_tensor *qpe,
                                  const samc_tensor *kpe, samc_tensor *q_out, samc_tensor *k_out)
{
    const int D = blk->norm1.dim;
    samc_status st = check_qk(ctx->err, q, k, qpe, kpe, D);
    if (st)
        return st;
    if (!samc_tensor_same_shape(q, q_out) || !samc_tensor_same_shape(k, k_out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "two-way block: outputs must match q and k");
    const int B = (int)q->shape[0], Nq = (int)q->shape[1], Nk = (int)k->shape[1];
    const int64_t nq = (int64_t)Nq * D, nk = (int64_t)Nk * D;
    memcpy(q_out->data, q->data, (size_t)(B * nq) * sizeof(float));
    memcpy(k_out->data, k->data, (size_t)(B * nk) * sizeof(float));
    block_buf s = {0};
    if ((st = block_buf_alloc(ctx->err, &s, Nq, Nk, D, blk->mlp_fc1.out)))
        return st;
    for (int b = 0; b < B && !st; b++) {
        float *Q = q_out->data + b * nq, *K = k_out->data + b * nk;
        const float *qp = qpe->data + (qpe->shape[0] == 1 ? 0 : b * nq);
        const float *kp = kpe->data + (kpe->shape[0] == 1 ? 0 : b * nk);
        st = block_queries(ctx->err, blk, Q, K, qp, kp, Nq, Nk, D, &s);
        if (!st)
            st = block_keys(ctx->err, blk, Q, K, qp, kp, Nq, Nk, D, &s);
    }
    block_buf_free(&s);
    return st;
}

/* TwoWayTransformer.forward after the layers:
 * queries = norm_final_attn(queries + final_attn(q=queries+qpe, k=keys+kpe, v=keys)). */
samc_status samc_ref_twoway_final(samc_ctx *ctx, const samc_twoway_transformer *tr,
                                  const samc_tensor *q, const samc_tensor *k,
                                  const samc_tensor *qpe, const samc_tensor *kpe,
                                  samc_tensor *q_out)
{
    const int D = tr->norm_final.dim;
    samc_status st = check_qk(ctx->err, q, k, qpe, kpe, D);
    if (st)
        return st;
    if (!samc_tensor_same_shape(q, q_out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "two-way final: output must match q");
    const int B = (int)q->shape[0], Nq = (int)q->shape[1], Nk = (int)k->shape[1];
    const int64_t nq = (int64_t)Nq * D, nk = (int64_t)Nk * D;
    block_buf s = {0};
    if ((st = block_buf_alloc(ctx->err, &s, Nq, Nk, D, 0)))
        return st;
    for (int b = 0; b < B && !st; b++) {
        const float *Q = q->data + b * nq, *K = k->data + b * nk;
        float *O = q_out->data + b * nq;
        add_to(s.q, Q, qpe->data + (qpe->shape[0] == 1 ? 0 : b * nq), nq);
        add_to(s.k, K, kpe->data + (kpe->shape[0] == 1 ? 0 : b * nk), nk);
        if (!(st = attention(ctx->err, &tr->final_attn, s.q, Nq, s.k, K, Nk, s.tmp))) {
            add_to(O, Q, s.tmp, nq);
            samc_ref_layer_norm_rows(O, Nq, &tr->norm_final, O);
        }
    }
    block_buf_free(&s);
    return st;
}
