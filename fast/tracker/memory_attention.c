/* SPDX-License-Identifier: Apache-2.0 */
/* memory_attention.c - fast body of memory_attention.MemoryAttentionLayer
 * with sam.transformer.RoPEAttention (modeling/memory_attention.py,
 * modeling/sam/transformer.py). Same steps as ref/tracker/memory_attention.c:
 * projections as threaded GEMMs over token rows, RoPE rotations threaded
 * over tokens with the per-model cached table (tiled over the memory
 * frames), attention by (head, row block) tasks (samc__fast_attention_mh: only a
 * FAST_ATT_BLOCK x Nk score block per thread, never the full matrix), ReLU
 * FFN as GEMMs. Temporaries come from the model's workspace. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/rope.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

/* ---- RoPE tables, cached per model ---------------------------------------- */

enum { ROPE_SLOTS = 4 };
typedef struct rope_entry {
    int hd, gx, gy;
    float theta;
    float *cs, *sn;
} rope_entry;
typedef struct rope_cache {
    rope_entry e[ROPE_SLOTS];
    int next; /* round-robin victim */
} rope_cache;

void samc__fast_rope_cache_free(void *p)
{
    rope_cache *c = p;
    for (int i = 0; i < ROPE_SLOTS; i++)
        free(c->e[i].cs), free(c->e[i].sn);
}

static samc_status rope_table(samc_ctx *ctx, int hd, int gx, int gy, float theta, const float **cs,
                              const float **sn)
{
    rope_cache *c = samc__fast_ws_cache(ctx, FAST_CACHE_ROPE, sizeof *c);
    if (!c)
        return samc_fail(ctx->err, SAMC_ERR_NOMEM, "RoPE: cache");
    for (int i = 0; i < ROPE_SLOTS; i++) {
        const rope_entry *e = &c->e[i];
        if (e->cs && e->hd == hd && e->gx == gx && e->gy == gy && e->theta == theta) {
            *cs = e->cs, *sn = e->sn;
            return SAMC_OK;
        }
    }
    rope_entry *e = &c->e[c->next];
    c->next = (c->next + 1) % ROPE_SLOTS;
    free(e->cs), free(e->sn);
    *e = (rope_entry){0};
    samc_status st = samc_rope_table(hd, gx, gy, theta, &e->cs, &e->sn);
    if (st)
        return st;
    e->hd = hd, e->gx = gx, e->gy = gy, e->theta = theta;
    *cs = e->cs, *sn = e->sn;
    return SAMC_OK;
}

/* Rotate n token rows (ld floats apart) of every head, table tiled. */
static void rope_rows(int nt, float *x, int n, int heads, int hd, int ld, const float *cs, const float *sn,
                      int table_rows)
{
    const int half = hd / 2;
#pragma omp parallel for num_threads(nt) schedule(static) if (n > 256)
    for (int t = 0; t < n; t++) {
        const int r = t % table_rows;
        for (int h = 0; h < heads; h++)
            samc_rope_apply(x + (int64_t)t * ld + h * hd, 1, hd, ld, cs + (size_t)r * half, sn + (size_t)r * half, 1);
    }
}

/* ---- the layer ------------------------------------------------------------ */

typedef struct ma_buf {
    float *t2, *qq, *kk, *a, *hid;  /* norm out, +query_pos, memory+pos, attention/FFN out, FFN hidden */
    float *qp, *kp, *vp, *o;        /* projections (L or Nk rows, C) and heads output */
    float *s;                       /* attention scratch */
} ma_buf;

static int rope_attn_ok(const samc_rope_attention *ra, int D, int Dk)
{
    const samc_attention *a = &ra->attn;
    return a->heads > 0 && a->internal_dim % a->heads == 0 && (a->internal_dim / a->heads) % 4 == 0 &&
           a->q.in == D && a->k.in == Dk && a->v.in == Dk && a->q.out == a->internal_dim &&
           a->k.out == a->internal_dim && a->v.out == a->internal_dim && a->out.in == a->internal_dim &&
           a->out.out == D;
}

