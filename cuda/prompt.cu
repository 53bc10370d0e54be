/* SPDX-License-Identifier: Apache-2.0 */
/* prompt.cu - PromptEncoder (sam/prompt_encoder.py), @postprocess and the
 * SAM heads as one whole-part body (samc_tracker_sam_heads_fn).
 *
 * The sparse tokens are a few rows per prompt, made on the host with the
 * core's own float steps (prompt_points.c, through the plugin api) and
 * sent up with the decoder's tokens. The dense embedding never leaves the
 * device in the whole body: without a mask it is no_mask_embed added to
 * the image tokens in one pass; with one, the mask downscaling convs run
 * as GEMMs on tokens. get_dense_pe depends on the weights only: made once
 * (core's Fourier features) and kept in the arena, in both layouts. */
#include <string>

#include "cuda/decoder.h"
#include "cuda/fpn.h"
#include "cuda/resident.h"

namespace {

/* get_dense_pe as (D, h, w) planes, made once per model. */
const float *dense_pe_planes(cu_arena *A, const samc_prompt_encoder *pe)
{
    const int D = pe->embed_dim, h = pe->emb_h, w = pe->emb_w;
    char key[64];
    snprintf(key, sizeof key, "dense_pe %p", (const void *)pe->gauss);
    return cu_derived(A, key, (size_t)D * h * w, [&](float *out) {
        std::vector<float> v((size_t)D);
        const int64_t hw = (int64_t)h * w;
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                cu_api->fourier_pe(pe->gauss, D / 2, ((float)j + 0.5f) / (float)w, ((float)i + 0.5f) / (float)h,
                                   v.data());
                for (int c = 0; c < D; c++)
                    out[c * hw + (int64_t)i * w + j] = v[c];
            }
    });
}

/* ... and as (h*w, D) tokens, the two-way transformer's key PE. */
const float *dense_pe_tokens(cu_arena *A, const samc_prompt_encoder *pe)
{
    const int D = pe->embed_dim, h = pe->emb_h, w = pe->emb_w;
    char key[64];
    snprintf(key, sizeof key, "dense_pe_tokens %p", (const void *)pe->gauss);
    return cu_derived(A, key, (size_t)D * h * w, [&](float *out) {
        std::vector<float> v((size_t)D);
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++)
                cu_api->fourier_pe(pe->gauss, D / 2, ((float)j + 0.5f) / (float)w, ((float)i + 0.5f) / (float)h,
                                   out + ((int64_t)i * w + j) * D);
    });
}

cu_arena *arena_of(const samc_prompt_encoder *pe, int slot) { return cu_prepared_conv(&pe->md_conv6, slot)->arena; }

/* A conv on NCHW planes to tokens (B*Ho*Wo, cout). */
void conv_tokens(cu_dev *d, int slot, const samc_conv2d *c, const float *x, int B, int H, int W, float *tok)
{
    const cu_lin *L = cu_prepared_conv(c, slot);
    const int Ho = (H + 2 * c->pad - c->kh) / c->stride + 1, Wo = (W + 2 * c->pad - c->kw) / c->stride + 1;
    const int64_t rows = (int64_t)B * Ho * Wo;
    cu_buf cols((size_t)rows * L->kpad * (L->prec == CU_BF16 ? 2 : 4), d->s);
    k_im2col(d->s, x, B, c->cin, H, W, c->kh, c->kw, c->stride, c->pad, Ho, Wo, L->kpad, cols.p, L->prec == CU_BF16);
    cu_linear_ld(d, L, cols.p, L->kpad, rows, tok, L->out, false, true, false);
}

/* mask_downscaling on masks (B,1,4h,4w) planes -> dense (B, h*w, D) tokens:
 * Conv(k2,s2), LayerNorm2d, GELU, Conv(k2,s2), LayerNorm2d, GELU, Conv(k1). */
