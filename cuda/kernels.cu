/* SPDX-License-Identifier: Apache-2.0 */
/* kernels.cu - element-wise, normalisation and layout kernels (kernels.h).
 * One warp per token row for the layer norms (two passes over the row, as
 * torch: mean, then the variance of the centred values). */
#include "cuda/kernels.h"

namespace {

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ bf16 from_f<bf16>(float v) { return __float2bfloat16_rn(v); }
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(bf16 v) { return __bfloat162float(v); }

/* mean and 1/sqrt(var + eps) of a row of D floats, every lane gets both */
__device__ __forceinline__ void row_stats(const float *x, int D, float eps, float &mean, float &rstd)
{
    const int lane = threadIdx.x & 31;
    float s = 0.0f;
    for (int i = lane; i < D; i += 32)
        s += x[i];
    mean = warp_sum(s) / (float)D;
    float v = 0.0f;
    for (int i = lane; i < D; i += 32) {
        const float t = x[i] - mean;
        v += t * t;
    }
    rstd = 1.0f / sqrtf(warp_sum(v) / (float)D + eps);
}

template <typename T>
__device__ __forceinline__ void row_norm(const float *x, int D, float mean, float rstd, const float *w, const float *b,
                                         T *y)
{
    for (int i = threadIdx.x & 31; i < D; i += 32)
        y[i] = from_f<T>((x[i] - mean) * rstd * w[i] + b[i]);
}

constexpr int kWarps = 8; /* rows per block of the row kernels */

template <typename T>
__global__ void ln_rows(const float *x, int64_t rows, int D, const float *w, const float *b, float eps, T *y,
                        int64_t ldy)
{
    const int64_t r = blockIdx.x * (int64_t)kWarps + threadIdx.x / 32;
    if (r >= rows)
        return;
    float mean, rstd;
    row_stats(x + r * D, D, eps, mean, rstd);
    row_norm(x + r * D, D, mean, rstd, w, b, y + r * ldy);
}

__device__ __forceinline__ int64_t win_row(const cu_win &g, int b, int y, int x)
{
    const int wy = y / g.wh, wx = x / g.ww;
    return (((int64_t)b * g.nwh + wy) * g.nww + wx) * g.wh * g.ww + (int64_t)(y - wy * g.wh) * g.ww + (x - wx * g.ww);
}

template <typename T>
__global__ void ln_window(const float *x, cu_win g, int D, const float *w, const float *b, float eps, T *ywin, T *y)
{
    const int64_t t = blockIdx.x * (int64_t)kWarps + threadIdx.x / 32, n = (int64_t)g.B * g.H * g.W;
    if (t >= n)
        return;
    const int xx = (int)(t % g.W), yy = (int)((t / g.W) % g.H), bb = (int)(t / ((int64_t)g.W * g.H));
    float mean, rstd;
    row_stats(x + t * D, D, eps, mean, rstd);
    row_norm(x + t * D, D, mean, rstd, w, b, ywin + win_row(g, bb, yy, xx) * D);
    if (y)
        row_norm(x + t * D, D, mean, rstd, w, b, y + t * D);
}

template <typename T>
__global__ void unpart_add_ln(const float *a, cu_win gq, const float *sc, float *xo, int D, const float *w,
                              const float *b, float eps, T *xn)
{
    const int64_t t = blockIdx.x * (int64_t)kWarps + threadIdx.x / 32, n = (int64_t)gq.B * gq.H * gq.W;
    if (t >= n)
        return;
    const int xx = (int)(t % gq.W), yy = (int)((t / gq.W) % gq.H), bb = (int)(t / ((int64_t)gq.W * gq.H));
    const float *ar = a + win_row(gq, bb, yy, xx) * D;
    const float *sr = sc + t * D;
    float *xr = xo + t * D;
    for (int i = threadIdx.x & 31; i < D; i += 32)
        xr[i] = sr[i] + ar[i]; /* each lane reads back only what it wrote */
    float mean, rstd;
    row_stats(xr, D, eps, mean, rstd);
    row_norm(xr, D, mean, rstd, w, b, xn + t * D);
}

template <typename T> __global__ void gelu(T *x, int64_t n)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = to_f(x[i]);
        x[i] = from_f<T>(0.5f * v * (1.0f + erff(v * 0.70710678118654752440f)));
    }
}

__global__ void relu(float *x, int64_t n)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* NaN propagates as torch's max pool: a NaN wins. */
__device__ __forceinline__ float max_nan(float m, float v) { return (v > m || isnan(v)) ? v : m; }

