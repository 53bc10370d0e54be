/* SPDX-License-Identifier: Apache-2.0 */
/* hiera.c - the Hiera trunk layers, plain scalar loops.
 *
 * Mirrors sam2/modeling/backbones/utils.py (PatchEmbed, window_partition,
 * window_unpartition) and sam2/modeling/backbones/hieradet.py
 * (MultiScaleBlock.forward, MultiScaleAttention.forward, do_pool).
 * Hiera works in BHWC: a token is a contiguous row of channels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/hiera_geometry.h"
#include "ref/prims.h"
#include "ref/ref_ops.h"

/* ---- PatchEmbed ---------------------------------------------------------- */

/* PatchEmbed.forward: Conv2d on NCHW, then permute(0, 2, 3, 1) to BHWC. */
samc_status samc_ref_patch_embed(samc_ctx *ctx, const samc_conv2d *proj, const samc_tensor *x,
                                 samc_tensor *out)
{
    if (x->ndim != 4 || x->shape[1] != proj->cin)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "patch_embed: input is not (B,%d,H,W)", proj->cin);
    const int B = (int)x->shape[0], H = (int)x->shape[2], W = (int)x->shape[3];
    const int Ho = samc_conv2d_out_dim(H, proj->kh, proj->stride, proj->pad);
    const int Wo = samc_conv2d_out_dim(W, proj->kw, proj->stride, proj->pad);
    const int C = proj->cout;
    if (Ho < 1 || Wo < 1 || out->ndim != 4 || out->shape[0] != B || out->shape[1] != Ho ||
        out->shape[2] != Wo || out->shape[3] != C)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "patch_embed: output is not (%d,%d,%d,%d)", B, Ho,
                         Wo, C);
    const int64_t hw = (int64_t)Ho * Wo;
    float *nchw = malloc((size_t)(B * C * hw) * sizeof *nchw);
    if (!nchw)
        return samc_fail(ctx->err, SAMC_ERR_NOMEM, "patch_embed: conv output");
    samc_ref_conv2d_nchw(x->data, B, H, W, proj, nchw);
    for (int b = 0; b < B; b++)
        for (int64_t p = 0; p < hw; p++)
            for (int c = 0; c < C; c++)
                out->data[((int64_t)b * hw + p) * C + c] = nchw[((int64_t)b * C + c) * hw + p];
    free(nchw);
    return SAMC_OK;
}

/* ---- MultiScaleBlock: pieces --------------------------------------------- */

/* MaxPool2d(kernel s, stride s, ceil_mode False) over an h x w grid of tokens
 * (C channels, ld floats apart), into a contiguous (h/s, w/s, C) grid. NaN
 * propagates as in PyTorch's kernel. */
static void max_pool_tokens(const float *x, int h, int w, int C, int64_t ld, int s, float *y)
{
    const int ho = h / s, wo = w / s;
    for (int i = 0; i < ho; i++)
        for (int j = 0; j < wo; j++)
            for (int c = 0; c < C; c++) {
                float m = -INFINITY;
                for (int di = 0; di < s; di++)
                    for (int dj = 0; dj < s; dj++) {
                        const float v = x[((int64_t)(i * s + di) * w + j * s + dj) * ld + c];
                        if (v > m || isnan(v))
                            m = v;
                    }
                y[((int64_t)i * wo + j) * C + c] = m;
            }
}

/* shortcut = do_pool(self.proj(norm1(x)), self.pool) when dim != dim_out
 * (projected from the *normalised* x), else the raw x. Writes (B,Ho,Wo,D). */
static samc_status block_shortcut(samc_error *err, const samc_hiera_block *blk, const samc_hiera_geom *g,
                                  const float *x, const float *xn, float *sc)
{
    const int64_t hw = (int64_t)g->H * g->W, ohw = (int64_t)g->Ho * g->Wo;
    if (!blk->has_proj) { /* dim == dim_out and no pooling (checked) */
        memcpy(sc, x, (size_t)(g->B * hw * g->D) * sizeof *sc);
        return SAMC_OK;
    }
    float *p = malloc((size_t)(g->B * hw * g->D) * sizeof *p);
    if (!p)
        return samc_fail(err, SAMC_ERR_NOMEM, "hiera_block: shortcut projection");
    samc_ref_linear(xn, g->B * hw, &blk->proj, p);
    for (int b = 0; b < g->B; b++) {
        const float *pb = p + b * hw * g->D;
        float *sb = sc + b * ohw * g->D;
        if (g->s > 1)
            max_pool_tokens(pb, g->H, g->W, g->D, g->D, g->s, sb);
        else
            memcpy(sb, pb, (size_t)(hw * g->D) * sizeof *sb);
    }
    free(p);
    return SAMC_OK;
}

