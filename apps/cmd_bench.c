/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_bench.c - `samc bench`: time the image encoder (set_image), prompt ->
 * masks (predict) and both end to end, for ref and/or fast, with random or
 * real weights; and `samc bench --sgemm`, the machine's sgemm throughput.
 *
 * Prints the thread count, the instruction-set level of the kernels (fast/isa.h),
 * median and min/max of N runs after warm-up, effective GFLOP/s over the
 * encoder's analytic FLOP count (docs/benchmarks.md) and the fraction of the
 * FMA peak, and peak RSS (getrusage) next to the RSS of the loaded weights.
 * With --prompts N each run's prompt -> masks time is the best of N predicts
 * on the run's embedding (end to end = encoder + that). --layers prints the
 * time of every traced layer of the last run. */
#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/base/error.h"
#include "core/models/family.h"
#include "core/models/sam2/sam2_model.h"
#include "fast/fast.h"
#include "fast/isa.h"
#include "samc.h"

#ifdef SAMC_WITH_OPENBLAS /* `--sgemm` compares with OpenBLAS's sgemm */
#include <cblas.h>
extern char *openblas_get_corename(void);
extern char *openblas_get_config(void);
#endif

typedef struct bench_args {
    const char *config, *model, *impl;
    int runs, warmup, threads, size, img_w, img_h, prompts;
    double peak;  /* GFLOP/s; <= 0: 64 FLOP/cycle/core x 4.0 GHz per thread */
    bool sgemm, layers;
} bench_args;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU time of the whole process (all threads): on a shared machine this is
 * what the work cost, whatever the wall clock says. */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double peak_rss_mib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_maxrss / 1024.0;
}

static double cur_rss_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return (double)rss * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stats {
    double med, min, max;
} stats;

static stats summarize(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    stats s = {n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]), t[0], t[n - 1]};
    return s;
}

/* ---- FLOPs ------------------------------------------------------------------ */

/* Multiply-adds x 2 of every linear, conv and attention matmul of the image
 * encoder (trunk, neck, conv_s0/s1) at the model's image size. */
static double encoder_flops(const samc_sam2_model *model, double *attn_out)
{
    const samc_sam2_config *c = &model->cfg;
    const samc_sam2_image_encoder *m = &model->image_encoder;
    const double G = m->grid;
    double f = 2.0 * G * G * c->trunk.embed_dim * 3 * m->patch_embed.kh * m->patch_embed.kw, attn = 0;
    double H = G;
    for (int i = 0; i < m->depth; i++) {
        const samc_hiera_block *b = &m->blocks[i];
        const double s = b->q_stride ? b->q_stride : 1, rows = H * H, Ho = floor(H / s), orows = Ho * Ho;
        const double D = b->dim_out, hd = D / b->heads;
        f += 2.0 * rows * b->dim * 3 * D;                 /* qkv */
        if (b->has_proj)
            f += 2.0 * rows * b->dim * D;                 /* shortcut proj */
        const double ws = b->window ? b->window : H, nw = ceil(H / ws) * ceil(H / ws);
        const double L = ws * ws, Lq = floor(ws / s) * floor(ws / s);
        const double a = nw * b->heads * 2.0 * 2.0 * Lq * L * hd; /* q k^T and p v */
        attn += a;
        f += a;
        f += 2.0 * orows * D * D;                         /* attn.proj */
        f += 2.0 * 2.0 * orows * D * b->mlp_fc1.out;      /* mlp */
        H = Ho;
    }
    /* neck: 1x1 lateral convs on each level; high-res convs of the decoder */
    double h = G;
    for (int i = 0; i < m->neck.n_levels; i++, h /= 2) {
        const samc_conv2d *cv = &m->neck.convs[m->neck.n_levels - 1 - i];
        f += 2.0 * h * h * cv->cin * cv->cout * cv->kh * cv->kw;
    }
    if (c->use_high_res_features_in_sam) {
        const samc_conv2d *s0 = &model->tracker.mask_decoder.conv_s0, *s1 = &model->tracker.mask_decoder.conv_s1;
        f += 2.0 * G * G * s0->cin * s0->cout + 2.0 * (G / 2) * (G / 2) * s1->cin * s1->cout;
    }
    *attn_out = attn;
    return f;
}

/* ---- per-layer times: the trace fires as each layer completes ----------------- */

#define MAX_EVENTS 256
typedef struct layer_clock {
    double last, last_cpu;
    int n;
    char name[MAX_EVENTS][64];
    double dt[MAX_EVENTS], dcpu[MAX_EVENTS];
} layer_clock;

