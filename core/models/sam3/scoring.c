/* SPDX-License-Identifier: Apache-2.0 */
/* scoring.c - the scoring head part (sam3/model/model_misc.py
 * DotProductScoring: each query against the mean-pooled prompt), mounted
 * at "dot_prod_scoring": its row, weights, forward, isolated runner and
 * op-test inputs. */
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_io.h"
#include "core/models/sam3/sam3_parts.h"

enum { SCORING, N_ROWS };

static samc_isolated_body iso_scoring;
static samc_status ex_scoring(const void *, int, uint64_t, bool, samc_layer_inputs *, samc_error *);
static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err);

static const samc_layer_def rows[N_ROWS] = {
    [SCORING] = {.pattern = "", .table = SAMC_OPS_SAM3, .body = SAMC_BODY(samc_sam3_ops, sam3_dot_scoring),
                 .parity = true, .isolated = iso_scoring, .example = ex_scoring},
};
const samc_part_def samc_sam3_scoring_part = {"DotProductScoring", rows, N_ROWS, describe};

static samc_status describe(samc_sd *sd, void *self, const void *cfg, samc_error *err)
{
    (void)err;
    samc_sam3_scoring *s = self;
    const samc_sam3_scoring_config *c = cfg;
    const int d = s->d_model = c->d_model;
    s->d_proj = c->d_proj, s->clamp = c->clamp_logits, s->clamp_max = (float)c->clamp_max_val;
    s->has_prompt_mlp = c->has_prompt_mlp;
    if (s->has_prompt_mlp) { /* model_misc.MLP(d, hidden, d, n): ReLU between layers */
        samc_sd_mlp(sd, &s->prompt_mlp, "prompt_mlp", d, c->mlp_hidden, d, c->mlp_layers, false);
        s->prompt_mlp_residual = c->mlp_residual;
        s->has_prompt_mlp_norm = c->mlp_out_norm;
        if (s->has_prompt_mlp_norm)
            samc_sd_norm(sd, &s->prompt_mlp_norm, "prompt_mlp.out_norm", d, (float)c->mlp_out_norm_eps);
    }
    samc_sd_linear(sd, &s->prompt_proj, "prompt_proj", d, s->d_proj, true);
    samc_sd_linear(sd, &s->hs_proj, "hs_proj", d, s->d_proj, true);
    return SAMC_OK;
}

samc_status samc_sam3_scoring_forward(samc_exec *x, const samc_sam3_scoring *s, const samc_tensor *hs,
                                      const samc_tensor *prompt, const samc_tensor *prompt_mask, samc_tensor *out,
                                      samc_error *err)
{
    static const char *const slot0[] = {"0"};
    memset(out, 0, sizeof *out);
    if (hs->ndim != 4)
        return samc_fail(err, SAMC_ERR_SHAPE, "dot scoring: hs is not (layers,B,Q,d)");
    const samc_layer *L = samc_part_layer(x, s, &rows[SCORING], 0);
    const samc_tensor *outs[] = {out};
    samc_status st = samc_tensor_allocv(out, err, 4, hs->shape[0], hs->shape[1], hs->shape[2], (int64_t)1);
    if (!st)
        st = samc_layer_done(x, L, NULL,
                             ((const samc_sam3_ops *)L->ops)->sam3_dot_scoring(samc_layer_ctx(x, L), s, hs, prompt,
                                                                               prompt_mask, out),
                             err, 1, slot0, outs);
    if (st)
        samc_tensor_release(out);
    return st;
}

static samc_status iso_scoring(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                               samc_error *err)
{
    const samc_sam3_scoring *s = L->self;
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *hs = samc__sam3_in(&r, "hs", "0"), *prompt = samc__sam3_in(&r, "prompt", "1");
    const samc_tensor *pm = samc__sam3_in(&r, "prompt_mask", "2");
    if (hs && hs->ndim != 4)
        samc__sam3_io_shape(&r, "dot scoring: hs is not 4-D");
    samc_tensor *y = r.st ? NULL : samc__sam3_out_v(&r, "0", 4, hs->shape[0], hs->shape[1], hs->shape[2], (int64_t)1);
    if (y)
        r.st = samc_layer_done(x, L, NULL,
                               ((const samc_sam3_ops *)L->ops)->sam3_dot_scoring(samc_layer_ctx(x, L), s, hs, prompt,
                                                                                 pm, y),
                               err, 0, NULL, NULL);
    return samc__sam3_io_end(&r);
}

/* Six layers of 200 queries against a prompt of 32 text tokens (24 of
 * them padding) and 4 geometry tokens. */
static samc_status ex_scoring(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                              samc_error *err)
{
    (void)index, (void)full;
    const int64_t D = ((const samc_sam3_scoring *)self)->d_model;
    SAMC_INPUT_RANDOM("hs", -2, 2, 4, (int64_t)6, (int64_t)1, (int64_t)200, D);
    return samc__sam3_example_prompt(in, "prompt", "prompt_mask", D, false, &seed, err);
}
