/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_modules.c - the weights of modules several SAM 3 parts hold
 * (sam3_modules.h). */
#include "core/models/sam3/sam3_modules.h"

#include "core/models/sam3/sam3_io.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void samc__sam3_sd_mha(samc_sd *sd, samc_attention *a, const char *name, int d, int heads)
{
    memset(a, 0, sizeof *a);
    const float *w = samc_sd_tensor(sd, 2, (const int64_t[]){3 * (int64_t)d, d}, "%s.in_proj_weight", name);
    const float *bb = samc_sd_tensor(sd, 1, (const int64_t[]){3 * (int64_t)d}, "%s.in_proj_bias", name);
    const int64_t dd = (int64_t)d * d;
    a->q = (samc_linear){.w = w, .b = bb, .in = d, .out = d};
    a->k = (samc_linear){.w = w ? w + dd : NULL, .b = bb ? bb + d : NULL, .in = d, .out = d};
    a->v = (samc_linear){.w = w ? w + 2 * dd : NULL, .b = bb ? bb + 2 * d : NULL, .in = d, .out = d};
    char out[192];
    snprintf(out, sizeof out, "%s.out_proj", name);
    samc_sd_linear(sd, &a->out, out, d, d, true);
    a->heads = heads, a->internal_dim = d;
}

void samc__sam3_sd_enc_layer(samc_sd *sd, samc_sam3_enc_layer *l, const samc_sam3_enc_layer_config *c)
{
    const int d = c->d_model;
    l->d_model = d, l->heads = c->self_attention.num_heads, l->batch_first = c->self_attention.batch_first;
    l->pos_at_attn = c->pos_enc_at_attn;
    l->pos_at_cross_queries = c->pos_enc_at_cross_attn_queries;
    l->pos_at_cross_keys = c->pos_enc_at_cross_attn_keys;
    samc__sam3_sd_mha(sd, &l->self_attn, "self_attn", d, c->self_attention.num_heads);
    samc__sam3_sd_mha(sd, &l->cross_attn, "cross_attn_image", d, c->cross_attention.num_heads);
    samc_sd_linear(sd, &l->linear1, "linear1", d, c->dim_feedforward, true);
    samc_sd_linear(sd, &l->linear2, "linear2", c->dim_feedforward, d, true);
    samc_sd_norm(sd, &l->norm1, "norm1", d, 1e-5f);
    samc_sd_norm(sd, &l->norm2, "norm2", d, 1e-5f);
    samc_sd_norm(sd, &l->norm3, "norm3", d, 1e-5f);
}

samc_status samc__sam3_iso_enc_layer(samc_exec *x, const samc_layer *L, const samc_sam3_enc_layer *l,
                                     const samc_layer_io *in, samc_layer_out *out, samc_error *err)
{
    samc_sam3_io r = samc__sam3_io(in, out, err);
    const samc_tensor *tgt = samc__sam3_in(&r, "tgt", "0"), *mem = samc__sam3_in(&r, "memory", "1");
    const samc_tensor *tkpm = samc__sam3_in_opt(&r, "tgt_key_padding_mask");
    const samc_tensor *mkpm = samc__sam3_in_opt(&r, "memory_key_padding_mask");
    const samc_tensor *pos = samc__sam3_in_opt(&r, "pos"), *qpos = samc__sam3_in_opt(&r, "query_pos");
    if (tgt && tgt->ndim != 3)
        samc__sam3_io_shape(&r, "%s: tgt is not 3-D", L->name);
    samc_tensor *y = r.st ? NULL : samc__sam3_out(&r, "0", 3, tgt->shape);
    if (y)
        r.st = samc_layer_done(x, L, NULL,
                               ((const samc_sam3_ops *)L->ops)
                                   ->sam3_enc_layer(samc_layer_ctx(x, L), l, tgt, mem, tkpm, mkpm, pos, qpos, y),
                               err, 0, NULL, NULL);
    return samc__sam3_io_end(&r);
}

samc_sine_pe samc__sam3_sine_pe(const samc_sine_pe_config *c)
{
    return (samc_sine_pe){.num_pos_feats = c->num_pos_feats, .temperature = (float)c->temperature,
                          .normalize = c->normalize, .scale = (float)(c->scale > 0 ? c->scale : 2.0 * M_PI)};
}
