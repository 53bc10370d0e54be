/* SPDX-License-Identifier: Apache-2.0 */
/* nn.cu - the shared kinds (core/nn/nn_ops.h) as cuda bodies: host tensors
 * in and out, the work on the device. Inside the whole-part bodies the
 * same kernels run on device buffers; these serve the rows a whole body
 * does not cover and the parity runs and op tests of each layer alone. */
#include "cuda/fpn.h"

static bool same_shape(const samc_tensor *a, const samc_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    return true;
}

/* Y (rows, out) = X (rows, in) W^T + b for fp32 X on the device (the bf16
 * row converts X first). */
static void linear_f32in(cu_dev *d, const cu_lin *L, const float *X, int64_t rows, float *Y)
{
    cu_buf cvt(L->prec == CU_BF16 ? (size_t)rows * L->in * 2 : 0, d->s);
    cu_linear_ld(d, L, cu_gemm_input(d, L, X, rows * L->in, cvt.p), L->in, rows, Y, L->out, false, true, false);
}

void cu_conv2d(cu_dev *d, const cu_lin *L, const samc_conv2d *c, const float *x, int B, int H, int W, float *y)
{
    const int Ho = (H + 2 * c->pad - c->kh) / c->stride + 1, Wo = (W + 2 * c->pad - c->kw) / c->stride + 1;
    const int64_t rows = (int64_t)B * Ho * Wo;
    cu_buf cols((size_t)rows * L->kpad * (L->prec == CU_BF16 ? 2 : 4), d->s), tok((size_t)rows * c->cout * 4, d->s);
    k_im2col(d->s, x, B, c->cin, H, W, c->kh, c->kw, c->stride, c->pad, Ho, Wo, L->kpad, cols.p, L->prec == CU_BF16);
    cu_linear_ld(d, L, cols.p, L->kpad, rows, tok.f(), L->out, false, true, false);
    k_tokens_to_planes(d->s, tok.f(), B, (int64_t)Ho * Wo, c->cout, y, nullptr);
}

extern "C" samc_status samc_cuda_conv2d(samc_ctx *ctx, const samc_conv2d *conv, const samc_tensor *x,
                                        samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        if (x->ndim != 4 || x->shape[1] != conv->cin)
            cu_fail(SAMC_ERR_SHAPE, "conv2d: input is not (B,%d,H,W)", conv->cin);
        if (conv->groups != 1)
            cu_fail(SAMC_ERR_UNSUPPORTED, "conv2d: the cuda body has no grouped convolution (groups %d)", conv->groups);
        const int B = (int)x->shape[0], H = (int)x->shape[2], W = (int)x->shape[3];
        const int Ho = (H + 2 * conv->pad - conv->kh) / conv->stride + 1;
        const int Wo = (W + 2 * conv->pad - conv->kw) / conv->stride + 1;
        if (Ho < 1 || Wo < 1 || out->ndim != 4 || out->shape[0] != B || out->shape[1] != conv->cout ||
            out->shape[2] != Ho || out->shape[3] != Wo)
            cu_fail(SAMC_ERR_SHAPE, "conv2d: output is not (%d,%d,%d,%d)", B, conv->cout, Ho, Wo);
        cu_dev *d = cu_dev_of(ctx);
        cu_buf xin = cu_upload_tensor(d, x), y((size_t)cu_numel(out) * 4, d->s);
        cu_conv2d(d, cu_prepared_conv(conv, ctx->prep_slot), conv, xin.f(), B, H, W, y.f());
        cu_download_tensor(d, out, y.p);
    });
}

extern "C" samc_status samc_cuda_layer_norm(samc_ctx *ctx, const samc_norm *norm, const samc_tensor *x,
                                            samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        if (x->ndim < 1 || x->shape[x->ndim - 1] != norm->dim || !same_shape(x, out))
            cu_fail(SAMC_ERR_SHAPE, "layer_norm: input and output must be (..., %d)", norm->dim);
        cu_dev *d = cu_dev_of(ctx);
        cu_buf xin = cu_upload_tensor(d, x), y((size_t)cu_numel(out) * 4, d->s);
        cu_buf w = cu_upload_floats(d, norm->w, (size_t)norm->dim), b = cu_upload_floats(d, norm->b, (size_t)norm->dim);
        k_ln_rows(d->s, xin.f(), cu_numel(x) / norm->dim, norm->dim, w.f(), b.f(), norm->eps, y.p, norm->dim, false);
        cu_download_tensor(d, out, y.p);
    });
}

extern "C" samc_status samc_cuda_mlp(samc_ctx *ctx, const samc_mlp *mlp, const samc_tensor *x, samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        const int n = mlp->num_layers;
        if (n < 1 || n > SAMC_MLP_MAX_LAYERS || x->ndim < 1 || x->shape[x->ndim - 1] != mlp->layers[0].in ||
            out->ndim != x->ndim || out->shape[out->ndim - 1] != mlp->layers[n - 1].out)
            cu_fail(SAMC_ERR_SHAPE, "mlp: input (..., %d) -> output (..., %d)", mlp->layers[0].in,
                    mlp->layers[n - 1].out);
        cu_dev *d = cu_dev_of(ctx);
        const int64_t rows = cu_numel(x) / mlp->layers[0].in;
        cu_buf cur = cu_upload_tensor(d, x);
        for (int i = 0; i < n; i++) {
            const cu_lin *L = cu_prepared(&mlp->layers[i], ctx->prep_slot);
            cu_buf y((size_t)rows * L->out * 4, d->s);
            linear_f32in(d, L, cur.f(), rows, y.f());
            if (i < n - 1)
                k_relu(d->s, y.f(), rows * L->out);
            cur = std::move(y);
        }
        cu_download_tensor(d, out, cur.p);
        if (mlp->sigmoid_output) /* on the host: a handful of values (the IoU head) */
            for (int64_t i = 0; i < cu_numel(out); i++)
                out->data[i] = 1.0f / (1.0f + expf(-out->data[i]));
    });
}