__global__ void maxpool(const float *x, int B, int H, int W, int D, int st, float *y)
{
    const int Ho = H / st, Wo = W / st;
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, n = (int64_t)B * Ho * Wo * D;
    if (i >= n)
        return;
    const int c = (int)(i % D);
    const int64_t t = i / D;
    const int ox = (int)(t % Wo), oy = (int)((t / Wo) % Ho), b = (int)(t / ((int64_t)Wo * Ho));
    float m = -INFINITY;
    for (int dy = 0; dy < st; dy++)
        for (int dx = 0; dx < st; dx++)
            m = max_nan(m, x[(((int64_t)b * H + oy * st + dy) * W + ox * st + dx) * D + c]);
    y[i] = m;
}

template <typename T> __global__ void pool_q(const T *qkv, cu_win g, int D, int st, int qh, int qw, T *qp)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, n = g.windows() * qh * qw * D;
    if (i >= n)
        return;
    const int c = (int)(i % D);
    const int64_t r = i / D, win = r / ((int64_t)qh * qw);
    const int q = (int)(r % ((int64_t)qh * qw)), qy = q / qw, qx = q % qw;
    const int64_t base = win * g.wh * g.ww;
    float m = -INFINITY;
    for (int dy = 0; dy < st; dy++)
        for (int dx = 0; dx < st; dx++)
            m = max_nan(m, to_f(qkv[(base + (int64_t)(qy * st + dy) * g.ww + qx * st + dx) * 3 * D + c]));
    qp[i] = from_f<T>(m);
}

template <typename T>
__global__ void im2col(const float *img, int B, int C, int H, int W, int kh, int kw, int stride, int pad, int Ho,
                       int Wo, int kpad, T *cols)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, n = (int64_t)B * Ho * Wo * kpad;
    if (i >= n)
        return;
    const int k = (int)(i % kpad);
    const int64_t r = i / kpad;
    float v = 0.0f;
    if (k < C * kh * kw) {
        const int kx = k % kw, ky = (k / kw) % kh, c = k / (kw * kh);
        const int ox = (int)(r % Wo), oy = (int)((r / Wo) % Ho), b = (int)(r / ((int64_t)Wo * Ho));
        const int y = oy * stride - pad + ky, x = ox * stride - pad + kx;
        if (y >= 0 && y < H && x >= 0 && x < W)
            v = img[(((int64_t)b * C + c) * H + y) * W + x];
    }
    cols[i] = from_f<T>(v);
}

template <typename T> __global__ void softmax(const float *S, int64_t rows, int n, T *P)
{
    const int64_t r = blockIdx.x * (int64_t)kWarps + threadIdx.x / 32;
    if (r >= rows)
        return;
    const int lane = threadIdx.x & 31;
    const float *s = S + r * n;
    T *p = P + r * n;
    float m = -INFINITY;
    for (int i = lane; i < n; i += 32)
        m = fmaxf(m, s[i]);
    m = warp_max(m);
    float sum = 0.0f;
    for (int i = lane; i < n; i += 32)
        sum += expf(s[i] - m);
    sum = warp_sum(sum);
    const float inv = 1.0f / sum;
    for (int i = lane; i < n; i += 32)
        p[i] = from_f<T>(expf(s[i] - m) * inv);
}

__global__ void to_bf16(const float *x, bf16 *y, int64_t n)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = __float2bfloat16_rn(x[i]);
}

/* 32 x 32 tiles through shared memory: x (B, R, Cn) -> y (B, Cn, R). */
__global__ void transpose_tiles(const float *x, int64_t R, int64_t Cn, float *y, const float *add)
{
    __shared__ float tile[32][33];
    const int64_t b = blockIdx.z, r0 = (int64_t)blockIdx.y * 32, c0 = (int64_t)blockIdx.x * 32;
    const float *xb = x + b * R * Cn;
    float *yb = y + b * R * Cn;
    for (int j = threadIdx.y; j < 32; j += 8) {
        const int64_t r = r0 + j, c = c0 + threadIdx.x;
        if (r < R && c < Cn)
            tile[j][threadIdx.x] = xb[r * Cn + c];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += 8) {
        const int64_t c = c0 + j, r = r0 + threadIdx.x;
        if (r < R && c < Cn)
            yb[c * R + r] = tile[threadIdx.x][j] + (add ? add[c] : 0.0f);
    }
}

/* upsample x2 taps (align_corners False), exactly as ref/sam2/fpn_neck.c */
__device__ __forceinline__ void up2_taps(int o, int n, int &i0, int &i1, float &l0, float &l1)
{
    float src = 0.5f * ((float)o + 0.5f) - 0.5f;
    src = src < 0.0f ? 0.0f : src;
    i0 = (int)src;
    i1 = i0 < n - 1 ? i0 + 1 : i0;
    l1 = src - (float)i0;
    l0 = 1.0f - l1;
}