static void on_layer(void *user, const char *module, const samc_scope *sc, int nslots, const char *const *slots,
                     const samc_tensor *const *t)
{
    (void)sc, (void)nslots, (void)slots, (void)t;
    layer_clock *c = user;
    const double now = now_s(), cpu = cpu_s();
    if (c->n < MAX_EVENTS) {
        snprintf(c->name[c->n], sizeof c->name[0], "%s", module);
        c->dcpu[c->n] = cpu - c->last_cpu;
        c->dt[c->n++] = now - c->last;
    }
    c->last = now, c->last_cpu = cpu;
}

/* Composite points (trunk, image_encoder, transformer, ...) complete right
 * after their last child: their own time is only the glue in between. */
static void print_layers(const layer_clock *c)
{
    printf("  per layer (last run; wall and CPU time since the previous layer completed):\n");
    for (int i = 0; i < c->n; i++)
        printf("    %-44s %8.2f ms  cpu %8.2f ms\n", c->name[i], 1e3 * c->dt[i], 1e3 * c->dcpu[i]);
}

/* ---- the runs --------------------------------------------------------------- */

static void synth_image(uint8_t *img, int h, int w)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = img + ((int64_t)y * w + x) * 3;
            p[0] = (uint8_t)((x * 255) / w);
            p[1] = (uint8_t)((y * 255) / h);
            p[2] = (uint8_t)(((x / 64 + y / 64) % 2) * 160 + ((x * y) % 61));
        }
}

static void print_stats(const char *what, stats s, double flops)
{
    printf("  %-16s median %9.2f ms   min %9.2f   max %9.2f", what, 1e3 * s.med, 1e3 * s.min, 1e3 * s.max);
    if (flops > 0)
        printf("   %7.1f GFLOP/s", flops / s.med * 1e-9);
    printf("\n");
}

static int bench_impl(samc_exec *x, const char *impl, const bench_args *a, const uint8_t *img, double weights_rss)
{
    const samc_sam2_model *m = x->model;
    samc_error err = {0};
    if (samc_exec_set_impl(x, impl, &err)) {
        fprintf(stderr, "samc bench: %s\n", err.msg);
        return 2;
    }
    const int n = a->runs, total = a->warmup + a->runs;
    double *te = calloc((size_t)total, sizeof *te), *tp = calloc((size_t)total, sizeof *tp);
    double *tt = calloc((size_t)total, sizeof *tt), *ce = calloc((size_t)total, sizeof *ce);
    double *cp = calloc((size_t)total, sizeof *cp); /* prompt -> masks CPU time, least of the predicts */
    const float pt[2] = {(float)a->img_w * 0.45f, (float)a->img_h * 0.55f};
    const int32_t lab[1] = {1};
    samc_sam_prompt p = {.n_points = 1, .points = pt, .labels = lab, .multimask = true};
    int rc = 0;
    layer_clock *lc = a->layers ? calloc(1, sizeof *lc) : NULL;
    if (lc)
        samc_exec_set_trace(x, on_layer, lc);
    for (int r = 0; r < total && !rc; r++) {
        samc_frame_features f;
        samc_sam_prediction out;
        if (lc)
            lc->n = 0, lc->last = now_s(), lc->last_cpu = cpu_s();
        const double t0 = now_s(), c0 = cpu_s();
        if (samc_sam2_encode_image(x, m, img, a->img_h, a->img_w, &f, &err)) {
            rc = 1;
            break;
        }
        const double t1 = now_s(), c1 = cpu_s();
        double best = 1e30, bestc = 1e30; /* prompt -> masks: the best of --prompts predicts on this embedding */
        for (int q = 0; q < a->prompts && !rc; q++) {
            const double q0 = now_s(), qc = cpu_s();
            if (samc_sam_predict(x, &m->tracker, &f, &p, NULL, &out, &err))
                rc = 1;
            else
                samc_sam_prediction_release(&out);
            best = now_s() - q0 < best ? now_s() - q0 : best;
            bestc = cpu_s() - qc < bestc ? cpu_s() - qc : bestc;
        }
        if (rc) {
            samc_frame_features_release(&f);
            break;
        }
        const double t2 = t1 + best;
        samc_frame_features_release(&f);
        te[r] = t1 - t0, tp[r] = t2 - t1, tt[r] = t2 - t0, ce[r] = c1 - c0, cp[r] = bestc;
        if (r < a->warmup)
            fprintf(stderr, "  (warm-up %d: encoder %.1f ms, prompt %.1f ms)\n", r + 1, 1e3 * te[r], 1e3 * tp[r]);
    }
    if (rc) {
        fprintf(stderr, "samc bench: %s\n", err.msg);
    } else {
        double attn;
        const double fl = encoder_flops(m, &attn);
        const stats se = summarize(te + a->warmup, n), sp = summarize(tp + a->warmup, n);
        const stats st = summarize(tt + a->warmup, n), sc = summarize(ce + a->warmup, n);
        const stats spc = summarize(cp + a->warmup, n);
        const double peak = a->peak > 0 ? a->peak : 256.0 * a->threads;
        printf("%s: %d runs after %d warm-up\n", impl, n, a->warmup);
        print_stats("image encoder", se, fl);
        print_stats("prompt -> masks", sp, 0);
        print_stats("end to end", st, 0);
        printf("  encoder CPU time (all threads) median %.2f ms: %.1f GFLOP per CPU-second\n", 1e3 * sc.med,
               encoder_flops(m, &attn) / sc.med * 1e-9);
        printf("  prompt -> masks CPU time (all threads) median %.2f ms\n", 1e3 * spc.med);
        if (lc)
            print_layers(lc);
        printf("  encoder FLOPs %.1f G (attention %.1f G): %.1f GFLOP/s = %.0f%% of the %.0f GFLOP/s FMA peak\n",
               fl * 1e-9, attn * 1e-9, fl / se.med * 1e-9, 100.0 * fl / se.med * 1e-9 / peak, peak);
        const double rss = peak_rss_mib();
        printf("  peak RSS %.0f MiB (weights %.0f MiB, beyond the weights %.0f MiB)\n", rss, weights_rss,
               rss - weights_rss);
        printf("RESULT impl=%s config=%s threads=%d enc_ms=%.2f enc_min=%.2f enc_max=%.2f prompt_ms=%.2f "
               "prompt_min=%.2f prompt_max=%.2f e2e_ms=%.2f gflops=%.1f peak_pct=%.1f rss_mib=%.0f "
               "weights_mib=%.0f enc_cpu_ms=%.2f prompt_cpu_ms=%.2f\n",
               impl, m->cfg.name, a->threads, 1e3 * se.med, 1e3 * se.min, 1e3 * se.max, 1e3 * sp.med, 1e3 * sp.min,
               1e3 * sp.max, 1e3 * st.med, fl / se.med * 1e-9, 100.0 * fl / se.med * 1e-9 / peak, rss, weights_rss,
               1e3 * sc.med, 1e3 * spc.med);
    }
    if (lc)
        samc_exec_set_trace(x, NULL, NULL);
    free(lc);
    free(te), free(tp), free(tt), free(ce), free(cp);
    return rc;
}

