/* SPDX-License-Identifier: Apache-2.0 */
/* encoder.c - sam3/model/encoder.py TransformerEncoderLayer.forward_pre (the
 * layer of the fusion encoder and of the geometry encoder). */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

#define ERR(ctx) ((ctx) ? (ctx)->err : NULL)

/* (L, B, C) or (B, L, C): the sequence length and batch of t. */
static void seq_dims(const samc_tensor *t, bool batch_first, int *L, int *B)
{
    *L = (int)t->shape[batch_first ? 1 : 0];
    *B = (int)t->shape[batch_first ? 0 : 1];
}

static void add_rows(float *y, const float *a, const float *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

samc_status samc_ref_sam3_enc_layer(samc_ctx *ctx, const samc_sam3_enc_layer *l,
                                    const samc_tensor *tgt, const samc_tensor *memory,
                                    const samc_tensor *tgt_kpm, const samc_tensor *mem_kpm,
                                    const samc_tensor *pos, const samc_tensor *query_pos,
                                    samc_tensor *out)
{
    const int C = l->d_model;
    const bool bf = l->batch_first;
    if (tgt->ndim != 3 || tgt->shape[2] != C || memory->ndim != 3 || memory->shape[2] != C ||
        !samc_tensor_same_shape(tgt, out))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "encoder layer: tgt/memory/out are not 3-D with %d channels", C);
    int L, B, S, Bm;
    seq_dims(tgt, bf, &L, &B);
    seq_dims(memory, bf, &S, &Bm);
    const int64_t kq[2] = {B, L}, km[2] = {B, S};
    if (Bm != B || (pos && !samc_tensor_same_shape(pos, memory)) ||
        (query_pos && !samc_tensor_same_shape(query_pos, tgt)) ||
        (tgt_kpm && !samc_ref_sam3_shape_is(tgt_kpm, 2, kq)) ||
        (mem_kpm && !samc_ref_sam3_shape_is(mem_kpm, 2, km)))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE,
                         "encoder layer: batch, pos or padding-mask shapes do not match tgt (%d "
                         "tokens) and memory (%d tokens), batch %d", L, S, B);
    const int hidden = l->linear1.out;
    const int64_t n = (int64_t)L * C, m = (int64_t)S * C;
    float *x = malloc((size_t)n * sizeof *x), *xn = malloc((size_t)n * sizeof *xn);
    float *q = malloc((size_t)n * sizeof *q), *a = malloc((size_t)n * sizeof *a);
    float *mem = malloc((size_t)m * sizeof *mem), *memk = malloc((size_t)m * sizeof *memk);
    float *tmp = malloc((size_t)(n > m ? n : m) * sizeof *tmp);
    float *h = malloc((size_t)hidden * sizeof *h);
    samc_status st = SAMC_OK;
    if (!x || !xn || !q || !a || !mem || !memk || !tmp || !h) {
        st = samc_fail(ERR(ctx), SAMC_ERR_NOMEM, "encoder layer: buffers");
        goto done;
    }
    for (int b = 0; b < B && !st; b++) {
        const float *tkpm = tgt_kpm ? tgt_kpm->data + (int64_t)b * L : NULL;
        const float *mkpm = mem_kpm ? mem_kpm->data + (int64_t)b * S : NULL;
        samc_ref_sam3_gather(tgt->data, L, B, C, bf, b, x);
        samc_ref_sam3_gather(memory->data, S, B, C, bf, b, mem);
        /* tgt2 = norm1(tgt); q = k = tgt2 + query_pos (pos_enc_at_attn) */
        samc_ref_layer_norm_rows(x, L, &l->norm1, xn);
        if (l->pos_at_attn && query_pos) {
            samc_ref_sam3_gather(query_pos->data, L, B, C, bf, b, tmp);
            add_rows(q, xn, tmp, n);
        } else {
            memcpy(q, xn, (size_t)n * sizeof *q);
        }
        st = samc_ref_sam3_mha(&l->self_attn, q, L, q, xn, L, NULL, tkpm, a);
        if (st)
            break;
        add_rows(x, x, a, n); /* tgt = tgt + dropout1(tgt2) */
        /* tgt2 = norm2(tgt); cross_attn_image(query, key = memory [+ pos], value = memory) */
        samc_ref_layer_norm_rows(x, L, &l->norm2, xn);
        if (l->pos_at_cross_queries && query_pos) {
            samc_ref_sam3_gather(query_pos->data, L, B, C, bf, b, tmp);
            add_rows(q, xn, tmp, n);
        } else {
            memcpy(q, xn, (size_t)n * sizeof *q);
        }
        if (l->pos_at_cross_keys && pos) {
            samc_ref_sam3_gather(pos->data, S, B, C, bf, b, tmp);
            add_rows(memk, mem, tmp, m);
        } else {
            memcpy(memk, mem, (size_t)m * sizeof *memk);
        }
        st = samc_ref_sam3_mha(&l->cross_attn, q, L, memk, mem, S, NULL, mkpm, a);
        if (st)
            break;
        add_rows(x, x, a, n); /* tgt = tgt + dropout2(tgt2) */
        for (int i = 0; i < L; i++) { /* tgt = tgt + linear2(relu(linear1(norm3(tgt)))) */
            float *r = x + (int64_t)i * C;
            samc_ref_layer_norm_rows(r, 1, &l->norm3, xn);
            samc_ref_linear(xn, 1, &l->linear1, h);
            samc_ref_relu(h, hidden);
            samc_ref_linear(h, 1, &l->linear2, a);
            add_rows(r, r, a, C);
        }
        samc_ref_sam3_scatter(x, L, B, C, bf, b, out->data);
    }
done:
    free(x), free(xn), free(q), free(a), free(mem), free(memk), free(tmp), free(h);
    return st;
}

