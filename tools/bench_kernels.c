/* SPDX-License-Identifier: Apache-2.0 */
/* bench_kernels.c - fast/'s compute kernels on the shape classes of the
 * Hiera image encoders at 1024 x 1024: GFLOP/s and % of the FMA peak
 * measured right before each shape with the same threads (docs/fast.md,
 * "Kernels"). Classes: every linear of every stage (qkv, attn.proj,
 * mlp.fc1, mlp.fc2, and the q-pool blocks' qkv and proj at the stage
 * entries) through the pack-once GEMM (fp32 and bf16), the attention of
 * windowed and global blocks through the fused kernel, and the element-wise
 * kernels (LayerNorm, GELU, softmax) in GB/s next to memcpy's.
 *
 *   cmake --build build --target bench_kernels
 *   OMP_WAIT_POLICY=PASSIVE [SAMC_ISA=v2|v3|v4] build/bench_kernels [--threads N] [--model t|s|b+|l|all]
 *        [--reps N] [--no-bf16] [--no-attention] [--no-gemm] [--elementwise]
 *
 * The kernels run at the level the CPU runs (fast/isa.h; SAMC_ISA lowers
 * it), and the FMA peak is that level's: each level's % of its own peak.
 *
 * One thread: time is the thread's CPU time (steady on a shared machine);
 * more: wall time. Each figure is the median of --reps runs (default 5)
 * after one warm-up. The FMA peak is a register-only loop of 12 independent
 * FMA chains per thread of the level's width (as `samc bench --sgemm`), the
 * bf16 peak the same with vdpbf16ps (counted as 2 FLOP per bf16 pair
 * product) where the bf16 kernel is AVX512_BF16's or AMX's. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fast/fast.h"
#include "fast/isa.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static int g_threads = 1, g_reps = 5;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(g_threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- peaks ------------------------------------------------------------------ */

#if defined(__x86_64__) && defined(__GNUC__) && (__GNUC__ >= 11 || defined(__clang__))
/* vdpbf16ps chains, compiled for AVX512_BF16 whatever the build's flags */
__attribute__((target("avx512f,avx512bf16"))) static float bf16_loop(long n)
{
    float sink = 0;
#pragma omp parallel num_threads(g_threads) reduction(+ : sink)
    {
        __m512 a[12];
        for (int i = 0; i < 12; i++)
            a[i] = _mm512_set1_ps(1.0f + 0.1f * (float)(i + omp_get_thread_num()));
        const __m512i hb = _mm512_set1_epi32(0x3f803f80);
        for (long it = 0; it < n; it++) {
#pragma GCC unroll 12
            for (int i = 0; i < 12; i++)
                a[i] = _mm512_dpbf16_ps(a[i], (__m512bh)hb, (__m512bh)hb);
        }
        float tmp[16];
        for (int i = 0; i < 12; i++) {
            _mm512_storeu_ps(tmp, a[i]);
            sink += tmp[0];
        }
    }
    return sink;
}
#define HAVE_BF16_LOOP 1
#endif

/* GFLOP/s of the level's FMA loop (bf16 0) or of vdpbf16ps (bf16 1; 0 when
 * the bf16 kernel does not use it) on g_threads threads. */
static double fma_peak(int bf16)
{
    const long n = 4000000;
    const fast_isa *isa = samc__fast_isa();
    const int k = samc__fast_bf16_kernel();
    if (bf16 && k != FAST_KERN_AVX512BF16 && k != FAST_KERN_AMX)
        return 0;
    const double t0 = now_s();
    float sink = 0;
#ifdef HAVE_BF16_LOOP
    if (bf16)
        sink = bf16_loop(n);
    else
#endif
        sink = isa->fma_loop(g_threads, n);
    const double t = now_s() - t0;
    return sink != 0 ? (bf16 ? 4.0 * 16 : 2.0 * isa->lanes) * 12 * (double)n * g_threads / t * 1e-9 : 0;
}

/* ---- shapes ------------------------------------------------------------------ */

typedef struct model {
    const char *name;
    int embed, heads, stages[4], window[4], global[3];
} model;

static const model models[] = {
    {"t", 96, 1, {1, 2, 7, 2}, {8, 4, 14, 7}, {5, 7, 9}},
    {"s", 96, 1, {1, 2, 11, 2}, {8, 4, 14, 7}, {7, 10, 13}},
    {"b+", 112, 2, {2, 3, 16, 3}, {8, 4, 14, 7}, {12, 16, 20}},
    {"l", 144, 2, {2, 6, 36, 4}, {8, 4, 16, 8}, {23, 33, 43}},
};

static void fill(float *x, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) & 0xFFFF) / 32768.0f - 1.0f;
    }
}

typedef struct tally {
    double flops, secs; /* weighted by how often the shape occurs in the encoder */
} tally;

