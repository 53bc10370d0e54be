/* SPDX-License-Identifier: Apache-2.0 */
/* bench_amg.c - samc's side of tools/bench_amg.py: the automatic mask
 * generator on one image (samc_amg_generate_masks, include/samc_amg.h) and the
 * batched decoder's throughput (samc_predictor_predict_batch: B one-point
 * prompts, multimask, logits at the image size, as the generator calls it).
 *
 *   cc -O2 -I include -I . tools/bench_amg.c BUILD/libsamc.a \
 *      $(pkg-config --libs openblas libcjson libzip libjpeg hdf5) -fopenmp -lm -o /tmp/bench_amg
 *   OMP_NUM_THREADS=2 /tmp/bench_amg CKPT.pt CONFIG.json|- IMAGE.png [fast|ref] [threads] [points_per_side]
 *                   [points_per_batch] [decoder_runs] [pred_iou_thresh] [stability_score_thresh]
 * Prints RESULT lines (tools/bench_amg.py reads them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/io/image_io.h"
#include "samc.h"
#include "samc_amg.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static int fail(const char *what, const samc_error *e)
{
    fprintf(stderr, "bench_amg: %s: %s\n", what, e->msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_amg CKPT CONFIG|- IMAGE [impl] [threads] [points_per_side] [batch] [runs]\n");
        return 2;
    }
    const char *impl = argc > 4 ? argv[4] : "fast";
    const int threads = argc > 5 ? atoi(argv[5]) : 2, pps = argc > 6 ? atoi(argv[6]) : 32;
    const int B = argc > 7 ? atoi(argv[7]) : 64, runs = argc > 8 ? atoi(argv[8]) : 3;
    const double iou_t = argc > 9 ? atof(argv[9]) : 0.8, stab_t = argc > 10 ? atof(argv[10]) : 0.95;
    samc_error e = {0};
    samc_image img;
    samc_predictor *p = NULL;
    if (samc_image_load(argv[3], &img, &e))
        return fail("image", &e);
    if (samc_predictor_load(argv[1], strcmp(argv[2], "-") ? argv[2] : NULL, &p, &e) ||
        samc_predictor_set_impl(p, impl, &e))
        return fail("model", &e);
    samc_predictor_set_threads(p, threads);

    /* the generator: official defaults but the arguments */
    samc_amg_params ap = samc_amg_default_params();
    ap.points_per_side = pps, ap.points_per_batch = B;
    ap.pred_iou_thresh = iou_t, ap.stability_score_thresh = stab_t;
    ap.output_mode = SAMC_AMG_UNCOMPRESSED_RLE;
    samc_amg_result r;
    double t0 = now(), c0 = cpu_now();
    if (samc_amg_generate_masks(p, img.rgb, img.h, img.w, &ap, NULL, NULL, &r, &e))
        return fail("amg", &e);
    printf("RESULT amg impl=%s threads=%d size=%dx%d points=%d masks=%lld wall_s=%.3f cpu_s=%.3f\n", impl, threads,
           img.w, img.h, pps * pps, (long long)r.n, now() - t0, cpu_now() - c0);
    samc_amg_result_free(&r);

    /* the batched decoder: B grid points, multimask, logits */
    if (samc_predictor_set_image(p, img.rgb, img.h, img.w, &e))
        return fail("set_image", &e);
    float *pts = malloc((size_t)B * 2 * sizeof *pts);
    int32_t *lab = malloc((size_t)B * sizeof *lab);
    for (int i = 0; i < B; i++) {
        pts[2 * i] = (float)img.w * ((float)(i % 8) + 0.5f) / 8.0f;
        pts[2 * i + 1] = (float)img.h * ((float)((i / 8) % 8) + 0.5f) / 8.0f;
        lab[i] = 1;
    }
    samc_batch_request rq = {.batch = B, .n_points = 1, .point_coords = pts, .point_labels = lab,
                             .multimask_output = 1, .return_logits = 1};
    double best = 1e30;
    for (int k = 0; k < runs; k++) {
        samc_batch_masks m;
        t0 = now();
        if (samc_predictor_predict_batch(p, &rq, &m, &e))
            return fail("predict_batch", &e);
        const double dt = now() - t0;
        best = dt < best ? dt : best;
        printf("decoder batch %d: %d prompts -> %d masks in %.3f s\n", k, B, B * m.num_masks, dt);
        samc_batch_masks_free(&m);
    }
    printf("RESULT decoder impl=%s threads=%d batch=%d masks_per_s=%.1f best_s=%.4f\n", impl, threads, B,
           3.0 * B / best, best);
    free(pts), free(lab);
    samc_predictor_free(p);
    samc_image_free(&img);
    return 0;
}
