/* SPDX-License-Identifier: Apache-2.0 */
/* fpn.cu - FpnNeck.forward on the device (image_encoder.py), in token
 * layout: each lateral 1x1 conv is a GEMM over the level's tokens, the
 * top-down sum a pass over the finer level, the position encodings tables
 * made once per level size from the weights' settings (the core's own
 * float steps, core/nn/position_encoding.c) and kept in the arena. And
 * the per-kind body (NCHW host tensors in and out). */
#include <string>

#include "cuda/fpn.h"

static void check_lateral(const samc_conv2d *c)
{
    if (c->kh != 1 || c->kw != 1 || c->stride != 1 || c->pad != 0 || c->groups != 1)
        cu_fail(SAMC_ERR_UNSUPPORTED, "fpn_neck: the cuda body runs 1x1 lateral convs only (this one is %dx%d, stride %d)",
                c->kh, c->kw, c->stride);
}

const float *cu_sine_pe_planes(cu_arena *A, const samc_sine_pe *pe, int H, int W)
{
    char key[128];
    snprintf(key, sizeof key, "sine_pe %d %.9g %d %.9g %d %d", pe->num_pos_feats, pe->temperature, pe->normalize,
             pe->scale, H, W);
    return cu_derived(A, key, (size_t)pe->num_pos_feats * H * W, [&](float *out) {
        if (samc_status st = cu_api->sine_pe_fill(pe, H, W, out))
            cu_fail(st, "the sine position encoding of a %dx%d map with %d features cannot be made", H, W,
                    pe->num_pos_feats);
    });
}

/* x fp32 -> the GEMM's input type (a bf16 copy in `cvt` for the bf16 row). */
const void *cu_gemm_input(cu_dev *d, const cu_lin *L, const float *x, int64_t n, void *cvt)
{
    if (L->prec != CU_BF16)
        return x;
    k_to_bf16(d->s, x, (bf16 *)cvt, n);
    return cvt;
}

void cu_fpn(cu_dev *d, int slot, const samc_fpn_neck *neck, int B, const float *const *xs, const int *H, const int *W,
            float *const *out, void *cvt)
{
    const int n = neck->n_levels, D = neck->d_model;
    for (int i = n - 1; i >= 0; i--) {
        const samc_conv2d *c = &neck->convs[n - 1 - i];
        check_lateral(c);
        const cu_lin *L = cu_prepared_conv(c, slot);
        const int64_t rows = (int64_t)B * H[i] * W[i];
        cu_linear(d, L, cu_gemm_input(d, L, xs[i], rows * c->cin, cvt), rows, out[i], false);
        if (neck->top_down[i] && i < n - 1) {
            if (H[i] != 2 * H[i + 1] || W[i] != 2 * W[i + 1])
                cu_fail(SAMC_ERR_UNSUPPORTED, "fpn_neck: level %d is %dx%d but the upsampled level %d is %dx%d", i, H[i],
                        W[i], i + 1, 2 * H[i + 1], 2 * W[i + 1]);
            k_fpn_topdown(d->s, out[i], out[i + 1], B, H[i], W[i], D, neck->interp_bilinear, neck->fuse_avg);
        }
    }
}

extern "C" samc_status samc_cuda_fpn_neck(samc_ctx *ctx, const samc_fpn_neck *neck, const samc_tensor *xs,
                                          samc_tensor *out, samc_tensor *pos)
{
    return cu_guard(ctx->err, [&] {
        const int n = neck->n_levels, D = neck->d_model;
        if (n < 1 || n > SAMC_FPN_MAX_LEVELS)
            cu_fail(SAMC_ERR_ARG, "fpn_neck: %d levels", n);
        cu_dev *d = cu_dev_of(ctx);
        const int B = (int)xs[0].shape[0];
        int H[SAMC_FPN_MAX_LEVELS], W[SAMC_FPN_MAX_LEVELS];
        std::vector<cu_buf> planes, tokens, outs;
        const float *xp[SAMC_FPN_MAX_LEVELS];
        float *op[SAMC_FPN_MAX_LEVELS];
        int64_t most = 0;
        for (int i = 0; i < n; i++) {
            const samc_tensor *x = &xs[i];
            const samc_conv2d *c = &neck->convs[n - 1 - i];
            if (x->ndim != 4 || x->shape[0] != B || x->shape[1] != c->cin || c->cout != D ||
                neck->pe.num_pos_feats != D)
                cu_fail(SAMC_ERR_SHAPE, "fpn_neck: level %d input is not (B,%d,H,W)", i, c->cin);
            H[i] = (int)x->shape[2], W[i] = (int)x->shape[3];
            if (out[i].ndim != 4 || out[i].shape[0] != B || out[i].shape[1] != D || out[i].shape[2] != H[i] ||
                out[i].shape[3] != W[i] || pos[i].ndim != 4 || pos[i].shape[0] != B || pos[i].shape[1] != D ||
                pos[i].shape[2] != H[i] || pos[i].shape[3] != W[i])
                cu_fail(SAMC_ERR_SHAPE, "fpn_neck: level %d out/pos are not (B,%d,%d,%d)", i, D, H[i], W[i]);
            const int64_t N = (int64_t)H[i] * W[i];
            most = cu_numel(x) > most ? cu_numel(x) : most;
            planes.push_back(cu_upload_tensor(d, x));
            tokens.emplace_back((size_t)cu_numel(x) * sizeof(float), d->s);
            k_planes_to_tokens(d->s, planes.back().f(), B, c->cin, N, tokens.back().f());
            xp[i] = tokens.back().f();
            outs.emplace_back((size_t)B * N * D * sizeof(float), d->s);
            op[i] = outs.back().f();
        }
        cu_buf cvt((size_t)most * 2, d->s);
        cu_fpn(d, ctx->prep_slot, neck, B, xp, H, W, op, cvt.p);
        cu_arena *A = cu_prepared_conv(&neck->convs[0], ctx->prep_slot)->arena;
        for (int i = 0; i < n; i++) {
            const int64_t N = (int64_t)H[i] * W[i];
            cu_buf o((size_t)B * N * D * sizeof(float), d->s);
            k_tokens_to_planes(d->s, op[i], B, N, D, o.f(), nullptr);
            cu_download_tensor(d, &out[i], o.p);
            const float *pe = cu_sine_pe_planes(A, &neck->pe, H[i], W[i]);
            for (int b = 0; b < B; b++)
                cu_download(d, pos[i].data + (int64_t)b * D * N, pe, (size_t)D * N * sizeof(float));
        }
    });
}
