/* SPDX-License-Identifier: Apache-2.0 */
/* cu_runtime.cu - errors, device memory, the weight arena (prepare and
 * release, once per model and implementation) and the per-exec device
 * state. */
#include <atomic>
#include <cstdarg>
#include <cstdlib>
#include <cstring>

#include "cuda/cu_common.h"
#include "cuda/cuda_ops.h"

const samc_plugin_api *cu_api;

extern "C" void samc__cuda_set_api(const void *api) { cu_api = (const samc_plugin_api *)api; }

extern "C" bool samc__cuda_available(const char **why)
{
    static char msg[256];
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1) {
        snprintf(msg, sizeof msg, "no CUDA device: %s", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        cudaGetLastError();
        if (why)
            *why = msg;
        return false;
    }
    int dev = 0, major = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (major < 8) {
        snprintf(msg, sizeof msg, "CUDA device %d has compute capability %d.x; the plugin needs 8.0 or newer (bf16)",
                 dev, major);
        if (why)
            *why = msg;
        return false;
    }
    return true;
}

/* ---- errors --------------------------------------------------------------- */

void cu_fail(samc_status st, const char *fmt, ...)
{
    char buf[SAMC_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    throw cu_error(st, buf);
}

void cu_check(cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess)
        return;
    cudaGetLastError(); /* clear a sticky launch error for the next call */
    cu_fail(e == cudaErrorMemoryAllocation ? SAMC_ERR_NOMEM : SAMC_ERR_INTERNAL, "CUDA: %s: %s (%s:%d)", what,
            cudaGetErrorString(e), file, line);
}

void cu_check_blas(cublasStatus_t e, const char *what, const char *file, int line)
{
    if (e == CUBLAS_STATUS_SUCCESS)
        return;
    cu_fail(e == CUBLAS_STATUS_ALLOC_FAILED ? SAMC_ERR_NOMEM : SAMC_ERR_INTERNAL, "cuBLAS: %s: %s (%s:%d)", what,
            cublasGetStatusString(e), file, line);
}

/* ---- timing -------------------------------------------------------------------- */

static std::atomic<size_t> static_bytes{0};

void cu_static_add(size_t bytes) { static_bytes += bytes; }

bool cu_timing(void)
{
    static const bool on = getenv("SAMC_CUDA_TIMING") && atoi(getenv("SAMC_CUDA_TIMING")) != 0;
    return on;
}

cu_timer::cu_timer(cudaStream_t s)
{
    if (!cu_timing())
        return;
    for (int i = 0; i < 3; i++)
        CU(cudaEventCreate(&ev[i]));
    mark(0, s);
}

void cu_timer::mark(int i, cudaStream_t s)
{
    if (ev[i])
        CU(cudaEventRecord(ev[i], s));
}

/* after the stream was synchronised */
void cu_timer::report(const char *what)
{
    if (!ev[0])
        return;
    float ab = 0, ac = 0;
    cudaEventElapsedTime(&ab, ev[0], ev[1]);
    cudaEventElapsedTime(&ac, ev[0], ev[2]);
    int dev = 0;
    cudaGetDevice(&dev);
    cudaMemPool_t pool;
    uint64_t high = 0;
    if (cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess)
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high);
    fprintf(stderr, "cuda-timing %s gpu_ms=%.3f with_copies_ms=%.3f peak_mib=%.0f\n", what, ab, ac,
            (double)(high + static_bytes.load()) / 1048576.0);
}

cu_timer::~cu_timer()
{
    for (int i = 0; i < 3; i++)
        if (ev[i])
            cudaEventDestroy(ev[i]);
}

/* ---- buffers ----------------------------------------------------------------- */

cu_buf::cu_buf(size_t n, cudaStream_t st) : bytes(n), s(st)
{
    if (n)
        CU(cudaMallocAsync(&p, n, st));
}

cu_buf::~cu_buf()
{
    if (p)
        cudaFreeAsync(p, s);
}

cu_buf &cu_buf::operator=(cu_buf &&o) noexcept
{
    if (this != &o) {
        if (p)
            cudaFreeAsync(p, s);
        p = o.p, bytes = o.bytes, s = o.s;
        o.p = nullptr, o.bytes = 0;
    }
    return *this;
}

/* ---- the weight arena --------------------------------------------------------- */

/* Which precision each prep slot holds (set when a row prepares). */
static cu_prec slot_prec[SAMC_PREP_SLOTS];

