/* SPDX-License-Identifier: Apache-2.0 */
/* gemm.c - linear layers as GEMMs on row panels and column panels (weights
 * packed once at load, or per call), the thread grid, and the thread
 * policy of fast/ (fast.h). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/runtime/threads.h"
#include "fast.h"
#include "isa.h"

int samc__fast_threads(const samc_ctx *ctx)
{
    return samc__threads_resolve(ctx ? ctx->num_threads : 0);
}

int samc__fast_threads_for(const samc_ctx *ctx, int64_t n)
{
    const int nt = samc__fast_threads(ctx);
    const int64_t pieces = n / 65536;
    return pieces < nt ? (int)(pieces > 1 ? pieces : 1) : nt;
}

void samc__fast_pack_linear(const samc_linear *l, float *Wp) { samc__fast_pack_b(l->out, l->in, l->w, l->in, 1, Wp); }

/* ---- weights packed once ---------------------------------------------------- */

samc_status samc__fast_wpack_init(fast_wpack *p, const float *W, int64_t ldw, int N, int K, fast_dtype dtype)
{
    memset(p, 0, sizeof *p);
    if (N <= 0 || K <= 0 || !W)
        return samc_fail(NULL, SAMC_ERR_ARG, "fast: cannot pack a %d x %d weight", N, K);
    if (dtype == FAST_BF16)
        return samc__fast_bf16_pack(p, W, ldw, N, K);
    p->N = N, p->K = K, p->Kp = K, p->dtype = FAST_F32;
    p->bytes = samc__fast_pack_size(N, K) * sizeof(float);
    p->data = aligned_alloc(64, (p->bytes + 63) / 64 * 64);
    if (!p->data)
        return samc_fail(NULL, SAMC_ERR_NOMEM, "fast: packed weight of %zu bytes", p->bytes);
    samc__fast_pack_b(N, K, W, ldw, 1, p->data);
    return SAMC_OK;
}

void samc__fast_wpack_free(fast_wpack *p)
{
    if (!p)
        return;
    free(p->data);
    memset(p, 0, sizeof *p);
}

static int flags_act(int flags)
{
    return flags & FAST_GEMM_GELU ? FAST_ACT_GELU : flags & FAST_GEMM_RELU ? FAST_ACT_RELU : FAST_ACT_NONE;
}

static void gemm_part(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias, const float *R,
                      int64_t ldr, float *C, int64_t ldc, int flags, int pa, int pb)
{
    if (M <= 0)
        return;
    if (W->dtype == FAST_BF16) {
        samc__fast_bf16_gemm_part(M, A, lda, W, bias, R, ldr, C, ldc, flags, pa, pb);
        return;
    }
    /* int M for the kernel: split absurdly tall products */
    for (int64_t m0 = 0; m0 < M; m0 += 1 << 30) {
        const int m = (int)(M - m0 < (1 << 30) ? M - m0 : 1 << 30);
        samc__fast_sgemm_packed_res(m, W->N, W->K, A + m0 * lda, lda, 1, W->data, pa, pb, R ? R + m0 * ldr : NULL, ldr,
                              C + m0 * ldc, ldc, bias, flags_act(flags));
    }
}

void samc__fast_gemm_part(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias, float *C,
                    int64_t ldc, int flags, int pa, int pb)
{
    gemm_part(M, A, lda, W, bias, flags & FAST_GEMM_ACC ? C : NULL, ldc, C, ldc, flags, pa, pb);
}

void samc__fast_gemm_1t(int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias, float *C,
                  int64_t ldc, int flags)
{
    samc__fast_gemm_part(M, A, lda, W, bias, C, ldc, flags, 0, (W->N + FAST_NR - 1) / FAST_NR);
}

void samc__fast_gemm_grid(int nt, int64_t M, int N, int K, int *gm, int *gn)
{
    const int64_t mb = (M + 11) / 12;
    const int np = (N + FAST_NR - 1) / FAST_NR;
    /* no thread gets less than ~2 MFLOP: waking one costs more than that */
    const double flops = 2.0 * (double)M * N * K;
    int n = nt;
    while (n > 1 && flops / n < 2e6)
        n--;
    int bm = 1, bn = 1;
    double best = -1;
    for (int cn = 1; cn <= n && cn <= np; cn++) {
        const int64_t cm64 = n / cn < mb ? n / cn : mb;
        const int cm = (int)(cm64 > 0 ? cm64 : 1);
        const double tiles = (double)((mb + cm - 1) / cm) * (double)((np + cn - 1) / cn);
        /* cycles: 12 per tile and k at the FMA peak, plus the operands each
         * thread streams (A once per L2 chunk of B panels, B once), ~16 B/cycle */
        const double bcols = (double)N / cn, chunks = 1.0 + bcols * K * 4.0 / (512.0 * 1024.0);
        const double bytes = (double)M / cm * K * 4.0 * chunks + (double)K * bcols * 4.0;
        const double t = tiles * K * 12.0 + bytes / 16.0;
        if (best < 0 || t < best * 0.999)
            best = t, bm = cm, bn = cn;
    }
    *gm = bm, *gn = bn;
}

/* Thread t of a gm x gn grid: rows [r0, r1), panels [p0, p1). */
static void grid_cell(int t, int gm, int gn, int64_t M, int np, int64_t *r0, int64_t *r1, int *p0, int *p1)
{
    const int64_t mb = (M + 11) / 12;
    const int i = t % gm, j = t / gm;
    const int64_t b0 = mb * i / gm, b1 = mb * (i + 1) / gm;
    *r0 = b0 * 12;
    *r1 = b1 * 12 < M ? b1 * 12 : M;
    *p0 = (int)((int64_t)np * j / gn);
    *p1 = (int)((int64_t)np * (j + 1) / gn);
}

