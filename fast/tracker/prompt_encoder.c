/* SPDX-License-Identifier: Apache-2.0 */
/* prompt_encoder.c - PromptEncoder.forward and get_dense_pe, fast bodies.
 *
 * The Fourier features keep ref's float32 angle (PyTorch's order, see
 * ref/tracker/prompt_encoder.c: one ulp of a ~100 rad angle is visible), evaluated
 * with threads over grid rows. get_dense_pe depends only on the weights, so
 * it is computed once per model and served from a cache afterwards. The
 * mask downscaling convs are sgemm (samc__fast_conv2d), LayerNorm2d and GELU are
 * the vectorised kernels. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/prompt_points.h"
#include "core/nn/position_encoding.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"

static samc_status embed_masks(samc_ctx *ctx, int nt, const samc_prompt_encoder *pe, const samc_tensor *masks,
                               samc_tensor *dense)
{
    const int B = (int)masks->shape[0], H = (int)masks->shape[2], W = (int)masks->shape[3];
    const int H1 = samc_conv2d_out_dim(H, 2, 2, 0), W1 = samc_conv2d_out_dim(W, 2, 2, 0);
    const int H2 = samc_conv2d_out_dim(H1, 2, 2, 0), W2 = samc_conv2d_out_dim(W1, 2, 2, 0);
    if (H2 != pe->emb_h || W2 != pe->emb_w)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "prompt encoder: mask input must be %dx%d", 4 * pe->emb_h,
                         4 * pe->emb_w);
    const int c1 = pe->md_conv0.cout, c2 = pe->md_conv3.cout;
    size_t col = samc__fast_conv2d_scratch(&pe->md_conv0, H, W, nt);
    const size_t col3 = samc__fast_conv2d_scratch(&pe->md_conv3, H1, W1, nt);
    const size_t col6 = samc__fast_conv2d_scratch(&pe->md_conv6, H2, W2, nt);
    col = col3 > col ? col3 : col;
    col = col6 > col ? col6 : col;
    const size_t counts[3] = {(size_t)c1 * H1 * W1, (size_t)c2 * H2 * W2, col};
    float *buf[3];
    samc_status st = samc__fast_ws_get(ctx, 3, counts, buf);
    if (st)
        return st;
    const int64_t hw = (int64_t)H2 * W2;
    for (int b = 0; b < B; b++) {
        samc__fast_conv2d(nt, &pe->md_conv0, masks->data + (int64_t)b * H * W, H, W, buf[0], buf[2]);
        samc__fast_layer_norm2d(nt, buf[0], c1, (int64_t)H1 * W1, &pe->md_norm1, buf[0]);
        samc__fast_gelu_mt(nt, buf[0], (int64_t)c1 * H1 * W1);
        samc__fast_conv2d(nt, &pe->md_conv3, buf[0], H1, W1, buf[1], buf[2]);
        samc__fast_layer_norm2d(nt, buf[1], c2, hw, &pe->md_norm4, buf[1]);
        samc__fast_gelu_mt(nt, buf[1], (int64_t)c2 * hw);
        samc__fast_conv2d(nt, &pe->md_conv6, buf[1], H2, W2, dense->data + (int64_t)b * pe->embed_dim * hw, buf[2]);
    }
    return SAMC_OK;
}

samc_status samc_fast_prompt_encoder(samc_ctx *ctx, const samc_prompt_encoder *pe, const float *coords,
                                     const int32_t *labels, int B, int N, const float *boxes,
                                     const samc_tensor *masks, samc_tensor *sparse, samc_tensor *dense)
{
    const int64_t T = N + (N > 0 && !boxes ? 1 : 0) + (boxes ? 2 : 0);
    if (sparse->ndim != 3 || sparse->shape[0] != B || sparse->shape[1] != T || sparse->shape[2] != pe->embed_dim)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "prompt encoder: sparse must be (%d,%lld,%d)", B, (long long)T,
                         pe->embed_dim);
    if (dense->ndim != 4 || dense->shape[0] != B || dense->shape[1] != pe->embed_dim ||
        dense->shape[2] != pe->emb_h || dense->shape[3] != pe->emb_w)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "prompt encoder: dense must be (%d,%d,%d,%d)", B, pe->embed_dim,
                         pe->emb_h, pe->emb_w);
    if (masks && (masks->ndim != 4 || masks->shape[0] != B || masks->shape[1] != 1))
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "prompt encoder: masks must be (%d,1,H,W)", B);
    const int nt = samc__fast_threads(ctx), D = pe->embed_dim;
    /* sparse rows: points (+ padding point), then the two box corners */