__global__ void fpn_topdown(float *lat, const float *prev, int B, int H, int W, int C, bool bilinear, bool avg)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, n = (int64_t)B * H * W * C;
    if (i >= n)
        return;
    const int c = (int)(i % C);
    const int64_t t = i / C;
    const int x = (int)(t % W), y = (int)((t / W) % H), b = (int)(t / ((int64_t)W * H));
    const int h = H / 2, w = W / 2;
    const float *pb = prev + (int64_t)b * h * w * C;
    float up;
    if (!bilinear) {
        up = pb[((int64_t)(y >> 1) * w + (x >> 1)) * C + c];
    } else {
        int y0, y1, x0, x1;
        float hy0, hy1, wx0, wx1;
        up2_taps(y, h, y0, y1, hy0, hy1);
        up2_taps(x, w, x0, x1, wx0, wx1);
        const float t0 = __fadd_rn(__fmul_rn(pb[((int64_t)y0 * w + x0) * C + c], wx0),
                                   __fmul_rn(pb[((int64_t)y0 * w + x1) * C + c], wx1));
        const float t1 = __fadd_rn(__fmul_rn(pb[((int64_t)y1 * w + x0) * C + c], wx0),
                                   __fmul_rn(pb[((int64_t)y1 * w + x1) * C + c], wx1));
        up = __fadd_rn(__fmul_rn(t0, hy0), __fmul_rn(t1, hy1));
    }
    float v = lat[i] + up;
    lat[i] = avg ? v / 2.0f : v;
}

__global__ void add(const float *a, const float *b, float scale, float *y, int64_t n)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a[i] + scale * b[i];
}

__global__ void add_channel(const float *x, const float *v, float scale, float *y, int64_t n, int C, int64_t inner)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + scale * v[(i / inner) % C];
}

__global__ void transpose01(const float *x, int64_t A, int64_t B, int64_t C, float *y)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, n = A * B * C;
    if (i >= n)
        return;
    const int64_t c = i % C, b = (i / C) % B, a = i / (C * B); /* i indexes x (A, B, C) */
    y[(b * A + a) * C + c] = x[i];
}

__global__ void add_bcast(const float *x, const float *pe, int64_t total, int64_t n, float *y)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < total)
        y[i] = x[i] + pe[i % n];
}

__global__ void convt_shuffle(const float *g, int B, int h, int w, int c, const float *bias, const float *feat,
                              bool feat_batched, const float *nw, const float *nb, float eps, bool do_gelu, float *out)
{
    const int H = 2 * h, W = 2 * w;
    const int64_t t = blockIdx.x * (int64_t)kWarps + threadIdx.x / 32, n = (int64_t)B * H * W;
    if (t >= n)
        return;
    const int lane = threadIdx.x & 31;
    const int X = (int)(t % W), Y = (int)((t / W) % H), b = (int)(t / ((int64_t)W * H));
    const int64_t src = ((int64_t)b * h + Y / 2) * w + X / 2;
    const int sub = (Y % 2) * 2 + (X % 2);
    const float *fb = feat ? feat + (feat_batched ? (int64_t)b * c * H * W : 0) : nullptr;
    float *o = out + t * c;
    for (int co = lane; co < c; co += 32) {
        float v = g[src * c * 4 + co * 4 + sub] + bias[co];
        if (fb)
            v += fb[((int64_t)co * H + Y) * W + X];
        o[co] = v; /* each lane reads back only its own channels */
    }
    if (nw) {
        float mean, rstd;
        row_stats(o, c, eps, mean, rstd);
        for (int co = lane; co < c; co += 32)
            o[co] = (o[co] - mean) * rstd * nw[co] + nb[co];
    }
    if (do_gelu)
        for (int co = lane; co < c; co += 32)
            o[co] = 0.5f * o[co] * (1.0f + erff(o[co] * 0.70710678118654752440f));
}

__global__ void resize_bilinear(const float *x, int64_t planes, int h, int w, const samc_lin_tap *ty, int H,
                                const samc_lin_tap *tx, int W, float *y)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, n = planes * H * W;
    if (i >= n)
        return;
    const int X = (int)(i % W), Y = (int)((i / W) % H);
    const int64_t p = i / ((int64_t)W * H);
    const float *xp = x + p * h * w;
    const samc_lin_tap a = ty[Y], c = tx[X];
    const float t0 = __fadd_rn(__fmul_rn(xp[(int64_t)a.i0 * w + c.i0], c.l0), __fmul_rn(xp[(int64_t)a.i0 * w + c.i1], c.l1));
    const float t1 = __fadd_rn(__fmul_rn(xp[(int64_t)a.i1 * w + c.i0], c.l0), __fmul_rn(xp[(int64_t)a.i1 * w + c.i1], c.l1));
    y[i] = __fadd_rn(__fmul_rn(t0, a.l0), __fmul_rn(t1, a.l1));
}

} // namespace

