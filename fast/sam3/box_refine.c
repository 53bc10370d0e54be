/* box_refine.c - the box refinement after each sam3/model/decoder.py layer,
 * fast body: out_norm over threads, bbox_embed on SAM 2's fast MLP, then
 * sigmoid(delta + inverse_sigmoid(ref)) with the shared core/nn/box_geom.c
 * helpers (the same float operations as ref). */
#include <string.h>

#include "core/base/error.h"
#include "core/nn/box_geom.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"
#include "fast/sam3/fast_sam3.h"

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
