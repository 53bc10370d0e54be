/* SPDX-License-Identifier: Apache-2.0 */
/* scoring.c - sam3/model/model_misc.py DotProductScoring.forward with its
 * prompt_mlp (model_misc.MLP: ReLU between layers, residual, out_norm). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/mean_pool_text.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

#define ERR(ctx) ((ctx) ? (ctx)->err : NULL)

samc_status samc_ref_sam3_dot_scoring(samc_ctx *ctx, const samc_sam3_scoring *s,
                                      const samc_tensor *hs, const samc_tensor *prompt,
                                      const samc_tensor *prompt_mask, samc_tensor *out)
{
    samc_error *err = ERR(ctx);
    const int D = s->d_model, P = s->d_proj;
    if (hs->ndim != 4 || hs->shape[3] != D || prompt->ndim != 3 || prompt->shape[2] != D ||
        prompt->shape[1] != hs->shape[1])
        return samc_fail(err, SAMC_ERR_SHAPE, "dot scoring: hs (Ly,B,Q,%d) and prompt (T,B,%d) expected", D, D);
    const int Ly = (int)hs->shape[0], B = (int)hs->shape[1], Q = (int)hs->shape[2];
    const int T = (int)prompt->shape[0];
    const int64_t ms[2] = {B, T}, os[4] = {Ly, B, Q, 1};
    if (!samc_ref_sam3_shape_is(prompt_mask, 2, ms) || !samc_ref_sam3_shape_is(out, 4, os))
        return samc_fail(err, SAMC_ERR_SHAPE, "dot scoring: prompt_mask (%d,%d) and out (%d,%d,%d,1) expected",
                         B, T, Ly, B, Q);
    const int64_t rows = (int64_t)T * B;
    float *p = malloc((size_t)rows * D * sizeof *p), *pooled = malloc((size_t)D * sizeof *pooled);
    float *pp = malloc((size_t)B * P * sizeof *pp), *ph = malloc((size_t)P * sizeof *ph);
    samc_status st = SAMC_OK;
    if (!p || !pooled || !pp || !ph) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "dot scoring: buffers");
        goto done;
    }
    if (s->has_prompt_mlp) { /* prompt = prompt_mlp(prompt) */
        if ((st = samc_ref_mlp_rows(prompt->data, rows, &s->prompt_mlp, p))) {
            st = samc_fail(err, st, "dot scoring: prompt_mlp");
            goto done;
        }
        if (s->prompt_mlp_residual)
            for (int64_t i = 0; i < rows * D; i++)
                p[i] = p[i] + prompt->data[i];
        if (s->has_prompt_mlp_norm)
            samc_ref_layer_norm_rows(p, rows, &s->prompt_mlp_norm, p);
    } else {
        memcpy(p, prompt->data, (size_t)(rows * D) * sizeof *p);
    }
    for (int b = 0; b < B; b++) {
        samc_sam3_mean_pool_text(p, prompt_mask->data, T, B, D, b, pooled);
        samc_ref_linear(pooled, 1, &s->prompt_proj, pp + (int64_t)b * P); /* prompt_proj(pooled) */
    }
    for (int l = 0; l < Ly; l++)
        for (int b = 0; b < B; b++)
            for (int q = 0; q < Q; q++) {
                const int64_t r = ((int64_t)l * B + b) * Q + q;
                samc_ref_linear(hs->data + r * D, 1, &s->hs_proj, ph); /* hs_proj(hs) */
                double acc = 0;
                for (int c = 0; c < P; c++)
                    acc += (double)ph[c] * pp[(int64_t)b * P + c];
                const float scale = (float)(1.0 / sqrt((double)P));
                float v = (float)acc * scale; /* scores *= self.scale */
                if (s->clamp)
                    v = v < -s->clamp_max ? -s->clamp_max : (v > s->clamp_max ? s->clamp_max : v);
                out->data[r] = v;
            }
done:
    free(p), free(pooled), free(pp), free(ph);
    return st;
}