void k_add_bcast(cudaStream_t s, const float *x, const float *pe, int64_t B, int64_t n, float *y)
{
    if (B * n <= 0)
        return;
    add_bcast<<<cu_blocks(B * n, 256), 256, 0, s>>>(x, pe, B * n, n, y);
    CU_LAUNCHED("add_bcast");
}

void k_convt_shuffle(cudaStream_t s, const float *g, int B, int h, int w, int c, const float *bias, const float *feat,
                     bool feat_batched, const float *nw, const float *nb, float eps, bool gelu, float *out)
{
    const int64_t n = (int64_t)B * 4 * h * w;
    convt_shuffle<<<cu_blocks(n, kWarps), 32 * kWarps, 0, s>>>(g, B, h, w, c, bias, feat, feat_batched, nw, nb, eps,
                                                                gelu, out);
    CU_LAUNCHED("convt_shuffle");
}

void k_resize_bilinear(cudaStream_t s, const float *x, int64_t planes, int h, int w, const samc_lin_tap *ty, int H,
                       const samc_lin_tap *tx, int W, float *y)
{
    const int64_t n = planes * H * W;
    if (n <= 0)
        return;
    resize_bilinear<<<cu_blocks(n, 256), 256, 0, s>>>(x, planes, h, w, ty, H, tx, W, y);
    CU_LAUNCHED("resize_bilinear");
}

void k_ln_rows(cudaStream_t s, const float *x, int64_t rows, int D, const float *w, const float *b, float eps, void *y,
               int64_t ldy, bool bf)
{
    if (rows <= 0)
        return;
    if (bf)
        ln_rows<bf16><<<cu_blocks(rows, kWarps), 32 * kWarps, 0, s>>>(x, rows, D, w, b, eps, (bf16 *)y, ldy);
    else
        ln_rows<float><<<cu_blocks(rows, kWarps), 32 * kWarps, 0, s>>>(x, rows, D, w, b, eps, (float *)y, ldy);
    CU_LAUNCHED("ln_rows");
}

void k_ln_window(cudaStream_t s, const float *x, cu_win g, int D, const float *w, const float *b, float eps,
                 void *ywin, void *y, bool bf)
{
    const int64_t n = (int64_t)g.B * g.H * g.W;
    if (bf)
        ln_window<bf16><<<cu_blocks(n, kWarps), 32 * kWarps, 0, s>>>(x, g, D, w, b, eps, (bf16 *)ywin, (bf16 *)y);
    else
        ln_window<float><<<cu_blocks(n, kWarps), 32 * kWarps, 0, s>>>(x, g, D, w, b, eps, (float *)ywin, (float *)y);
    CU_LAUNCHED("ln_window");
}

void k_unpart_add_ln(cudaStream_t s, const float *a, cu_win gq, const float *sc, float *xo, int D, const float *w,
                     const float *b, float eps, void *xn, bool bf)
{
    const int64_t n = (int64_t)gq.B * gq.H * gq.W;
    if (bf)
        unpart_add_ln<bf16><<<cu_blocks(n, kWarps), 32 * kWarps, 0, s>>>(a, gq, sc, xo, D, w, b, eps, (bf16 *)xn);
    else
        unpart_add_ln<float><<<cu_blocks(n, kWarps), 32 * kWarps, 0, s>>>(a, gq, sc, xo, D, w, b, eps, (float *)xn);
    CU_LAUNCHED("unpart_add_ln");
}

void k_gelu(cudaStream_t s, void *x, int64_t n, bool bf)
{
    if (n <= 0)
        return;
    if (bf)
        gelu<bf16><<<cu_blocks(n, 256), 256, 0, s>>>((bf16 *)x, n);
    else
        gelu<float><<<cu_blocks(n, 256), 256, 0, s>>>((float *)x, n);
    CU_LAUNCHED("gelu");
}

void k_relu(cudaStream_t s, float *x, int64_t n)
{
    if (n <= 0)
        return;
    relu<<<cu_blocks(n, 256), 256, 0, s>>>(x, n);
    CU_LAUNCHED("relu");
}

