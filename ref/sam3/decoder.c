/* SPDX-License-Identifier: Apache-2.0 */
/* decoder.c - sam3/model/decoder.py: TransformerDecoderLayer.forward (no
 * DAC: eval mode) and the per-layer pieces of TransformerDecoder.forward:
 * the query position (gen_sineembed_for_position + ref_point_head), the
 * box-relative position bias (_get_rpb_matrix), box refinement and the
 * presence head. Everything is sequence-first (nq, B, d). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/box_geom.h"
#include "core/nn/sine_embed.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

#define ERR(ctx) ((ctx) ? (ctx)->err : NULL)

static void add_rows(float *y, const float *a, const float *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

samc_status samc_ref_sam3_dec_layer(samc_ctx *ctx, const samc_sam3_dec_layer *l,
                                    const samc_tensor *tgt, const samc_tensor *query_pos,
                                    const samc_tensor *memory_text, const samc_tensor *text_mask,
                                    const samc_tensor *memory, const samc_tensor *memory_pos,
                                    const samc_tensor *cross_attn_mask,
                                    const samc_tensor *presence, samc_tensor *out,
                                    samc_tensor *presence_out)
{
    samc_error *err = ERR(ctx);
    const int D = l->d_model, nh = l->heads;
    if (tgt->ndim != 3 || tgt->shape[2] != D || !samc_tensor_same_shape(tgt, out) ||
        !samc_tensor_same_shape(tgt, query_pos))
        return samc_fail(err, SAMC_ERR_SHAPE, "decoder layer: tgt/query_pos/out are not (nq,B,%d)", D);
    const int nq = (int)tgt->shape[0], B = (int)tgt->shape[1];
    const int64_t ms[3] = {-1, B, D}, ps[3] = {1, B, D};
    if (!samc_ref_sam3_shape_is(memory, 3, ms) || (memory_pos && !samc_tensor_same_shape(memory, memory_pos)))
        return samc_fail(err, SAMC_ERR_SHAPE, "decoder layer: memory/memory_pos are not (S,%d,%d)", B, D);
    const int S = (int)memory->shape[0];
    const int T = l->use_text_cross_attention ? (memory_text ? (int)memory_text->shape[0] : -1) : 0;
    const int64_t ts[3] = {T, B, D}, tm[2] = {B, T}, cm[3] = {(int64_t)B * nh, nq, S};
    if (l->use_text_cross_attention &&
        (T < 0 || !samc_ref_sam3_shape_is(memory_text, 3, ts) ||
         (text_mask && !samc_ref_sam3_shape_is(text_mask, 2, tm))))
        return samc_fail(err, SAMC_ERR_SHAPE, "decoder layer: memory_text/text mask are not (T,%d,%d)/(%d,T)", B, D, B);
    if (cross_attn_mask && !samc_ref_sam3_shape_is(cross_attn_mask, 3, cm))
        return samc_fail(err, SAMC_ERR_SHAPE, "decoder layer: cross_attn_mask is not (%d,%d,%d)",
                         B * nh, nq, S);
    if ((presence && (!samc_ref_sam3_shape_is(presence, 3, ps) || !presence_out ||
                      !samc_ref_sam3_shape_is(presence_out, 3, ps))))
        return samc_fail(err, SAMC_ERR_SHAPE, "decoder layer: presence token/out are not (1,%d,%d)", B, D);
    const int np = presence ? 1 : 0, n = nq + np, hidden = l->linear1.out;
    const int64_t nd = (int64_t)n * D, sd = (int64_t)S * D;
    float *x = malloc((size_t)nd * sizeof *x), *qp = malloc((size_t)nd * sizeof *qp);
    float *q = malloc((size_t)nd * sizeof *q), *a = malloc((size_t)nd * sizeof *a);
    float *mem = malloc((size_t)sd * sizeof *mem), *memk = malloc((size_t)sd * sizeof *memk);
    float *txt = malloc((size_t)(T > 0 ? T : 1) * D * sizeof *txt);
    float *bias = cross_attn_mask ? malloc((size_t)nh * n * S * sizeof *bias) : NULL;
    float *h = malloc((size_t)hidden * sizeof *h);
    samc_status st = SAMC_OK;
    if (!x || !qp || !q || !a || !mem || !memk || !txt || (cross_attn_mask && !bias) || !h) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "decoder layer: buffers");
        goto done;
    }
    for (int b = 0; b < B && !st; b++) {
        /* tgt = cat([presence_token, tgt]); query pos = cat([zeros, query_pos]) */
        if (np) {
            memcpy(x, presence->data + (int64_t)b * D, (size_t)D * sizeof *x);
            memset(qp, 0, (size_t)D * sizeof *qp);
        }
        samc_ref_sam3_gather(tgt->data, nq, B, D, false, b, x + (int64_t)np * D);
        samc_ref_sam3_gather(query_pos->data, nq, B, D, false, b, qp + (int64_t)np * D);
        /* q = k = tgt + pos; tgt = norm2(tgt + self_attn(q, k, tgt)) */
        add_rows(q, x, qp, nd);
        if ((st = samc_ref_sam3_mha(&l->self_attn, q, n, q, x, n, NULL, NULL, a)))
            break;
        add_rows(x, x, a, nd);
        samc_ref_layer_norm_rows(x, n, &l->norm2, x);
        if (l->use_text_cross_attention) { /* tgt = catext_norm(tgt + ca_text(tgt + pos, text, text)) */
            samc_ref_sam3_gather(memory_text->data, T, B, D, false, b, txt);
            add_rows(q, x, qp, nd);
            st = samc_ref_sam3_mha(&l->ca_text, q, n, txt, txt, T, NULL,
                                   text_mask ? text_mask->data + (int64_t)b * T : NULL, a);
            if (st)
                break;
            add_rows(x, x, a, nd);
            samc_ref_layer_norm_rows(x, n, &l->catext_norm, x);
        }
        /* cross_attn_mask = cat([zeros (bs*nheads, 1, hw), cross_attn_mask], dim=1) */
        for (int hh = 0; hh < nh && bias; hh++) {
            float *bh = bias + (int64_t)hh * n * S;
            if (np)
                memset(bh, 0, (size_t)S * sizeof *bh);
            memcpy(bh + (int64_t)np * S, cross_attn_mask->data + ((int64_t)b * nh + hh) * nq * S,
                   (size_t)nq * S * sizeof *bh);
        }
        /* tgt = norm1(tgt + cross_attn(tgt + pos, memory + memory_pos, memory, bias)) */
        samc_ref_sam3_gather(memory->data, S, B, D, false, b, mem);
        if (memory_pos) {
            samc_ref_sam3_gather(memory_pos->data, S, B, D, false, b, memk);
            add_rows(memk, mem, memk, sd);
        } else {
            memcpy(memk, mem, (size_t)sd * sizeof *memk);
        }
        add_rows(q, x, qp, nd);
        if ((st = samc_ref_sam3_mha(&l->cross_attn, q, n, memk, mem, S, bias, NULL, a)))
            break;
        add_rows(x, x, a, nd);
        samc_ref_layer_norm_rows(x, n, &l->norm1, x);
        for (int i = 0; i < n; i++) { /* forward_ffn: norm3(tgt + linear2(relu(linear1(tgt)))) */
            float *r = x + (int64_t)i * D;
            samc_ref_linear(r, 1, &l->linear1, h);
            samc_ref_relu(h, hidden);
            samc_ref_linear(h, 1, &l->linear2, a);
            add_rows(r, r, a, D);
            samc_ref_layer_norm_rows(r, 1, &l->norm3, r);
        }
        if (np) /* presence_token_out = tgt[:1]; tgt = tgt[1:] */
            memcpy(presence_out->data + (int64_t)b * D, x, (size_t)D * sizeof *x);
        samc_ref_sam3_scatter(x + (int64_t)np * D, nq, B, D, false, b, out->data);
    }
