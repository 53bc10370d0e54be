/* SPDX-License-Identifier: Apache-2.0 */
/* hiera.c - PatchEmbed and MultiScaleBlock (backbones/utils.py,
 * backbones/hieradet.py), fast bodies. Same results as ref/sam2/hiera.c; the
 * structure differs:
 *   - every linear (qkv, proj, attn.proj, mlp) is one sgemm over all tokens
 *     in raster order, split in row panels across threads; the residual adds
 *     are folded into the sgemm (beta = 1);
 *   - attention runs per (window, head) task (or per (head, row block) for
 *     global blocks) on K/V gathered from the raster qkv; window padding is
 *     handled there (a zero-padded token projects to the bias, exactly what
 *     ref computes), so the windowed map is never materialised;
 *   - the MLP runs in chunks of rows per thread: LayerNorm, fc1, GELU and fc2
 *     on a block that stays in cache, and the 4*dim hidden map never exists.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/hiera_geometry.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

/* ---- PatchEmbed ---------------------------------------------------------- */

/* Conv2d(k, stride, pad) written straight to BHWC: each output row of the
 * image is one im2col panel (Wo x cin*kh*kw, in the weight's (ci, ky, kx)
 * order) times W^T. */
samc_status samc_fast_patch_embed(samc_ctx *ctx, const samc_conv2d *proj, const samc_tensor *x,
                                  samc_tensor *out)
{
    if (x->ndim != 4 || x->shape[1] != proj->cin || proj->groups != 1)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "patch_embed: input is not (B,%d,H,W)", proj->cin);
    const int B = (int)x->shape[0], H = (int)x->shape[2], W = (int)x->shape[3];
    const int Ho = samc_conv2d_out_dim(H, proj->kh, proj->stride, proj->pad);
    const int Wo = samc_conv2d_out_dim(W, proj->kw, proj->stride, proj->pad);
    const int C = proj->cout, cin = proj->cin, kh = proj->kh, kw = proj->kw;
    if (Ho < 1 || Wo < 1 || out->ndim != 4 || out->shape[0] != B || out->shape[1] != Ho ||
        out->shape[2] != Wo || out->shape[3] != C)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "patch_embed: output is not (%d,%d,%d,%d)", B, Ho,
                         Wo, C);
    const int nt = samc__fast_threads(ctx);
    const int K = cin * kh * kw;
    const size_t per = (size_t)Wo * K;
    const fast_wpack *prep = samc__fast_prepared(ctx, proj->prep); /* packed at load, else here */
    const size_t counts[2] = {per * nt, prep ? 1 : samc__fast_pack_size(C, K)};
    float *buf[2];
    samc_status st = samc__fast_ws_get(ctx, 2, counts, buf);
    if (st)
        return st;
    float *col = buf[0], *Wp = buf[1];
    const samc_linear lin = {.w = proj->w, .b = proj->b, .in = K, .out = C};
    if (!prep)
        samc__fast_pack_linear(&lin, Wp);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int row = 0; row < B * Ho; row++) {
        const int b = row / Ho, oy = row % Ho;
        float *cb = col + per * omp_get_thread_num();
        const float *xb = x->data + (int64_t)b * cin * H * W;
        for (int ox = 0; ox < Wo; ox++) {
            float *cr = cb + (int64_t)ox * K;
            for (int ci = 0; ci < cin; ci++)
                for (int ky = 0; ky < kh; ky++) {
                    const int iy = oy * proj->stride - proj->pad + ky;
                    for (int kx = 0; kx < kw; kx++) {
                        const int ix = ox * proj->stride - proj->pad + kx;
                        *cr++ = (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                    ? xb[((int64_t)ci * H + iy) * W + ix]
                                    : 0.0f;
                    }
                }
        }
        if (prep)
            samc__fast_gemm_1t(Wo, cb, K, prep, proj->b, out->data + (int64_t)row * Wo * C, C, 0);
        else
            samc__fast_linear_1t(cb, K, Wo, &lin, Wp, out->data + (int64_t)row * Wo * C, C, 0);
    }
    return SAMC_OK;
}

