/* SPDX-License-Identifier: Apache-2.0 */
/* vit.c - sam3/model/vitdet.py PatchEmbed and Block, fast bodies. The same
 * results as ref/sam3/vit.c within float32 rounding; the structure differs:
 *   - the patch embedding is SAM 2's (fast/sam2/hiera.c: im2col rows times
 *     the packed weight straight to BHWC; SAM 3's conv has no bias);
 *   - the block's windows (zero-padded after norm1, as window_partition
 *     pads) are laid out one after another, so qkv and proj are one GEMM
 *     each over every window's tokens; RoPE rotates q and k with the shared
 *     core/nn/axial_rope.c (bit-identical to ref); attention is the fused
 *     kernel of fast/attention.c per window (threads over windows) or, for
 *     a global block, threaded over heads and row blocks;
 *   - the MLP is two GEMMs over all tokens, GELU fused into fc1 and the
 *     residual add into fc2. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/axial_rope.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"
#include "fast/sam3/fast_sam3.h"

samc_status samc_fast_sam3_vit_patch_embed(samc_ctx *ctx, const samc_sam3_vit_embed *e, const samc_tensor *x,
                                           samc_tensor *out)
{
    return samc_fast_patch_embed(ctx, &e->patch, x, out);
}

static bool lin_is(const samc_linear *l, int in, int out)
{
    return l->w && l->in == in && l->out == out;
}

/* Geometry of one call: windows of wh x ww tokens (the whole map for a
 * global block), nwh x nww of them per image. */
typedef struct vit_geom {
    int B, H, W, C, heads, hd, wh, ww, L, nwh, nww, nwin;
} vit_geom;

/* window_partition after norm1: window w holds rows [w*L, (w+1)*L) of tok,
 * zeros where the window reaches past the map. */
static void partition(int nt, const vit_geom *g, const float *xn, float *tok)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int w = 0; w < g->nwin; w++) {
        const int b = w / (g->nwh * g->nww), wy = (w / g->nww) % g->nwh, wx = w % g->nww;
        for (int r = 0; r < g->wh; r++)
            for (int c = 0; c < g->ww; c++) {
                const int y = wy * g->wh + r, xx = wx * g->ww + c;
                float *t = tok + ((int64_t)w * g->L + (int64_t)r * g->ww + c) * g->C;
                if (y < g->H && xx < g->W)
                    memcpy(t, xn + (((int64_t)b * g->H + y) * g->W + xx) * g->C, (size_t)g->C * sizeof *t);
                else
                    memset(t, 0, (size_t)g->C * sizeof *t);
            }
    }
}

/* window_unpartition (crop) and the residual: out = x + attn. */
static void unpartition_add(int nt, const vit_geom *g, const float *x, const float *att, float *out)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int w = 0; w < g->nwin; w++) {
        const int b = w / (g->nwh * g->nww), wy = (w / g->nww) % g->nwh, wx = w % g->nww;
        for (int r = 0; r < g->wh; r++)
            for (int c = 0; c < g->ww; c++) {
                const int y = wy * g->wh + r, xx = wx * g->ww + c;
                if (y >= g->H || xx >= g->W)
                    continue;
                const int64_t o = (((int64_t)b * g->H + y) * g->W + xx) * g->C;
                samc__fast_add(out + o, x + o, att + ((int64_t)w * g->L + (int64_t)r * g->ww + c) * g->C, g->C);
            }
    }
}

/* RoPE on q and k of every window and head, then attention per window. */
static void attend(int nt, const vit_geom *g, const samc_sam3_vit_block *blk, float *qkv, float *o, float *kv)
{
    const int64_t ld = 3 * (int64_t)g->C;
    if (blk->freqs_cis) {
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int t = 0; t < g->nwin * g->heads; t++) {
            float *q = qkv + (int64_t)(t / g->heads) * g->L * ld + (int64_t)(t % g->heads) * g->hd;
            samc_axial_rope_apply(q, g->L, g->hd, ld, blk->freqs_cis);
            samc_axial_rope_apply(q + g->C, g->L, g->hd, ld, blk->freqs_cis);
        }
    }
    const float scale = (float)(1.0 / sqrt((double)g->hd));
    if (g->nwin >= nt) {
#pragma omp parallel for num_threads(nt) schedule(dynamic)
        for (int w = 0; w < g->nwin; w++) {
            const float *q = qkv + (int64_t)w * g->L * ld;
            const fast_attn a = {.Lq = g->L, .Lk = g->L, .d = g->hd, .scale = scale, .q = q, .k = q + g->C,
                                 .v = q + 2 * g->C, .ldq = ld, .ldk = ld, .ldv = ld,
                                 .o = o + (int64_t)w * g->L * g->C, .ldo = g->C};
            samc__fast_flash_attention_1t(&a, g->heads, 0);
        }
        return;
    }
    for (int w = 0; w < g->nwin; w++) { /* few large windows (a global block): threads inside */
        const float *q = qkv + (int64_t)w * g->L * ld;
        const fast_attn a = {.Lq = g->L, .Lk = g->L, .d = g->hd, .scale = scale, .q = q, .k = q + g->C,
                             .v = q + 2 * g->C, .ldq = ld, .ldk = ld, .ldv = ld,
                             .o = o + (int64_t)w * g->L * g->C, .ldo = g->C};
        samc__fast_flash_attention(nt, &a, g->heads, 0, kv);
    }
}