void mask_dense(cu_dev *d, int slot, const samc_prompt_encoder *pe, const float *masks, int B, float *dense)
{
    const int h = pe->emb_h, w = pe->emb_w, c1 = pe->md_conv0.cout, c2 = pe->md_conv3.cout;
    cu_arena *A = arena_of(pe, slot);
    const int64_t n1 = (int64_t)B * 4 * h * w, n2 = (int64_t)B * h * w;
    cu_buf t1((size_t)n1 * c1 * 4, d->s), p1((size_t)n1 * c1 * 4, d->s), t2((size_t)n2 * c2 * 4, d->s),
        p2((size_t)n2 * c2 * 4, d->s);
    conv_tokens(d, slot, &pe->md_conv0, masks, B, 4 * h, 4 * w, t1.f());
    k_ln_rows(d->s, t1.f(), n1, c1, cu_weight(A, pe->md_norm1.w, c1), cu_weight(A, pe->md_norm1.b, c1), pe->md_norm1.eps,
              t1.f(), c1, false);
    k_gelu(d->s, t1.f(), n1 * c1, false);
    k_tokens_to_planes(d->s, t1.f(), B, 4 * (int64_t)h * w, c1, p1.f(), nullptr);
    conv_tokens(d, slot, &pe->md_conv3, p1.f(), B, 2 * h, 2 * w, t2.f());
    k_ln_rows(d->s, t2.f(), n2, c2, cu_weight(A, pe->md_norm4.w, c2), cu_weight(A, pe->md_norm4.b, c2), pe->md_norm4.eps,
              t2.f(), c2, false);
    k_gelu(d->s, t2.f(), n2 * c2, false);
    k_tokens_to_planes(d->s, t2.f(), B, (int64_t)h * w, c2, p2.f(), nullptr);
    conv_tokens(d, slot, &pe->md_conv6, p2.f(), B, h, w, dense);
}

void check_prompt(const samc_prompt_encoder *pe, int B, int N, const samc_tensor *masks)
{
    if (B < 1 || N < 0)
        cu_fail(SAMC_ERR_ARG, "prompt encoder: %d prompts of %d points", B, N);
    if (masks && (masks->ndim != 4 || masks->shape[0] != B || masks->shape[1] != 1 ||
                  masks->shape[2] != 4 * pe->emb_h || masks->shape[3] != 4 * pe->emb_w))
        cu_fail(SAMC_ERR_SHAPE, "prompt encoder: mask input must be (%d,1,%d,%d)", B, 4 * pe->emb_h, 4 * pe->emb_w);
}

/* The sparse tokens of B prompts into rows T apart (their first row at
 * out + first * D). */
void sparse_rows(const samc_prompt_encoder *pe, const float *coords, const int32_t *labels, int B, int N,
                 const float *boxes, int T, int first, float *out)
{
    const int Ns = samc_prompt_sparse_count(N, boxes != nullptr), D = pe->embed_dim;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < Ns; i++)
            cu_api->prompt_sparse_token(pe, coords, labels, N, boxes, b, i, out + ((int64_t)b * T + first + i) * D);
}

struct host_t {
    std::vector<float> v;
    samc_tensor t;
    host_t(std::initializer_list<int64_t> shape)
    {
        t = samc_tensor{(int)shape.size(), {0}, nullptr, false};
        int64_t n = 1, i = 0;
        for (int64_t s : shape)
            t.shape[i++] = s, n *= s;
        v.resize((size_t)n);
        t.data = v.data();
    }
};

} // namespace

