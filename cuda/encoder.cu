/* SPDX-License-Identifier: Apache-2.0 */
/* encoder.cu - the image encoder and the tracker's features in one body
 * (samc_sam2_image_features_fn): the image goes up once, every activation
 * stays on the device, and only the features come back (into pinned
 * memory the features keep, see resident.h).
 *
 * The exec keeps a plan per encoder and precision: every block's
 * geometry, buffers sized for the largest block, and a CUDA graph of the
 * whole trunk + neck + features captured on the first untraced call and
 * replayed afterwards (no launch gaps between the ~200 kernels and GEMMs).
 * With a trace callback installed the same steps run uncaptured and each
 * parity point is copied to the host and reported (ctx->emit). */
#include <cstring>
#include <string>

#include "cuda/fpn.h"
#include "cuda/hiera.h"
#include "cuda/resident.h"

namespace {

struct enc_plan : cu_plan {
    const samc_sam2_image_encoder *e = nullptr;
    cu_prec prec = CU_F32;
    int slot = -1;
    int S = 0, G = 0, B = 1;
    std::vector<samc_hiera_geom> geom;            /* per block */
    int n_stages = 0;
    int stage_of_end[SAMC_MAX_BLOCKS];            /* stage index ending at block i, or -1 */
    int sH[SAMC_MAX_STAGES], sC[SAMC_MAX_STAGES]; /* each stage's map side and channels */
    cu_buf img, cols, cvt;
    cu_buf X[SAMC_MAX_STAGES];                    /* each stage's residual stream (its output at the end) */
    std::vector<cu_buf> scratch;
    cu_block_bufs bufs = {};
    cu_buf lvl[SAMC_FPN_MAX_LEVELS];              /* the neck's outputs, tokens */
    cu_buf s0, s1;                                /* conv_s0 / conv_s1 outputs, tokens */
    const float *pos = nullptr;                   /* Hiera's position embedding (G*G, C) */
    cudaGraphExec_t graph = nullptr;
    ~enc_plan() override
    {
        if (graph)
            cudaGraphExecDestroy(graph);
    }
};

size_t es_of(cu_prec p) { return p == CU_BF16 ? 2 : 4; }

enc_plan *plan_of(cu_dev *d, const samc_sam2_image_encoder *e, cu_prec prec, int slot)
{
    char key[64];
    snprintf(key, sizeof key, "encoder %p %d", (const void *)e, (int)prec);
    auto it = d->plans.find(key);
    if (it != d->plans.end())
        return (enc_plan *)it->second.get();
    std::unique_ptr<enc_plan> p(new enc_plan());
    p->e = e, p->prec = prec, p->slot = slot, p->S = e->image_size, p->G = e->grid;
    const int C0 = e->patch_embed.cout;
    const cu_lin *pe = cu_prepared_conv(&e->patch_embed, slot);
    cu_arena *A = pe->arena;
    p->pos = cu_weight(A, e->pos_embed, (size_t)p->G * p->G * C0);
    p->img = cu_buf((size_t)3 * p->S * p->S * sizeof(float), d->s);
    p->cols = cu_buf((size_t)p->G * p->G * pe->kpad * es_of(prec), d->s);
    /* every block's geometry on its input map, the stage outputs' sizes */
    samc_tensor shape = {4, {1, p->G, p->G, C0}, nullptr, false};
    cu_block_need most = {};
    int stage = 0;
    for (int i = 0; i < e->depth; i++) {
        const samc_hiera_block *blk = &e->blocks[i];
        samc_hiera_geom g;
        samc_error err = {};
        shape.shape[3] = blk->dim;
        if (samc_status st = cu_api->hiera_geometry(&err, blk, &shape, &g))
            cu_fail(st, "block %d: %s", i, err.msg);
        p->geom.push_back(g);
        const cu_block_need n = cu_hiera_block_need(blk, g, prec);
        const size_t *a = &n.xn_win;
        size_t *m = &most.xn_win;
        for (size_t k = 0; k < sizeof n / sizeof(size_t); k++)
            m[k] = a[k] > m[k] ? a[k] : m[k];
        shape.shape[1] = g.Ho, shape.shape[2] = g.Wo;
        p->stage_of_end[i] = -1;
        if (stage < e->n_stages && i == e->stage_ends[stage]) {
            p->stage_of_end[i] = stage;
            p->sH[stage] = g.Ho, p->sC[stage] = g.D;
            stage++;
        }
    }
    p->n_stages = stage;
    if (stage != e->n_stages || e->neck.n_levels != e->n_stages)
        cu_fail(SAMC_ERR_UNSUPPORTED, "image encoder: %d stages for %d neck levels", stage, e->neck.n_levels);
    /* the residual stream of stage s lives in X[s] from the block that
     * enters the stage (the previous stage's output is its input) */
    for (int s = 0; s < p->n_stages; s++)
        p->X[s] = cu_buf((size_t)p->sH[s] * p->sH[s] * p->sC[s] * sizeof(float), d->s);
    p->scratch.reserve(12);
    auto get = [&](size_t bytes) -> void * {
        if (!bytes)
            return nullptr;
        p->scratch.emplace_back(bytes, d->s);
        return p->scratch.back().p;
    };
    cu_block_bufs &b = p->bufs;
    b.xn_win = get(most.xn_win), b.xn = get(most.xn), b.qkv = get(most.qkv), b.qp = get(most.qp), b.o = get(most.o);
    b.a = (float *)get(most.a), b.p = (float *)get(most.p), b.scp = (float *)get(most.scp), b.S = (float *)get(most.S);
    b.P = get(most.P), b.xn2 = get(most.xn2), b.h = get(most.h);
    const int D = e->neck.d_model;
    size_t cvt = 0;
    for (int s = 0; s < p->n_stages; s++) {
        p->lvl[s] = cu_buf((size_t)p->sH[s] * p->sH[s] * D * sizeof(float), d->s);
        const size_t n = (size_t)p->sH[s] * p->sH[s] * (p->sC[s] > D ? p->sC[s] : D);
        cvt = n > cvt ? n : cvt;
    }
    p->cvt = cu_buf(cvt * 2, d->s);
    enc_plan *raw = p.get();
    d->plans[key] = std::move(p);
    return raw;
}

/* ---- the trace ---------------------------------------------------------------- */

struct host_tensor {
    std::vector<float> v;
    samc_tensor t;
};

/* A device tensor (fp32, contiguous) on the host for the trace; tokens
 * (B, N, C) become planes (B, C, H, W) when `planes`. */
host_tensor fetch(cu_dev *d, const float *x, std::initializer_list<int64_t> shape, bool planes = false)
{
    host_tensor h;
    h.t = samc_tensor{(int)shape.size(), {0}, nullptr, false};
    int64_t n = 1, i = 0;
    for (int64_t s : shape)
        h.t.shape[i++] = s, n *= s;
    h.v.resize((size_t)n);
    h.t.data = h.v.data();
    if (planes) {
        const int64_t B = h.t.shape[0], C = h.t.shape[1], N = n / (B * C);
        cu_buf tmp((size_t)n * sizeof(float), d->s);
        k_tokens_to_planes(d->s, x, (int)B, N, (int)C, tmp.f(), nullptr);
        cu_download(d, h.t.data, tmp.p, (size_t)n * sizeof(float));
    } else {
        cu_download(d, h.t.data, x, (size_t)n * sizeof(float));
    }
    return h;
}

void emit(samc_ctx *ctx, const char *pattern, int index, const std::vector<std::string> &slots,
          const std::vector<host_tensor> &t)
{
    std::vector<const char *> s;
    std::vector<const samc_tensor *> p;
    for (size_t i = 0; i < t.size(); i++)
        s.push_back(slots[i].c_str()), p.push_back(&t[i].t);
    ctx->emit(ctx, pattern, index, (int)t.size(), s.data(), p.data());
}

/* ---- the forward ----------------------------------------------------------------- */

/* Trunk, neck and the features' convs: img -> p->lvl, p->s0, p->s1. */
void forward(samc_ctx *ctx, cu_dev *d, enc_plan *p, const samc_tracker_feature_spec *spec, bool trace)
{
    const samc_sam2_image_encoder *e = p->e;
    const int G = p->G, C0 = e->patch_embed.cout, slot = p->slot;
    const cu_lin *pel = cu_prepared_conv(&e->patch_embed, slot);
    float *x = p->X[0].f();
    if (trace) { /* the patch embedding's own output, then + pos */
        cu_patch_embed(d, pel, &e->patch_embed, p->img.f(), 1, p->S, p->S, x, p->cols.p, nullptr);
        emit(ctx, "trunk.patch_embed", 0, {"0"}, {fetch(d, x, {1, G, G, C0})});
        k_add(d->s, x, p->pos, 1.0f, x, (int64_t)G * G * C0);
    } else {
        cu_patch_embed(d, pel, &e->patch_embed, p->img.f(), 1, p->S, p->S, x, p->cols.p, p->pos);
    }
    int stage = 0;
    for (int i = 0; i < e->depth; i++) {
        const samc_hiera_geom &g = p->geom[i];
        const bool enters = e->blocks[i].has_proj || g.s > 1; /* the first block of a stage */
        if (enters && stage + 1 >= SAMC_MAX_STAGES)
            cu_fail(SAMC_ERR_UNSUPPORTED, "image encoder: block %d changes stage past the last", i);
        float *y = enters ? p->X[stage + 1].f() : x;
        cu_hiera_block(d, p->prec, slot, &e->blocks[i], g, x, y, p->bufs);
        if (enters)
            stage++;
        x = y;
        if (trace)
            emit(ctx, "trunk.blocks.#", i, {"0"}, {fetch(d, x, {1, g.Ho, g.Wo, g.D})});
        if (p->stage_of_end[i] >= 0 && p->stage_of_end[i] != stage)
            cu_fail(SAMC_ERR_UNSUPPORTED, "image encoder: stage %d ends inside stage %d's stream", p->stage_of_end[i],
                    stage);
    }
    if (trace) {
        std::vector<host_tensor> st;
        for (int s = 0; s < p->n_stages; s++)
            st.push_back(fetch(d, p->X[s].f(), {1, p->sC[s], p->sH[s], p->sH[s]}, true));
        emit(ctx, "trunk", 0, {"0", "1", "2", "3"}, st);
    }
    const samc_fpn_neck *neck = &e->neck;
    const float *xs[SAMC_FPN_MAX_LEVELS];
    float *out[SAMC_FPN_MAX_LEVELS];
    int H[SAMC_FPN_MAX_LEVELS];
    for (int s = 0; s < p->n_stages; s++)
        xs[s] = p->X[s].f(), out[s] = p->lvl[s].f(), H[s] = p->sH[s];
    cu_fpn(d, slot, neck, 1, xs, H, H, out, p->cvt.p);
    const int D = neck->d_model, L = neck->n_levels, K = L - e->scalp;
    if (trace) {
        cu_arena *A = pel->arena;
        std::vector<host_tensor> o, pos_t;
        std::vector<std::string> names;
        for (int i = 0; i < L; i++)
            o.push_back(fetch(d, out[i], {1, D, H[i], H[i]}, true)), names.push_back("0." + std::to_string(i));
        for (int i = 0; i < L; i++) {
            pos_t.push_back(fetch(d, cu_sine_pe_planes(A, &neck->pe, H[i], H[i]), {1, D, H[i], H[i]}));
            names.push_back("1." + std::to_string(i));
        }
        std::vector<host_tensor> all(o.begin(), o.end());
        all.insert(all.end(), pos_t.begin(), pos_t.end());
        emit(ctx, "neck", 0, names, all);
        std::vector<host_tensor> enc;
        std::vector<std::string> en;
        enc.push_back(fetch(d, out[K - 1], {1, D, H[K - 1], H[K - 1]}, true)), en.push_back("vision_features");
        for (int i = 0; i < K; i++)
            enc.push_back(fetch(d, cu_sine_pe_planes(A, &neck->pe, H[i], H[i]), {1, D, H[i], H[i]})),
                en.push_back("vision_pos_enc." + std::to_string(i));
        for (int i = 0; i < K; i++)
            enc.push_back(fetch(d, out[i], {1, D, H[i], H[i]}, true)), en.push_back("backbone_fpn." + std::to_string(i));
        emit(ctx, "", 0, en, enc);
    }
    for (int k = 0; k < 2; k++) { /* forward_image's conv_s0 / conv_s1 */
        const samc_conv2d *c = k ? spec->conv_s1 : spec->conv_s0;
        if (!c)
            continue;
        const cu_lin *Lc = cu_prepared_conv(c, slot);
        const int64_t rows = (int64_t)H[k] * H[k];
        cu_linear(d, Lc, cu_gemm_input(d, Lc, out[k], rows * D, p->cvt.p), rows, (k ? p->s1 : p->s0).f(), false);
    }
}

/* Run the forward, from the graph once captured. */
void run(samc_ctx *ctx, cu_dev *d, enc_plan *p, const samc_tracker_feature_spec *spec)
{
    if (ctx->tracing) {
        forward(ctx, d, p, spec, true);
        return;
    }
    if (!p->graph) {
        /* a first run outside the capture: every lazy upload and GEMM
         * algorithm choice happens here, not inside the graph */
        forward(ctx, d, p, spec, false);
        CU(cudaStreamSynchronize(d->s));
        cudaGraph_t g = nullptr;
        CU(cudaStreamBeginCapture(d->s, cudaStreamCaptureModeThreadLocal));
        try {
            forward(ctx, d, p, spec, false);
        } catch (...) {
            cudaStreamEndCapture(d->s, &g);
            if (g)
                cudaGraphDestroy(g);
            throw;
        }
        CU(cudaStreamEndCapture(d->s, &g));
        cudaError_t ge = cudaGraphInstantiate(&p->graph, g, 0);
        cudaGraphDestroy(g);
        CU(ge);
        return; /* this call's results are the uncaptured run's */
    }
    CU(cudaGraphLaunch(p->graph, d->s));
}

/* A device buffer the features keep (mirroring host view t, NCHW), filled
 * from tokens (N, C) + add[c], and the pinned host view it is copied to. */
void *feature_out(cu_dev *d, cu_features *cf, samc_tensor *t, int C, int side, const float *tokens, const float *add)
{
    const size_t bytes = (size_t)C * side * side * sizeof(float);
    void *dev = nullptr, *host = cu_pinned_take(bytes);
    cf->pinned.push_back({host, bytes});
    CU(cudaMallocAsync(&dev, bytes, d->s));
    cf->m.push_back({host, dev, bytes});
    if (tokens)
        k_tokens_to_planes(d->s, tokens, 1, (int64_t)side * side, C, (float *)dev, add);
    *t = samc_tensor{4, {1, C, side, side}, (float *)host, false};
    return dev;
}

} // namespace