samc_status samc_fast_sam3_vit_block(samc_ctx *ctx, const samc_sam3_vit_block *blk, const samc_tensor *x,
                                     samc_tensor *out)
{
    const int C = blk->dim;
    if (x->ndim != 4 || x->shape[3] != C || !samc_tensor_same_shape(x, out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "vit block: input/output are not (B,H,W,%d)", C);
    if (blk->heads < 1 || C % blk->heads || (C / blk->heads) % 4 || blk->window < 0)
        return samc_fail(ctx->err, SAMC_ERR_ARG, "vit block: dim %d, %d heads, window %d", C, blk->heads,
                         blk->window);
    const int hidden = blk->fc1.out;
    if (blk->norm1.dim != C || blk->norm2.dim != C || !lin_is(&blk->qkv, C, 3 * C) || !lin_is(&blk->proj, C, C) ||
        !lin_is(&blk->fc1, C, hidden) || !lin_is(&blk->fc2, hidden, C))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "vit block: weight shapes do not match dim %d", C);
    vit_geom g = {.B = (int)x->shape[0], .H = (int)x->shape[1], .W = (int)x->shape[2], .C = C, .heads = blk->heads,
                  .hd = C / blk->heads};
    g.wh = blk->window > 0 ? blk->window : g.H, g.ww = blk->window > 0 ? blk->window : g.W;
    g.L = g.wh * g.ww, g.nwh = (g.H + g.wh - 1) / g.wh, g.nww = (g.W + g.ww - 1) / g.ww;
    g.nwin = g.B * g.nwh * g.nww;
    if (blk->freqs_cis && blk->rope_tokens != g.L)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "vit block: RoPE table has %d positions, attention runs on %d tokens",
                         blk->rope_tokens, g.L);
    const int nt = samc__fast_threads(ctx);
    const int64_t rows = (int64_t)g.B * g.H * g.W, R = (int64_t)g.nwin * g.L;
    const size_t counts[5] = {(size_t)(rows * C), (size_t)(R * C), (size_t)(R * 3 * C), (size_t)(R * C),
                              (size_t)(rows * (hidden > 3 * C ? hidden : 3 * C)) +
                                  (size_t)blk->heads * samc__fast_flash_kv_size(g.L, g.hd)};
    float *buf[5];
    samc_status st = samc__fast_ws_get(ctx, 5, counts, buf);
    if (st)
        return samc_fail(ctx->err, st, "vit block: out of memory for %lld tokens", (long long)R);
    float *xn = buf[0], *tok = buf[1], *qkv = buf[2], *o = buf[3], *mid = buf[4];
    samc__fast_layer_norm(nt, x->data, rows, &blk->norm1, xn);
    partition(nt, &g, xn, tok);
    samc__fast_linear_x(ctx, nt, tok, C, R, &blk->qkv, qkv, 3 * (int64_t)C, 0);
    attend(nt, &g, blk, qkv, o, mid);
    samc__fast_linear_x(ctx, nt, o, C, R, &blk->proj, tok, C, 0); /* tok: the attention output */
    unpartition_add(nt, &g, x->data, tok, out->data);
    /* x = x + mlp(norm2(x)) */
    samc__fast_layer_norm(nt, out->data, rows, &blk->norm2, xn);
    samc__fast_linear_x(ctx, nt, xn, C, rows, &blk->fc1, mid, hidden, FAST_GEMM_GELU);
    samc__fast_linear_x(ctx, nt, mid, hidden, rows, &blk->fc2, out->data, C, FAST_GEMM_ACC);
    return SAMC_OK;
}

/* x + the tiled abs pos table (cls slot dropped), then ln_pre: as
 * ref/sam3/vit.c, rows over threads. */
samc_status samc_fast_sam3_vit_pos_ln_pre(samc_ctx *ctx, const samc_sam3_vit_embed *e, const samc_tensor *x,
                                          samc_tensor *out)
{
    const int C = e->patch.cout;
    if (x->ndim != 4 || x->shape[3] != C || !samc_tensor_same_shape(x, out))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "vit embed: input/output are not (B,H,W,%d)", C);
    const int B = (int)x->shape[0], H = (int)x->shape[1], W = (int)x->shape[2], g = e->pos_grid;
    if (e->pos_embed && !e->pos_tile && (g != H || g != W))
        return samc_fail(ctx->err, SAMC_ERR_UNSUPPORTED,
                         "vit embed: bicubic interpolation of the %dx%d abs pos to %dx%d (tile_abs_pos False) is "
                         "not implemented", g, g, H, W);
    const int nt = samc__fast_threads(ctx);
    const float *grid = e->pos_embed ? e->pos_embed + (e->pos_has_cls ? C : 0) : NULL;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t t = 0; t < (int64_t)B * H * W; t++) {
        const int y = (int)((t / W) % H), xx = (int)(t % W);
        if (grid)
            samc__fast_add(out->data + t * C, x->data + t * C, grid + ((int64_t)(y % g) * g + xx % g) * C, C);
        else
            memcpy(out->data + t * C, x->data + t * C, (size_t)C * sizeof *out->data);
    }
    if (e->has_ln_pre)
        samc__fast_layer_norm(nt, out->data, (int64_t)B * H * W, &e->ln_pre, out->data);
    return SAMC_OK;
}