void k_maxpool(cudaStream_t s, const float *x, int B, int H, int W, int D, int st, float *y)
{
    const int64_t n = (int64_t)B * (H / st) * (W / st) * D;
    maxpool<<<cu_blocks(n, 256), 256, 0, s>>>(x, B, H, W, D, st, y);
    CU_LAUNCHED("maxpool");
}

void k_pool_q(cudaStream_t s, const void *qkv, cu_win g, int D, int st, int qh, int qw, void *qp, bool bf)
{
    const int64_t n = g.windows() * qh * qw * D;
    if (bf)
        pool_q<bf16><<<cu_blocks(n, 256), 256, 0, s>>>((const bf16 *)qkv, g, D, st, qh, qw, (bf16 *)qp);
    else
        pool_q<float><<<cu_blocks(n, 256), 256, 0, s>>>((const float *)qkv, g, D, st, qh, qw, (float *)qp);
    CU_LAUNCHED("pool_q");
}

void k_im2col(cudaStream_t s, const float *img, int B, int C, int H, int W, int kh, int kw, int stride, int pad,
              int Ho, int Wo, int kpad, void *cols, bool bf)
{
    const int64_t n = (int64_t)B * Ho * Wo * kpad;
    if (bf)
        im2col<bf16><<<cu_blocks(n, 256), 256, 0, s>>>(img, B, C, H, W, kh, kw, stride, pad, Ho, Wo, kpad,
                                                       (bf16 *)cols);
    else
        im2col<float><<<cu_blocks(n, 256), 256, 0, s>>>(img, B, C, H, W, kh, kw, stride, pad, Ho, Wo, kpad,
                                                        (float *)cols);
    CU_LAUNCHED("im2col");
}

void k_softmax(cudaStream_t s, float *S, int64_t rows, int n, void *P, bool bf)
{
    if (rows <= 0)
        return;
    if (bf)
        softmax<bf16><<<cu_blocks(rows, kWarps), 32 * kWarps, 0, s>>>(S, rows, n, (bf16 *)P);
    else
        softmax<float><<<cu_blocks(rows, kWarps), 32 * kWarps, 0, s>>>(S, rows, n, (float *)P);
    CU_LAUNCHED("softmax");
}

void k_to_bf16(cudaStream_t s, const float *x, bf16 *y, int64_t n)
{
    if (n <= 0)
        return;
    to_bf16<<<cu_blocks(n, 256), 256, 0, s>>>(x, y, n);
    CU_LAUNCHED("to_bf16");
}

void k_tokens_to_planes(cudaStream_t s, const float *x, int B, int64_t N, int C, float *y, const float *add_c)
{
    const dim3 grid((unsigned)((C + 31) / 32), (unsigned)((N + 31) / 32), (unsigned)B), block(32, 8);
    transpose_tiles<<<grid, block, 0, s>>>(x, N, C, y, add_c);
    CU_LAUNCHED("tokens_to_planes");
}

void k_planes_to_tokens(cudaStream_t s, const float *x, int B, int C, int64_t N, float *y)
{
    const dim3 grid((unsigned)((N + 31) / 32), (unsigned)((C + 31) / 32), (unsigned)B), block(32, 8);
    transpose_tiles<<<grid, block, 0, s>>>(x, C, N, y, nullptr);
    CU_LAUNCHED("planes_to_tokens");
}

void k_fpn_topdown(cudaStream_t s, float *lat, const float *prev, int B, int H, int W, int C, bool bilinear, bool avg)
{
    const int64_t n = (int64_t)B * H * W * C;
    fpn_topdown<<<cu_blocks(n, 256), 256, 0, s>>>(lat, prev, B, H, W, C, bilinear, avg);
    CU_LAUNCHED("fpn_topdown");
}

void k_add(cudaStream_t s, const float *a, const float *b, float scale, float *y, int64_t n)
{
    if (n <= 0)
        return;
    add<<<cu_blocks(n, 256), 256, 0, s>>>(a, b, scale, y, n);
    CU_LAUNCHED("add");
}

void k_add_channel(cudaStream_t s, const float *x, const float *v, float scale, float *y, int64_t B, int C,
                   int64_t inner)
{
    const int64_t n = B * C * inner;
    if (n <= 0)
        return;
    add_channel<<<cu_blocks(n, 256), 256, 0, s>>>(x, v, scale, y, n, C, inner);
    CU_LAUNCHED("add_channel");
}

void k_transpose01(cudaStream_t s, const float *x, int64_t A, int64_t B, int64_t C, float *y)
{
    const int64_t n = A * B * C;
    if (n <= 0)
        return;
    transpose01<<<cu_blocks(n, 256), 256, 0, s>>>(x, A, B, C, y);
    CU_LAUNCHED("transpose01");
}