/* y (M x N) = x (M x K) W^T + b, pack-once weight, fp32 and bf16. */
static void bench_gemm(const char *what, int M, int N, int K, int count, tally *t32, tally *t16, int bf16)
{
    float *A = aligned_alloc(64, sizeof(float) * (size_t)M * K), *W = malloc(sizeof(float) * (size_t)N * K);
    float *C = aligned_alloc(64, sizeof(float) * (size_t)M * N), *b = malloc(sizeof(float) * (size_t)N);
    fill(A, (size_t)M * K, 1), fill(W, (size_t)N * K, 2), fill(b, (size_t)N, 3);
    memset(C, 0, sizeof(float) * (size_t)M * N);
    const double fl = 2.0 * M * (double)N * K;
    for (int dt = 0; dt < (bf16 ? 2 : 1); dt++) {
        fast_wpack w;
        if (samc__fast_wpack_init(&w, W, K, N, K, dt ? FAST_BF16 : FAST_F32)) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        const double peak = fma_peak(dt);
        double ts[64];
        samc__fast_gemm(g_threads, M, A, K, &w, b, C, N, 0); /* warm-up */
        for (int r = 0; r < g_reps; r++) {
            const double t0 = now_s();
            samc__fast_gemm(g_threads, M, A, K, &w, b, C, N, 0);
            ts[r] = now_s() - t0;
        }
        const double t = median(ts, g_reps), g = fl / t * 1e-9;
        int gm, gn;
        samc__fast_gemm_grid(g_threads, M, N, K, &gm, &gn);
        printf("  gemm %-4s %-22s %6d x %5d x %5d  grid %2dx%-2d %8.2f ms %7.1f GFLOP/s %5.1f%% of %s peak %.0f\n",
               dt ? "bf16" : "fp32", what, M, N, K, gm, gn, 1e3 * t, g, peak > 0 ? 100.0 * g / peak : 0, dt ? "bf16" : "FMA", peak);
        printf("RESULT kind=gemm dtype=%s class=\"%s\" M=%d N=%d K=%d threads=%d ms=%.3f gflops=%.1f peak=%.1f "
               "pct=%.1f\n",
               dt ? "bf16" : "fp32", what, M, N, K, g_threads, 1e3 * t, g, peak, peak > 0 ? 100.0 * g / peak : 0);
        tally *ty = dt ? t16 : t32;
        ty->flops += fl * count, ty->secs += t * count;
        samc__fast_wpack_free(&w);
    }
    free(A), free(W), free(C), free(b);
}

/* Attention of a block: `windows` windows of L tokens (or one global map),
 * heads of width d, the way fast/sam2/hiera.c runs them (global: the threaded
 * kernel; windows: one (window, head) task per thread at a time). */
static void bench_attention(const char *what, int windows, int L, int d, int heads, int count, tally *ta, int bf16)
{
    const int C = heads * d;
    const int64_t tokens = (int64_t)windows * L;
    float *qkv = aligned_alloc(64, sizeof(float) * (size_t)tokens * 3 * C);
    float *o = aligned_alloc(64, sizeof(float) * (size_t)tokens * C);
    fill(qkv, (size_t)tokens * 3 * C, 4);
    float *kv = windows == 1 ? malloc(sizeof(float) * (size_t)heads *
                                      (bf16 ? samc__fast_flash_kv_size_bf16(L, d) : samc__fast_flash_kv_size(L, d)))
                             : NULL;
    const float scale = 1.0f / sqrtf((float)d);
    const double fl = 4.0 * (double)L * L * d * heads * windows;
    const double peak = fma_peak(bf16);
    double ts[64];
    for (int r = -1; r < g_reps; r++) {
        const double t0 = now_s();
        if (windows == 1) {
            const fast_attn a = {.Lq = L, .Lk = L, .d = d, .scale = scale, .q = qkv, .k = qkv + C, .v = qkv + 2 * C,
                                 .ldq = 3 * C, .ldk = 3 * C, .ldv = 3 * C, .o = o, .ldo = C};
            if (bf16)
                samc__fast_flash_attention_bf16(g_threads, &a, heads, 0, kv);
            else
                samc__fast_flash_attention(g_threads, &a, heads, 0, kv);
        } else {
#pragma omp parallel for num_threads(g_threads) schedule(dynamic, 4)
            for (int w = 0; w < windows * heads; w++) {
                const int win = w / heads, h = w % heads;
                const float *base = qkv + (int64_t)win * L * 3 * C + (int64_t)h * d;
                const fast_attn a = {.Lq = L, .Lk = L, .d = d, .scale = scale, .q = base, .k = base + C,
                                     .v = base + 2 * C, .ldq = 3 * C, .ldk = 3 * C, .ldv = 3 * C,
                                     .o = o + (int64_t)win * L * C + (int64_t)h * d, .ldo = C};
                if (bf16)
                    samc__fast_flash_attention_bf16_1t(&a, 1, 0);
                else
                    samc__fast_flash_attention_1t(&a, 1, 0);
            }
        }
        if (r >= 0)
            ts[r] = now_s() - t0;
    }
    const double t = median(ts, g_reps), g = fl / t * 1e-9;
    printf("  attn %s %-22s %5d x %-4d x %3d d x %2d heads %8.2f ms %7.1f GFLOP/s %5.1f%% of %s peak %.0f\n",
           bf16 ? "bf16" : "fp32", what, windows, L, d, heads, 1e3 * t, g, peak > 0 ? 100.0 * g / peak : 0,
           bf16 ? "bf16" : "FMA", peak);
    printf("RESULT kind=attention dtype=%s class=\"%s\" windows=%d L=%d d=%d heads=%d threads=%d ms=%.3f "
           "gflops=%.1f peak=%.1f pct=%.1f\n",
           bf16 ? "bf16" : "fp32", what, windows, L, d, heads, g_threads, 1e3 * t, g, peak,
           peak > 0 ? 100.0 * g / peak : 0);
    ta->flops += fl * count, ta->secs += t * count;
    free(qkv), free(o), free(kv);
}

