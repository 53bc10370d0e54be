/* SPDX-License-Identifier: Apache-2.0 */
/* scoring.c - sam3/model/model_misc.py DotProductScoring, fast body: the
 * prompt through prompt_mlp (MLP, residual, out_norm), mean-pooled over
 * its valid tokens, both projections as GEMMs, the scaled dot product
 * clamped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/mean_pool_text.h"
#include "fast/fast.h"
#include "fast/sam3/fast_sam3.h"

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
        samc_tensor po = fast_view2(p, rows, D);
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
    for (int b = 0; b < B && !st; b++)
        samc_sam3_mean_pool_text(p, prompt_mask->data, T, B, D, b, pooled + (int64_t)b * D);
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