/* ---- pieces --------------------------------------------------------------- */

/* MaxPool2d(s, s) of a (B, H, W, C) token map into (B, H/s, W/s, C); NaN
 * propagates (PyTorch's kernel). Threads over output rows. */
static void max_pool_map(int nt, const float *x, int B, int H, int W, int C, int s, float *y)
{
    const int ho = H / s, wo = W / s;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int r = 0; r < B * ho; r++) {
        const int b = r / ho, i = r % ho;
        for (int j = 0; j < wo; j++) {
            const float *win[16 * 16]; /* q_stride <= 16 (config.c) */
            for (int di = 0; di < s; di++)
                for (int dj = 0; dj < s; dj++)
                    win[di * s + dj] = x + (((int64_t)b * H + i * s + di) * W + j * s + dj) * C;
            samc__fast_max_rows(y + (((int64_t)b * ho + i) * wo + j) * C, win, s * s, C);
        }
    }
}

/* One head of one window: gather K, V (L x hd) and the (pooled) Q, attend,
 * and write the rows that survive window_unpartition's crop into attn. A
 * token outside the map is a zero-padded input: its q/k/v are the biases. */
typedef struct win_task {
    const samc_hiera_block *blk;
    const samc_hiera_geom *g;
    const float *qkv; /* (B, H, W, 3D) raster */
    float *attn;      /* (B, Ho, Wo, D) */
    float scale;
    int bf16;         /* the bf16 implementation: bf16 attention on windows worth it */
} win_task;

static const float *qkv_token(const win_task *t, int b, int y, int x, int part, int h)
{
    const samc_hiera_geom *g = t->g;
    const int64_t off = (int64_t)part * g->D + (int64_t)h * g->hd;
    if (y < g->H && x < g->W)
        return t->qkv + (((int64_t)b * g->H + y) * g->W + x) * 3 * g->D + off;
    return t->blk->qkv.b + off;
}

/* rows: 2 L + 2 Lq pointers of scratch; Q: Lq x hd floats for pooled queries.
 * K, V (and unpooled Q) rows are read where they lie in the raster qkv map
 * (fast_attn's row pointers: no gather), output rows that survive the crop
 * are written in place, the others dropped. */
static void window_head(const win_task *t, int b, int wy, int wx, int h, const float **rows, float *Q)
{
    const samc_hiera_geom *g = t->g;
    const int hd = g->hd, L = g->wh * g->ww, Lq = g->qh * g->qw;
    const float **kr = rows, **vr = rows + L, **qr = rows + 2 * L;
    float **orow = (float **)(rows + 2 * L + Lq);
    for (int r = 0; r < g->wh; r++)
        for (int c = 0; c < g->ww; c++) {
            const int y = wy * g->wh + r, x = wx * g->ww + c, i = r * g->ww + c;
            kr[i] = qkv_token(t, b, y, x, 1, h);
            vr[i] = qkv_token(t, b, y, x, 2, h);
        }
    const int s = g->s;
    for (int r = 0; r < g->qh; r++)
        for (int c = 0; c < g->qw; c++) {
            const int i = r * g->qw + c;
            if (s == 1) {
                qr[i] = qkv_token(t, b, wy * g->wh + r, wx * g->ww + c, 0, h);
                continue;
            }
            float *q = Q + (int64_t)i * hd;
            qr[i] = q;
            const float *win[16 * 16]; /* q_stride <= 16 (config.c) */
            for (int di = 0; di < s; di++)
                for (int dj = 0; dj < s; dj++)
                    win[di * s + dj] = qkv_token(t, b, wy * g->wh + r * s + di, wx * g->ww + c * s + dj, 0, h);
            samc__fast_max_rows(q, win, s * s, hd);
        }
    for (int r = 0; r < g->qh; r++)
        for (int c = 0; c < g->qw; c++) {
            const int y = wy * g->qh + r, x = wx * g->qw + c;
            orow[r * g->qw + c] = y < g->Ho && x < g->Wo
                                      ? t->attn + (((int64_t)b * g->Ho + y) * g->Wo + x) * g->D + (int64_t)h * hd
                                      : NULL;
        }
    const fast_attn a = {.Lq = Lq, .Lk = L, .d = hd, .scale = t->scale, .qrows = qr, .krows = kr, .vrows = vr,
                         .orows = orow};
    if (t->bf16)
        samc__fast_flash_attention_bf16_1t(&a, 1, 0);
    else
        samc__fast_flash_attention_1t(&a, 1, 0);
}