/* The FMA peak of the level the kernels run at, as it is right now: 12
 * independent FMA chains per thread in registers (no memory), on every
 * thread at once (fast/isa.h). */
static double fma_peak(int threads)
{
    const fast_isa *isa = samc__fast_isa();
    const long n = 50000000;
    const double t0 = now_s();
    const float sink = isa->fma_loop(threads, n);
    const double t = now_s() - t0;
    return sink != 0 ? 2.0 * isa->lanes * 12 * (double)n * threads / t * 1e-9 : 0;
}

/* sgemm throughput: a large square product and shapes of Hiera's linears:
 * samc's GEMM on a weight packed once (as the fast implementation runs
 * them), at the level the CPU runs (SAMC_ISA caps it), and OpenBLAS's sgemm
 * with its own threads when samc was built with it. */
static void bench_sgemm(const bench_args *a)
{
    const struct { int m, n, k; const char *what; } shapes[] = {
        {4096, 4096, 4096, "square 4096"},
        {65536, 288, 96, "hiera_t stage 1 qkv (65536x96 -> 288)"},
        {4096, 1536, 384, "hiera_t stage 3 mlp fc1 (4096x384 -> 1536)"},
    };
    const double peak = fma_peak(a->threads);
    printf("FMA peak (register-only loop, %d threads, %s): %.1f GFLOP/s\n", a->threads, samc__fast_isa()->name, peak);
    printf("RESULT fma_peak threads=%d gflops=%.1f\n", a->threads, peak);
#ifdef SAMC_WITH_OPENBLAS
    openblas_set_num_threads(a->threads);
#endif
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int M = shapes[s].m, N = shapes[s].n, K = shapes[s].k;
        float *A = malloc((size_t)M * K * sizeof *A), *B = malloc((size_t)N * K * sizeof *B);
        float *C = malloc((size_t)M * N * sizeof *C);
        fast_wpack W = {0};
        if (!A || !B || !C) {
            free(A), free(B), free(C);
            fprintf(stderr, "samc bench --sgemm: out of memory\n");
            return;
        }
        for (int64_t i = 0; i < (int64_t)M * K; i++)
            A[i] = (float)(i % 7) * 0.1f;
        for (int64_t i = 0; i < (int64_t)N * K; i++)
            B[i] = (float)(i % 5) * 0.1f;
        const int reps = a->runs > 0 ? a->runs : 5;
        double *t = calloc((size_t)reps, sizeof *t);
        const double fl = 2.0 * M * N * K;
        for (int lib = 0; t && lib < 2; lib++) {
            const char *who = lib ? "openblas" : "samc";
#ifndef SAMC_WITH_OPENBLAS
            if (lib)
                break;
#endif
            if (!lib && samc__fast_wpack_init(&W, B, K, N, K, FAST_F32))
                continue;
            for (int r = -1; r < reps; r++) {
                const double t0 = now_s();
                if (!lib)
                    samc__fast_gemm(a->threads, M, A, K, &W, NULL, C, N, 0);
#ifdef SAMC_WITH_OPENBLAS
                else
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, A, K, B, K, 0.0f, C, N);
#endif
                if (r >= 0)
                    t[r] = now_s() - t0;
            }
            const stats st = summarize(t, reps);
            printf("sgemm %-8s %-44s %8.2f ms  %7.1f GFLOP/s (best %.1f), %.0f%% of the peak\n", who, shapes[s].what,
                   1e3 * st.med, fl / st.med * 1e-9, fl / st.min * 1e-9, peak > 0 ? 100.0 * fl / st.med * 1e-9 / peak : 0);
            printf("RESULT sgemm=\"%s\" lib=%s threads=%d gflops=%.1f best=%.1f\n", shapes[s].what, who, a->threads,
                   fl / st.med * 1e-9, fl / st.min * 1e-9);
        }
        samc__fast_wpack_free(&W);
        free(A), free(B), free(C), free(t);
    }
