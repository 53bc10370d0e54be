/* SPDX-License-Identifier: Apache-2.0 */
/* cu_common.h - what every file of the CUDA plugin shares: the CUDA and
 * cuBLAS headers, error handling (a failed call throws cu_error; a body's
 * entry point turns it into a samc_status and message), device buffers,
 * the per-model weight arena (prepared once at load) and the per-exec
 * device state (stream, library handles, staging memory).
 *
 * Host code here is C++ (nvcc); it includes samc's C headers for the
 * records it reads and calls libsamc only through the plugin api
 * (core/runtime/plugin.h). */
#ifndef SAMC_CUDA_CU_COMMON_H
#define SAMC_CUDA_CU_COMMON_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
#include "core/runtime/plugin.h"
#include "core/models/sam2/sam2_layers.h"
#include "core/models/tracker/prompt_points.h"
#include "core/models/tracker/tracker.h"
#include "core/nn/nn_ops.h"
}

#include "cuda/cuda_ops.h" /* the bodies' declarations: each definition is checked against its kind */

typedef __nv_bfloat16 bf16;

/* The numerics of an implementation row: fp32 everywhere (cuda), or bf16
 * operands with fp32 accumulation for the matrix products (cuda-bf16). */
enum cu_prec { CU_F32 = 0, CU_BF16 = 1 };

/* libsamc's table (set by samc_plugin_register). */
extern const samc_plugin_api *cu_api;

/* ---- errors --------------------------------------------------------------- */