#pragma omp parallel for num_threads(nt) schedule(static) if (B * T > 4)
    for (int64_t r = 0; r < (int64_t)B * T; r++)
        samc_prompt_sparse_token(pe, coords, labels, N, boxes, (int)(r / T), (int)(r % T), sparse->data + r * D);
    if (masks)
        return embed_masks(ctx, nt, pe, masks, dense);
    const int64_t hw = (int64_t)pe->emb_h * pe->emb_w;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t bc = 0; bc < (int64_t)B * D; bc++) {
        const float v = pe->no_mask[bc % D];
        float *d = dense->data + bc * hw;
        for (int64_t p = 0; p < hw; p++)
            d[p] = v;
    }
    return SAMC_OK;
}

/* ---- get_dense_pe, cached per model ---------------------------------------- */

/* The cache key: everything the result depends on. */
typedef struct pe_cache {
    const float *gauss;
    int D, h, w;
    float *data;
} pe_cache;

static samc_status compute_dense_pe(samc_error *err, int nt, const samc_prompt_encoder *pe, float *out)
{
    const int D = pe->embed_dim, h = pe->emb_h, w = pe->emb_w;
    const int64_t hw = (int64_t)h * w;
    samc_status st = SAMC_OK;
#pragma omp parallel num_threads(nt)
    {
        float *v = malloc((size_t)D * sizeof *v); /* once per cache fill, not per predict */
        if (!v) {
#pragma omp atomic write
            st = SAMC_ERR_NOMEM;
        }
#pragma omp for schedule(static)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w && v; j++) {
                samc_fourier_pe(pe->gauss, pe->embed_dim / 2, ((float)j + 0.5f) / (float)w, ((float)i + 0.5f) / (float)h, v);
                for (int c = 0; c < D; c++)
                    out[c * hw + (int64_t)i * w + j] = v[c];
            }
        free(v);
    }
    return st ? samc_fail(err, st, "dense_pe: out of memory") : SAMC_OK;
}

samc_status samc_fast_dense_pe(samc_ctx *ctx, const samc_prompt_encoder *pe, samc_tensor *out)
{
    const int D = pe->embed_dim, h = pe->emb_h, w = pe->emb_w;
    if (out->ndim != 4 || out->shape[0] != 1 || out->shape[1] != D || out->shape[2] != h || out->shape[3] != w)
        return samc_fail(ctx->err, SAMC_ERR_SHAPE, "dense_pe: output must be (1,%d,%d,%d)", D, h, w);
    const int nt = samc__fast_threads(ctx);
    pe_cache *c = samc__fast_ws_cache(ctx, FAST_CACHE_DENSE_PE, sizeof *c);
    if (!c)
        return samc_fail(ctx->err, SAMC_ERR_NOMEM, "dense_pe: cache");
    const size_t n = (size_t)D * h * w;
    if (!c->data || c->gauss != pe->gauss || c->D != D || c->h != h || c->w != w) {
        free(c->data);
        c->data = malloc(n * sizeof(float));
        c->gauss = NULL;
        if (!c->data)
            return samc_fail(ctx->err, SAMC_ERR_NOMEM, "dense_pe: cache");
        samc_status st = compute_dense_pe(ctx->err, nt, pe, c->data);
        if (st)
            return st;
        c->gauss = pe->gauss, c->D = D, c->h = h, c->w = w;
    }
    memcpy(out->data, c->data, n * sizeof(float));
    return SAMC_OK;
}

void samc__fast_dense_pe_cache_free(void *p)
{
    pe_cache *c = p;
    free(c->data);
}
