/* SPDX-License-Identifier: Apache-2.0 */
/* bench_video.c - time per tracked frame of the samc video tracker
 * (samc_tracker_* of include/samc.h) on a synthetic clip: a textured
 * background with a bright disc moving across it, one positive click on the
 * disc in frame 0, then propagate_in_video forward. Prints the time of
 * every propagated frame (image encoder + memory attention + decoder +
 * memory encoder) and the mean over the frames whose memory bank is full
 * (frame >= num_maskmem, 7).
 *
 *   cmake --build build --target bench_video
 *   OMP_NUM_THREADS=2 build/bench_video CKPT.pt CONFIG.json|- [fast|ref] [frames] [size]
 *
 * Each frame's line has its wall and CPU time (all threads: steady on a
 * shared machine); the last RESULT line has the last frame's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "samc.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu_now(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

typedef struct bench {
    double last, sum, cpu_last, cpu_frame, wall_frame;
    int n_steady, steady_from;
} bench;

static samc_status on_frame(void *user, const samc_frame_masks *m)
{
    bench *b = user;
    const double t = now(), dt = t - b->last, c = cpu_now();
    b->last = t;
    b->cpu_frame = c - b->cpu_last, b->wall_frame = dt, b->cpu_last = c;
    int fg = 0;
    for (int64_t i = 0; i < (int64_t)m->height * m->width; i++)
        fg += m->logits[i] > 0;
    printf("frame %3d  %8.1f ms  cpu %8.1f ms  (obj 1: %d fg pixels)\n", m->frame_idx, 1e3 * dt, 1e3 * b->cpu_frame,
           fg);
    if (m->frame_idx >= b->steady_from)
        b->sum += dt, b->n_steady++;
    fflush(stdout);
    return SAMC_OK;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s CKPT CONFIG|- [fast|ref] [frames=12] [size=1024]\n", argv[0]);
        return 2;
    }
    const char *impl = argc > 3 ? argv[3] : "fast";
    const int T = argc > 4 ? atoi(argv[4]) : 12, S = argc > 5 ? atoi(argv[5]) : 1024;
    if (T < 2 || S < 64)
        return 2;
    uint8_t *rgb = malloc((size_t)T * S * S * 3);
    if (!rgb)
        return 1;
    for (int t = 0; t < T; t++) { /* background texture + a moving disc */
        const int cx = S / 4 + t * S / (2 * T), cy = S / 2, r = S / 8;
        for (int y = 0; y < S; y++)
            for (int x = 0; x < S; x++) {
                uint8_t *px = rgb + (((size_t)t * S + y) * S + x) * 3;
                const int in = (x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r;
                px[0] = in ? 230 : (uint8_t)((x * 7 + y * 3) & 127);
                px[1] = in ? 60 : (uint8_t)((x ^ y) & 127);
                px[2] = in ? 40 : (uint8_t)(64 + ((y * 5) & 63));
            }
    }
    samc_error err = {0};
    samc_tracker *tr = NULL;
    double t0 = now();
    if (samc_tracker_load(argv[1], strcmp(argv[2], "-") ? argv[2] : NULL, &tr, &err) ||
        samc_tracker_set_impl(tr, impl, &err) || samc_tracker_open_frames(tr, rgb, T, S, S, &err)) {
        fprintf(stderr, "error: %s\n", err.msg);
        return 1;
    }
    printf("load + open: %.2f s (%s, %d frames of %dx%d)\n", now() - t0, impl, T, S, S);
    const float pt[2] = {(float)(S / 4), (float)(S / 2)};
    const int32_t lab[1] = {1};
    t0 = now();
    if (samc_tracker_add_points(tr, 0, 1, pt, lab, 1, NULL, 1, NULL, &err)) {
        fprintf(stderr, "error: %s\n", err.msg);
        return 1;
    }
    printf("add_points (frame 0): %.1f ms\n", 1e3 * (now() - t0));
    bench b = {.last = now(), .cpu_last = cpu_now(), .steady_from = 7};
    if (samc_tracker_propagate(tr, 0, -1, 0, on_frame, &b, &err)) {
        fprintf(stderr, "error: %s\n", err.msg);
        return 1;
    }
    if (b.n_steady)
        printf("RESULT video impl=%s size=%d per_frame_ms=%.1f (mean of %d frames with a full memory bank)\n", impl,
               S, 1e3 * b.sum / b.n_steady, b.n_steady);
    printf("RESULT video_frame impl=%s size=%d frames=%d last_frame_ms=%.1f last_frame_cpu_ms=%.1f\n", impl, S, T,
           1e3 * b.wall_frame, 1e3 * b.cpu_frame);
    samc_tracker_free(tr);
    free(rgb);
    return 0;
}
