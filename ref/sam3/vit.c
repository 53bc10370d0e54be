/* SPDX-License-Identifier: Apache-2.0 */
/* vit.c - sam3/model/vitdet.py: PatchEmbed, the embedding part of
 * ViT.forward (get_abs_pos with tiling, ln_pre), Block and Attention with
 * 2-D axial RoPE. The ViT works in BHWC: a token is a row of channels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/axial_rope.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

/* PatchEmbed.forward: Conv2d (no bias in SAM 3) on NCHW, permute to BHWC. */
samc_status samc_ref_sam3_vit_patch_embed(samc_ctx *ctx, const samc_sam3_vit_embed *e,
                                          const samc_tensor *x, samc_tensor *out)
{
    (void)ctx;
    const samc_conv2d *p = &e->patch;
    if (x->ndim != 4 || x->shape[1] != p->cin)
        return samc_fail(ctx ? ctx->err : NULL, SAMC_ERR_SHAPE, "vit patch_embed: input is not (B,%d,H,W)", p->cin);
    const int B = (int)x->shape[0], H = (int)x->shape[2], W = (int)x->shape[3], C = p->cout;
    const int Ho = samc_conv2d_out_dim(H, p->kh, p->stride, p->pad);
    const int Wo = samc_conv2d_out_dim(W, p->kw, p->stride, p->pad);
    const int64_t want[4] = {B, Ho, Wo, C};
    if (Ho < 1 || Wo < 1 || !samc_ref_sam3_shape_is(out, 4, want))
        return samc_fail(ctx ? ctx->err : NULL, SAMC_ERR_SHAPE, "vit patch_embed: output is not (%d,%d,%d,%d)", B,
                         Ho, Wo, C);
    const int64_t hw = (int64_t)Ho * Wo;
    float *nchw = malloc((size_t)(B * C * hw) * sizeof *nchw);
    if (!nchw)
        return samc_fail(ctx ? ctx->err : NULL, SAMC_ERR_NOMEM, "vit patch_embed: conv output");
    samc_ref_conv2d_nchw(x->data, B, H, W, p, nchw);
    for (int b = 0; b < B; b++)
        for (int64_t q = 0; q < hw; q++)
            for (int c = 0; c < C; c++)
                out->data[((int64_t)b * hw + q) * C + c] = nchw[((int64_t)b * C + c) * hw + q];
    free(nchw);
    return SAMC_OK;
}

/* x + get_abs_pos(pos_embed, has_cls, (h, w), retain_cls_token=False,
 * tiling=True), then ln_pre. Tiling repeats the size x size grid (cls slot
 * dropped) and crops to h x w: pos[y][x] = grid[y % size][x % size]; when the
 * grid already is h x w it is used as is (same thing). */
samc_status samc_ref_sam3_vit_pos_ln_pre(samc_ctx *ctx, const samc_sam3_vit_embed *e,
                                         const samc_tensor *x, samc_tensor *out)
{
    (void)ctx;
    const int C = e->patch.cout;
    if (x->ndim != 4 || x->shape[3] != C || !samc_tensor_same_shape(x, out))
        return samc_fail(ctx ? ctx->err : NULL, SAMC_ERR_SHAPE, "vit embed: input/output are not (B,H,W,%d)", C);
    const int B = (int)x->shape[0], H = (int)x->shape[1], W = (int)x->shape[2];
    const int g = e->pos_grid;
    if (e->pos_embed && !e->pos_tile && (g != H || g != W))
        return samc_fail(ctx ? ctx->err : NULL, SAMC_ERR_UNSUPPORTED,
                         "vit embed: bicubic interpolation of the %dx%d abs pos to %dx%d "
                         "(tile_abs_pos False) is not implemented",
                         g, g, H, W);
    const float *grid = e->pos_embed ? e->pos_embed + (e->pos_has_cls ? C : 0) : NULL;
    for (int b = 0; b < B; b++)
        for (int y = 0; y < H; y++)
            for (int xx = 0; xx < W; xx++) {
                const int64_t t = ((int64_t)b * H + y) * W + xx;
                const float *src = x->data + t * C;
                float *dst = out->data + t * C;
                const float *pe = grid ? grid + ((int64_t)(y % g) * g + xx % g) * C : NULL;
                for (int c = 0; c < C; c++)
                    dst[c] = pe ? src[c] + pe[c] : src[c];
            }
    if (e->has_ln_pre)
        samc_ref_layer_norm_rows(out->data, (int64_t)B * H * W, &e->ln_pre, out->data);
    return SAMC_OK;
}

/* ---- Block ---------------------------------------------------------------- */

static bool lin_is(const samc_linear *l, int in, int out)
{
    return l->w && l->in == in && l->out == out;
}

/* Attention.forward on one window (or the whole map) of L tokens: qkv,
 * split per head (head-major), RoPE on q and k (apply_rotary_enc with the
 * L-row table), SDPA with scale head_dim^-0.5, heads recombined, proj.
 * tok (L, C) -> res (L, C). qkv (L, 3C), o (L, C) scratch. */
static samc_status attend(const samc_sam3_vit_block *blk, const float *tok, int L, float *qkv,
                          float *o, float *res)
{
    const int C = blk->dim, hd = C / blk->heads;
    samc_ref_linear(tok, L, &blk->qkv, qkv);
    if (blk->freqs_cis)
        for (int h = 0; h < blk->heads; h++) {
            samc_axial_rope_apply(qkv + h * hd, L, hd, 3 * (int64_t)C, blk->freqs_cis);     /* q */
            samc_axial_rope_apply(qkv + C + h * hd, L, hd, 3 * (int64_t)C, blk->freqs_cis); /* k */
        }
    const float scale = (float)(1.0 / sqrt((double)hd));
    for (int h = 0; h < blk->heads; h++) {
        const int64_t off = (int64_t)h * hd;
        samc_status st = samc_ref_attention_head(qkv + off, 3 * (int64_t)C, qkv + C + off,
                                                 3 * (int64_t)C, qkv + 2 * C + off, 3 * (int64_t)C,
                                                 L, L, hd, hd, scale, o + off, C);
        if (st)
            return st;
    }
    samc_ref_linear(o, L, &blk->proj, res);
    return SAMC_OK;
}

