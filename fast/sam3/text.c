/* text.c - the tail of sam3/model/text_encoder_ve.py TextTransformer
 * (ln_final, @ text_projection) and VETextEncoder.resizer, fast bodies:
 * LayerNorm over threads, the projection as one GEMM, the resizer as one
 * GEMM per batch element written straight to the seq-first output. */
#include <string.h>

#include "core/base/error.h"
#include "fast/fast.h"
#include "fast/sam3/fast_sam3.h"

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
