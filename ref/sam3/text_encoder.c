/* SPDX-License-Identifier: Apache-2.0 */
/* text_encoder.c - sam3/model/text_encoder_ve.py: TextTransformer (token and
 * positional embeddings, ResidualAttentionBlock, ln_final, text_projection)
 * and VETextEncoder's resizer. The transformer is batch-first (B, L, W). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

#define ERR(ctx) ((ctx) ? (ctx)->err : NULL)

samc_status samc_ref_sam3_text_embed(samc_ctx *ctx, const samc_sam3_text_encoder *enc,
                                     const samc_tensor *ids, samc_tensor *out)
{
    const int Wd = enc->width;
    if (ids->ndim != 2)
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "text embed: token ids are not (B,L)");
    const int B = (int)ids->shape[0], L = (int)ids->shape[1];
    const int64_t want[3] = {B, L, Wd};
    if (L > enc->context_length || !samc_ref_sam3_shape_is(out, 3, want))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE,
                         "text embed: %d tokens (context %d) or output not (%d,%d,%d)", L,
                         enc->context_length, B, L, Wd);
    for (int b = 0; b < B; b++)
        for (int l = 0; l < L; l++) {
            const float idf = ids->data[(int64_t)b * L + l];
            if (!(idf >= 0.0f && idf < (float)enc->vocab) || idf != floorf(idf))
                return samc_fail(ERR(ctx), SAMC_ERR_ARG, "text embed: token id %g outside [0,%d)",
                                 (double)idf, enc->vocab);
            const float *te = enc->token_embedding + (int64_t)idf * Wd;
            const float *pe = enc->positional_embedding + (int64_t)l * Wd;
            float *o = out->data + ((int64_t)b * L + l) * Wd;
            for (int c = 0; c < Wd; c++) /* x = token_embedding(text); x = x + positional_embedding[:L] */
                o[c] = te[c] + pe[c];
        }
    return SAMC_OK;
}

samc_status samc_ref_sam3_text_block(samc_ctx *ctx, const samc_sam3_text_block *blk,
                                     const samc_tensor *x, const samc_tensor *attn_mask,
                                     samc_tensor *out)
{
    const int Wd = blk->width;
    if (x->ndim != 3 || x->shape[2] != Wd || !samc_tensor_same_shape(x, out))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "text block: input/output are not (B,L,%d)", Wd);
    const int B = (int)x->shape[0], L = (int)x->shape[1];
    const int64_t mshape[2] = {L, L};
    if (attn_mask && !samc_ref_sam3_shape_is(attn_mask, 2, mshape))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "text block: attn_mask is not (%d,%d)", L, L);
    const int hidden = blk->c_fc.out;
    float *n = malloc((size_t)L * Wd * sizeof *n), *a = malloc((size_t)L * Wd * sizeof *a);
    float *bias = attn_mask ? malloc((size_t)blk->heads * L * L * sizeof *bias) : NULL;
    float *h = malloc((size_t)hidden * sizeof *h);
    samc_status st = SAMC_OK;
    if (!n || !a || !h || (attn_mask && !bias)) {
        st = samc_fail(ERR(ctx), SAMC_ERR_NOMEM, "text block: buffers");
        goto done;
    }
    for (int hh = 0; hh < blk->heads && bias; hh++) /* a 2-D mask is broadcast over heads */
        memcpy(bias + (int64_t)hh * L * L, attn_mask->data, (size_t)L * L * sizeof *bias);
    memcpy(out->data, x->data, (size_t)samc_numel(x) * sizeof *out->data);
    for (int b = 0; b < B && !st; b++) {
        float *xb = out->data + (int64_t)b * L * Wd;
        samc_ref_layer_norm_rows(xb, L, &blk->ln_1, n); /* q_x = ln_1(x) */
        st = samc_ref_sam3_mha(&blk->attn, n, L, n, n, L, bias, NULL, a);
        for (int64_t i = 0; i < (int64_t)L * Wd && !st; i++) /* x = q_x + attn */
            xb[i] = xb[i] + a[i];
        for (int l = 0; l < L && !st; l++) { /* x = x + mlp(ln_2(x)) */
            float *r = xb + (int64_t)l * Wd;
            samc_ref_layer_norm_rows(r, 1, &blk->ln_2, n);
            samc_ref_linear(n, 1, &blk->c_fc, h);
            samc_ref_gelu(h, hidden);
            samc_ref_linear(h, 1, &blk->c_proj, a);
            for (int c = 0; c < Wd; c++)
                r[c] = r[c] + a[c];
        }
    }
done:
    free(n), free(a), free(bias), free(h);
    return st;
}

samc_status samc_ref_sam3_text_final(samc_ctx *ctx, const samc_sam3_text_encoder *enc,
                                     const samc_tensor *x, samc_tensor *tokens, samc_tensor *proj)
{
    const int Wd = enc->width, P = enc->proj_dim;
    if (x->ndim != 3 || x->shape[2] != Wd || !samc_tensor_same_shape(x, tokens))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "text final: input/tokens are not (B,L,%d)", Wd);
    const int64_t rows = x->shape[0] * x->shape[1];
    const int64_t want[3] = {x->shape[0], x->shape[1], P};
    if (proj && (!enc->text_projection || !samc_ref_sam3_shape_is(proj, 3, want)))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "text final: projection output is not (B,L,%d)", P);
    if (enc->has_ln_final)
        samc_ref_layer_norm_rows(x->data, rows, &enc->ln_final, tokens->data);
    else
        memcpy(tokens->data, x->data, (size_t)(rows * Wd) * sizeof *tokens->data);
    for (int64_t r = 0; r < rows && proj; r++) /* pooled @ self.text_projection (pool_type "none") */
        for (int p = 0; p < P; p++) {
            double acc = 0;
            for (int c = 0; c < Wd; c++)
                acc += (double)tokens->data[r * Wd + c] * enc->text_projection[(int64_t)c * P + p];
            proj->data[r * P + p] = (float)acc;
        }
    return SAMC_OK;
}

samc_status samc_ref_sam3_text_resize(samc_ctx *ctx, const samc_sam3_text_encoder *enc,
                                      const samc_tensor *tokens, samc_tensor *out)
{
    const int Wd = enc->width, D = enc->resizer.out;
    if (tokens->ndim != 3 || tokens->shape[2] != Wd || enc->resizer.in != Wd)
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "text resize: input is not (B,L,%d)", Wd);
    const int B = (int)tokens->shape[0], L = (int)tokens->shape[1];
    const int64_t want[3] = {L, B, D};
    if (!samc_ref_sam3_shape_is(out, 3, want))
        return samc_fail(ERR(ctx), SAMC_ERR_SHAPE, "text resize: output is not (%d,%d,%d)", L, B, D);
    for (int l = 0; l < L; l++) /* self.resizer(text_memory.transpose(0, 1)) */
        for (int b = 0; b < B; b++)
            samc_ref_linear(tokens->data + ((int64_t)b * L + l) * Wd, 1, &enc->resizer,
                            out->data + ((int64_t)l * B + b) * D);
    return SAMC_OK;
}
