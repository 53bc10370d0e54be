/* SPDX-License-Identifier: Apache-2.0 */
/* hiera.cu - MultiScaleBlock and PatchEmbed on device buffers
 * (hieradet.py), and their per-kind bodies.
 *
 * A block, with the residual stream x in fp32 and T the row's precision:
 *   norm1 + window partition (zero pad rows)   k_ln_window    -> xn_win (T)
 *   qkv                                          cuBLASLt + bias -> qkv (T)
 *   shortcut: proj(norm1 x), max-pooled          cuBLASLt, k_maxpool (fp32)
 *   attention per window and head                k_attn_small, or batched
 *                                                GEMMs + k_softmax
 *   attn.proj                                    cuBLASLt + bias -> a (fp32)
 *   unpartition + shortcut + norm2               k_unpart_add_ln -> y, xn2
 *   mlp: fc1 + bias, GELU, fc2 + bias + y        cuBLASLt (the residual in
 *                                                its epilogue, in place)
 * Padded window rows are exact zeros after norm1 (F.pad), so their keys and
 * values are the projections' biases and take part unmasked, as in the
 * official code. */
#include <cmath>

#include "cuda/hiera.h"

static size_t es_of(cu_prec p) { return p == CU_BF16 ? 2 : 4; }

static cu_win window_of(const samc_hiera_geom &g)
{
    return cu_win{g.B, g.H, g.W, g.wh, g.ww, g.nwh, g.nww};
}

static int chunk_rows(const samc_hiera_geom &g)
{
    const int64_t windows = (int64_t)g.B * g.nwh * g.nww, nq = (int64_t)g.qh * g.qw, nk = (int64_t)g.wh * g.ww;
    const int64_t per_row = windows * nk * 4;
    const int64_t c = (int64_t)(kScoreCap / (size_t)per_row);
    return (int)(c < 1 ? 1 : c < nq ? c : nq);
}

cu_block_need cu_hiera_block_need(const samc_hiera_block *blk, const samc_hiera_geom &g, cu_prec prec)
{
    const size_t es = es_of(prec);
    const cu_win wg = window_of(g);
    const int64_t windows = wg.windows(), nq = (int64_t)g.qh * g.qw, nk = (int64_t)g.wh * g.ww;
    const int64_t tokens = (int64_t)g.B * g.H * g.W, otokens = (int64_t)g.B * g.Ho * g.Wo;
    const bool small = k_attn_small_fits((int)nk, g.hd);
    const int64_t chunk = chunk_rows(g);
    cu_block_need n = {};
    n.xn_win = (size_t)(wg.rows() * g.dim) * es;
    n.xn = blk->has_proj ? (size_t)(tokens * g.dim) * es : 0;
    n.qkv = (size_t)(wg.rows() * 3 * g.D) * es;
    n.qp = g.s > 1 && !small ? (size_t)(windows * nq * g.D) * es : 0;
    n.o = (size_t)(windows * nq * g.D) * es;
    n.a = (size_t)(windows * nq * g.D) * 4;
    n.p = blk->has_proj ? (size_t)(tokens * g.D) * 4 : 0;
    n.scp = blk->has_proj && g.s > 1 ? (size_t)(otokens * g.D) * 4 : 0;
    n.S = small ? 0 : (size_t)(windows * chunk * nk) * 4;
    n.P = small || prec != CU_BF16 ? 0 : (size_t)(windows * chunk * nk) * 2;
    n.xn2 = (size_t)(otokens * g.D) * es;
    n.h = (size_t)(otokens * blk->mlp_fc1.out) * es;
    return n;
}

/* Batched-GEMM attention for windows of more than 64 keys and global
 * attention: per head, per chunk of queries, every window at once. */