/* The cross attention's values are the memory (Nk rows of kv_in_dim 64)
 * projected to C (256): with one head, P (v Wv^T + bv) = (P v) Wv^T + bv
 * (rows of P sum to 1), so the attention reads the 64-wide memory and the
 * projection runs on the L query rows instead of the Nk memory rows: P V
 * costs 2 L Nk 64 instead of 2 L Nk 256 FLOPs (a full bank at 1024: 60 ->
 * 15 GFLOP per layer) and the Nk x C value map is never formed. Keys are
 * rotated after their projection, so they cannot fold. */
static int v_fold_pays(const samc_attention *a)
{
    return a->heads == 1 && a->v.in * 4 <= a->internal_dim * 3;
}

/* RoPEAttention.forward for one batch item: q (L, D), k/v (Nk, Dk) -> out (L, D). */
static samc_status rope_attention(samc_ctx *ctx, int nt, const samc_rope_attention *ra, const float *q_in, int L,
                                  const float *k_in, const float *v_in, int Nk, int num_k_exclude_rope,
                                  float *out, ma_buf *b)
{
    const samc_attention *a = &ra->attn;
    const int C = a->internal_dim, hd = C / a->heads, n_rope = Nk - num_k_exclude_rope;
    int gx = 0, gy = 0;
    samc_status st = samc_rope_grid(ctx->err, ra->feat_w, ra->feat_h, L, &gx, &gy);
    if (st)
        return st;
    if (n_rope < 0 || n_rope % L || (!ra->rope_k_repeat && n_rope != L))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "RoPE attention: %d rotated keys for %d queries", n_rope, L);
    const float *cs = NULL, *sn = NULL;
    if ((st = rope_table(ctx, hd, gx, gy, ra->theta, &cs, &sn)))
        return st;
    const int Dv = a->v.in, fold_v = v_fold_pays(a);
    samc__fast_linear_x(ctx, nt, q_in, a->q.in, L, &a->q, b->qp, C, 0);
    samc__fast_linear_x(ctx, nt, k_in, a->k.in, Nk, &a->k, b->kp, C, 0);
    if (!fold_v)
        samc__fast_linear_x(ctx, nt, v_in, a->v.in, Nk, &a->v, b->vp, C, 0);
    rope_rows(nt, b->qp, L, a->heads, hd, C, cs, sn, L);
    rope_rows(nt, b->kp, n_rope, a->heads, hd, C, cs, sn, L); /* tiled over memory frames */
    const fast_attn at = {.Lq = L, .Lk = Nk, .d = hd, .scale = 1.0f / sqrtf((float)hd), .q = b->qp, .ldq = C,
                          .k = b->kp, .ldk = C, .v = fold_v ? v_in : b->vp, .ldv = fold_v ? Dv : C,
                          .o = fold_v ? b->vp : b->o, .ldo = fold_v ? Dv : C, .dv = fold_v ? Dv : 0};
    if (samc__fast_bf16_attention_on(ctx, &a->q))
        samc__fast_flash_attention_bf16(nt, &at, a->heads, 0, b->s);
    else
        samc__fast_flash_attention(nt, &at, a->heads, 0, b->s);
    if (fold_v) /* softmax(.) (v Wv^T + bv) = (softmax(.) v) Wv^T + bv */
        samc__fast_linear_x(ctx, nt, b->vp, Dv, L, &a->v, b->o, C, 0);
    samc__fast_linear_x(ctx, nt, b->o, C, L, &a->out, out, a->out.out, 0);
    return SAMC_OK;
}