/* Per-thread scratch sizes of the attention stage. */
static size_t attn_scratch_per_thread(const samc_hiera_geom *g, int global)
{
    const size_t L = (size_t)g->wh * g->ww, Lq = (size_t)g->qh * g->qw, hd = (size_t)g->hd;
    if (global) /* per thread: the whole need divided by threads is enough (see below) */
        return 0;
    return (Lq * hd + 15) / 16 * 16 + 2 * (2 * L + 2 * Lq); /* pooled Q, then the row pointers */
}

#define MLP_CHUNK 128

/* x += fc2(GELU(fc1(norm2(x)))) in chunks of MLP_CHUNK rows per thread. */
static void mlp_residual(const samc_ctx *ctx, int nt, const samc_hiera_block *blk, float *y, int64_t rows,
                         float *scratch, float *W1p, float *W2p)
{
    if (!samc__fast_prepared(ctx, blk->mlp_fc1.prep)) /* not packed at load: per call */
        samc__fast_pack_linear(&blk->mlp_fc1, W1p), samc__fast_pack_linear(&blk->mlp_fc2, W2p);
    const int D = blk->dim_out, hidden = blk->mlp_fc1.out;
    /* chunks of MLP_CHUNK rows, fewer (down to 48, whole 12-row blocks)
     * where that leaves threads idle: stage 4's 1024 rows are 8 chunks */
    int64_t ch = (rows + nt - 1) / nt;
    ch = (ch + 11) / 12 * 12;
    ch = ch < 48 ? 48 : ch > MLP_CHUNK ? MLP_CHUNK : ch;
    const int64_t ldh = fast_ld(hidden), nch = (rows + ch - 1) / ch;
    const size_t per = (size_t)MLP_CHUNK * (D + ldh);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t c = 0; c < nch; c++) {
        float *n = scratch + per * omp_get_thread_num(), *h = n + (size_t)MLP_CHUNK * D;
        const int64_t r0 = c * ch, nr = rows - r0 < ch ? rows - r0 : ch;
        float *yr = y + r0 * D;
        samc__fast_layer_norm_rows(yr, D, nr, &blk->norm2, n, D);
        samc__fast_linear_x_1t(ctx, n, D, nr, &blk->mlp_fc1, W1p, h, ldh, FAST_GEMM_GELU);
        samc__fast_linear_x_1t(ctx, h, ldh, nr, &blk->mlp_fc2, W2p, yr, D, FAST_GEMM_ACC);
    }
}

/* ---- MultiScaleBlock.forward ---------------------------------------------- */