static void bench_model(const model *m, int do_gemm, int do_attn, int bf16)
{
    printf("model %s at 1024 (embed %d, heads %d, stages %d-%d-%d-%d), %d thread(s)\n", m->name, m->embed, m->heads,
           m->stages[0], m->stages[1], m->stages[2], m->stages[3], g_threads);
    tally t32 = {0}, t16 = {0}, ta = {0}, ta16 = {0};
    int blk = 0;
    for (int s = 0; s < 4; s++) {
        const int side = 256 >> s, M = side * side, D = m->embed << s, heads = m->heads << s, d = D / heads;
        char what[64];
        const int nblk = m->stages[s];
        if (s > 0 && do_gemm) { /* q-pool block at the stage entry: qkv and proj on the unpooled map */
            const int Mp = 4 * M, Dp = D / 2;
            snprintf(what, sizeof what, "s%d entry qkv", s + 1);
            bench_gemm(what, Mp, 3 * D, Dp, 1, &t32, &t16, bf16);
            snprintf(what, sizeof what, "s%d entry proj", s + 1);
            bench_gemm(what, Mp, D, Dp, 1, &t32, &t16, bf16);
        }
        if (do_gemm) {
            const int nq = nblk - (s > 0); /* blocks with qkv on their own map */
            if (nq > 0) {
                snprintf(what, sizeof what, "s%d qkv", s + 1);
                bench_gemm(what, M, 3 * D, D, nq, &t32, &t16, bf16);
            }
            snprintf(what, sizeof what, "s%d attn.proj", s + 1);
            bench_gemm(what, M, D, D, nblk, &t32, &t16, bf16);
            snprintf(what, sizeof what, "s%d mlp.fc1", s + 1);
            bench_gemm(what, M, 4 * D, D, nblk, &t32, &t16, bf16);
            snprintf(what, sizeof what, "s%d mlp.fc2", s + 1);
            bench_gemm(what, M, D, 4 * D, nblk, &t32, &t16, bf16);
        }
        if (do_attn) {
            int nglob = 0;
            for (int b = blk; b < blk + nblk; b++)
                for (int g = 0; g < 3; g++)
                    nglob += m->global[g] == b;
            const int win = m->window[s], nwin = nblk - nglob;
            if (nwin > 0) {
                /* windows padded to whole windows (the q-pool entry block
                 * attends on pooled queries: counted as a plain window) */
                const int nw = (side + win - 1) / win;
                snprintf(what, sizeof what, "s%d window %dx%d", s + 1, win, win);
                for (int dt = 0; dt < (bf16 ? 2 : 1); dt++)
                    bench_attention(what, nw * nw, win * win, d, heads, nwin, dt ? &ta16 : &ta, dt);
            }
            if (nglob > 0) {
                snprintf(what, sizeof what, "s%d global", s + 1);
                for (int dt = 0; dt < (bf16 ? 2 : 1); dt++)
                    bench_attention(what, 1, M, d, heads, nglob, dt ? &ta16 : &ta, dt);
            }
        }
        blk += nblk;
    }
    if (t32.secs > 0)
        printf("  => %s linears fp32: %.1f GFLOP/s over the encoder's mix\n", m->name, t32.flops / t32.secs * 1e-9);
    if (t16.secs > 0)
        printf("  => %s linears bf16: %.1f GFLOP/s over the encoder's mix\n", m->name, t16.flops / t16.secs * 1e-9);
    if (ta.secs > 0)
        printf("  => %s attention fp32: %.1f GFLOP/s over the encoder's mix\n", m->name, ta.flops / ta.secs * 1e-9);
    if (ta16.secs > 0)
        printf("  => %s attention bf16: %.1f GFLOP/s over the encoder's mix\n", m->name, ta16.flops / ta16.secs * 1e-9);
    printf("RESULT kind=summary model=%s threads=%d linear_fp32=%.1f linear_bf16=%.1f attention_fp32=%.1f "
           "attention_bf16=%.1f\n",
           m->name, g_threads, t32.secs > 0 ? t32.flops / t32.secs * 1e-9 : 0,
           t16.secs > 0 ? t16.flops / t16.secs * 1e-9 : 0, ta.secs > 0 ? ta.flops / ta.secs * 1e-9 : 0,
           ta16.secs > 0 ? ta16.flops / ta16.secs * 1e-9 : 0);
}