void samc__fast_gemm_res(int nt, int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias,
                   const float *R, int64_t ldr, float *C, int64_t ldc, int flags)
{
    if (M <= 0)
        return;
    int gm, gn;
    samc__fast_gemm_grid(nt, M, W->N, W->K, &gm, &gn);
    const int np = (W->N + FAST_NR - 1) / FAST_NR;
    if (gm * gn <= 1) {
        gemm_part(M, A, lda, W, bias, R, ldr, C, ldc, flags, 0, np);
        return;
    }
#pragma omp parallel num_threads(gm * gn)
    {
        int64_t r0, r1;
        int p0, p1;
        grid_cell(omp_get_thread_num(), gm, gn, M, np, &r0, &r1, &p0, &p1);
        if (r1 > r0 && p1 > p0)
            gemm_part(r1 - r0, A + r0 * lda, lda, W, bias, R ? R + r0 * ldr : NULL, ldr, C + r0 * ldc, ldc, flags,
                      p0, p1);
    }
}

void samc__fast_gemm(int nt, int64_t M, const float *A, int64_t lda, const fast_wpack *W, const float *bias, float *C,
               int64_t ldc, int flags)
{
    samc__fast_gemm_res(nt, M, A, lda, W, bias, flags & FAST_GEMM_ACC ? C : NULL, ldc, C, ldc, flags);
}

/* y = x W^T (+ b) (+ y): up to 16 rows (the decoder's tokens) are
 * matrix-vector products (packing W would cost more than the product). */
static void linear_rows_dot(const float *x, int64_t ldx, int64_t rows, const samc_linear *l, float *y, int64_t ldy,
                            int accumulate)
{
    const fast_isa *isa = samc__fast_isa();
    for (int64_t r = 0; r < rows; r++)
        for (int o = 0; o < l->out; o++) {
            const float acc = isa->dot(x + r * ldx, l->w + (int64_t)o * l->in, l->in);
            const float v = acc + (l->b ? l->b[o] : 0.0f);
            y[r * ldy + o] = accumulate ? y[r * ldy + o] + v : v;
        }
}

void samc__fast_linear_1t(const float *x, int64_t ldx, int64_t rows, const samc_linear *l, const float *Wp, float *y,
                    int64_t ldy, int accumulate)
{
    if (rows <= 0)
        return;
    if (!Wp && rows <= 16) {
        linear_rows_dot(x, ldx, rows, l, y, ldy, accumulate);
        return;
    }
    if (!Wp) {
        Wp = samc__fast_pack_buffer(0, samc__fast_pack_size(l->out, l->in));
        if (!Wp) { /* out of memory: the unpacked product */
            linear_rows_dot(x, ldx, rows, l, y, ldy, accumulate);
            return;
        }
        samc__fast_pack_linear(l, (float *)Wp);
    }
    const fast_wpack p = {.N = l->out, .K = l->in, .Kp = l->in, .dtype = FAST_F32, .data = (void *)Wp};
    samc__fast_gemm_1t(rows, x, ldx, &p, l->b, y, ldy, accumulate ? FAST_GEMM_ACC : 0);
}

void samc__fast_linear(int nt, const float *x, int64_t ldx, int64_t rows, const samc_linear *l, float *y,
                 int64_t ldy, int accumulate)
{
    int gm, gn;
    samc__fast_gemm_grid(nt, rows, l->out, l->in, &gm, &gn);
    if (gm * gn <= 1) {
        samc__fast_linear_1t(x, ldx, rows, l, NULL, y, ldy, accumulate);
        return;
    }
    /* one packed copy of W for all threads (the caller's buffer 1) */
    float *Wp = samc__fast_pack_buffer(1, samc__fast_pack_size(l->out, l->in));
    if (!Wp) {
#pragma omp parallel num_threads(gm * gn)
        {
            const int t = omp_get_thread_num(), n = omp_get_num_threads();
            const int64_t r0 = rows * t / n, r1 = rows * (t + 1) / n;
            for (int64_t r = r0; r < r1; r++)
                linear_rows_dot(x + r * ldx, ldx, 1, l, y + r * ldy, ldy, accumulate);
        }
        return;
    }
    const fast_wpack p = {.N = l->out, .K = l->in, .Kp = l->in, .dtype = FAST_F32, .data = Wp};
    const int np = (l->out + FAST_NR - 1) / FAST_NR;
#pragma omp parallel num_threads(gm * gn)
    {
        /* the per-call packing of W, shared by all threads (a weight packed
         * once at load, fast_wpack, skips this) */
#pragma omp for schedule(static)
        for (int q = 0; q < np; q++)
            samc__fast_pack_b_part(l->out, l->in, l->w, l->in, 1, Wp, q, q + 1);
        int64_t r0, r1;
        int p0, p1;
        grid_cell(omp_get_thread_num(), gm, gn, rows, np, &r0, &r1, &p0, &p1);
        if (r1 > r0 && p1 > p0)
            samc__fast_gemm_part(r1 - r0, x + r0 * ldx, ldx, &p, l->b, y + r0 * ldy, ldy, accumulate ? FAST_GEMM_ACC : 0,
                           p0, p1);
    }
}