cu_prec cu_prec_of(const samc_ctx *ctx)
{
    if (ctx->prep_slot < 0 || ctx->prep_slot >= SAMC_PREP_SLOTS)
        cu_fail(SAMC_ERR_INTERNAL, "a cuda body ran without its prepared weights (prep slot %d)", ctx->prep_slot);
    return slot_prec[ctx->prep_slot];
}

const cu_lin *cu_prepared(const samc_linear *l, int slot)
{
    if (slot < 0 || slot >= SAMC_PREP_SLOTS || !l->prep[slot])
        cu_fail(SAMC_ERR_INTERNAL, "a linear (%d -> %d) has no prepared device copy", l->in, l->out);
    return (const cu_lin *)l->prep[slot];
}

const cu_lin *cu_prepared_conv(const samc_conv2d *c, int slot)
{
    if (slot < 0 || slot >= SAMC_PREP_SLOTS || !c->prep[slot])
        cu_fail(SAMC_ERR_INTERNAL, "a conv (%d -> %d, k %d) has no prepared device copy", c->cin, c->cout, c->kh);
    return (const cu_lin *)c->prep[slot];
}

/* A host -> device copy of the arena's (weights, tables) that has landed
 * when it returns. cudaMemcpy from pageable memory returns once the bytes
 * are staged, "but the DMA to final destination may not have completed"
 * (CUDA runtime API, "API synchronization behavior"), and it runs on the
 * legacy default stream, which nothing orders before the execs' streams
 * (cudaStreamNonBlocking): a body that used a table right after making it
 * could read it half-written. The neck's sine PE was: made on first use and
 * copied out at once on the exec's stream, a level of tiny_b's isolated
 * neck came back partly unwritten on the first device run (rel 1.0, nmse
 * 0.29). Once per weight or table, so the wait costs nothing that matters. */
static cudaError_t upload_landed(void *dev, const void *host, size_t bytes)
{
    cudaError_t e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    return e != cudaSuccess ? e : cudaStreamSynchronize(0); /* 0: the stream cudaMemcpy ran on */
}

const float *cu_weight(cu_arena *a, const float *host, size_t n)
{
    if (!host)
        return nullptr;
    std::lock_guard<std::mutex> g(a->mu);
    auto it = a->extra.find(host);
    if (it != a->extra.end())
        return (const float *)it->second;
    void *p = nullptr;
    CU(cudaMalloc(&p, n * sizeof(float)));
    cudaError_t e = upload_landed(p, host, n * sizeof(float));
    if (e != cudaSuccess) {
        cudaFree(p);
        CU(e);
    }
    a->extra[host] = p;
    cu_static_add(n * sizeof(float));
    return (const float *)p;
}

const float *cu_derived_upload(cu_arena *a, const std::string &key, const std::vector<float> &v)
{
    std::lock_guard<std::mutex> g(a->mu);
    auto it = a->derived.find(key);
    if (it != a->derived.end())
        return (const float *)it->second;
    void *p = nullptr;
    CU(cudaMalloc(&p, v.size() * sizeof(float)));
    cudaError_t e = upload_landed(p, v.data(), v.size() * sizeof(float));
    if (e != cudaSuccess) {
        cudaFree(p);
        CU(e);
    }
    a->derived[key] = p;
    cu_static_add(v.size() * sizeof(float));
    return (const float *)p;
}

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* One record's bytes in the arena's block: W padded to kpad columns in the
 * row's precision, bias fp32 and bf16. */
static size_t lin_bytes(int in, int out, cu_prec prec)
{
    const int kpad = (in + 7) / 8 * 8;
    const size_t es = prec == CU_BF16 ? sizeof(bf16) : sizeof(float);
    return align256((size_t)out * kpad * es) + align256((size_t)out * sizeof(float)) +
           align256((size_t)out * sizeof(bf16));
}

