/* SPDX-License-Identifier: Apache-2.0 */
/* encoder.c - sam3/model/encoder.py TransformerEncoderLayer.forward_pre (the
 * fusion encoder's and the geometry encoder's layer), fast body. Rows of
 * one batch element are read in place (seq-first rows are B*C apart), the
 * attention is fast/sam3/mha.c, the residual adds are fused into out_proj
 * and the second FFN GEMM. */
#include <string.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/sam3/fast_sam3.h"

/* y[i] = a[i] (+ p[i]) over L rows of C (a, p rows lda / ldp apart; y dense). */
static void add_pos(const float *a, int64_t lda, const float *p, int64_t ldp, int64_t L, int C, float *y)
{
    for (int64_t i = 0; i < L; i++) {
        if (p)
            samc__fast_add(y + i * C, a + i * lda, p + i * ldp, C);
        else
            memcpy(y + i * C, a + i * lda, (size_t)C * sizeof *y);
    }
}

samc_status samc_fast_sam3_enc_layer(samc_ctx *ctx, const samc_sam3_enc_layer *l, const samc_tensor *tgt,
                                     const samc_tensor *memory, const samc_tensor *tgt_kpm,
                                     const samc_tensor *mem_kpm, const samc_tensor *pos,
                                     const samc_tensor *query_pos, samc_tensor *out)
{
    const int C = l->d_model;
    const bool bf = l->batch_first;
    if (tgt->ndim != 3 || tgt->shape[2] != C || memory->ndim != 3 || memory->shape[2] != C ||
        !samc_tensor_same_shape(tgt, out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "encoder layer: tgt/memory/out are not 3-D with %d channels", C);
    const int L = (int)tgt->shape[bf ? 1 : 0], B = (int)tgt->shape[bf ? 0 : 1];
    const int S = (int)memory->shape[bf ? 1 : 0], Bm = (int)memory->shape[bf ? 0 : 1];
    if (Bm != B || (pos && !samc_tensor_same_shape(pos, memory)) ||
        (query_pos && !samc_tensor_same_shape(query_pos, tgt)) ||
        (tgt_kpm && (tgt_kpm->ndim != 2 || tgt_kpm->shape[0] != B || tgt_kpm->shape[1] != L)) ||
        (mem_kpm && (mem_kpm->ndim != 2 || mem_kpm->shape[0] != B || mem_kpm->shape[1] != S)))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE,
                         "encoder layer: batch, pos or padding-mask shapes do not match tgt (%d tokens) and "
                         "memory (%d tokens), batch %d", L, S, B);
    const int hidden = l->linear1.out, nt = samc__fast_threads(ctx);
    const size_t ms = samc__fast_sam3_mha_scratch(&l->self_attn, L, L), mc = samc__fast_sam3_mha_scratch(&l->cross_attn, L, S);
    const size_t counts[4] = {(size_t)L * C, (size_t)L * C, (size_t)S * C, (size_t)L * hidden + (ms > mc ? ms : mc)};
    float *buf[4];
    samc_status st = samc__fast_ws_get(ctx, 4, counts, buf);
    if (st)
        return samc_fail(ctx->err, st, "encoder layer: out of memory");
    float *xn = buf[0], *q = buf[1], *memk = buf[2], *h = buf[3], *scratch = buf[3];
    memcpy(out->data, tgt->data, (size_t)samc_numel(tgt) * sizeof *out->data);
    const int64_t ldt = bf ? C : (int64_t)B * C, ldm = bf ? C : (int64_t)B * C;
    for (int b = 0; b < B; b++) {
        const int64_t ot = bf ? (int64_t)b * L * C : (int64_t)b * C, om = bf ? (int64_t)b * S * C : (int64_t)b * C;
        float *x = out->data + ot;
        const float *mem = memory->data + om, *qp = query_pos ? query_pos->data + ot : NULL;
        /* tgt2 = norm1(tgt); q = k = tgt2 + query_pos (pos_enc_at_attn); v = tgt2 */
        samc__fast_layer_norm_rows(x, ldt, L, &l->norm1, xn, C);
        add_pos(xn, C, l->pos_at_attn ? qp : NULL, ldt, L, C, q);
        fast_mha_io io = {.q = q, .k = q, .v = xn, .ldq = C, .ldk = C, .ldv = C, .Lq = L, .Lk = L,
                          .kpm = tgt_kpm ? tgt_kpm->data + (int64_t)b * L : NULL, .out = x, .ldo = ldt,
                          .accumulate = true};
        samc__fast_sam3_mha(ctx, nt, &l->self_attn, &io, scratch);
        /* tgt2 = norm2(tgt); cross_attn_image(query [+ pos], key = memory [+ pos], value = memory) */
        samc__fast_layer_norm_rows(x, ldt, L, &l->norm2, xn, C);
        add_pos(xn, C, l->pos_at_cross_queries ? qp : NULL, ldt, L, C, q);
        add_pos(mem, ldm, l->pos_at_cross_keys && pos ? pos->data + om : NULL, ldm, S, C, memk);
        io = (fast_mha_io){.q = q, .k = memk, .v = mem, .ldq = C, .ldk = C, .ldv = ldm, .Lq = L, .Lk = S,
                           .kpm = mem_kpm ? mem_kpm->data + (int64_t)b * S : NULL, .out = x, .ldo = ldt,
                           .accumulate = true};
        samc__fast_sam3_mha(ctx, nt, &l->cross_attn, &io, scratch);
        /* tgt = tgt + linear2(relu(linear1(norm3(tgt)))) */
        samc__fast_layer_norm_rows(x, ldt, L, &l->norm3, xn, C);
        samc__fast_linear_x(ctx, nt, xn, C, L, &l->linear1, h, hidden, FAST_GEMM_RELU);
        samc__fast_linear_x(ctx, nt, h, hidden, L, &l->linear2, x, ldt, FAST_GEMM_ACC);
    }
    return SAMC_OK;
}

