/* hiera.c - PatchEmbed and MultiScaleBlock (backbones/utils.py,
 * backbones/hieradet.py), fast bodies. Same results as ref/hiera.c; the
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

#include "core/error.h"
#include "fast.h"
#include "fast_layers.h"

/* ---- PatchEmbed ---------------------------------------------------------- */

/* Conv2d(k, stride, pad) written straight to BHWC: each output row of the
 * image is one im2col panel (Wo x cin*kh*kw, in the weight's (ci, ky, kx)
 * order) times W^T. */
samc_status samc_fast_patch_embed(samc_ctx *ctx, const samc_conv2d *proj, const samc_tensor *x,
                                  samc_tensor *out)
{
    if (x->ndim != 4 || x->shape[1] != proj->cin || proj->groups != 1)
        return samc_fail(NULL, SAMC_ERR_SHAPE, "patch_embed: input is not (B,%d,H,W)", proj->cin);
    const int B = (int)x->shape[0], H = (int)x->shape[2], W = (int)x->shape[3];
    const int Ho = fast_conv_out(H, proj->kh, proj->stride, proj->pad);
    const int Wo = fast_conv_out(W, proj->kw, proj->stride, proj->pad);
    const int C = proj->cout, cin = proj->cin, kh = proj->kh, kw = proj->kw;
    if (Ho < 1 || Wo < 1 || out->ndim != 4 || out->shape[0] != B || out->shape[1] != Ho ||
        out->shape[2] != Wo || out->shape[3] != C)
        return samc_fail(NULL, SAMC_ERR_SHAPE, "patch_embed: output is not (%d,%d,%d,%d)", B, Ho,
                         Wo, C);
    const int nt = fast_threads(ctx);
    const int K = cin * kh * kw;
    const size_t per = (size_t)Wo * K;
    const size_t counts[2] = {per * nt, fast_pack_size(C, K)};
    float *buf[2];
    samc_status st = fast_ws_get(ctx, 2, counts, buf);
    if (st)
        return st;
    float *col = buf[0], *Wp = buf[1];
    const samc_linear lin = {proj->w, proj->b, K, C};
    fast_pack_linear(&lin, Wp);
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
        fast_linear_1t(cb, K, Wo, &lin, Wp, out->data + (int64_t)row * Wo * C, C, 0);
    }
    return SAMC_OK;
}

/* ---- MultiScaleBlock: geometry (the same refusals as ref/hiera.c) -------- */

typedef struct geom {
    int B, H, W, dim, D, heads, hd, s, Ho, Wo, wh, ww, nwh, nww, qh, qw;
} geom;

static int linear_is(const samc_linear *l, int in, int out)
{
    return l->w && l->in == in && l->out == out;
}

