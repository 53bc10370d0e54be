/* SPDX-License-Identifier: Apache-2.0 */
/* gemm.cu - the matrix products: linears through cuBLASLt (bias and the
 * residual sum in its epilogue, the algorithm chosen once per shape and kept
 * in the exec's state), attention's batched products through cuBLAS.
 *
 * fp32 (the `cuda` row) is CUBLAS_COMPUTE_32F: no TF32, so the products
 * round as fp32 FMA does and the row holds 1e-4 of the official code. The
 * bf16 row gives bf16 operands with fp32 accumulation (tensor cores). */
#include "cuda/cu_common.h"

namespace {

struct gemm_plan : cu_plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo;
    bool have_algo = false;
    ~gemm_plan() override
    {
        if (op)
            cublasLtMatmulDescDestroy(op);
        if (a)
            cublasLtMatrixLayoutDestroy(a);
        if (b)
            cublasLtMatrixLayoutDestroy(b);
        if (c)
            cublasLtMatrixLayoutDestroy(c);
    }
};

int align_of(const void *p, int64_t ld, size_t es)
{
    int al = 16;
    while (al > 1 && (((uintptr_t)p % (uintptr_t)al) || ((size_t)ld * es) % (size_t)al))
        al /= 2;
    return al;
}

/* y[r, :] += b; y fp32 or bf16 (the fallback path's bias). */
template <typename T> __global__ void add_bias(T *y, int64_t ldy, const float *b, int64_t rows, int n)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= rows * n)
        return;
    const int64_t r = i / n;
    const int c = (int)(i % n);
    y[r * ldy + c] = (T)((float)y[r * ldy + c] + b[c]);
}

} // namespace

/* The linear on cuBLASLt; a shape cuBLASLt has no algorithm for goes to
 * cublasGemmEx and a bias kernel (slower, same numerics). */
