/* SPDX-License-Identifier: Apache-2.0 */
/* decoder.c - sam3/model/decoder.py, fast bodies: TransformerDecoderLayer.
 * forward (no DAC: the presence token prepended with a zero query position
 * and a zero bias row, self-attention, text cross-attention, image
 * cross-attention with the boxRPB bias, FFN, each post-norm; attention on
 * fast/sam3/mha.c with the residual adds fused into out_proj and linear2)
 * and the per-layer steps of TransformerDecoder.forward: the query sine
 * embedding + ref_point_head, the boxRPB bias (the box geometry is the
 * core/nn/ code ref uses, its MLPs the shared fast MLP, one call per axis
 * for every box) and the box refinement (out_norm, bbox_embed, then
 * sigmoid(delta + inverse_sigmoid(ref)) with core/nn/box_geom.c: the same
 * float operations as ref). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/box_geom.h"
#include "core/nn/sine_embed.h"
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

samc_status samc_fast_sam3_dec_query_pos(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *ref,
                                         samc_tensor *sine, samc_tensor *query_pos)
{
    const int D = dec->d_model;
    if (ref->ndim != 3 || ref->shape[2] != 4)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "decoder query pos: reference boxes are not (nq,B,4)");
    const int64_t rows = ref->shape[0] * ref->shape[1];
    if (samc_numel(sine) != rows * 2 * D || samc_numel(query_pos) != rows * D || sine->shape[sine->ndim - 1] != 2 * D ||
        query_pos->shape[query_pos->ndim - 1] != D || dec->ref_point_head.layers[0].in != 2 * D)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "decoder query pos: outputs are not (nq,B,%d) and (nq,B,%d)",
                         2 * D, D);
    for (int64_t r = 0; r < rows; r++) /* gen_sineembed_for_position(ref, d_model) */
        samc_sine_embed_box4(ref->data + r * 4, D / 2, sine->data + r * 2 * D);
    samc_status st = samc_fast_mlp(ctx, &dec->ref_point_head, sine, query_pos);
    return st ? samc_fail(ctx->err, st, "decoder query pos: ref_point_head") : SAMC_OK;
}

samc_status samc_fast_sam3_dec_boxrpb(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *ref, int H,
                                      int W, samc_tensor *out)
{
    const int nh = dec->heads;
    if (ref->ndim != 3 || ref->shape[2] != 4 || H < 1 || W < 1)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "boxRPB: reference boxes are not (nq,B,4)");
    const int nq = (int)ref->shape[0], B = (int)ref->shape[1], n_in = dec->boxrpb == SAMC_SAM3_RPB_BOTH ? 4 : 2;
    if (out->ndim != 3 || out->shape[0] != (int64_t)B * nh || out->shape[1] != nq || out->shape[2] != (int64_t)H * W)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "boxRPB: output is not (%d,%d,%d)", B * nh, nq, H * W);
    if (dec->boxrpb == SAMC_SAM3_RPB_NONE || dec->boxrpb_x.layers[0].in != n_in || dec->boxrpb_y.layers[0].in != n_in ||
        dec->boxrpb_x.layers[dec->boxrpb_x.num_layers - 1].out != nh ||
        dec->boxrpb_y.layers[dec->boxrpb_y.num_layers - 1].out != nh)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "boxRPB: mode %d or embed MLP shapes do not fit %d heads",
                         dec->boxrpb, nh);
    /* every box's axis deltas at once, then one MLP call per axis */
    const int64_t nb = (int64_t)B * nq;
    float *dx = malloc((size_t)(nb * W * n_in) * sizeof *dx), *dy = malloc((size_t)(nb * H * n_in) * sizeof *dy);
    float *ex = malloc((size_t)(nb * W * nh) * sizeof *ex), *ey = malloc((size_t)(nb * H * nh) * sizeof *ey);
    samc_status st = SAMC_OK;
    if (!dx || !dy || !ex || !ey)
        st = samc_fail(ctx->err, SAMC_ERR_NOMEM, "boxRPB: buffers");
    for (int64_t k = 0; k < nb && !st; k++) { /* box k = (b, q): ref row q * B + b */
        const int b = (int)(k / nq), q = (int)(k % nq);
        float xyxy[4];
        samc_box_cxcywh_to_xyxy(ref->data + ((int64_t)q * B + b) * 4, xyxy);
        samc_boxrpb_axis(xyxy[0], xyxy[2], W, dec->boxrpb, dx + k * W * n_in); /* deltas_x: x0, x1 */
        samc_boxrpb_axis(xyxy[1], xyxy[3], H, dec->boxrpb, dy + k * H * n_in); /* deltas_y: y0, y1 */
    }
    if (!st) {
        samc_tensor tx = fast_view2(dx, nb * W, n_in), ty = fast_view2(dy, nb * H, n_in);
        samc_tensor ox = fast_view2(ex, nb * W, nh), oy = fast_view2(ey, nb * H, nh);
        if ((st = samc_fast_mlp(ctx, &dec->boxrpb_x, &tx, &ox)) || (st = samc_fast_mlp(ctx, &dec->boxrpb_y, &ty, &oy)))
            st = samc_fail(ctx->err, st, "boxRPB: embed MLP");
    }
    if (!st) {
        const int nt = samc__fast_threads(ctx);
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t k = 0; k < nb; k++) { /* B[b, h, q, y*W + x] = ey[y, h] + ex[x, h] */
            const int b = (int)(k / nq), q = (int)(k % nq);
            const float *exk = ex + k * W * nh, *eyk = ey + k * H * nh;
            for (int hh = 0; hh < nh; hh++) {
                float *o = out->data + (((int64_t)b * nh + hh) * nq + q) * H * W;
                for (int y = 0; y < H; y++)
                    for (int xx = 0; xx < W; xx++)
                        o[(int64_t)y * W + xx] = eyk[(int64_t)y * nh + hh] + exk[(int64_t)xx * nh + hh];
            }
        }
    }
    free(dx), free(dy), free(ex), free(ey);
    return st;
}

samc_status samc_fast_sam3_dec_refine(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *out,
                                      const samc_tensor *ref, samc_tensor *normed, samc_tensor *new_ref)
{
    const int D = dec->d_model;
    if (out->ndim != 3 || out->shape[2] != D || !samc_tensor_same_shape(out, normed) || ref->ndim != 3 ||
        ref->shape[0] != out->shape[0] || ref->shape[1] != out->shape[1] || ref->shape[2] != 4 ||
        !samc_tensor_same_shape(ref, new_ref))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "box refine: out (nq,B,%d), ref/new_ref (nq,B,4) expected", D);
    const int64_t rows = out->shape[0] * out->shape[1];
    samc__fast_layer_norm(samc__fast_threads(ctx), out->data, rows, &dec->norm, normed->data); /* out_norm */
    /* delta_unsig = box_head(out_norm(output)) (use_normed_output_consistently), into new_ref */
    samc_status st = samc_fast_mlp(ctx, &dec->bbox_embed, dec->normed_output_consistently ? normed : out, new_ref);
    if (st)
        return samc_fail(ctx->err, st, "box refine: bbox_embed");
    for (int64_t i = 0; i < rows * 4; i++) /* sigmoid(delta + inverse_sigmoid(ref)) */
        new_ref->data[i] = samc_sigmoidf(new_ref->data[i] + samc_inverse_sigmoidf(ref->data[i], 1e-3f));
    return SAMC_OK;
}
