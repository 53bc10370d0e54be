/* SPDX-License-Identifier: Apache-2.0 */
/* memory_attention.c - ref body of memory_attention.MemoryAttentionLayer
 * with sam.transformer.RoPEAttention (modeling/memory_attention.py,
 * modeling/sam/transformer.py, position_encoding.py). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "ref/ref_ops.h"
#include "core/nn/rope.h"
#include "ref/prims.h"
#include "ref/ref_ops.h"

/* RoPEAttention.forward for one batch item: q (L, dq_in), k (Nk, dk_in),
 * v (Nk, dk_in) -> out (L, dq_in). */
static samc_status rope_attention(samc_error *err, const samc_rope_attention *ra, const float *q_in, int L, const float *k_in,
                                  const float *v_in, int Nk, int num_k_exclude_rope, float *out)
{
    const samc_attention *a = &ra->attn;
    const int D = a->internal_dim, hd = D / a->heads, n_rope = Nk - num_k_exclude_rope;
    int gx = 0, gy = 0;
    samc_status st = samc_rope_grid(err, ra->feat_w, ra->feat_h, L, &gx, &gy);
    if (st)
        return st;
    if (n_rope < 0 || n_rope % L || (!ra->rope_k_repeat && n_rope != L))
        return samc_fail(err, SAMC_ERR_SHAPE, "RoPE attention: %d rotated keys for %d queries", n_rope, L);
    float *q = malloc((size_t)L * D * sizeof *q), *k = malloc((size_t)Nk * D * sizeof *k);
    float *v = malloc((size_t)Nk * D * sizeof *v), *o = malloc((size_t)L * D * sizeof *o);
    float *cs = NULL, *sn = NULL;
    if (!q || !k || !v || !o || samc_rope_table(hd, gx, gy, ra->theta, &cs, &sn)) {
        st = SAMC_ERR_NOMEM;
        goto done;
    }
    samc_ref_linear(q_in, L, &a->q, q);
    samc_ref_linear(k_in, Nk, &a->k, k);
    samc_ref_linear(v_in, Nk, &a->v, v);
    for (int h = 0; h < a->heads && !st; h++) { /* heads are channel blocks of hd */
        samc_rope_apply(q + h * hd, L, hd, D, cs, sn, L);
        samc_rope_apply(k + h * hd, n_rope, hd, D, cs, sn, L); /* tiled over memory frames */
        st = samc_ref_attention_head(q + h * hd, D, k + h * hd, D, v + h * hd, D, L, Nk, hd, hd,
                                     1.0f / sqrtf((float)hd), o + h * hd, D);
    }
    if (!st)
        samc_ref_linear(o, L, &a->out, out);
done:
    free(q), free(k), free(v), free(o), free(cs), free(sn);
    return st;
}

static void add_into(float *dst, const float *a, const float *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = a[i] + b[i];
}

samc_status samc_ref_memory_attention_layer(samc_ctx *ctx, const samc_memory_attention_layer *ly,
                                            const samc_tensor *tgt, const samc_tensor *memory,
                                            const samc_tensor *pos, const samc_tensor *query_pos,
                                            int num_k_exclude_rope, samc_tensor *out)
{
    const int B = (int)tgt->shape[0], L = (int)tgt->shape[1], D = (int)tgt->shape[2];
    const int Nk = (int)memory->shape[1], Dk = (int)memory->shape[2];
    if (tgt->ndim != 3 || memory->ndim != 3 || memory->shape[0] != B || !samc_tensor_same_shape(tgt, out) ||
        (pos && !samc_tensor_same_shape(pos, memory)) || (query_pos && !samc_tensor_same_shape(query_pos, tgt)))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "memory attention layer: inconsistent shapes");
    const int64_t nq = (int64_t)L * D, nk = (int64_t)Nk * Dk;
    float *t2 = malloc((size_t)nq * sizeof *t2), *qq = malloc((size_t)nq * sizeof *qq);
    float *a = malloc((size_t)nq * sizeof *a), *kk = malloc((size_t)nk * sizeof *kk);
    float *hid = malloc((size_t)L * ly->linear1.out * sizeof *hid);
    samc_status st = (!t2 || !qq || !a || !kk || !hid) ? SAMC_ERR_NOMEM : SAMC_OK;
    memcpy(out->data, tgt->data, (size_t)samc_numel(tgt) * sizeof(float));
    for (int b = 0; b < B && !st; b++) {
        float *x = out->data + b * nq;
        const float *qp = query_pos ? query_pos->data + b * nq : NULL;
        const float *mem = memory->data + b * nk, *mp = pos ? pos->data + b * nk : NULL;
        /* _forward_sa: q = k = norm1(x) (+ query_pos), v = norm1(x) */
        samc_ref_layer_norm_rows(x, L, &ly->norm1, t2);
        const float *q_sa = t2;
        if (ly->pos_enc_at_attn && qp)
            add_into(qq, t2, qp, nq), q_sa = qq;
        if ((st = rope_attention(ctx->err, &ly->self_attn, q_sa, L, q_sa, t2, L, 0, a)))
            break;
        add_into(x, x, a, nq);
        /* _forward_ca: q = norm2(x) (+ query_pos), k = memory (+ pos), v = memory */
        samc_ref_layer_norm_rows(x, L, &ly->norm2, t2);
        const float *q_ca = t2, *k_ca = mem;
        if (ly->pos_enc_at_cross_attn_queries && qp)
            add_into(qq, t2, qp, nq), q_ca = qq;
        if (ly->pos_enc_at_cross_attn_keys && mp)
            add_into(kk, mem, mp, nk), k_ca = kk;
        if ((st = rope_attention(ctx->err, &ly->cross_attn, q_ca, L, k_ca, mem, Nk, num_k_exclude_rope, a)))
            break;
        add_into(x, x, a, nq);
        /* FFN: x + linear2(relu(linear1(norm3(x)))) */
        samc_ref_layer_norm_rows(x, L, &ly->norm3, t2);
        samc_ref_linear(t2, L, &ly->linear1, hid);
        samc_ref_relu(hid, (int64_t)L * ly->linear1.out);
        samc_ref_linear(hid, L, &ly->linear2, a);
        add_into(x, x, a, nq);
    }
    free(t2), free(qq), free(a), free(kk), free(hid);
    return st;
}
