/* heads.c - the small SAM 3 kinds around the decoder, fast bodies: the
 * token embedding, the query sine embedding + ref_point_head, the boxRPB
 * bias, the presence head and the dot-product scoring. The geometry
 * (sine embedding, box conversion, boxRPB deltas) is the shared
 * core/nn/ code ref uses; the MLPs are SAM 2's fast MLP, the linears and
 * LayerNorms fast's. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/box_geom.h"
#include "core/nn/sine_embed.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"
#include "fast/sam3/fast_sam3.h"

/* A (rows, cols) view of data for the MLP bodies. */
static samc_tensor view2(float *data, int64_t rows, int64_t cols)
{
    samc_tensor t = {0};
    t.data = data, t.ndim = 2, t.shape[0] = rows, t.shape[1] = cols, t.owns = false;
    return t;
}

samc_status samc_fast_sam3_text_embed(samc_ctx *ctx, const samc_sam3_text_encoder *enc, const samc_tensor *ids,
                                      samc_tensor *out)
{
    const int Wd = enc->width;
    if (ids->ndim != 2)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "text embed: token ids are not (B,L)");
    const int B = (int)ids->shape[0], L = (int)ids->shape[1];
    if (L > enc->context_length || out->ndim != 3 || out->shape[0] != B || out->shape[1] != L || out->shape[2] != Wd)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "text embed: %d tokens (context %d) or output not (%d,%d,%d)", L,
                         enc->context_length, B, L, Wd);
    for (int64_t i = 0; i < (int64_t)B * L; i++) {
        const float idf = ids->data[i];
        if (!(idf >= 0.0f && idf < (float)enc->vocab) || idf != floorf(idf))
            return samc_fail(ctx->err, SAMC_ERR_ARG, "text embed: token id %g outside [0,%d)", (double)idf,
                             enc->vocab);
        /* x = token_embedding(text) + positional_embedding[:L] */
        samc__fast_add(out->data + i * Wd, enc->token_embedding + (int64_t)idf * Wd,
                       enc->positional_embedding + (i % L) * Wd, Wd);
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

samc_status samc_fast_sam3_dec_presence(samc_ctx *ctx, const samc_sam3_decoder *dec, const samc_tensor *presence,
                                        samc_tensor *out)
{
    const int D = dec->d_model;
    if (presence->ndim != 3 || presence->shape[0] != 1 || presence->shape[2] != D || out->ndim != 2 ||
        out->shape[0] != 1 || out->shape[1] != presence->shape[1] ||
        dec->presence_head.layers[dec->presence_head.num_layers - 1].out != 1)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "presence head: input (1,B,%d) -> (1,B) expected", D);
    const int64_t B = presence->shape[1];
    float *n = malloc((size_t)(B * D) * sizeof *n);
    if (!n)
        return samc_fail(ctx->err, SAMC_ERR_NOMEM, "presence head");
    samc__fast_layer_norm(samc__fast_threads(ctx), presence->data, B, &dec->presence_out_norm, n);
    /* the clamp to +-10 in the official code discards its result: no clamp */
    samc_tensor x = view2(n, B, D), y = view2(out->data, B, 1);
    samc_status st = samc_fast_mlp(ctx, &dec->presence_head, &x, &y);
    free(n);
    return st ? samc_fail(ctx->err, st, "presence head") : SAMC_OK;
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
        samc_tensor tx = view2(dx, nb * W, n_in), ty = view2(dy, nb * H, n_in);
        samc_tensor ox = view2(ex, nb * W, nh), oy = view2(ey, nb * H, nh);
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

samc_status samc_fast_sam3_dot_scoring(samc_ctx *ctx, const samc_sam3_scoring *s, const samc_tensor *hs,
                                       const samc_tensor *prompt, const samc_tensor *prompt_mask, samc_tensor *out)
{
    const int D = s->d_model, P = s->d_proj;
    if (hs->ndim != 4 || hs->shape[3] != D || prompt->ndim != 3 || prompt->shape[2] != D ||
        prompt->shape[1] != hs->shape[1])
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "dot scoring: hs (Ly,B,Q,%d) and prompt (T,B,%d) expected", D, D);
    const int Ly = (int)hs->shape[0], B = (int)hs->shape[1], Q = (int)hs->shape[2], T = (int)prompt->shape[0];
    if (prompt_mask->ndim != 2 || prompt_mask->shape[0] != B || prompt_mask->shape[1] != T || out->ndim != 4 ||
        out->shape[0] != Ly || out->shape[1] != B || out->shape[2] != Q || out->shape[3] != 1)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "dot scoring: prompt_mask (%d,%d) and out (%d,%d,%d,1) expected",
                         B, T, Ly, B, Q);
    const int nt = samc__fast_threads(ctx);
    const int64_t rows = (int64_t)T * B, hrows = (int64_t)Ly * B * Q;
    float *p = malloc((size_t)(rows * D) * sizeof *p), *pooled = malloc((size_t)(B * D) * sizeof *pooled);
    float *pp = malloc((size_t)(B * P) * sizeof *pp), *ph = malloc((size_t)(hrows * P) * sizeof *ph);
    samc_status st = (!p || !pooled || !pp || !ph) ? samc_fail(ctx->err, SAMC_ERR_NOMEM, "dot scoring: buffers")
                                                    : SAMC_OK;
    if (!st && s->has_prompt_mlp) { /* prompt = out_norm(prompt_mlp(prompt) [+ prompt]) */
        samc_tensor po = view2(p, rows, D);
        if ((st = samc_fast_mlp(ctx, &s->prompt_mlp, &(samc_tensor){.data = prompt->data, .ndim = 2,
                                                                     .shape = {rows, D}}, &po)))
            st = samc_fail(ctx->err, st, "dot scoring: prompt_mlp");
        if (!st && s->prompt_mlp_residual)
            samc__fast_add(p, p, prompt->data, rows * D);
        if (!st && s->has_prompt_mlp_norm)
            samc__fast_layer_norm(nt, p, rows, &s->prompt_mlp_norm, p);
    } else if (!st) {
        memcpy(p, prompt->data, (size_t)(rows * D) * sizeof *p);
    }
    for (int b = 0; b < B && !st; b++) { /* mean_pool_text: valid tokens / clamp(#valid, min=1) */
        double nvalid = 0;
        for (int t = 0; t < T; t++)
            nvalid += prompt_mask->data[(int64_t)b * T + t] == 0.0f;
        const float nv = (float)(nvalid < 1.0 ? 1.0 : nvalid);
        for (int c = 0; c < D; c++) {
            double acc = 0;
            for (int t = 0; t < T; t++)
                if (prompt_mask->data[(int64_t)b * T + t] == 0.0f)
                    acc += p[((int64_t)t * B + b) * D + c];
            pooled[(int64_t)b * D + c] = (float)acc / nv;
        }
    }
    if (!st) {
        samc__fast_linear_x(ctx, nt, pooled, D, B, &s->prompt_proj, pp, P, 0); /* prompt_proj(pooled) */
        samc__fast_linear_x(ctx, nt, hs->data, D, hrows, &s->hs_proj, ph, P, 0); /* hs_proj(hs) */
        const float scale = (float)(1.0 / sqrt((double)P));
        for (int64_t r = 0; r < hrows; r++) { /* (hs_proj . prompt_proj) * scale, clamped */
            const float *a = ph + r * P, *c = pp + ((r / Q) % B) * P;
            double acc = 0;
            for (int k = 0; k < P; k++)
                acc += (double)a[k] * c[k];
            float v = (float)acc * scale;
            if (s->clamp)
                v = v < -s->clamp_max ? -s->clamp_max : (v > s->clamp_max ? s->clamp_max : v);
            out->data[r] = v;
        }
    }
    free(p), free(pooled), free(pp), free(ph);
    return st;
}