static samc_status geometry(const samc_hiera_block *blk, const samc_tensor *x, const samc_tensor *out,
                            geom *g)
{
    if (x->ndim != 4 || x->shape[3] != blk->dim)
        return samc_fail(NULL, SAMC_ERR_SHAPE, "hiera_block: input is not (B,H,W,%d)", blk->dim);
    if (blk->heads < 1 || blk->dim_out % blk->heads != 0 || blk->q_stride < 0 || blk->window < 0)
        return samc_fail(NULL, SAMC_ERR_ARG, "hiera_block: bad heads/q_stride/window");
    const int dim = blk->dim, D = blk->dim_out, hidden = blk->mlp_fc1.out;
    if (blk->norm1.dim != dim || blk->norm2.dim != D || !linear_is(&blk->qkv, dim, 3 * D) ||
        !linear_is(&blk->attn_proj, D, D) || !linear_is(&blk->mlp_fc1, D, hidden) ||
        !linear_is(&blk->mlp_fc2, hidden, D) || (blk->has_proj && !linear_is(&blk->proj, dim, D)))
        return samc_fail(NULL, SAMC_ERR_SHAPE, "hiera_block: weight shapes do not match dims");
    if (blk->q_stride > 0 && !blk->has_proj)
        return samc_fail(NULL, SAMC_ERR_UNSUPPORTED,
                         "hiera_block: q-pool without dim change (unpooled shortcut)");
    if (!blk->has_proj && dim != D)
        return samc_fail(NULL, SAMC_ERR_ARG, "hiera_block: dim change without proj");
    if (blk->q_stride > 0 && blk->window == 0)
        return samc_fail(NULL, SAMC_ERR_UNSUPPORTED,
                         "hiera_block: q-pool with global attention (the official forward "
                         "divides by window // q_stride = 0)");
    g->B = (int)x->shape[0], g->H = (int)x->shape[1], g->W = (int)x->shape[2];
    g->dim = dim, g->D = D, g->heads = blk->heads, g->hd = D / blk->heads;
    g->s = blk->q_stride > 0 ? blk->q_stride : 1;
    g->Ho = g->H / g->s, g->Wo = g->W / g->s;
    const int ws = blk->window;
    g->wh = ws > 0 ? ws : g->H, g->ww = ws > 0 ? ws : g->W;
    g->nwh = (g->H + g->wh - 1) / g->wh, g->nww = (g->W + g->ww - 1) / g->ww;
    g->qh = g->wh / g->s, g->qw = g->ww / g->s;
    if (g->Ho < 1 || g->Wo < 1 || g->qh < 1 || g->qw < 1)
        return samc_fail(NULL, SAMC_ERR_UNSUPPORTED,
                         "hiera_block: map %dx%d or window %d smaller than the pool stride %d",
                         g->H, g->W, ws, g->s);
    if ((g->Ho + g->qh - 1) / g->qh != g->nwh || (g->Wo + g->qw - 1) / g->qw != g->nww)
        return samc_fail(NULL, SAMC_ERR_UNSUPPORTED,
                         "hiera_block: q-pool window grid of %dx%d (window %d) does not match "
                         "the pooled %dx%d map (the official unpartition fails here)",
                         g->H, g->W, ws, g->Ho, g->Wo);
    if (out->ndim != 4 || out->shape[0] != g->B || out->shape[1] != g->Ho ||
        out->shape[2] != g->Wo || out->shape[3] != D)
        return samc_fail(NULL, SAMC_ERR_SHAPE, "hiera_block: output is not (%d,%d,%d,%d)", g->B,
                         g->Ho, g->Wo, D);
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
            float *o = y + (((int64_t)b * ho + i) * wo + j) * C;
            for (int c = 0; c < C; c++)
                o[c] = -INFINITY;
            for (int di = 0; di < s; di++)
                for (int dj = 0; dj < s; dj++) {
                    const float *v = x + (((int64_t)b * H + i * s + di) * W + j * s + dj) * C;
                    for (int c = 0; c < C; c++)
                        if (v[c] > o[c] || isnan(v[c]))
                            o[c] = v[c];
                }
        }
    }
}

/* One head of one window: gather K, V (L x hd) and the (pooled) Q, attend,
 * and write the rows that survive window_unpartition's crop into attn. A
 * token outside the map is a zero-padded input: its q/k/v are the biases. */
typedef struct win_task {
    const samc_hiera_block *blk;
    const geom *g;
    const float *qkv; /* (B, H, W, 3D) raster */
    float *attn;      /* (B, Ho, Wo, D) */
    float scale;
} win_task;

static const float *qkv_token(const win_task *t, int b, int y, int x, int part, int h)
{
    const geom *g = t->g;
    const int64_t off = (int64_t)part * g->D + (int64_t)h * g->hd;
    if (y < g->H && x < g->W)
        return t->qkv + (((int64_t)b * g->H + y) * g->W + x) * 3 * g->D + off;
    return t->blk->qkv.b + off;
}