samc_status samc_fast_hiera_block(samc_ctx *ctx, const samc_hiera_block *blk, const samc_tensor *x,
                                  samc_tensor *out)
{
    samc_hiera_geom g;
    samc_status st = samc_hiera_block_geometry(ctx->err, blk, x, &g);
    if (!st && (out->ndim != 4 || out->shape[0] != g.B || out->shape[1] != g.Ho || out->shape[2] != g.Wo ||
                out->shape[3] != g.D))
        st = samc_fail(ctx->err, SAMC_ERR_SHAPE, "hiera_block: output is not (%d,%d,%d,%d)", g.B, g.Ho, g.Wo, g.D);
    if (st)
        return st;
    const int nt = samc__fast_threads(ctx), D = g.D, global = blk->window == 0;
    const int64_t rows = (int64_t)g.B * g.H * g.W, orows = (int64_t)g.B * g.Ho * g.Wo;
    const size_t att = attn_scratch_per_thread(&g, global);
    const size_t mlp = (size_t)MLP_CHUNK * (D + fast_ld(blk->mlp_fc1.out));
    const bool prepared = samc__fast_prepared(ctx, blk->mlp_fc1.prep) != NULL;
    const size_t counts[7] = {
        (size_t)rows * g.dim,                                  /* xn */
        (size_t)rows * 3 * D,                                  /* qkv */
        (size_t)orows * D,                                     /* attn */
        global ? (size_t)nt * mlp + samc__fast_attention_mh_scratch(nt, g.H * g.W, g.heads, g.hd)
               : (size_t)nt * (att > mlp ? att : mlp),         /* per-thread scratch */
        blk->has_proj && g.s > 1 ? (size_t)rows * D : 0,       /* unpooled shortcut */
        prepared ? 1 : samc__fast_pack_size(blk->mlp_fc1.out, blk->mlp_fc1.in), /* fc1, fc2 packed per call */
        prepared ? 1 : samc__fast_pack_size(blk->mlp_fc2.out, blk->mlp_fc2.in),
    };
    float *buf[7];
    if ((st = samc__fast_ws_get(ctx, 7, counts, buf)))
        return st;
    float *xn = buf[0], *qkv = buf[1], *attn = buf[2], *scr = buf[3], *sc = buf[4];
    const size_t scr_per = att > mlp ? att : mlp; /* windowed: per thread */

    samc__fast_layer_norm(nt, x->data, rows, &blk->norm1, xn); /* x = norm1(x) */
    /* shortcut -> out (without a projection, the attention's proj below
     * reads it from x: no copy) */
    if (blk->has_proj && g.s == 1) {
        samc__fast_linear_x(ctx, nt, xn, g.dim, rows, &blk->proj, out->data, D, 0);
    } else if (blk->has_proj) {
        samc__fast_linear_x(ctx, nt, xn, g.dim, rows, &blk->proj, sc, D, 0);
        max_pool_map(nt, sc, g.B, g.H, g.W, D, g.s, out->data);
    }
    samc__fast_linear_x(ctx, nt, xn, g.dim, rows, &blk->qkv, qkv, 3 * D, 0);

    const float scale = (float)(1.0 / sqrt((double)g.hd));
    const int bf16 = samc__fast_bf16_attention_on(ctx, &blk->qkv);
    if (global) { /* one window = the whole map, rows are uniformly strided */
        const int64_t L = (int64_t)g.H * g.W;
        for (int b = 0; b < g.B; b++) {
            const float *qb = qkv + b * L * 3 * D;
            samc__fast_attention_mh_x(nt, bf16, qb, 3 * D, qb + D, 3 * D, qb + 2 * D, 3 * D, (int)L, (int)L,
                                      g.heads, g.hd, scale, attn + b * L * D, D, scr);
        }
    } else {
        /* bf16 windows: the per-window conversions cost more than the
         * faster products save below 64 tokens (docs/fast.md, "Kernels") */
        const win_task t = {blk, &g, qkv, attn, scale, bf16 && g.wh * g.ww >= 64};
        const int Lq = g.qh * g.qw, hd = g.hd;
        const int tasks = g.B * g.nwh * g.nww * g.heads;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
        for (int k = 0; k < tasks; k++) {
            const int h = k % g.heads, w = k / g.heads;
            const int wx = w % g.nww, wy = (w / g.nww) % g.nwh, b = w / (g.nww * g.nwh);
            float *Q = scr + scr_per * omp_get_thread_num();
            window_head(&t, b, wy, wx, h, (const float **)(void *)(Q + ((size_t)Lq * hd + 15) / 16 * 16), Q);
        }
    }
    /* x = shortcut + proj(attn) */
    if (blk->has_proj)
        samc__fast_linear_x(ctx, nt, attn, D, orows, &blk->attn_proj, out->data, D, FAST_GEMM_ACC);
    else
        samc__fast_linear_res(ctx, nt, attn, D, orows, &blk->attn_proj, x->data, D, out->data, D);
    /* x = x + mlp(norm2(x)) */
    mlp_residual(ctx, nt, blk, out->data, orows, scr, buf[5], buf[6]);
    return SAMC_OK;
}