static void attention_gemm(cu_dev *d, cu_prec prec, const samc_hiera_geom &g, const cu_block_bufs &b, float scale)
{
    const size_t es = es_of(prec);
    const cu_win wg = window_of(g);
    const int windows = (int)wg.windows(), nq = g.qh * g.qw, nk = g.wh * g.ww, D = g.D, hd = g.hd;
    const char *qkv = (const char *)b.qkv;
    const char *Q = qkv;
    int64_t ldq = 3 * (int64_t)D, sq = (int64_t)nk * 3 * D;
    if (g.s > 1) {
        k_pool_q(d->s, b.qkv, wg, D, g.s, g.qh, g.qw, b.qp, prec == CU_BF16);
        Q = (const char *)b.qp, ldq = D, sq = (int64_t)nq * D;
    }
    const int chunk = chunk_rows(g);
    for (int h = 0; h < g.heads; h++)
        for (int q0 = 0; q0 < nq; q0 += chunk) {
            const int nqc = nq - q0 < chunk ? nq - q0 : chunk;
            cu_attn_scores(d, prec, windows, nqc, nk, hd, scale, Q + ((int64_t)q0 * ldq + (int64_t)h * hd) * es, ldq,
                           sq, qkv + ((int64_t)D + (int64_t)h * hd) * es, 3 * (int64_t)D, (int64_t)nk * 3 * D, b.S);
            void *P = prec == CU_BF16 ? b.P : (void *)b.S;
            k_softmax(d->s, b.S, (int64_t)windows * nqc, nk, P, prec == CU_BF16);
            cu_attn_values(d, prec, windows, nqc, nk, hd, P, qkv + (2 * (int64_t)D + (int64_t)h * hd) * es,
                           3 * (int64_t)D, (int64_t)nk * 3 * D, (char *)b.o + ((int64_t)q0 * D + (int64_t)h * hd) * es,
                           D, (int64_t)nq * D);
        }
}

void cu_hiera_block(cu_dev *d, cu_prec prec, int slot, const samc_hiera_block *blk, const samc_hiera_geom &g,
                    const float *x, float *y, const cu_block_bufs &b)
{
    const bool bf = prec == CU_BF16;
    const cu_lin *qkv = cu_prepared(&blk->qkv, slot), *proj = cu_prepared(&blk->attn_proj, slot);
    const cu_lin *fc1 = cu_prepared(&blk->mlp_fc1, slot), *fc2 = cu_prepared(&blk->mlp_fc2, slot);
    cu_arena *A = qkv->arena;
    const float *n1w = cu_weight(A, blk->norm1.w, blk->norm1.dim), *n1b = cu_weight(A, blk->norm1.b, blk->norm1.dim);
    const float *n2w = cu_weight(A, blk->norm2.w, blk->norm2.dim), *n2b = cu_weight(A, blk->norm2.b, blk->norm2.dim);
    const cu_win wg = window_of(g);
    const int64_t tokens = (int64_t)g.B * g.H * g.W, otokens = (int64_t)g.B * g.Ho * g.Wo;
    const int nk = g.wh * g.ww, nq = g.qh * g.qw;
    if (wg.padded()) /* F.pad after norm1: the pad rows are zeros */
        CU(cudaMemsetAsync(b.xn_win, 0, (size_t)(wg.rows() * g.dim) * es_of(prec), d->s));
    k_ln_window(d->s, x, wg, g.dim, n1w, n1b, blk->norm1.eps, b.xn_win, blk->has_proj ? b.xn : nullptr, bf);
    cu_linear(d, qkv, b.xn_win, wg.rows(), b.qkv, bf);
    const float *sc = x;
    if (blk->has_proj) { /* shortcut = do_pool(proj(norm1(x)), pool) */
        cu_linear(d, cu_prepared(&blk->proj, slot), b.xn, tokens, b.p, false);
        sc = b.p;
        if (g.s > 1) {
            k_maxpool(d->s, b.p, g.B, g.H, g.W, g.D, g.s, b.scp);
            sc = b.scp;
        }
    }
    const float scale = (float)(1.0 / std::sqrt((double)g.hd));
    if (k_attn_small_fits(nk, g.hd))
        k_attn_small(d->s, b.qkv, wg, g.heads, g.hd, g.s, g.qh, g.qw, scale, b.o, bf);
    else
        attention_gemm(d, prec, g, b, scale);
    cu_linear(d, proj, b.o, wg.windows() * nq, b.a, false);
    const cu_win gq = {g.B, g.Ho, g.Wo, g.qh, g.qw, g.nwh, g.nww};
    k_unpart_add_ln(d->s, b.a, gq, sc, y, g.D, n2w, n2b, blk->norm2.eps, b.xn2, bf);
    cu_linear(d, fc1, b.xn2, otokens, b.h, bf);
    k_gelu(d->s, b.h, otokens * fc1->out, bf);
    cu_linear(d, fc2, b.h, otokens, y, false, true, true);
}