extern "C" samc_status samc_cuda_prompt_encoder(samc_ctx *ctx, const samc_prompt_encoder *pe, const float *coords,
                                                const int32_t *labels, int B, int N, const float *boxes,
                                                const samc_tensor *masks, samc_tensor *sparse, samc_tensor *dense)
{
    return cu_guard(ctx->err, [&] {
        check_prompt(pe, B, N, masks);
        const int D = pe->embed_dim, T = samc_prompt_sparse_count(N, boxes != nullptr);
        const int64_t hw = (int64_t)pe->emb_h * pe->emb_w;
        if (sparse->ndim != 3 || sparse->shape[0] != B || sparse->shape[1] != T || sparse->shape[2] != D ||
            dense->ndim != 4 || dense->shape[0] != B || dense->shape[1] != D || dense->shape[2] != pe->emb_h ||
            dense->shape[3] != pe->emb_w)
            cu_fail(SAMC_ERR_SHAPE, "prompt encoder: sparse must be (%d,%d,%d), dense (%d,%d,%d,%d)", B, T, D, B, D,
                    pe->emb_h, pe->emb_w);
        sparse_rows(pe, coords, labels, B, N, boxes, T, 0, sparse->data);
        if (!masks) { /* no_mask_embed.weight.reshape(1,-1,1,1).expand(bs, -1, h, w): a fill */
            for (int64_t bc = 0; bc < (int64_t)B * D; bc++)
                for (int64_t p = 0; p < hw; p++)
                    dense->data[bc * hw + p] = pe->no_mask[bc % D];
            return;
        }
        cu_dev *d = cu_dev_of(ctx);
        cu_buf m = cu_upload_tensor(d, masks), tok((size_t)B * hw * D * 4, d->s), pl((size_t)B * hw * D * 4, d->s);
        mask_dense(d, ctx->prep_slot, pe, m.f(), B, tok.f());
        k_tokens_to_planes(d->s, tok.f(), B, hw, D, pl.f(), nullptr);
        cu_download_tensor(d, dense, pl.p);
    });
}

extern "C" samc_status samc_cuda_dense_pe(samc_ctx *ctx, const samc_prompt_encoder *pe, samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        const int D = pe->embed_dim;
        if (out->ndim != 4 || out->shape[0] != 1 || out->shape[1] != D || out->shape[2] != pe->emb_h ||
            out->shape[3] != pe->emb_w)
            cu_fail(SAMC_ERR_SHAPE, "dense_pe: output must be (1,%d,%d,%d)", D, pe->emb_h, pe->emb_w);
        cu_dev *d = cu_dev_of(ctx);
        cu_download_tensor(d, out, dense_pe_planes(arena_of(pe, ctx->prep_slot), pe));
    });
}

extern "C" samc_status samc_cuda_postprocess(samc_ctx *ctx, const samc_tensor *lowres, int H, int W, samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        if (lowres->ndim != 4 || out->ndim != 4 || out->shape[0] != lowres->shape[0] ||
            out->shape[1] != lowres->shape[1] || out->shape[2] != H || out->shape[3] != W || H < 1 || W < 1)
            cu_fail(SAMC_ERR_SHAPE, "postprocess: want (N,C,h,w) -> (N,C,%d,%d)", H, W);
        const int h = (int)lowres->shape[2], w = (int)lowres->shape[3];
        std::vector<samc_lin_tap> taps((size_t)(H + W));
        cu_api->bilinear_taps(h, H, taps.data());
        cu_api->bilinear_taps(w, W, taps.data() + H);
        cu_dev *d = cu_dev_of(ctx);
        cu_buf x = cu_upload_tensor(d, lowres), t(taps.size() * sizeof(samc_lin_tap), d->s);
        cu_buf y((size_t)cu_numel(out) * 4, d->s);
        cu_upload(d, t.p, taps.data(), t.bytes);
        const samc_lin_tap *ty = t.as<samc_lin_tap>();
        k_resize_bilinear(d->s, x.f(), lowres->shape[0] * lowres->shape[1], h, w, ty, H, ty + H, W, y.f());
        cu_download_tensor(d, out, y.p);
    });
}

/* ---- the SAM heads in one body ------------------------------------------------ */

