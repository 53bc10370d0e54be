/* decoder.c - sam3/model/decoder.py TransformerDecoderLayer.forward (no DAC),
 * fast body: the presence token prepended (zero query position, a zero
 * bias row), self-attention, text cross-attention, image cross-attention
 * with the boxRPB bias, FFN, each post-norm; attention on fast/sam3/mha.c
 * with the residual adds fused into out_proj and linear2. */
#include <string.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/sam3/fast_sam3.h"

static bool shape3(const samc_tensor *t, int64_t a, int64_t b, int64_t c)
{
    return t->ndim == 3 && (a < 0 || t->shape[0] == a) && t->shape[1] == b && t->shape[2] == c;
}

static samc_status check(samc_ctx *ctx, const samc_sam3_dec_layer *l, const samc_tensor *tgt,
                         const samc_tensor *query_pos, const samc_tensor *memory_text, const samc_tensor *text_mask,
                         const samc_tensor *memory, const samc_tensor *memory_pos, const samc_tensor *cam,
                         const samc_tensor *presence, const samc_tensor *out, const samc_tensor *presence_out)
{
    const int D = l->d_model, nh = l->heads;
    if (tgt->ndim != 3 || tgt->shape[2] != D || !samc_tensor_same_shape(tgt, out) ||
        !samc_tensor_same_shape(tgt, query_pos))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "decoder layer: tgt/query_pos/out are not (nq,B,%d)", D);
    const int64_t nq = tgt->shape[0], B = tgt->shape[1];
    if (!shape3(memory, -1, B, D) || (memory_pos && !samc_tensor_same_shape(memory, memory_pos)))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "decoder layer: memory/memory_pos are not (S,%lld,%d)",
                         (long long)B, D);
    if (l->use_text_cross_attention &&
        (!memory_text || !shape3(memory_text, -1, B, D) ||
         (text_mask && (text_mask->ndim != 2 || text_mask->shape[0] != B ||
                        text_mask->shape[1] != memory_text->shape[0]))))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "decoder layer: memory_text/text mask are not (T,%lld,%d)/(%lld,T)",
                         (long long)B, D, (long long)B);
    if (cam && !shape3(cam, B * nh, nq, memory->shape[0]))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "decoder layer: cross_attn_mask is not (%lld,%lld,S)",
                         (long long)(B * nh), (long long)nq);
    if (presence && (!shape3(presence, 1, B, D) || !presence_out || !shape3(presence_out, 1, B, D)))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "decoder layer: presence token/out are not (1,%lld,%d)",
                         (long long)B, D);
    return SAMC_OK;
}