void cu_patch_embed(cu_dev *d, const cu_lin *L, const samc_conv2d *c, const float *img, int B, int H, int W,
                    float *out, void *cols, const float *pos)
{
    const int Ho = (H + 2 * c->pad - c->kh) / c->stride + 1, Wo = (W + 2 * c->pad - c->kw) / c->stride + 1;
    const int64_t rows = (int64_t)B * Ho * Wo;
    k_im2col(d->s, img, B, c->cin, H, W, c->kh, c->kw, c->stride, c->pad, Ho, Wo, L->kpad, cols, L->prec == CU_BF16);
    if (pos) /* x + pos_embed, the sum in the GEMM's epilogue */
        for (int b = 0; b < B; b++)
            CU(cudaMemcpyAsync(out + (int64_t)b * Ho * Wo * c->cout, pos, (size_t)Ho * Wo * c->cout * sizeof(float),
                               cudaMemcpyDeviceToDevice, d->s));
    cu_linear_ld(d, L, cols, L->kpad, rows, out, L->out, false, true, pos != nullptr);
}

/* ---- per-kind bodies (host tensors in and out) ------------------------------ */

static cu_block_bufs alloc_block(const cu_block_need &n, cudaStream_t s, std::vector<cu_buf> &keep)
{
    auto get = [&](size_t bytes) -> void * {
        if (!bytes)
            return nullptr;
        keep.emplace_back(bytes, s);
        return keep.back().p;
    };
    keep.reserve(12);
    cu_block_bufs b;
    b.xn_win = get(n.xn_win), b.xn = get(n.xn), b.qkv = get(n.qkv), b.qp = get(n.qp), b.o = get(n.o);
    b.a = (float *)get(n.a), b.p = (float *)get(n.p), b.scp = (float *)get(n.scp), b.S = (float *)get(n.S);
    b.P = get(n.P), b.xn2 = get(n.xn2), b.h = get(n.h);
    return b;
}

extern "C" samc_status samc_cuda_hiera_block(samc_ctx *ctx, const samc_hiera_block *blk, const samc_tensor *x,
                                             samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        samc_hiera_geom g;
        samc_error e = {};
        if (samc_status st = cu_api->hiera_geometry(&e, blk, x, &g))
            cu_fail(st, "%s", e.msg);
        if (out->ndim != 4 || out->shape[0] != g.B || out->shape[1] != g.Ho || out->shape[2] != g.Wo ||
            out->shape[3] != g.D)
            cu_fail(SAMC_ERR_SHAPE, "hiera_block: output is not (%d,%d,%d,%d)", g.B, g.Ho, g.Wo, g.D);
        cu_dev *d = cu_dev_of(ctx);
        const cu_prec prec = cu_prec_of(ctx);
        cu_buf xin = cu_upload_tensor(d, x);
        cu_buf y((size_t)cu_numel(out) * sizeof(float), d->s);
        std::vector<cu_buf> keep;
        const cu_block_bufs b = alloc_block(cu_hiera_block_need(blk, g, prec), d->s, keep);
        cu_hiera_block(d, prec, ctx->prep_slot, blk, g, xin.f(), y.f(), b);
        cu_download_tensor(d, out, y.p);
    });
}

extern "C" samc_status samc_cuda_patch_embed(samc_ctx *ctx, const samc_conv2d *proj, const samc_tensor *x,
                                             samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        if (x->ndim != 4 || x->shape[1] != proj->cin)
            cu_fail(SAMC_ERR_SHAPE, "patch_embed: input is not (B,%d,H,W)", proj->cin);
        const int B = (int)x->shape[0], H = (int)x->shape[2], W = (int)x->shape[3];
        const int Ho = (H + 2 * proj->pad - proj->kh) / proj->stride + 1;
        const int Wo = (W + 2 * proj->pad - proj->kw) / proj->stride + 1;
        if (Ho < 1 || Wo < 1 || out->ndim != 4 || out->shape[0] != B || out->shape[1] != Ho || out->shape[2] != Wo ||
            out->shape[3] != proj->cout)
            cu_fail(SAMC_ERR_SHAPE, "patch_embed: output is not (%d,%d,%d,%d)", B, Ho, Wo, proj->cout);
        cu_dev *d = cu_dev_of(ctx);
        const cu_lin *L = cu_prepared_conv(proj, ctx->prep_slot);
        cu_buf img = cu_upload_tensor(d, x);
        cu_buf cols((size_t)B * Ho * Wo * L->kpad * (L->prec == CU_BF16 ? 2 : 4), d->s);
        cu_buf y((size_t)cu_numel(out) * sizeof(float), d->s);
        cu_patch_embed(d, L, proj, img.f(), B, H, W, y.f(), cols.p, nullptr);
        cu_download_tensor(d, out, y.p);
    });
}