static void window_head(const win_task *t, int b, int wy, int wx, int h, float *K, float *V,
                        float *Q, float *O, float *S)
{
    const geom *g = t->g;
    const int hd = g->hd, L = g->wh * g->ww, Lq = g->qh * g->qw;
    const size_t bytes = (size_t)hd * sizeof(float);
    for (int r = 0; r < g->wh; r++)
        for (int c = 0; c < g->ww; c++) {
            const int y = wy * g->wh + r, x = wx * g->ww + c, i = r * g->ww + c;
            memcpy(K + (int64_t)i * hd, qkv_token(t, b, y, x, 1, h), bytes);
            memcpy(V + (int64_t)i * hd, qkv_token(t, b, y, x, 2, h), bytes);
        }
    const int s = g->s;
    for (int r = 0; r < g->qh; r++)
        for (int c = 0; c < g->qw; c++) {
            float *q = Q + (int64_t)(r * g->qw + c) * hd;
            if (s == 1) {
                memcpy(q, qkv_token(t, b, wy * g->wh + r, wx * g->ww + c, 0, h), bytes);
                continue;
            }
            for (int k = 0; k < hd; k++)
                q[k] = -INFINITY;
            for (int di = 0; di < s; di++)
                for (int dj = 0; dj < s; dj++) {
                    const float *v = qkv_token(t, b, wy * g->wh + r * s + di, wx * g->ww + c * s + dj, 0, h);
                    for (int k = 0; k < hd; k++)
                        if (v[k] > q[k] || isnan(v[k]))
                            q[k] = v[k];
                }
        }
    fast_attention_rows(Q, hd, K, hd, V, hd, Lq, L, hd, t->scale, O, hd, S);
    for (int r = 0; r < g->qh; r++)
        for (int c = 0; c < g->qw; c++) {
            const int y = wy * g->qh + r, x = wx * g->qw + c;
            if (y < g->Ho && x < g->Wo)
                memcpy(t->attn + (((int64_t)b * g->Ho + y) * g->Wo + x) * g->D + (int64_t)h * hd,
                       O + (int64_t)(r * g->qw + c) * hd, bytes);
        }
}

/* Per-thread scratch sizes of the attention stage. */
static size_t attn_scratch_per_thread(const geom *g, int global)
{
    const size_t L = (size_t)g->wh * g->ww, Lq = (size_t)g->qh * g->qw, hd = (size_t)g->hd;
    if (global) /* per thread: the whole need divided by threads is enough (see below) */
        return 0;
    return 2 * L * hd + 2 * Lq * hd + Lq * fast_ld((int64_t)L);
}

#define MLP_CHUNK 128

/* x += fc2(GELU(fc1(norm2(x)))) in chunks of MLP_CHUNK rows per thread. */
static void mlp_residual(int nt, const samc_hiera_block *blk, float *y, int64_t rows, float *scratch,
                         float *W1p, float *W2p)
{
    fast_pack_linear(&blk->mlp_fc1, W1p);
    fast_pack_linear(&blk->mlp_fc2, W2p);
    const int D = blk->dim_out, hidden = blk->mlp_fc1.out;
    const int64_t ldh = fast_ld(hidden), nch = (rows + MLP_CHUNK - 1) / MLP_CHUNK;
    const size_t per = (size_t)MLP_CHUNK * (D + ldh);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t c = 0; c < nch; c++) {
        float *n = scratch + per * omp_get_thread_num(), *h = n + (size_t)MLP_CHUNK * D;
        const int64_t r0 = c * MLP_CHUNK, nr = rows - r0 < MLP_CHUNK ? rows - r0 : MLP_CHUNK;
        float *yr = y + r0 * D;
        fast_layer_norm_rows(yr, D, nr, &blk->norm2, n, D);
        fast_linear_1t(n, D, nr, &blk->mlp_fc1, W1p, h, ldh, 0);
        for (int64_t r = 0; r < nr; r++)
            fast_gelu(h + r * ldh, hidden);
        fast_linear_1t(h, ldh, nr, &blk->mlp_fc2, W2p, yr, D, 1);
    }
}

/* ---- MultiScaleBlock.forward ---------------------------------------------- */