done:
    free(x), free(qp), free(q), free(a), free(mem), free(memk), free(txt), free(bias), free(h);
    return st;
}

samc_status samc_ref_sam3_dec_query_pos(samc_ctx *ctx, const samc_sam3_decoder *dec,
                                        const samc_tensor *ref, samc_tensor *sine,
                                        samc_tensor *query_pos)
{
    const int D = dec->d_model;
    if (ref->ndim != 3 || ref->shape[2] != 4)
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "decoder query pos: reference boxes are not (nq,B,4)");
    const int64_t rows = ref->shape[0] * ref->shape[1];
    const int64_t ss[3] = {ref->shape[0], ref->shape[1], 2 * D}, qs[3] = {ref->shape[0], ref->shape[1], D};
    if (!samc_ref_sam3_shape_is(sine, 3, ss) || !samc_ref_sam3_shape_is(query_pos, 3, qs) ||
        dec->ref_point_head.layers[0].in != 2 * D)
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "decoder query pos: outputs are not (nq,B,%d) and (nq,B,%d)",
                         2 * D, D);
    /* reference_points_input = ref * cat([valid_ratios] * 2) with valid_ratios 1 */
    for (int64_t r = 0; r < rows; r++) /* gen_sineembed_for_position(ref, d_model): y, x, w, h */
        samc_sine_embed_box4(ref->data + r * 4, D / 2, sine->data + r * 2 * D);
    samc_status st = samc_ref_mlp_rows(sine->data, rows, &dec->ref_point_head, query_pos->data);
    return st ? samc_fail(ERR(ctx), st, "decoder query pos: ref_point_head") : SAMC_OK;
}

