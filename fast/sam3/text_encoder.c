/* SPDX-License-Identifier: Apache-2.0 */
/* text_encoder.c - sam3/model/text_encoder_ve.py, fast bodies: the token
 * embedding, ResidualAttentionBlock (the attention is fast/sam3/mha.c, the
 * residual adds fused into out_proj and the second MLP GEMM), the
 * TextTransformer's tail (ln_final, the text projection) and
 * VETextEncoder's resizer. */
#include <math.h>
#include <string.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/sam3/fast_sam3.h"

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

samc_status samc_fast_sam3_text_block(samc_ctx *ctx, const samc_sam3_text_block *blk, const samc_tensor *x,
                                      const samc_tensor *attn_mask, samc_tensor *out)
{
    const int Wd = blk->width;
    if (x->ndim != 3 || x->shape[2] != Wd || !samc_tensor_same_shape(x, out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "text block: input/output are not (B,L,%d)", Wd);
    const int B = (int)x->shape[0], L = (int)x->shape[1];
    if (attn_mask && (attn_mask->ndim != 2 || attn_mask->shape[0] != L || attn_mask->shape[1] != L))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "text block: attn_mask is not (%d,%d)", L, L);
    const int hidden = blk->c_fc.out, nt = samc__fast_threads(ctx);
    const size_t counts[2] = {(size_t)L * Wd, (size_t)L * hidden + samc__fast_sam3_mha_scratch(&blk->attn, L, L)};
    float *buf[2];
    samc_status st = samc__fast_ws_get(ctx, 2, counts, buf);
    if (st)
        return samc_fail(ctx->err, st, "text block: out of memory");
    float *n = buf[0], *h = buf[1];
    memcpy(out->data, x->data, (size_t)samc_numel(x) * sizeof *out->data);
    for (int b = 0; b < B; b++) {
        float *xb = out->data + (int64_t)b * L * Wd;
        samc__fast_layer_norm_rows(xb, Wd, L, &blk->ln_1, n, Wd); /* x = x + attn(ln_1(x), mask) */
        const fast_mha_io io = {.q = n, .k = n, .v = n, .ldq = Wd, .ldk = Wd, .ldv = Wd, .Lq = L, .Lk = L,
                                .bias = attn_mask ? attn_mask->data : NULL, .out = xb, .ldo = Wd,
                                .accumulate = true};
        samc__fast_sam3_mha(ctx, nt, &blk->attn, &io, h);
        samc__fast_layer_norm_rows(xb, Wd, L, &blk->ln_2, n, Wd); /* x = x + mlp(ln_2(x)) */
        samc__fast_linear_x(ctx, nt, n, Wd, L, &blk->c_fc, h, hidden, FAST_GEMM_GELU);
        samc__fast_linear_x(ctx, nt, h, hidden, L, &blk->c_proj, xb, Wd, FAST_GEMM_ACC);
    }
    return SAMC_OK;
}

samc_status samc_fast_sam3_text_final(samc_ctx *ctx, const samc_sam3_text_encoder *enc, const samc_tensor *x,
                                      samc_tensor *tokens, samc_tensor *proj)
{
    const int Wd = enc->width, P = enc->proj_dim;
    if (x->ndim != 3 || x->shape[2] != Wd || !samc_tensor_same_shape(x, tokens))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "text final: input/tokens are not (B,L,%d)", Wd);
    const int64_t rows = x->shape[0] * x->shape[1];
    if (proj && (!enc->text_projection || proj->ndim != 3 || proj->shape[0] != x->shape[0] ||
                 proj->shape[1] != x->shape[1] || proj->shape[2] != P))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "text final: projection output is not (B,L,%d)", P);
    if (enc->has_ln_final)
        samc__fast_layer_norm(samc__fast_threads(ctx), x->data, rows, &enc->ln_final, tokens->data);
    else
        memcpy(tokens->data, x->data, (size_t)(rows * Wd) * sizeof *tokens->data);
    if (proj) /* tokens @ text_projection (width x output_dim) */
        samc__fast_sgemm((int)rows, P, Wd, tokens->data, Wd, 1, enc->text_projection, P, 0, proj->data, P, 0);
    return SAMC_OK;
}

samc_status samc_fast_sam3_text_resize(samc_ctx *ctx, const samc_sam3_text_encoder *enc, const samc_tensor *tokens,
                                       samc_tensor *out)
{
    const int Wd = enc->width, D = enc->resizer.out;
    if (tokens->ndim != 3 || tokens->shape[2] != Wd || enc->resizer.in != Wd)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "text resize: input is not (B,L,%d)", Wd);
    const int B = (int)tokens->shape[0], L = (int)tokens->shape[1];
    if (out->ndim != 3 || out->shape[0] != L || out->shape[1] != B || out->shape[2] != D)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "text resize: output is not (%d,%d,%d)", L, B, D);
    const int nt = samc__fast_threads(ctx);
    for (int b = 0; b < B; b++) /* resizer(text_memory.transpose(0, 1)) */
        samc__fast_linear_x(ctx, nt, tokens->data + (int64_t)b * L * Wd, Wd, L, &enc->resizer,
                            out->data + (int64_t)b * D, (int64_t)B * D, 0);
    return SAMC_OK;
}