extern "C" samc_status samc_cuda_image_features(samc_ctx *ctx, const samc_sam2_image_encoder *e,
                                                const samc_tracker_feature_spec *spec, const samc_tensor *img,
                                                samc_frame_features *f)
{
    cu_features *cf = new cu_features();
    samc_status st = cu_guard(ctx->err, [&] {
        cu_dev *d = cu_dev_of(ctx);
        const cu_prec prec = cu_prec_of(ctx);
        enc_plan *p = plan_of(d, e, prec, ctx->prep_slot);
        const int D = e->neck.d_model, K = e->neck.n_levels - e->scalp;
        if (K < 1 || (spec->conv_s0 && K < 3))
            cu_fail(SAMC_ERR_UNSUPPORTED, "high-res features need 3 levels after scalp, have %d", K);
        if (p->sH[K - 1] != spec->emb)
            cu_fail(SAMC_ERR_SHAPE, "image embedding is %dx%d, expected %dx%d", p->sH[K - 1], p->sH[K - 1], spec->emb,
                    spec->emb);
        for (int k = 0; k < 2; k++) {
            const samc_conv2d *c = k ? spec->conv_s1 : spec->conv_s0;
            if (c && (c->kh != 1 || c->stride != 1 || c->pad != 0 || c->cin != D))
                cu_fail(SAMC_ERR_UNSUPPORTED, "conv_s%d: the cuda body runs 1x1 convs on %d channels", k, D);
            cu_buf &b = k ? p->s1 : p->s0;
            if (c && !b.p)
                b = cu_buf((size_t)p->sH[k] * p->sH[k] * c->cout * sizeof(float), d->s);
        }
        CU(cudaMemcpyAsync(p->img.p, img->data, p->img.bytes, cudaMemcpyHostToDevice, d->s));
        cu_timer timer(d->s);
        run(ctx, d, p, spec);
        timer.mark(1, d->s);
        /* the features: NCHW device copies, then into the pinned host views */
        const int e_side = p->sH[K - 1];
        const float *top = p->lvl[K - 1].f();
        feature_out(d, cf, &f->vision_features, D, e_side, top, nullptr);
        cu_arena *A = cu_prepared_conv(&e->patch_embed, p->slot)->arena;
        const float *no_mem = spec->no_mem_embed ? cu_weight(A, spec->no_mem_embed, D) : nullptr;
        feature_out(d, cf, &f->image_embed, D, e_side, top, no_mem);
        /* the image embedding as the decoder reads it: tokens (e*e, D) */
        void *tok = nullptr;
        CU(cudaMallocAsync(&tok, (size_t)e_side * e_side * D * sizeof(float), d->s));
        cu_resident_extra_add(cf, f->image_embed.data, tok);
        if (no_mem)
            k_add_channel(d->s, top, no_mem, 1.0f, (float *)tok, (int64_t)e_side * e_side, D, 1);
        else
            CU(cudaMemcpyAsync(tok, top, (size_t)e_side * e_side * D * sizeof(float), cudaMemcpyDeviceToDevice, d->s));
        {
            const size_t bytes = (size_t)D * e_side * e_side * sizeof(float);
            void *host = cu_pinned_take(bytes);
            cf->pinned.push_back({host, bytes});
            f->vision_pos = samc_tensor{4, {1, D, e_side, e_side}, (float *)host, false};
        }
        if (spec->conv_s0) {
            feature_out(d, cf, &f->feat_s0, spec->conv_s0->cout, p->sH[0], p->s0.f(), nullptr);
            feature_out(d, cf, &f->feat_s1, spec->conv_s1->cout, p->sH[1], p->s1.f(), nullptr);
        }
        const float *pe = cu_sine_pe_planes(A, &e->neck.pe, e_side, e_side);
        for (auto &m : cf->m)
            CU(cudaMemcpyAsync((void *)m.host, m.dev, m.bytes, cudaMemcpyDeviceToHost, d->s));
        CU(cudaMemcpyAsync(f->vision_pos.data, pe, (size_t)D * e_side * e_side * sizeof(float), cudaMemcpyDeviceToHost,
                           d->s));
        timer.mark(2, d->s);
        CU(cudaStreamSynchronize(d->s));
        timer.report(prec == CU_BF16 ? "image_features(bf16)" : "image_features(fp32)");
    });
    cu_features_attach(f, cf); /* on failure too: releasing f gives everything back */
    return st;
}