/* Per-window scratch for window_attention. */
typedef struct win_scratch {
    float *tok;  /* (wh*ww, dim)   the window's tokens, zero where padded */
    float *qkv;  /* (wh*ww, 3*D)   [q | k | v], heads head-major inside each */
    float *q;    /* (qh*qw, D)     pooled q (q-pool blocks only) */
    float *o;    /* (qh*qw, D)     attention output, heads recombined */
    float *p;    /* (qh*qw, D)     after attn.proj */
} win_scratch;

static void free_scratch(win_scratch *w)
{
    free(w->tok), free(w->qkv), free(w->q), free(w->o), free(w->p);
}

static samc_status alloc_scratch(samc_error *err, const samc_hiera_geom *g, win_scratch *w)
{
    const size_t L = (size_t)g->wh * g->ww, Lq = (size_t)g->qh * g->qw;
    w->tok = malloc(L * g->dim * sizeof(float));
    w->qkv = malloc(L * 3 * g->D * sizeof(float));
    w->q = malloc(Lq * g->D * sizeof(float));
    w->o = malloc(Lq * g->D * sizeof(float));
    w->p = malloc(Lq * g->D * sizeof(float));
    if (!w->tok || !w->qkv || !w->q || !w->o || !w->p) {
        free_scratch(w);
        return samc_fail(err, SAMC_ERR_NOMEM, "hiera_block: window scratch");
    }
    return SAMC_OK;
}

/* window_partition for one window: copy its tokens out of the normalised map,
 * zero-filling the bottom/right padding (F.pad after norm1, so pad tokens are
 * exact zeros and later attend unmasked, k = k bias, v = v bias). */
static void gather_window(const samc_hiera_geom *g, const float *xn_b, int wy, int wx, float *tok)
{
    for (int r = 0; r < g->wh; r++)
        for (int c = 0; c < g->ww; c++) {
            const int y = wy * g->wh + r, x = wx * g->ww + c;
            float *t = tok + ((int64_t)r * g->ww + c) * g->dim;
            if (y < g->H && x < g->W)
                memcpy(t, xn_b + ((int64_t)y * g->W + x) * g->dim, (size_t)g->dim * sizeof *t);
            else
                memset(t, 0, (size_t)g->dim * sizeof *t);
        }
}

/* MultiScaleAttention.forward on one window (or the whole map when global),
 * then window_unpartition of its output into attn (B,Ho,Wo,D): pooled window
 * (wy,wx) covers rows wy*qh.., cols wx*qw.. of the pooled map, which is
 * padded to a multiple of ws // s and cropped (official: H, W = the pooled
 * shortcut's shape, pad recomputed). */
static samc_status window_attention(const samc_hiera_block *blk, const samc_hiera_geom *g,
                                    const float *xn_b, int wy, int wx, win_scratch *w,
                                    float *attn_b)
{
    const int L = g->wh * g->ww, Lq = g->qh * g->qw, D = g->D;
    gather_window(g, xn_b, wy, wx, w->tok);
    samc_ref_linear(w->tok, L, &blk->qkv, w->qkv);
    const float *q = w->qkv; /* q rows are 3*D apart inside qkv */
    int64_t ldq = 3 * (int64_t)D;
    if (g->s > 1) { /* do_pool(q.reshape(B, H, W, -1), self.q_pool): heads merged */
        max_pool_tokens(w->qkv, g->wh, g->ww, D, 3 * (int64_t)D, g->s, w->q);
        q = w->q, ldq = D;
    }
    /* F.scaled_dot_product_attention per head, scale 1/sqrt(head_dim) */
    const float scale = (float)(1.0 / sqrt((double)g->hd));
    for (int h = 0; h < g->heads; h++) {
        const int64_t off = (int64_t)h * g->hd;
        samc_status st = samc_ref_attention_head(q + off, ldq, w->qkv + D + off, 3 * (int64_t)D,
                                                 w->qkv + 2 * D + off, 3 * (int64_t)D, Lq, L,
                                                 g->hd, g->hd, scale, w->o + off, D);
        if (st != SAMC_OK)
            return st;
    }
    samc_ref_linear(w->o, Lq, &blk->attn_proj, w->p);
    for (int r = 0; r < g->qh; r++)
        for (int c = 0; c < g->qw; c++) {
            const int y = wy * g->qh + r, x = wx * g->qw + c;
            if (y < g->Ho && x < g->Wo)
                memcpy(attn_b + ((int64_t)y * g->Wo + x) * D, w->p + ((int64_t)r * g->qw + c) * D,
                       (size_t)D * sizeof *attn_b);
        }
    return SAMC_OK;
}