samc_status samc_ref_sam3_dec_boxrpb(samc_ctx *ctx, const samc_sam3_decoder *dec,
                                     const samc_tensor *ref, int H, int W, samc_tensor *out)
{
    samc_error *err = ERR(ctx);
    const int nh = dec->heads;
    if (ref->ndim != 3 || ref->shape[2] != 4 || H < 1 || W < 1)
        return samc_fail(err, SAMC_ERR_SHAPE, "boxRPB: reference boxes are not (nq,B,4)");
    const int nq = (int)ref->shape[0], B = (int)ref->shape[1];
    const int64_t os[3] = {(int64_t)B * nh, nq, (int64_t)H * W};
    if (!samc_ref_sam3_shape_is(out, 3, os))
        return samc_fail(err, SAMC_ERR_SHAPE, "boxRPB: output is not (%d,%d,%d)", B * nh, nq, H * W);
    const int n_in = dec->boxrpb == SAMC_SAM3_RPB_BOTH ? 4 : 2;
    if (dec->boxrpb == SAMC_SAM3_RPB_NONE || dec->boxrpb_x.layers[0].in != n_in ||
        dec->boxrpb_y.layers[0].in != n_in ||
        dec->boxrpb_x.layers[dec->boxrpb_x.num_layers - 1].out != nh ||
        dec->boxrpb_y.layers[dec->boxrpb_y.num_layers - 1].out != nh)
        return samc_fail(err, SAMC_ERR_SHAPE, "boxRPB: mode %d or embed MLP shapes do not fit %d heads",
                         dec->boxrpb, nh);
    float *dx = malloc((size_t)W * n_in * sizeof *dx), *dy = malloc((size_t)H * n_in * sizeof *dy);
    float *ex = malloc((size_t)W * nh * sizeof *ex), *ey = malloc((size_t)H * nh * sizeof *ey);
    samc_status st = SAMC_OK;
    if (!dx || !dy || !ex || !ey) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "boxRPB: buffers");
        goto done;
    }
    for (int b = 0; b < B && !st; b++)
        for (int q = 0; q < nq && !st; q++) {
            float xyxy[4];
            samc_box_cxcywh_to_xyxy(ref->data + ((int64_t)q * B + b) * 4, xyxy);
            samc_boxrpb_axis(xyxy[0], xyxy[2], W, dec->boxrpb, dx); /* deltas_x: x0, x1 */
            samc_boxrpb_axis(xyxy[1], xyxy[3], H, dec->boxrpb, dy); /* deltas_y: y0, y1 */
            if ((st = samc_ref_mlp_rows(dx, W, &dec->boxrpb_x, ex)) || (st = samc_ref_mlp_rows(dy, H, &dec->boxrpb_y, ey)))
                break;
            for (int hh = 0; hh < nh; hh++) { /* B[b, h, q, y*W + x] = ey[y, h] + ex[x, h] */
                float *o = out->data + (((int64_t)b * nh + hh) * nq + q) * H * W;
                for (int y = 0; y < H; y++)
                    for (int xx = 0; xx < W; xx++)
                        o[(int64_t)y * W + xx] = ey[(int64_t)y * nh + hh] + ex[(int64_t)xx * nh + hh];
            }
        }
    if (st)
        st = samc_fail(err, st, "boxRPB: embed MLP");
done:
    free(dx), free(dy), free(ex), free(ey);
    return st;
}

samc_status samc_ref_sam3_dec_refine(samc_ctx *ctx, const samc_sam3_decoder *dec,
                                     const samc_tensor *out, const samc_tensor *ref,
                                     samc_tensor *normed, samc_tensor *new_ref)
{
    const int D = dec->d_model;
    if (out->ndim != 3 || out->shape[2] != D || !samc_tensor_same_shape(out, normed) ||
        ref->ndim != 3 || ref->shape[0] != out->shape[0] || ref->shape[1] != out->shape[1] ||
        ref->shape[2] != 4 || !samc_tensor_same_shape(ref, new_ref))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "box refine: out (nq,B,%d), ref/new_ref (nq,B,4) expected", D);
    const int64_t rows = out->shape[0] * out->shape[1];
    samc_ref_layer_norm_rows(out->data, rows, &dec->norm, normed->data); /* out_norm(output) */
    float *delta = malloc((size_t)rows * 4 * sizeof *delta);
    if (!delta)
        return samc_fail(ERR(ctx), SAMC_ERR_NOMEM, "box refine: deltas");
    /* delta_unsig = box_head(out_norm(output)) (use_normed_output_consistently) */
    samc_status st = samc_ref_mlp_rows(dec->normed_output_consistently ? normed->data : out->data, rows,
                                  &dec->bbox_embed, delta);
    for (int64_t i = 0; i < rows * 4 && !st; i++) /* sigmoid(delta + inverse_sigmoid(ref)) */
        new_ref->data[i] = samc_sigmoidf(delta[i] + samc_inverse_sigmoidf(ref->data[i], 1e-3f));
    free(delta);
    return st ? samc_fail(ERR(ctx), st, "box refine: bbox_embed") : SAMC_OK;
}