void cu_linear_ld(cu_dev *d, const cu_lin *L, const void *X, int64_t ldx, int64_t rows, void *Y, int64_t ldy,
                  bool y_bf16, bool bias, bool accumulate)
{
    if (rows <= 0)
        return;
    if (y_bf16 && (L->prec != CU_BF16 || accumulate))
        cu_fail(SAMC_ERR_INTERNAL, "bf16 output of an fp32 or accumulating linear");
    const bool bf = L->prec == CU_BF16;
    const cudaDataType_t ab = bf ? CUDA_R_16BF : CUDA_R_32F, dt = y_bf16 ? CUDA_R_16BF : CUDA_R_32F;
    const size_t es = bf ? 2 : 4, ys = y_bf16 ? 2 : 4;
    const bool with_bias = bias && L->b32;
    const int m = L->out, k = L->in; /* W keeps kpad columns: lda = kpad */
    const int aw = align_of(L->w, L->kpad, es), ax = align_of(X, ldx, es), ay = align_of(Y, ldy, ys);
    char key[160];
    snprintf(key, sizeof key, "lin %d %d %d %lld %lld %lld %d %d %d %d %d %d %d", m, k, L->kpad, (long long)rows, (long long)ldx,
             (long long)ldy, (int)ab, (int)dt, with_bias, accumulate, aw, ax, ay);
    auto it = d->gemms.find(key);
    gemm_plan *p;
    if (it == d->gemms.end()) {
        std::unique_ptr<gemm_plan> np(new gemm_plan());
        p = np.get();
        CUBLAS(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        CUBLAS(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
        CUBLAS(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
        if (with_bias) {
            const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
            CUBLAS(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
        }
        /* A = W stored (k x m) column-major, B = X (k x rows), C = D = Y (m x rows) */
        CUBLAS(cublasLtMatrixLayoutCreate(&p->a, ab, k, m, L->kpad));
        CUBLAS(cublasLtMatrixLayoutCreate(&p->b, ab, k, (uint64_t)rows, ldx));
        CUBLAS(cublasLtMatrixLayoutCreate(&p->c, dt, m, (uint64_t)rows, ldy));
        cublasLtMatmulPreference_t pref;
        CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
        const uint64_t ws = d->lt_ws_bytes;
        const uint32_t al[4] = {(uint32_t)aw, (uint32_t)ax, (uint32_t)ay, (uint32_t)ay};
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al[0], 4);
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al[1], 4);
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al[2], 4);
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al[3], 4);
        cublasLtMatmulHeuristicResult_t res;
        int n = 0;
        if (cublasLtMatmulAlgoGetHeuristic(d->lt, p->op, p->a, p->b, p->c, p->c, pref, 1, &res, &n) ==
                CUBLAS_STATUS_SUCCESS &&
            n > 0)
            p->algo = res.algo, p->have_algo = true;
        cublasLtMatmulPreferenceDestroy(pref);
        d->gemms[key] = std::move(np);
    } else {
        p = (gemm_plan *)it->second.get();
    }
    const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    if (p->have_algo) {
        if (with_bias) {
            const void *bp = y_bf16 ? (const void *)L->b16 : (const void *)L->b32;
            CUBLAS(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp));
        }
        CUBLAS(cublasLtMatmul(d->lt, p->op, &one, L->w, p->a, X, p->b, &beta, Y, p->c, Y, p->c, &p->algo, d->lt_ws,
                              d->lt_ws_bytes, d->s));
        return;
    }
    CUBLAS(cublasGemmEx(d->blas, CUBLAS_OP_T, CUBLAS_OP_N, m, (int)rows, k, &one, L->w, ab, L->kpad, X, ab, (int)ldx, &beta,
                        Y, dt, (int)ldy, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    if (with_bias) {
        if (y_bf16)
            add_bias<bf16><<<cu_blocks(rows * m, 256), 256, 0, d->s>>>((bf16 *)Y, ldy, L->b32, rows, m);
        else
            add_bias<float><<<cu_blocks(rows * m, 256), 256, 0, d->s>>>((float *)Y, ldy, L->b32, rows, m);
        CU_LAUNCHED("add_bias");
    }
}

void cu_linear(cu_dev *d, const cu_lin *L, const void *X, int64_t rows, void *Y, bool y_bf16, bool bias,
               bool accumulate)
{
    cu_linear_ld(d, L, X, L->in, rows, Y, L->out, y_bf16, bias, accumulate);
}

/* Row-major S (nq, nk) = Q K^T is column-major S^T (nk, nq) = K Q^T:
 * A = K (stored hd x nk, transposed), B = Q (hd x nq). */
void cu_attn_scores(cu_dev *d, cu_prec prec, int batch, int nq, int nk, int hd, float alpha, const void *Q,
                    int64_t ldq, int64_t sq, const void *K, int64_t ldk, int64_t sk, float *S)
{
    const cudaDataType_t t = prec == CU_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    const float zero = 0.0f;
    CUBLAS(cublasGemmStridedBatchedEx(d->blas, CUBLAS_OP_T, CUBLAS_OP_N, nk, nq, hd, &alpha, K, t, (int)ldk, sk, Q, t,
                                      (int)ldq, sq, &zero, S, CUDA_R_32F, nk, (int64_t)nq * nk, batch,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* Row-major O (nq, hd) = P V is column-major O^T (hd, nq) = V^T P^T:
 * A = V (stored hd x nk), B = P (nk x nq). */
void cu_attn_values(cu_dev *d, cu_prec prec, int batch, int nq, int nk, int hd, const void *P, const void *V,
                    int64_t ldv, int64_t sv, void *O, int64_t ldo, int64_t so)
{
    const cudaDataType_t t = prec == CU_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    const float one = 1.0f, zero = 0.0f;
    CUBLAS(cublasGemmStridedBatchedEx(d->blas, CUBLAS_OP_N, CUBLAS_OP_N, hd, nq, nk, &one, V, t, (int)ldv, sv, P, t, nk,
                                      (int64_t)nq * nk, &zero, O, t, (int)ldo, so, batch, CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT));
}

void cu_gemm_batched_f32(cu_dev *d, bool ta, bool tb, int m, int n, int k, const float *A, int64_t lda, int64_t sa,
                         const float *B, int64_t ldb, int64_t sb, float *C, int64_t ldc, int64_t sc, int batch)
{
    const float one = 1.0f, zero = 0.0f;
    CUBLAS(cublasGemmStridedBatchedEx(d->blas, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k,
                                      &one, A, CUDA_R_32F, (int)lda, sa, B, CUDA_R_32F, (int)ldb, sb, &zero, C,
                                      CUDA_R_32F, (int)ldc, sc, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}