samc_status samc_ref_sam3_vit_block(samc_ctx *ctx, const samc_sam3_vit_block *blk,
                                    const samc_tensor *x, samc_tensor *out)
{
    (void)ctx;
    const int C = blk->dim;
    if (x->ndim != 4 || x->shape[3] != C || !samc_tensor_same_shape(x, out))
        return samc_fail(ctx ? ctx->err : NULL, SAMC_ERR_SHAPE, "vit block: input/output are not (B,H,W,%d)", C);
    if (blk->heads < 1 || C % blk->heads || (C / blk->heads) % 4 || blk->window < 0)
        return samc_fail(ctx ? ctx->err : NULL, SAMC_ERR_ARG, "vit block: dim %d, %d heads, window %d", C,
                         blk->heads, blk->window);
    const int hidden = blk->fc1.out;
    if (blk->norm1.dim != C || blk->norm2.dim != C || !lin_is(&blk->qkv, C, 3 * C) ||
        !lin_is(&blk->proj, C, C) || !lin_is(&blk->fc1, C, hidden) || !lin_is(&blk->fc2, hidden, C))
        return samc_fail(ctx ? ctx->err : NULL, SAMC_ERR_SHAPE, "vit block: weight shapes do not match dim %d", C);
    const int B = (int)x->shape[0], H = (int)x->shape[1], W = (int)x->shape[2];
    const int wh = blk->window > 0 ? blk->window : H, ww = blk->window > 0 ? blk->window : W;
    const int L = wh * ww, nwh = (H + wh - 1) / wh, nww = (W + ww - 1) / ww;
    /* reshape_for_broadcast asserts freqs_cis is (L, head_dim/2) */
    if (blk->freqs_cis && blk->rope_tokens != L)
        return samc_fail(ctx ? ctx->err : NULL, SAMC_ERR_SHAPE,
                         "vit block: RoPE table has %d positions, attention runs on %d tokens "
                         "(a %dx%d %s)",
                         blk->rope_tokens, L, wh, ww, blk->window > 0 ? "window" : "map");
    const int64_t rows = (int64_t)B * H * W;
    float *xn = malloc((size_t)(rows * C) * sizeof *xn);
    float *tok = malloc((size_t)L * C * sizeof *tok), *qkv = malloc((size_t)L * 3 * C * sizeof *qkv);
    float *o = malloc((size_t)L * C * sizeof *o), *res = malloc((size_t)L * C * sizeof *res);
    float *h1 = malloc((size_t)(hidden > C ? hidden : C) * sizeof *h1), *nr = malloc((size_t)C * sizeof *nr);
    samc_status st = SAMC_OK;
    if (!xn || !tok || !qkv || !o || !res || !h1 || !nr) {
        st = samc_fail(ctx ? ctx->err : NULL, SAMC_ERR_NOMEM, "vit block: buffers");
        goto done;
    }
    samc_ref_layer_norm_rows(x->data, rows, &blk->norm1, xn); /* x = self.norm1(x) */
    memcpy(out->data, x->data, (size_t)(rows * C) * sizeof *out->data); /* shortcut */
    for (int b = 0; b < B && !st; b++)
        for (int wy = 0; wy < nwh && !st; wy++)
            for (int wx = 0; wx < nww && !st; wx++) {
                /* window_partition: F.pad after norm1 -> padded tokens are zeros */
                for (int r = 0; r < wh; r++)
                    for (int c = 0; c < ww; c++) {
                        const int y = wy * wh + r, xx = wx * ww + c;
                        float *t = tok + ((int64_t)r * ww + c) * C;
                        if (y < H && xx < W)
                            memcpy(t, xn + (((int64_t)b * H + y) * W + xx) * C, (size_t)C * sizeof *t);
                        else
                            memset(t, 0, (size_t)C * sizeof *t);
                    }
                st = attend(blk, tok, L, qkv, o, res);
                /* window_unpartition (crop), x = shortcut + x */
                for (int r = 0; r < wh && !st; r++)
                    for (int c = 0; c < ww; c++) {
                        const int y = wy * wh + r, xx = wx * ww + c;
                        if (y >= H || xx >= W)
                            continue;
                        float *dst = out->data + (((int64_t)b * H + y) * W + xx) * C;
                        const float *s = res + ((int64_t)r * ww + c) * C;
                        for (int k = 0; k < C; k++)
                            dst[k] = dst[k] + s[k];
                    }
            }
    /* x = x + mlp(norm2(x)): fc1, GELU (erf), fc2 */
    for (int64_t r = 0; r < rows && !st; r++) {
        float *yr = out->data + r * C;
        samc_ref_layer_norm_rows(yr, 1, &blk->norm2, nr);
        samc_ref_linear(nr, 1, &blk->fc1, h1);
        samc_ref_gelu(h1, hidden);
        samc_ref_linear(h1, 1, &blk->fc2, res);
        for (int k = 0; k < C; k++)
            yr[k] = yr[k] + res[k];
    }
done:
    free(xn), free(tok), free(qkv), free(o), free(res), free(h1), free(nr);
    return st;
}