/* Element-wise kernels in GB/s (bytes read + written) next to memcpy. */
static void bench_elementwise(void)
{
    const int rows = 65536, C = 96; /* stage 1 of t: 25 MB per map */
    const size_t n = (size_t)rows * C;
    float *x = aligned_alloc(64, n * sizeof(float)), *y = aligned_alloc(64, n * sizeof(float));
    float *w = malloc(sizeof(float) * C), *b = malloc(sizeof(float) * C);
    fill(x, n, 5), fill(w, C, 6), fill(b, C, 7);
    memset(y, 0, n * sizeof(float));
    const samc_norm nm = {w, b, C, 1e-6f};
    const char *names[] = {"memcpy", "layer_norm (rows of 96)", "gelu (in place)", "softmax (rows of 4096)"};
    for (int k = 0; k < 4; k++) {
        double ts[64];
        for (int r = -1; r < g_reps; r++) {
            const double t0 = now_s();
            if (k == 0) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
                for (int c = 0; c < 64; c++)
                    memcpy(y + n / 64 * c, x + n / 64 * c, n / 64 * sizeof(float));
            } else if (k == 1) {
                samc__fast_layer_norm(g_threads, x, rows, &nm, y);
            } else if (k == 2) {
                samc__fast_gelu_mt(g_threads, y, (int64_t)n);
            } else {
#pragma omp parallel for num_threads(g_threads) schedule(static)
                for (int r2 = 0; r2 < (int)(n / 4096); r2++)
                    samc__fast_softmax_scaled(y + (size_t)r2 * 4096, 4096, 0.1f);
            }
            if (r >= 0)
                ts[r] = now_s() - t0;
        }
        const double t = median(ts, g_reps), gb = 2.0 * n * sizeof(float) / t * 1e-9;
        printf("  elementwise %-28s %8.2f ms %7.1f GB/s (read + write)\n", names[k], 1e3 * t, gb);
        printf("RESULT kind=elementwise name=\"%s\" threads=%d ms=%.3f gbps=%.1f\n", names[k], g_threads, 1e3 * t, gb);
    }
    free(x), free(y), free(w), free(b);
}

int main(int argc, char **argv)
{
    const char *which = "all";
    int do_gemm = 1, do_attn = 1, bf16 = 1, elem = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            g_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--model") && i + 1 < argc)
            which = argv[++i];
        else if (!strcmp(argv[i], "--no-bf16"))
            bf16 = 0;
        else if (!strcmp(argv[i], "--no-attention"))
            do_attn = 0;
        else if (!strcmp(argv[i], "--no-gemm"))
            do_gemm = 0;
        else if (!strcmp(argv[i], "--elementwise"))
            elem = 1;
        else {
            fprintf(stderr, "usage: %s [--threads N] [--model t|s|b+|l|all] [--reps N] [--no-bf16] "
                            "[--no-attention] [--no-gemm] [--elementwise]\n", argv[0]);
            return 2;
        }
    }
    g_threads = g_threads < 1 ? 1 : g_threads;
    g_reps = g_reps < 1 ? 1 : g_reps > 64 ? 64 : g_reps;
    printf("bench_kernels: %d thread(s), median of %d, kernels %s, bf16 kernel %s\n", g_threads, g_reps,
           samc__fast_isa()->name,
           samc__fast_bf16_kernel_name(samc__fast_bf16_kernel()));
    printf("FMA peak %.1f GFLOP/s, bf16 peak %.1f GFLOP/s (%d thread(s), now)\n", fma_peak(0), fma_peak(1),
           g_threads);
    if (elem)
        bench_elementwise();
    for (size_t i = 0; i < sizeof models / sizeof *models; i++)
        if (!strcmp(which, "all") || !strcmp(which, models[i].name))
            if (do_gemm || do_attn)
                bench_model(&models[i], do_gemm, do_attn, bf16);
    return 0;
}