/* x = x + mlp(norm2(x)) on every token, in place on y (rows of D):
 * Linear(D, hidden), GELU (erf), Linear(hidden, D). */
static samc_status mlp_residual(samc_error *err, const samc_hiera_block *blk, float *y, int64_t rows)
{
    const int D = blk->dim_out, hidden = blk->mlp_fc1.out;
    float *n = malloc((size_t)D * sizeof *n);
    float *h = malloc((size_t)hidden * sizeof *h);
    float *m = malloc((size_t)D * sizeof *m);
    if (!n || !h || !m) {
        free(n), free(h), free(m);
        return samc_fail(err, SAMC_ERR_NOMEM, "hiera_block: mlp rows");
    }
    for (int64_t r = 0; r < rows; r++) {
        float *yr = y + r * D;
        samc_ref_layer_norm_rows(yr, 1, &blk->norm2, n);
        samc_ref_linear(n, 1, &blk->mlp_fc1, h);
        samc_ref_gelu(h, hidden);
        samc_ref_linear(h, 1, &blk->mlp_fc2, m);
        for (int c = 0; c < D; c++)
            yr[c] = yr[c] + m[c];
    }
    free(n), free(h), free(m);
    return SAMC_OK;
}

/* ---- MultiScaleBlock.forward --------------------------------------------- */

static samc_status attend_all_windows(samc_error *err, const samc_hiera_block *blk, const samc_hiera_geom *g,
                                      const float *xn, float *attn)
{
    win_scratch w = {0};
    samc_status st = alloc_scratch(err, g, &w);
    for (int b = 0; b < g->B && st == SAMC_OK; b++) {
        const float *xn_b = xn + (int64_t)b * g->H * g->W * g->dim;
        float *attn_b = attn + (int64_t)b * g->Ho * g->Wo * g->D;
        for (int wy = 0; wy < g->nwh && st == SAMC_OK; wy++)
            for (int wx = 0; wx < g->nww && st == SAMC_OK; wx++)
                st = window_attention(blk, g, xn_b, wy, wx, &w, attn_b);
    }
    free_scratch(&w);
    return st;
}

samc_status samc_ref_hiera_block(samc_ctx *ctx, const samc_hiera_block *blk, const samc_tensor *x,
                                 samc_tensor *out)
{
    samc_hiera_geom g = {0};
    samc_status st = samc_hiera_block_geometry(ctx->err, blk, x, &g);
    if (st != SAMC_OK)
        return st;
    if (out->ndim != 4 || out->shape[0] != g.B || out->shape[1] != g.Ho ||
        out->shape[2] != g.Wo || out->shape[3] != g.D)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "hiera_block: output is not (%d,%d,%d,%d)", g.B,
                         g.Ho, g.Wo, g.D);
    const int64_t rows = (int64_t)g.B * g.H * g.W, orows = (int64_t)g.B * g.Ho * g.Wo;
    float *xn = malloc((size_t)(rows * g.dim) * sizeof *xn);
    float *attn = malloc((size_t)(orows * g.D) * sizeof *attn);
    if (!xn || !attn) {
        st = samc_fail(ctx->err, SAMC_ERR_NOMEM, "hiera_block: buffers");
        goto done;
    }
    samc_ref_layer_norm_rows(x->data, rows, &blk->norm1, xn); /* x = self.norm1(x) */
    st = block_shortcut(ctx->err, blk, &g, x->data, xn, out->data); /* shortcut -> out */
    if (st == SAMC_OK)
        st = attend_all_windows(ctx->err, blk, &g, xn, attn);
    if (st != SAMC_OK)
        goto done;
    for (int64_t i = 0; i < orows * g.D; i++) /* x = shortcut + drop_path(x) */
        out->data[i] = out->data[i] + attn[i];
    st = mlp_residual(ctx->err, blk, out->data, orows);
done:
    free(xn);
    free(attn);
    return st;
}