samc_status samc_fast_hiera_block(samc_ctx *ctx, const samc_hiera_block *blk, const samc_tensor *x,
                                  samc_tensor *out)
{
    geom g;
    samc_status st = geometry(blk, x, out, &g);
    if (st)
        return st;
    const int nt = fast_threads(ctx), D = g.D, global = blk->window == 0;
    const int64_t rows = (int64_t)g.B * g.H * g.W, orows = (int64_t)g.B * g.Ho * g.Wo;
    const size_t att = attn_scratch_per_thread(&g, global);
    const size_t mlp = (size_t)MLP_CHUNK * (D + fast_ld(blk->mlp_fc1.out));
    const size_t counts[7] = {
        (size_t)rows * g.dim,                                  /* xn */
        (size_t)rows * 3 * D,                                  /* qkv */
        (size_t)orows * D,                                     /* attn */
        global ? (size_t)nt * mlp + fast_attention_mh_scratch(nt, g.H * g.W, g.heads, g.hd)
               : (size_t)nt * (att > mlp ? att : mlp),         /* per-thread scratch */
        blk->has_proj && g.s > 1 ? (size_t)rows * D : 0,       /* unpooled shortcut */
        fast_pack_size(blk->mlp_fc1.out, blk->mlp_fc1.in),     /* packed fc1, fc2 */
        fast_pack_size(blk->mlp_fc2.out, blk->mlp_fc2.in),
    };
    float *buf[7];
    if ((st = fast_ws_get(ctx, 7, counts, buf)))
        return st;
    float *xn = buf[0], *qkv = buf[1], *attn = buf[2], *scr = buf[3], *sc = buf[4];
    const size_t scr_per = att > mlp ? att : mlp; /* windowed: per thread */

    fast_layer_norm(nt, x->data, rows, &blk->norm1, xn); /* x = norm1(x) */
    /* shortcut -> out */
    if (!blk->has_proj) {
        memcpy(out->data, x->data, (size_t)rows * D * sizeof(float));
    } else if (g.s == 1) {
        fast_linear(nt, xn, g.dim, rows, &blk->proj, out->data, D, 0);
    } else {
        fast_linear(nt, xn, g.dim, rows, &blk->proj, sc, D, 0);
        max_pool_map(nt, sc, g.B, g.H, g.W, D, g.s, out->data);
    }
    fast_linear(nt, xn, g.dim, rows, &blk->qkv, qkv, 3 * D, 0);

    const float scale = (float)(1.0 / sqrt((double)g.hd));
    if (global) { /* one window = the whole map, rows are uniformly strided */
        const int64_t L = (int64_t)g.H * g.W;
        for (int b = 0; b < g.B; b++) {
            const float *qb = qkv + b * L * 3 * D;
            fast_attention_mh(nt, qb, 3 * D, qb + D, 3 * D, qb + 2 * D, 3 * D, (int)L, (int)L,
                              g.heads, g.hd, scale, attn + b * L * D, D, scr);
        }
    } else {
        const win_task t = {blk, &g, qkv, attn, scale};
        const int L = g.wh * g.ww, Lq = g.qh * g.qw, hd = g.hd;
        const int tasks = g.B * g.nwh * g.nww * g.heads;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
        for (int k = 0; k < tasks; k++) {
            const int h = k % g.heads, w = k / g.heads;
            const int wx = w % g.nww, wy = (w / g.nww) % g.nwh, b = w / (g.nww * g.nwh);
            float *K = scr + scr_per * omp_get_thread_num();
            float *V = K + (size_t)L * hd, *Q = V + (size_t)L * hd, *O = Q + (size_t)Lq * hd;
            window_head(&t, b, wy, wx, h, K, V, Q, O, O + (size_t)Lq * hd);
        }
    }
    /* x = shortcut + proj(attn) */
    fast_linear(nt, attn, D, orows, &blk->attn_proj, out->data, D, 1);
    /* x = x + mlp(norm2(x)) */
    mlp_residual(nt, blk, out->data, orows, scr, buf[5], buf[6]);
    return SAMC_OK;
}