struct cu_error : std::exception {
    samc_status st;
    std::string msg;
    cu_error(samc_status s, std::string m) : st(s), msg(std::move(m)) {}
    const char *what() const noexcept override { return msg.c_str(); }
};
[[noreturn]] void cu_fail(samc_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cu_check(cudaError_t e, const char *what, const char *file, int line);
void cu_check_blas(cublasStatus_t e, const char *what, const char *file, int line);
#define CU(call) cu_check((call), #call, __FILE__, __LINE__)
#define CUBLAS(call) cu_check_blas((call), #call, __FILE__, __LINE__)
/* After a kernel launch: a bad configuration shows here. */
#define CU_LAUNCHED(name) cu_check(cudaGetLastError(), name, __FILE__, __LINE__)

/* Run `body` and turn what it throws into a status and ctx->err's message. */
template <typename F> samc_status cu_guard(samc_error *err, F &&body)
{
    try {
        body();
        return SAMC_OK;
    } catch (const cu_error &e) {
        if (err && err->status == SAMC_OK) {
            err->status = e.st;
            snprintf(err->msg, sizeof err->msg, "%s", e.msg.c_str());
        }
        return e.st;
    } catch (const std::bad_alloc &) {
        if (err && err->status == SAMC_OK) {
            err->status = SAMC_ERR_NOMEM;
            snprintf(err->msg, sizeof err->msg, "out of host memory");
        }
        return SAMC_ERR_NOMEM;
    }
}

/* ---- the weight arena (one per model and implementation) ------------------ */

struct cu_arena;

/* A linear (or a convolution as the GEMM over its flattened kernel): W
 * (out, kpad) row-major in the row's precision, kpad = in rounded up to 8
 * (zero columns), bias in fp32 and, for bf16 outputs, bf16. */
struct cu_lin {
    const void *w;
    const float *b32;
    const bf16 *b16;
    int in, out, kpad;
    cu_prec prec;
    cu_arena *arena;
};

struct cu_arena {
    cu_prec prec;
    int slot;
    char *block = nullptr;                     /* every linear's weights, one allocation */
    std::vector<cu_lin> lins;                  /* stable: reserved before any pointer is taken */
    std::mutex mu;                             /* guards `extra` */
    std::map<const void *, void *> extra;      /* other weights (norms, embeddings), uploaded on first use */
    std::map<std::string, void *> derived;     /* values computed from the weights (PE tables) */
};

/* The prepared copy of a record in slot `slot`; a missing one is an
 * internal error (the record was not in the model's param list). */
const cu_lin *cu_prepared(const samc_linear *l, int slot);
const cu_lin *cu_prepared_conv(const samc_conv2d *c, int slot);
/* The device copy of n floats of a model's weights (uploaded once). */
const float *cu_weight(cu_arena *a, const float *host, size_t n);
/* A device table derived from the weights, made once by `make` (on the
 * host) and uploaded: n floats under `key`. */
template <typename F> const float *cu_derived(cu_arena *a, const std::string &key, size_t n, F &&make);
const float *cu_derived_upload(cu_arena *a, const std::string &key, const std::vector<float> &v);

/* ---- device buffers --------------------------------------------------------- */

/* Stream-ordered device memory from the device's pool (kept cached). */
struct cu_buf {
    void *p = nullptr;
    size_t bytes = 0;
    cudaStream_t s = nullptr;
    cu_buf() = default;
    cu_buf(size_t n, cudaStream_t st);
    ~cu_buf();
    cu_buf(const cu_buf &) = delete;
    cu_buf &operator=(const cu_buf &) = delete;
    cu_buf(cu_buf &&o) noexcept : p(o.p), bytes(o.bytes), s(o.s) { o.p = nullptr, o.bytes = 0; }
    cu_buf &operator=(cu_buf &&o) noexcept;
    template <typename T> T *as() const { return (T *)p; }
    float *f() const { return (float *)p; }
};

/* ---- the per-exec device state -------------------------------------------- */

/* What a file keeps per exec between calls (a GEMM's chosen algorithm,
 * the encoder's buffers and graph): owned by the device state. */
struct cu_plan {
    virtual ~cu_plan() {}
};

struct cu_dev {
    int device = 0;
    cudaStream_t s = nullptr;                  /* every kernel and copy of this exec, in order */
    cublasHandle_t blas = nullptr;
    cublasLtHandle_t lt = nullptr;
    void *lt_ws = nullptr;
    size_t lt_ws_bytes = 0;
    void *pin = nullptr;                       /* pinned staging for the per-kind bodies */
    size_t pin_bytes = 0;
    std::map<std::string, std::unique_ptr<cu_plan>> gemms;  /* by shape and types (gemm.cu) */
    std::map<std::string, std::unique_ptr<cu_plan>> plans;  /* by part and precision (encoder.cu, heads.cu) */
    ~cu_dev();
};

/* The exec's device state, made on first use (ctx->device). */
cu_dev *cu_dev_of(samc_ctx *ctx);
/* Pinned host memory of at least n bytes (the exec's staging). */
void *cu_pinned(cu_dev *d, size_t n);

/* Host <-> device copies of a tensor through the staging memory; both
 * synchronise the stream (a body returns with its outputs on the host). */
void cu_upload(cu_dev *d, void *dst, const void *src, size_t bytes);
void cu_download(cu_dev *d, void *dst, const void *src, size_t bytes);
cu_buf cu_upload_tensor(cu_dev *d, const samc_tensor *t);
cu_buf cu_upload_floats(cu_dev *d, const float *src, size_t n);
void cu_download_tensor(cu_dev *d, samc_tensor *t, const void *src);

/* ---- matrix products (gemm.cu) ------------------------------------------- */

/* Y (rows, out) = X (rows, in) W^T + bias [+ Y when accumulate], X in
 * L's precision (fp32, or bf16), Y fp32 or (bf16 rows only) bf16. An
 * im2col input has kpad columns: cu_linear_ld with ldx = kpad. */
void cu_linear(cu_dev *d, const cu_lin *L, const void *X, int64_t rows, void *Y, bool y_bf16, bool bias = true,
               bool accumulate = false);
/* The same with the row strides given (X ldx elements, Y ldy elements apart). */
void cu_linear_ld(cu_dev *d, const cu_lin *L, const void *X, int64_t ldx, int64_t rows, void *Y, int64_t ldy,
                  bool y_bf16, bool bias, bool accumulate);

/* Attention products over `batch` independent blocks (windows), each row
 * block `stride` elements after the previous:
 *   S (nq, nk) fp32 = alpha Q (nq, hd; ldq) K^T (nk, hd; ldk)
 *   O (nq, hd; ldo) = P (nq, nk) V (nk, hd; ldv)
 * Q, K, V, P, O in `prec` (bf16: tensor cores, fp32 accumulation). */
void cu_attn_scores(cu_dev *d, cu_prec prec, int batch, int nq, int nk, int hd, float alpha, const void *Q,
                    int64_t ldq, int64_t sq, const void *K, int64_t ldk, int64_t sk, float *S);
void cu_attn_values(cu_dev *d, cu_prec prec, int batch, int nq, int nk, int hd, const void *P, const void *V,
                    int64_t ldv, int64_t sv, void *O, int64_t ldo, int64_t so);

/* Column-major batched fp32 GEMM (cuBLAS conventions), for the products
 * that are not linears (the mask decoder's hypernetwork masks). */
void cu_gemm_batched_f32(cu_dev *d, bool ta, bool tb, int m, int n, int k, const float *A, int64_t lda, int64_t sa,
                         const float *B, int64_t ldb, int64_t sb, float *C, int64_t ldc, int64_t sc, int batch);

/* ---- timing (SAMC_CUDA_TIMING=1) ----------------------------------------------- */

/* Device memory the plugin holds outside the stream pool (weights, tables,
 * workspaces), for the peak it reports. */
void cu_static_add(size_t bytes);
/* Whether SAMC_CUDA_TIMING asks for the GPU times of the whole bodies. */
bool cu_timing(void);
/* The GPU time of a whole body when SAMC_CUDA_TIMING asks for it: marks
 * 0 (start), 1 (the work done) and 2 (the copies out done) on the stream;
 * report() writes one line on stderr with both times and the peak device
 * memory so far (the stream pool's high-water mark plus the rest). Inert
 * otherwise. */
struct cu_timer {
    cudaEvent_t ev[3] = {};
    explicit cu_timer(cudaStream_t s);
    void mark(int i, cudaStream_t s);
    void report(const char *what);
    ~cu_timer();
};

/* ---- implementation plumbing ------------------------------------------------- */

/* The precision of the implementation running this body (its prep slot). */
cu_prec cu_prec_of(const samc_ctx *ctx);

template <typename F> const float *cu_derived(cu_arena *a, const std::string &key, size_t n, F &&make)
{
    {
        std::lock_guard<std::mutex> g(a->mu);
        auto it = a->derived.find(key);
        if (it != a->derived.end())
            return (const float *)it->second;
    }
    std::vector<float> v(n);
    make(v.data());
    return cu_derived_upload(a, key, v);
}

static inline int cu_blocks(int64_t n, int threads) { return (int)((n + threads - 1) / threads); }
static inline int64_t cu_numel(const samc_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

#endif