#ifdef SAMC_WITH_OPENBLAS
    openblas_set_num_threads(1);
#endif
}

enum { O_CONFIG, O_MODEL, O_IMPL, O_RUNS, O_WARMUP, O_THREADS, O_PROMPTS, O_SIZE, O_IMAGE, O_PEAK, O_SGEMM, O_LAYERS };
static const cli_option bench_options[] = {
    [O_CONFIG] = {"config", 'c', "NAME|FILE"}, [O_MODEL] = {"model", 'm', "CKPT"}, [O_IMPL] = {"impl", 0, "NAME"},
    [O_RUNS] = {"runs", 'n', "N"},             [O_WARMUP] = {"warmup", 0, "N"},  [O_THREADS] = {"threads", 't', "N"},
    [O_PROMPTS] = {"prompts", 0, "N"},         [O_SIZE] = {"size", 0, "S"},      [O_IMAGE] = {"image", 0, "WxH"},
    [O_PEAK] = {"peak", 0, "GFLOPS"},          [O_SGEMM] = {"sgemm", 0, NULL},   [O_LAYERS] = {"layers", 0, NULL},
};

static int parse(int argc, char **argv, bench_args *a, samc_error *err)
{
    cli_parser cp;
    cli_parser_init(&cp, "bench", argc, argv, bench_options, sizeof bench_options / sizeof bench_options[0]);
    const char *v;
    for (int o; (o = cli_next(&cp, &v, err)) != -1;) {
        samc_status st = SAMC_OK;
        char *end;
        switch (o) {
        case -2: return SAMC_ERR_ARG;
        case O_SGEMM: a->sgemm = true; break;
        case O_LAYERS: a->layers = true; break;
        case O_CONFIG: a->config = v; break;
        case O_MODEL: a->model = v; break;
        case O_IMPL: a->impl = v; break;
        case O_RUNS: st = cli_parse_int("--runs", v, 1, 10000, &a->runs, err); break;
        case O_WARMUP: st = cli_parse_int("--warmup", v, 0, 10000, &a->warmup, err); break;
        case O_THREADS: st = cli_parse_int("--threads", v, 1, SAMC_MAX_THREADS, &a->threads, err); break;
        case O_PROMPTS: st = cli_parse_int("--prompts", v, 1, 100000, &a->prompts, err); break;
        case O_SIZE: st = cli_parse_int("--size", v, 32, 8192, &a->size, err); break;
        case O_IMAGE:
            if (sscanf(v, "%dx%d", &a->img_w, &a->img_h) != 2 || a->img_w < 1 || a->img_h < 1)
                st = samc_fail(err, SAMC_ERR_ARG, "--image '%s': expected WxH", v);
            break;
        case O_PEAK:
            a->peak = strtod(v, &end);
            if (*end || !(a->peak > 0))
                st = samc_fail(err, SAMC_ERR_ARG, "--peak '%s': expected GFLOP/s > 0", v);
            break;
        default: break;
        }
        if (st)
            return st;
    }
    if (cp.first_positional < argc)
        return samc_fail(err, SAMC_ERR_ARG, "unexpected argument '%s'", argv[cp.first_positional]);
    samc_status st = SAMC_OK;
    if (strcmp(a->impl, "all") && !samc_impl_lookup(a->impl, "--impl", &st, err))
        return st;
    return SAMC_OK;
}