samc_status samc_fast_memory_attention_layer(samc_ctx *ctx, const samc_memory_attention_layer *ly,
                                             const samc_tensor *tgt, const samc_tensor *memory,
                                             const samc_tensor *pos, const samc_tensor *query_pos,
                                             int num_k_exclude_rope, samc_tensor *out)
{
    if (tgt->ndim != 3 || memory->ndim != 3 || memory->shape[0] != tgt->shape[0] ||
        !samc_tensor_same_shape(tgt, out) || (pos && !samc_tensor_same_shape(pos, memory)) ||
        (query_pos && !samc_tensor_same_shape(query_pos, tgt)))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "memory attention layer: inconsistent shapes");
    const int B = (int)tgt->shape[0], L = (int)tgt->shape[1], D = (int)tgt->shape[2];
    const int Nk = (int)memory->shape[1], Dk = (int)memory->shape[2], hidden = ly->linear1.out;
    if (!rope_attn_ok(&ly->self_attn, D, D) || !rope_attn_ok(&ly->cross_attn, D, Dk) || ly->norm1.dim != D ||
        ly->norm2.dim != D || ly->norm3.dim != D || ly->linear1.in != D || ly->linear2.in != hidden ||
        ly->linear2.out != D)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "memory attention layer: weights do not match d_model %d, kv %d", D,
                         Dk);
    const int nt = samc__fast_threads(ctx);
    const samc_attention *sa = &ly->self_attn.attn, *ca = &ly->cross_attn.attn;
    const int C = sa->internal_dim > ca->internal_dim ? sa->internal_dim : ca->internal_dim;
    const int big = L > Nk ? L : Nk;
    size_t s_need = samc__fast_attention_mh_scratch(nt, L, sa->heads, sa->internal_dim / sa->heads);
    const size_t s2 = samc__fast_attention_mh_scratch(nt, Nk, ca->heads, ca->internal_dim / ca->heads);
    s_need = s2 > s_need ? s2 : s_need;
    const int64_t nq = (int64_t)L * D, nk = (int64_t)Nk * Dk;
    const size_t counts[10] = {(size_t)nq,         (size_t)nq,        (size_t)nk,        (size_t)nq,
                               (size_t)L * hidden, (size_t)L * C,     (size_t)big * C,   (size_t)big * C,
                               (size_t)L * C,      s_need};
    float *p[10];
    samc_status st = samc__fast_ws_get(ctx, 10, counts, p);
    if (st)
        return st;
    ma_buf b = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9]};
    memcpy(out->data, tgt->data, (size_t)samc_numel(tgt) * sizeof(float));
    for (int i = 0; i < B; i++) {
        float *x = out->data + i * nq;
        const float *qp = query_pos ? query_pos->data + i * nq : NULL;
        const float *mem = memory->data + i * nk, *mp = pos ? pos->data + i * nk : NULL;
        /* _forward_sa: q = k = norm1(x) (+ query_pos), v = norm1(x) */
        samc__fast_layer_norm(nt, x, L, &ly->norm1, b.t2);
        const float *q_sa = b.t2;
        if (ly->pos_enc_at_attn && qp)
            samc__fast_add_mt(nt, b.qq, b.t2, qp, nq), q_sa = b.qq;
        if ((st = rope_attention(ctx, nt, &ly->self_attn, q_sa, L, q_sa, b.t2, L, 0, b.a, &b)))
            return st;
        samc__fast_add_mt(nt, x, x, b.a, nq);
        /* _forward_ca: q = norm2(x) (+ query_pos), k = memory (+ pos), v = memory */
        samc__fast_layer_norm(nt, x, L, &ly->norm2, b.t2);
        const float *q_ca = b.t2, *k_ca = mem;
        if (ly->pos_enc_at_cross_attn_queries && qp)
            samc__fast_add_mt(nt, b.qq, b.t2, qp, nq), q_ca = b.qq;
        if (ly->pos_enc_at_cross_attn_keys && mp)
            samc__fast_add_mt(nt, b.kk, mem, mp, nk), k_ca = b.kk;
        if ((st = rope_attention(ctx, nt, &ly->cross_attn, q_ca, L, k_ca, mem, Nk, num_k_exclude_rope, b.a, &b)))
            return st;
        samc__fast_add_mt(nt, x, x, b.a, nq);
        /* FFN: x + linear2(relu(linear1(norm3(x)))) */
        samc__fast_layer_norm(nt, x, L, &ly->norm3, b.t2);
        samc__fast_linear_x(ctx, nt, b.t2, D, L, &ly->linear1, b.hid, hidden, 0);
        samc__fast_relu(b.hid, (int64_t)L * hidden);
        samc__fast_linear_x(ctx, nt, b.hid, hidden, L, &ly->linear2, b.a, D, 0);
        samc__fast_add_mt(nt, x, x, b.a, nq);
    }
    return SAMC_OK;
}
