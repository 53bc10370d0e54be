/* SPDX-License-Identifier: Apache-2.0 */
/* attention.cu - Hiera's windowed attention for small windows in one
 * kernel: one block per (window, head) keeps the window's keys and values
 * in shared memory; each warp takes a query (max-pooled from the window's
 * q rows when the block pools), scores every key (a lane per key), takes
 * the softmax with warp shuffles and sums the values (a lane per channel).
 * Windows of more keys go through attention's batched GEMMs (hiera.cu). */
#include "cuda/kernels.h"

namespace {

constexpr int kMaxKeys = 64, kWarps = 4;

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(bf16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ bf16 from_f<bf16>(float v) { return __float2bfloat16_rn(v); }

size_t smem_bytes(int nk, int hd) { return sizeof(float) * ((size_t)2 * nk * (hd + 1) + (size_t)kWarps * (hd + kMaxKeys)); }

template <typename T>
__global__ void __launch_bounds__(32 * kWarps) attn_small(const T *qkv, cu_win g, int heads, int hd, int st, int qh,
                                                          int qw, float scale, T *o)
{
    extern __shared__ float sm[];
    const int nk = g.wh * g.ww, nq = qh * qw, D = heads * hd, ld = hd + 1;
    const int64_t win = blockIdx.x;
    const int h = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    float *K = sm, *V = sm + nk * ld, *qs = V + nk * ld + warp * (hd + kMaxKeys), *ps = qs + hd;
    const T *base = qkv + win * nk * 3 * (int64_t)D;
    for (int i = threadIdx.x; i < nk * hd; i += blockDim.x) {
        const int j = i / hd, c = i % hd;
        K[j * ld + c] = to_f(base[(int64_t)j * 3 * D + D + h * hd + c]);
        V[j * ld + c] = to_f(base[(int64_t)j * 3 * D + 2 * D + h * hd + c]);
    }
    __syncthreads();
    for (int q = warp; q < nq; q += kWarps) {
        const int qy = q / qw, qx = q % qw;
        for (int c = lane; c < hd; c += 32) { /* do_pool: max over the st x st cell (NaN wins) */
            float m = -INFINITY;
            for (int dy = 0; dy < st; dy++)
                for (int dx = 0; dx < st; dx++) {
                    const float v = to_f(base[(int64_t)((qy * st + dy) * g.ww + qx * st + dx) * 3 * D + h * hd + c]);
                    m = (v > m || isnan(v)) ? v : m;
                }
            qs[c] = m;
        }
        __syncwarp();
        float sc[kMaxKeys / 32];
        float mx = -INFINITY;
#pragma unroll
        for (int r = 0; r < kMaxKeys / 32; r++) {
            const int j = lane + 32 * r;
            float acc = -INFINITY;
            if (j < nk) {
                acc = 0.0f;
                const float *kr = K + j * ld;
                for (int c = 0; c < hd; c++)
                    acc += qs[c] * kr[c];
                acc *= scale;
            }
            sc[r] = acc;
            mx = fmaxf(mx, acc);
        }
        for (int off = 16; off > 0; off >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
        float sum = 0.0f;
#pragma unroll
        for (int r = 0; r < kMaxKeys / 32; r++) {
            const int j = lane + 32 * r;
            sc[r] = j < nk ? expf(sc[r] - mx) : 0.0f;
            sum += sc[r];
        }
        for (int off = 16; off > 0; off >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, off);
        const float inv = 1.0f / sum;
#pragma unroll
        for (int r = 0; r < kMaxKeys / 32; r++) {
            const int j = lane + 32 * r;
            if (j < nk)
                ps[j] = sc[r] * inv;
        }
        __syncwarp();
        T *orow = o + (win * nq + q) * (int64_t)D + h * hd;
        for (int c = lane; c < hd; c += 32) {
            float acc = 0.0f;
            for (int j = 0; j < nk; j++)
                acc += ps[j] * V[j * ld + c];
            orow[c] = from_f<T>(acc);
        }
        __syncwarp();
    }
}

} // namespace

bool k_attn_small_fits(int nk, int hd) { return nk <= kMaxKeys && smem_bytes(nk, hd) <= (size_t)200 * 1024; }

void k_attn_small(cudaStream_t s, const void *qkv, cu_win g, int heads, int hd, int st, int qh, int qw, float scale,
                  void *o, bool bf)
{
    const int nk = g.wh * g.ww;
    if (!k_attn_small_fits(nk, hd))
        cu_fail(SAMC_ERR_INTERNAL, "attn_small: a window of %d keys, head dim %d does not fit", nk, hd);
    const size_t smem = smem_bytes(nk, hd);
    static bool raised[2];
    if (!raised[bf]) { /* more than 48 KB of shared memory must be asked for */
        if (bf)
            CU(cudaFuncSetAttribute(attn_small<bf16>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
        else
            CU(cudaFuncSetAttribute(attn_small<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
        raised[bf] = true;
    }
    const dim3 grid((unsigned)g.windows(), (unsigned)heads);
    if (bf)
        attn_small<bf16><<<grid, 32 * kWarps, smem, s>>>((const bf16 *)qkv, g, heads, hd, st, qh, qw, scale, (bf16 *)o);
    else
        attn_small<float><<<grid, 32 * kWarps, smem, s>>>((const float *)qkv, g, heads, hd, st, qh, qw, scale,
                                                          (float *)o);
    CU_LAUNCHED("attn_small");
}