extern "C" samc_status samc_cuda_sam_heads(samc_ctx *ctx, const samc_prompt_encoder *pe, const samc_mask_decoder *dec,
                                           const float *coords, const int32_t *labels, int B, int N,
                                           const samc_tensor *mask, const samc_frame_features *f, samc_tensor *hs,
                                           samc_tensor *masks, samc_tensor *iou, samc_tensor *obj)
{
    return cu_guard(ctx->err, [&] {
        check_prompt(pe, B, N, mask);
        const int D = dec->dim, M = dec->num_mask_tokens, e = dec->emb, s = dec->pred_obj_scores ? 1 : 0;
        const int Ns = samc_prompt_sparse_count(N, false), T = s + 1 + M + Ns, slot = ctx->prep_slot;
        const int64_t hw = (int64_t)e * e;
        if (pe->embed_dim != D || pe->emb_h != e || pe->emb_w != e || f->image_embed.ndim != 4 ||
            f->image_embed.shape[0] != 1 || f->image_embed.shape[1] != D || f->image_embed.shape[2] != e ||
            f->image_embed.shape[3] != e)
            cu_fail(SAMC_ERR_SHAPE, "SAM heads: the image embedding is not (1,%d,%d,%d)", D, e, e);
        if (hs->ndim != 3 || hs->shape[0] != B || hs->shape[1] != T || hs->shape[2] != D || cu_numel(masks) != B * M * 16 * hw ||
            cu_numel(iou) != (int64_t)B * M || cu_numel(obj) != B)
            cu_fail(SAMC_ERR_SHAPE, "SAM heads: outputs must be hs (%d,%d,%d), masks (%d,%d,%d,%d), iou, obj", B, T, D,
                    B, M, 4 * e, 4 * e);
        cu_dev *d = cu_dev_of(ctx);
        cu_arena *A = arena_of(pe, slot);
        cu_timer timer(d->s);
        /* the tokens: [obj_score?, iou, mask tokens, sparse] per prompt */
        std::vector<float> tok((size_t)B * T * D);
        for (int b = 0; b < B; b++) {
            float *t = tok.data() + (int64_t)b * T * D;
            if (s)
                memcpy(t, dec->obj_score_token, (size_t)D * sizeof(float));
            memcpy(t + s * D, dec->iou_token, (size_t)D * sizeof(float));
            memcpy(t + (s + 1) * D, dec->mask_tokens, (size_t)M * D * sizeof(float));
        }
        sparse_rows(pe, coords, labels, B, N, nullptr, T, s + 1 + M, tok.data());
        cu_buf Q((size_t)B * T * D * 4, d->s), QP((size_t)B * T * D * 4, d->s), K((size_t)B * hw * D * 4, d->s);
        cu_upload(d, Q.p, tok.data(), Q.bytes);
        CU(cudaMemcpyAsync(QP.p, Q.p, Q.bytes, cudaMemcpyDeviceToDevice, d->s));
        /* src = image_embeddings (repeated) + dense, in token layout */
        cu_buf ie_up;
        const float *ie = (const float *)cu_resident_extra(&f->image_embed);
        if (!ie) { /* features made elsewhere: up once, to tokens */
            cu_buf planes = cu_upload_tensor(d, &f->image_embed);
            ie_up = cu_buf((size_t)hw * D * 4, d->s);
            k_planes_to_tokens(d->s, planes.f(), 1, D, hw, ie_up.f());
            ie = ie_up.f();
        }
        cu_buf dense;
        if (mask) {
            cu_buf m = cu_upload_tensor(d, mask);
            dense = cu_buf((size_t)B * hw * D * 4, d->s);
            mask_dense(d, slot, pe, m.f(), B, dense.f());
            k_add_bcast(d->s, dense.f(), ie, B, hw * D, K.f());
        } else {
            for (int b = 0; b < B; b++)
                CU(cudaMemcpyAsync(K.f() + b * hw * D, ie, (size_t)hw * D * 4, cudaMemcpyDeviceToDevice, d->s));
            k_add_channel(d->s, K.f(), cu_weight(A, pe->no_mask, D), 1.0f, K.f(), (int64_t)B * hw, D, 1);
        }
        if (ctx->tracing) { /* PromptEncoder.forward's outputs: sparse, dense planes */
            host_t sp({B, Ns, D}), de({B, D, e, e});
            for (int b = 0; b < B; b++)
                memcpy(sp.v.data() + (int64_t)b * Ns * D, tok.data() + ((int64_t)b * T + s + 1 + M) * D,
                       (size_t)Ns * D * sizeof(float));
            if (mask) {
                cu_buf pl((size_t)B * hw * D * 4, d->s);
                k_tokens_to_planes(d->s, dense.f(), B, hw, D, pl.f(), nullptr);
                cu_download(d, de.t.data, pl.p, pl.bytes);
            } else {
                for (int64_t bc = 0; bc < (int64_t)B * D; bc++)
                    for (int64_t p = 0; p < hw; p++)
                        de.v[(size_t)(bc * hw + p)] = pe->no_mask[bc % D];
            }
            const char *slots[] = {"0", "1"};
            const samc_tensor *t[] = {&sp.t, &de.t};
            ctx->emit_at(ctx, pe, "", 0, 2, slots, t);
        }
        const float *kpe = dense_pe_tokens(A, pe);
        const samc_twoway_transformer *tr = &dec->transformer;
        for (int l = 0; l < tr->depth; l++) {
            cu_twoway_block(d, slot, &tr->layers[l], B, T, (int)hw, Q.f(), K.f(), QP.f(), true, kpe, false);
            if (ctx->tracing) {
                host_t q({B, T, D}), k({B, hw, D});
                cu_download(d, q.t.data, Q.p, Q.bytes);
                cu_download(d, k.t.data, K.p, K.bytes);
                const char *slots[] = {"0", "1"};
                const samc_tensor *t[] = {&q.t, &k.t};
                ctx->emit(ctx, "transformer.layers.#", l, 2, slots, t);
            }
        }
        cu_twoway_final(d, slot, tr, B, T, (int)hw, Q.f(), K.f(), QP.f(), true, kpe, false);
        if (ctx->tracing) {
            host_t k({B, hw, D});
            cu_download(d, hs->data, Q.p, Q.bytes);
            cu_download(d, k.t.data, K.p, K.bytes);
            const char *slots[] = {"0", "1"};
            const samc_tensor *t[] = {hs, &k.t};
            ctx->emit(ctx, "transformer", 0, 2, slots, t);
        }
        /* the heads, on the high-res features the encoder left on the device */
        const bool hr = dec->use_high_res_features;
        cu_buf s0_up, s1_up;
        const float *s0 = nullptr, *s1 = nullptr;
        if (hr) {
            s0 = (const float *)cu_resident(&f->feat_s0), s1 = (const float *)cu_resident(&f->feat_s1);
            if (!s0)
                s0_up = cu_upload_tensor(d, &f->feat_s0), s0 = s0_up.f();
            if (!s1)
                s1_up = cu_upload_tensor(d, &f->feat_s1), s1 = s1_up.f();
        }
        cu_buf mk((size_t)cu_numel(masks) * 4, d->s), io((size_t)B * M * 4, d->s), ob((size_t)B * 4, d->s);
        cu_mask_heads(d, slot, dec, B, T, Q.f(), K.f(), e, e, s0, s1, false, mk.f(), io.f(), ob.f());
        timer.mark(1, d->s);
        CU(cudaMemcpyAsync(masks->data, mk.p, mk.bytes, cudaMemcpyDeviceToHost, d->s));
        CU(cudaMemcpyAsync(iou->data, io.p, io.bytes, cudaMemcpyDeviceToHost, d->s));
        CU(cudaMemcpyAsync(obj->data, ob.p, ob.bytes, cudaMemcpyDeviceToHost, d->s));
        if (!ctx->tracing)
            CU(cudaMemcpyAsync(hs->data, Q.p, Q.bytes, cudaMemcpyDeviceToHost, d->s));
        timer.mark(2, d->s);
        CU(cudaStreamSynchronize(d->s));
        cu_mask_heads_finish(dec, B, iou->data, obj->data);
        char what[64];
        snprintf(what, sizeof what, "sam_heads(B=%d)", B);
        timer.report(what);
    });
}
