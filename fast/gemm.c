/* gemm.c - linear layers as OpenBLAS sgemm on row panels, and the thread
 * policy of fast/ (fast.h explains why OpenBLAS runs single-threaded). */
#include <cblas.h>
#include <omp.h>
#include <string.h>

#include "fast.h"
#include "simd.h"

/* OpenBLAS's threading: 0 sequential, 1 pthreads, 2 OpenMP. */
extern int openblas_get_parallel(void);

static void blas_single_threaded_once(void)
{
    static int done;
    int d;
#pragma omp atomic read
    d = done;
    if (d)
        return;
#pragma omp critical(samc_fast_blas_init)
    {
        if (!done) {
            /* The pthreads build would otherwise start its own pool next to
             * ours. The OpenMP build runs one thread inside a parallel region
             * by itself, and its openblas_set_num_threads would also change
             * omp_set_num_threads for the whole process: leave it alone. */
            if (openblas_get_parallel() == 1)
                openblas_set_num_threads(1);
#pragma omp atomic write
            done = 1;
        }
    }
}

int fast_threads(const samc_ctx *ctx)
{
    blas_single_threaded_once();
    const int n = ctx && ctx->num_threads > 0 ? ctx->num_threads : omp_get_max_threads();
    return n > 0 ? n : 1;
}

void fast_pack_linear(const samc_linear *l, float *Wp) { fast_pack_b(l->out, l->in, l->w, l->in, 1, Wp); }

/* y = x W^T (+ b) (+ y): up to 16 rows (the decoder's tokens) are
 * matrix-vector products (packing W would cost more than the product). */
static void linear_rows_dot(const float *x, int64_t ldx, int64_t rows, const samc_linear *l, float *y, int64_t ldy,
                            int accumulate)
{
    for (int64_t r = 0; r < rows; r++)
        for (int o = 0; o < l->out; o++) {
            const float *w = l->w + (int64_t)o * l->in, *xr = x + r * ldx;
            vf va = vset1(0.0f);
            int i = 0;
            for (; i + VL <= l->in; i += VL)
                va = vfma(vload(xr + i), vload(w + i), va);
            float acc = vhsum(va);
            for (; i < l->in; i++)
                acc += xr[i] * w[i];
            const float v = acc + (l->b ? l->b[o] : 0.0f);
            y[r * ldy + o] = accumulate ? y[r * ldy + o] + v : v;
        }
}

void fast_linear_1t(const float *x, int64_t ldx, int64_t rows, const samc_linear *l, const float *Wp, float *y,
                    int64_t ldy, int accumulate)
{
    if (rows <= 0)
        return;
    if (!Wp && rows <= 16) {
        linear_rows_dot(x, ldx, rows, l, y, ldy, accumulate);
        return;
    }
    if (l->b) {
        if (accumulate)
            fast_add_bias_rows(y, ldy, rows, l->b, l->out);
        else
            for (int64_t r = 0; r < rows; r++)
                memcpy(y + r * ldy, l->b, (size_t)l->out * sizeof *y);
    }
    if (Wp)
        fast_sgemm_packed((int)rows, l->out, l->in, x, ldx, 1, Wp, y, ldy, l->b || accumulate);
    else
        fast_sgemm((int)rows, l->out, l->in, x, ldx, 1, l->w, l->in, 1, y, ldy, l->b || accumulate);
}

void fast_linear(int nt, const float *x, int64_t ldx, int64_t rows, const samc_linear *l, float *y,
                 int64_t ldy, int accumulate)
{
    /* Below ~64 rows per thread the panel split costs more than it gains. */
    int np = nt;
    while (np > 1 && rows / np < 64)
        np--;
    if (np <= 1) {
        fast_linear_1t(x, ldx, rows, l, NULL, y, ldy, accumulate);
        return;
    }
    /* one packed copy of W for all threads (the caller's buffer 1) */
    float *Wp = fast_pack_buffer(1, fast_pack_size(l->out, l->in));
    if (Wp)
        fast_pack_linear(l, Wp);
#pragma omp parallel num_threads(np)
    {
        const int t = omp_get_thread_num(), n = omp_get_num_threads();
        /* panels of whole 16-row groups */
        const int64_t groups = (rows + 15) / 16;
        const int64_t g0 = groups * t / n, g1 = groups * (t + 1) / n;
        const int64_t r0 = g0 * 16, r1 = g1 * 16 < rows ? g1 * 16 : rows;
        if (r1 > r0)
            fast_linear_1t(x + r0 * ldx, ldx, r1 - r0, l, Wp, y + r0 * ldy, ldy, accumulate);
    }
}