extern "C" samc_status samc_cuda_add(samc_ctx *ctx, const samc_tensor *a, const samc_tensor *b, float scale,
                                     samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        if (cu_numel(a) != cu_numel(b) || cu_numel(a) != cu_numel(out))
            cu_fail(SAMC_ERR_SHAPE, "add: operands of %lld, %lld and %lld elements", (long long)cu_numel(a),
                    (long long)cu_numel(b), (long long)cu_numel(out));
        cu_dev *d = cu_dev_of(ctx);
        cu_buf da = cu_upload_tensor(d, a), db = cu_upload_tensor(d, b);
        k_add(d->s, da.f(), db.f(), scale, da.f(), cu_numel(a));
        cu_download_tensor(d, out, da.p);
    });
}

extern "C" samc_status samc_cuda_add_channel(samc_ctx *ctx, const samc_tensor *x, const float *v, float scale,
                                             samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        if (x->ndim < 2 || !same_shape(x, out))
            cu_fail(SAMC_ERR_SHAPE, "add_channel: input and output must be (B, C, ...) alike");
        const int64_t B = x->shape[0], C = x->shape[1], inner = cu_numel(x) / (B * C);
        cu_dev *d = cu_dev_of(ctx);
        cu_buf dx = cu_upload_tensor(d, x);
        cu_buf dv = cu_upload_floats(d, v, (size_t)C);
        k_add_channel(d->s, dx.f(), dv.f(), scale, dx.f(), B, (int)C, inner);
        cu_download_tensor(d, out, dx.p);
    });
}

extern "C" samc_status samc_cuda_transpose01(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        if (x->ndim != 3 || out->ndim != 3 || out->shape[0] != x->shape[1] || out->shape[1] != x->shape[0] ||
            out->shape[2] != x->shape[2])
            cu_fail(SAMC_ERR_SHAPE, "transpose01: (A,B,C) -> (B,A,C)");
        cu_dev *d = cu_dev_of(ctx);
        cu_buf dx = cu_upload_tensor(d, x), y((size_t)cu_numel(out) * 4, d->s);
        k_transpose01(d->s, dx.f(), x->shape[0], x->shape[1], x->shape[2], y.f());
        cu_download_tensor(d, out, y.p);
    });
}

extern "C" samc_status samc_cuda_tokens_to_planes(samc_ctx *ctx, const samc_tensor *x, samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        if (x->ndim != 4 || out->ndim != 4 || out->shape[0] != x->shape[0] || out->shape[1] != x->shape[3] ||
            out->shape[2] != x->shape[1] || out->shape[3] != x->shape[2])
            cu_fail(SAMC_ERR_SHAPE, "tokens_to_planes: (B,H,W,C) -> (B,C,H,W)");
        cu_dev *d = cu_dev_of(ctx);
        cu_buf dx = cu_upload_tensor(d, x), y((size_t)cu_numel(out) * 4, d->s);
        k_tokens_to_planes(d->s, dx.f(), (int)x->shape[0], x->shape[1] * x->shape[2], (int)x->shape[3], y.f(),
                           nullptr);
        cu_download_tensor(d, out, y.p);
    });
}

extern "C" samc_status samc_cuda_planes_to_tokens(samc_ctx *ctx, const samc_tensor *x, const samc_tensor *add,
                                                  samc_tensor *out)
{
    return cu_guard(ctx->err, [&] {
        const int64_t Bo = out->ndim == 3 ? out->shape[0] : 0;
        if (x->ndim != 4 || out->ndim != 3 || (x->shape[0] != 1 && x->shape[0] != Bo) ||
            out->shape[1] != x->shape[2] * x->shape[3] || out->shape[2] != x->shape[1] ||
            (add && (add->ndim != 4 || add->shape[0] != Bo || add->shape[1] != x->shape[1] ||
                     add->shape[2] != x->shape[2] || add->shape[3] != x->shape[3])))
            cu_fail(SAMC_ERR_SHAPE, "planes_to_tokens: (1 or B,C,H,W) [+ (B,C,H,W)] -> (B,H*W,C)");
        const int C = (int)x->shape[1];
        const int64_t N = x->shape[2] * x->shape[3], per = (int64_t)C * N;
        cu_dev *d = cu_dev_of(ctx);
        cu_buf dx = cu_upload_tensor(d, x), sum((size_t)Bo * per * 4, d->s), y((size_t)Bo * per * 4, d->s);
        for (int64_t b = 0; b < Bo; b++) /* the source, repeated over the batch when it has one image */
            CU(cudaMemcpyAsync(sum.f() + b * per, dx.f() + (x->shape[0] == 1 ? 0 : b * per), (size_t)per * 4,
                               cudaMemcpyDeviceToDevice, d->s));
        if (add) {
            cu_buf da = cu_upload_tensor(d, add);
            k_add(d->s, sum.f(), da.f(), 1.0f, sum.f(), Bo * per);
            CU(cudaStreamSynchronize(d->s));
        }
        k_planes_to_tokens(d->s, sum.f(), (int)Bo, C, N, y.f());
        cu_download_tensor(d, out, y.p);
    });
}