/* bench times the SAM 2 image predictor: a model of another family
 * (checkpoint or dump) is refused up front, naming its family, rather than
 * failing the SAM 2 key check with every key it lacks. */
static samc_status check_family(const char *model, samc_error *err)
{
    samc_family fam = SAMC_FAMILY_SAM2;
    samc_status st = samc_detect_family(model, &fam, err);
    if (!st && fam != SAMC_FAMILY_SAM2)
        st = samc_fail(err, SAMC_ERR_ARG, "%s is a %s model; bench runs SAM 2 models only (the image predictor). "
                       "The SAM 3 image path is timed by tools/sam3_random_run.c and tools/bench_sam3.py "
                       "(docs/benchmarks.md, \"SAM 3\")", model, samc_family_name(fam));
    return st;
}

int cmd_bench(int argc, char **argv)
{
    cli_passive_wait_policy(argc, argv);
    cli_keep_freed_memory();
    bench_args a = {.config = NULL, .impl = samc_default_impl(), .runs = 5, .warmup = 1, .threads = 0, .size = 1024,
                    .img_w = 1200, .img_h = 900, .prompts = 1};
    samc_error err = {0};
    if (parse(argc, argv, &a, &err)) {
        fprintf(stderr, "samc bench: %s\n", err.msg);
        return 2;
    }
    if (a.model && check_family(a.model, &err)) {
        fprintf(stderr, "samc bench: %s\n", err.msg);
        return cli_exit_code(err.status);
    }
    if (!a.threads)
        a.threads = omp_get_max_threads();
    omp_set_num_threads(a.threads);
    printf("samc bench: threads %d, OMP_WAIT_POLICY=%s, kernels %s (bf16: %s)", a.threads,
           getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "(default)", samc__fast_isa()->name,
           samc__fast_bf16_kernel_name(samc__fast_bf16_kernel()));
#ifdef SAMC_WITH_OPENBLAS
    printf(", OpenBLAS core %s (%s)", openblas_get_corename(), openblas_get_config());
#endif
    printf("\n");
    if (a.sgemm) {
        bench_sgemm(&a);
        if (!a.config && !a.model)
            return 0;
    }
    /* the model: a checkpoint, or random weights for the config */
    samc_sam2_config cfg;
    samc_weights *w = NULL;
    const double rss0 = cur_rss_mib();
    samc_status st = samc_sam2_config_resolve(a.config ? a.config : "sam2.1_hiera_t", &cfg, &err);
    if (!st) {
        cfg.image_size = a.size;
        st = a.model ? samc_weights_open(a.model, &w, &err) : samc_sam2_random_weights(&cfg, 7, &w, &err);
    }
    samc_sam2_model *m = NULL;
    samc_exec x = {0};
    if (!st)
        st = samc_sam2_model_init(&m, w, &cfg, &err);
    if (!st)
        st = samc_sam2_exec_init(&x, m, &err);
    if (st) {
        fprintf(stderr, "samc bench: %s\n", err.msg);
        samc_sam2_model_free(m);
        return 1;
    }
    samc_exec_set_threads(&x, a.threads);
    const double weights_rss = cur_rss_mib() - rss0;
    printf("model %s (%s weights), image %dx%d -> %d, prompt: 1 point, multimask\n", m->cfg.name,
           a.model ? a.model : "random", a.img_w, a.img_h, a.size);
    uint8_t *img = malloc((size_t)a.img_w * a.img_h * 3);
    int rc = img ? 0 : 1;
    if (img)
        synth_image(img, a.img_h, a.img_w);
    for (int i = 0; !rc && i < samc_impl_count(); i++) /* one implementation, or all of them */
        if (!strcmp(a.impl, "all") || !strcmp(a.impl, samc_impl_get(i)->name))
            rc = bench_impl(&x, samc_impl_get(i)->name, &a, img, weights_rss);
    free(img);
    samc_exec_free(&x);
    samc_sam2_model_free(m);
    return rc;
}