/* Pack W (out, in) and b into `dst` (host staging of the block). */
static void pack_lin(char *host, size_t off, const float *w, const float *b, int in, int out, cu_prec prec, cu_lin *L,
                     char *dev)
{
    const int kpad = (in + 7) / 8 * 8;
    const size_t wbytes = align256((size_t)out * kpad * (prec == CU_BF16 ? sizeof(bf16) : sizeof(float)));
    char *hw = host + off;
    for (int o = 0; o < out; o++)
        for (int k = 0; k < kpad; k++) {
            const float v = k < in ? w[(size_t)o * in + k] : 0.0f;
            if (prec == CU_BF16)
                ((bf16 *)hw)[(size_t)o * kpad + k] = __float2bfloat16_rn(v);
            else
                ((float *)hw)[(size_t)o * kpad + k] = v;
        }
    float *hb = (float *)(hw + wbytes);
    bf16 *hb16 = (bf16 *)(hw + wbytes + align256((size_t)out * sizeof(float)));
    for (int o = 0; o < out; o++) {
        hb[o] = b ? b[o] : 0.0f;
        hb16[o] = __float2bfloat16_rn(hb[o]);
    }
    L->w = dev + off;
    L->b32 = b ? (const float *)(dev + off + wbytes) : nullptr;
    L->b16 = b ? (const bf16 *)(dev + off + wbytes + align256((size_t)out * sizeof(float))) : nullptr;
    L->in = in, L->out = out, L->kpad = kpad, L->prec = prec;
}

static bool conv_as_gemm(const samc_conv2d *c) { return c->w && c->groups == 1; }

extern "C" void samc__cuda_release(void *arena)
{
    cu_arena *a = (cu_arena *)arena;
    if (!a)
        return;
    for (auto &e : a->extra)
        cudaFree(e.second);
    for (auto &e : a->derived)
        cudaFree(e.second);
    cudaFree(a->block);
    delete a;
}

static samc_status prepare(const samc_param_list *params, int slot, void **arena, cu_prec prec, samc_error *err)
{
    cu_arena *a = nullptr;
    char *host = nullptr;
    samc_status st = cu_guard(err, [&] {
        a = new cu_arena();
        a->prec = prec, a->slot = slot;
        slot_prec[slot] = prec;
        size_t total = 0;
        for (int i = 0; i < params->n_linears; i++)
            if (params->linears[i]->w)
                total += lin_bytes(params->linears[i]->in, params->linears[i]->out, prec);
        for (int i = 0; i < params->n_convs; i++) {
            const samc_conv2d *c = params->convs[i];
            if (conv_as_gemm(c))
                total += lin_bytes(c->cin * c->kh * c->kw, c->cout, prec);
        }
        a->lins.reserve((size_t)(params->n_linears + params->n_convs));
        CU(cudaMallocHost((void **)&host, total ? total : 1));
        CU(cudaMalloc((void **)&a->block, total ? total : 1));
        cu_static_add(total);
        size_t off = 0;
        for (int i = 0; i < params->n_linears; i++) {
            samc_linear *l = params->linears[i];
            if (!l->w)
                continue;
            a->lins.push_back(cu_lin{});
            cu_lin *L = &a->lins.back();
            pack_lin(host, off, l->w, l->b, l->in, l->out, prec, L, a->block);
            L->arena = a;
            l->prep[slot] = L;
            off += lin_bytes(l->in, l->out, prec);
        }
        for (int i = 0; i < params->n_convs; i++) {
            samc_conv2d *c = params->convs[i];
            if (!conv_as_gemm(c))
                continue;
            const int K = c->cin * c->kh * c->kw;
            a->lins.push_back(cu_lin{});
            cu_lin *L = &a->lins.back();
            pack_lin(host, off, c->w, c->b, K, c->cout, prec, L, a->block);
            L->arena = a;
            c->prep[slot] = L;
            off += lin_bytes(K, c->cout, prec);
        }
        CU(cudaMemcpy(a->block, host, total ? total : 1, cudaMemcpyHostToDevice));
    });
    cudaFreeHost(host);
    if (st) {
        for (int i = 0; i < params->n_linears; i++)
            params->linears[i]->prep[slot] = nullptr;
        for (int i = 0; i < params->n_convs; i++)
            params->convs[i]->prep[slot] = nullptr;
        samc__cuda_release(a);
        return st;
    }
    *arena = a;
    return SAMC_OK;
}

extern "C" samc_status samc__cuda_prepare_f32(const samc_param_list *p, int slot, void **arena, samc_error *err)
{
    return prepare(p, slot, arena, CU_F32, err);
}

extern "C" samc_status samc__cuda_prepare_bf16(const samc_param_list *p, int slot, void **arena, samc_error *err)
{
    return prepare(p, slot, arena, CU_BF16, err);
}

/* ---- the per-exec device state --------------------------------------------------- */

static void dev_free(void *p) { delete (cu_dev *)p; }