samc_status samc_fast_sam3_dec_layer(samc_ctx *ctx, const samc_sam3_dec_layer *l, const samc_tensor *tgt,
                                     const samc_tensor *query_pos, const samc_tensor *memory_text,
                                     const samc_tensor *text_mask, const samc_tensor *memory,
                                     const samc_tensor *memory_pos, const samc_tensor *cam,
                                     const samc_tensor *presence, samc_tensor *out, samc_tensor *presence_out)
{
    samc_status st = check(ctx, l, tgt, query_pos, memory_text, text_mask, memory, memory_pos, cam, presence, out,
                           presence_out);
    if (st)
        return st;
    const int D = l->d_model, nh = l->heads, nq = (int)tgt->shape[0], B = (int)tgt->shape[1];
    const int S = (int)memory->shape[0], T = l->use_text_cross_attention ? (int)memory_text->shape[0] : 0;
    const int np = presence ? 1 : 0, n = nq + np, hidden = l->linear1.out, nt = samc__fast_threads(ctx);
    size_t ms = samc__fast_sam3_mha_scratch(&l->self_attn, n, n), mc = samc__fast_sam3_mha_scratch(&l->cross_attn, n, S);
    const size_t mt = T ? samc__fast_sam3_mha_scratch(&l->ca_text, n, T) : 0;
    ms = ms > mc ? ms : mc, ms = ms > mt ? ms : mt;
    const size_t counts[6] = {(size_t)n * D, (size_t)n * D, (size_t)n * D, (size_t)S * D,
                              cam ? (size_t)nh * n * S : 1, (size_t)n * hidden > ms ? (size_t)n * hidden : ms};
    float *buf[6];
    if ((st = samc__fast_ws_get(ctx, 6, counts, buf)))
        return samc_fail(ctx->err, st, "decoder layer: out of memory");
    float *x = buf[0], *qp = buf[1], *q = buf[2], *memk = buf[3], *bias = cam ? buf[4] : NULL, *scratch = buf[5];
    const int64_t ld = (int64_t)B * D; /* seq-first rows of one batch element */
    for (int b = 0; b < B; b++) {
        /* tgt = cat([presence_token, tgt]); query pos = cat([zeros, query_pos]) */
        if (np) {
            memcpy(x, presence->data + (int64_t)b * D, (size_t)D * sizeof *x);
            memset(qp, 0, (size_t)D * sizeof *qp);
        }
        for (int i = 0; i < nq; i++) {
            memcpy(x + (int64_t)(np + i) * D, tgt->data + i * ld + (int64_t)b * D, (size_t)D * sizeof *x);
            memcpy(qp + (int64_t)(np + i) * D, query_pos->data + i * ld + (int64_t)b * D, (size_t)D * sizeof *x);
        }
        /* tgt = norm2(tgt + self_attn(tgt + pos, tgt + pos, tgt)) */
        samc__fast_add(q, x, qp, (int64_t)n * D);
        fast_mha_io io = {.q = q, .k = q, .v = x, .ldq = D, .ldk = D, .ldv = D, .Lq = n, .Lk = n, .out = x, .ldo = D,
                          .accumulate = true};
        samc__fast_sam3_mha(ctx, nt, &l->self_attn, &io, scratch);
        samc__fast_layer_norm_rows(x, D, n, &l->norm2, x, D);
        if (T) { /* tgt = catext_norm(tgt + ca_text(tgt + pos, text, text, key_padding_mask)) */
            samc__fast_add(q, x, qp, (int64_t)n * D);
            const float *txt = memory_text->data + (int64_t)b * D;
            io = (fast_mha_io){.q = q, .k = txt, .v = txt, .ldq = D, .ldk = ld, .ldv = ld, .Lq = n, .Lk = T,
                               .kpm = text_mask ? text_mask->data + (int64_t)b * T : NULL, .out = x, .ldo = D,
                               .accumulate = true};
            samc__fast_sam3_mha(ctx, nt, &l->ca_text, &io, scratch);
            samc__fast_layer_norm_rows(x, D, n, &l->catext_norm, x, D);
        }
        for (int hh = 0; hh < nh && bias; hh++) { /* cat([zeros (1 row), cross_attn_mask], dim=1) */
            float *bh = bias + (int64_t)hh * n * S;
            if (np)
                memset(bh, 0, (size_t)S * sizeof *bh);
            memcpy(bh + (int64_t)np * S, cam->data + ((int64_t)b * nh + hh) * nq * S, (size_t)nq * S * sizeof *bh);
        }
        /* tgt = norm1(tgt + cross_attn(tgt + pos, memory + memory_pos, memory, bias)) */
        const float *mem = memory->data + (int64_t)b * D;
        for (int i = 0; i < S; i++) {
            if (memory_pos)
                samc__fast_add(memk + (int64_t)i * D, mem + i * ld, memory_pos->data + i * ld + (int64_t)b * D, D);
            else
                memcpy(memk + (int64_t)i * D, mem + i * ld, (size_t)D * sizeof *memk);
        }
        samc__fast_add(q, x, qp, (int64_t)n * D);
        io = (fast_mha_io){.q = q, .k = memk, .v = mem, .ldq = D, .ldk = D, .ldv = ld, .Lq = n, .Lk = S,
                           .bias = bias, .bias_hstride = (int64_t)n * S, .out = x, .ldo = D, .accumulate = true};
        samc__fast_sam3_mha(ctx, nt, &l->cross_attn, &io, scratch);
        samc__fast_layer_norm_rows(x, D, n, &l->norm1, x, D);
        /* forward_ffn: norm3(tgt + linear2(relu(linear1(tgt)))) */
        samc__fast_linear_x(ctx, nt, x, D, n, &l->linear1, scratch, hidden, FAST_GEMM_RELU);
        samc__fast_linear_x(ctx, nt, scratch, hidden, n, &l->linear2, x, D, FAST_GEMM_ACC);
        samc__fast_layer_norm_rows(x, D, n, &l->norm3, x, D);
        if (np) /* presence_token_out = tgt[:1]; tgt = tgt[1:] */
            memcpy(presence_out->data + (int64_t)b * D, x, (size_t)D * sizeof *x);
        for (int i = 0; i < nq; i++)
            memcpy(out->data + i * ld + (int64_t)b * D, x + (int64_t)(np + i) * D, (size_t)D * sizeof *x);
    }
    return SAMC_OK;
}