cu_dev *cu_dev_of(samc_ctx *ctx)
{
    if (ctx->device)
        return (cu_dev *)ctx->device;
    std::unique_ptr<cu_dev> d(new cu_dev());
    CU(cudaGetDevice(&d->device));
    CU(cudaStreamCreateWithFlags(&d->s, cudaStreamNonBlocking));
    CUBLAS(cublasCreate(&d->blas));
    CUBLAS(cublasSetStream(d->blas, d->s));
    /* fp32 stays fp32: the default math mode uses no TF32 (that takes
     * CUBLAS_TF32_TENSOR_OP_MATH), and every call asks for COMPUTE_32F */
    CUBLAS(cublasSetMathMode(d->blas, CUBLAS_DEFAULT_MATH));
    CUBLAS(cublasLtCreate(&d->lt));
    d->lt_ws_bytes = (size_t)32 << 20;
    CU(cudaMalloc(&d->lt_ws, d->lt_ws_bytes));
    cu_static_add(d->lt_ws_bytes);
    CUBLAS(cublasSetWorkspace(d->blas, d->lt_ws, d->lt_ws_bytes));
    /* freed activations stay in the pool for the next call */
    cudaMemPool_t pool;
    CU(cudaDeviceGetDefaultMemPool(&pool, d->device));
    uint64_t keep = UINT64_MAX;
    CU(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    ctx->device = d.release();
    ctx->device_free = dev_free;
    return (cu_dev *)ctx->device;
}

void *cu_pinned(cu_dev *d, size_t n)
{
    if (n > d->pin_bytes) {
        if (d->pin)
            CU(cudaFreeHost(d->pin));
        d->pin = nullptr, d->pin_bytes = 0;
        const size_t want = n < ((size_t)4 << 20) ? ((size_t)4 << 20) : n;
        CU(cudaMallocHost(&d->pin, want));
        d->pin_bytes = want;
    }
    return d->pin;
}

/* Through the staging in pieces (a tensor larger than the staging is not
 * pinned twice). */
void cu_upload(cu_dev *d, void *dst, const void *src, size_t bytes)
{
    const size_t piece = (size_t)64 << 20;
    char *stage = (char *)cu_pinned(d, bytes < piece ? bytes : piece);
    for (size_t off = 0; off < bytes; off += piece) {
        const size_t n = bytes - off < piece ? bytes - off : piece;
        CU(cudaStreamSynchronize(d->s)); /* the staging is free again */
        memcpy(stage, (const char *)src + off, n);
        CU(cudaMemcpyAsync((char *)dst + off, stage, n, cudaMemcpyHostToDevice, d->s));
    }
    CU(cudaStreamSynchronize(d->s));
}

void cu_download(cu_dev *d, void *dst, const void *src, size_t bytes)
{
    const size_t piece = (size_t)64 << 20;
    char *stage = (char *)cu_pinned(d, bytes < piece ? bytes : piece);
    for (size_t off = 0; off < bytes; off += piece) {
        const size_t n = bytes - off < piece ? bytes - off : piece;
        CU(cudaMemcpyAsync(stage, (const char *)src + off, n, cudaMemcpyDeviceToHost, d->s));
        CU(cudaStreamSynchronize(d->s));
        memcpy((char *)dst + off, stage, n);
    }
}

cu_buf cu_upload_tensor(cu_dev *d, const samc_tensor *t)
{
    const size_t bytes = (size_t)cu_numel(t) * sizeof(float);
    cu_buf b(bytes, d->s);
    cu_upload(d, b.p, t->data, bytes);
    return b;
}

cu_buf cu_upload_floats(cu_dev *d, const float *src, size_t n)
{
    cu_buf b(n * sizeof(float), d->s);
    cu_upload(d, b.p, src, n * sizeof(float));
    return b;
}

void cu_download_tensor(cu_dev *d, samc_tensor *t, const void *src)
{
    cu_download(d, t->data, src, (size_t)cu_numel(t) * sizeof(float));
}

cu_dev::~cu_dev()
{
    if (s)
        cudaStreamSynchronize(s);
    plans.clear();
    gemms.clear();
    if (pin)
        cudaFreeHost(pin);
    if (lt_ws)
        cudaFree(lt_ws);
    if (lt)
        cublasLtDestroy(lt);
    if (blas)
        cublasDestroy(blas);
    if (s)
        cudaStreamDestroy(s);
}
