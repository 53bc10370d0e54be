/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_random_run.c - the SAM 3 image path at real size on random weights:
 * the built-in released config (or a config file), every key the walk
 * describes filled with seeded uniform values (weights +-1/sqrt(fan_in),
 * norms 1, biases 0; RoPE tables computed from the config), then a
 * processor session on a synthetic image: set_image, set_text "a red car",
 * a re-ground (threshold change), reset, add_box (box only), a re-ground.
 * Prints the wall and CPU time of each step (RESULT lines, read by
 * tools/bench_sam3.py) and the peak RSS. Not a parity run (random weights
 * give no meaningful masks); it shows the real-size path runs and what it
 * costs.
 *
 *   cc -O2 -I include -I . tools/sam3_random_run.c BUILD/libsamc.a \
 *      $(pkg-config --libs openblas libcjson libzip libjpeg hdf5 libutf8proc zlib) -fopenmp -lm \
 *      -o /tmp/sam3_random_run
 *   OMP_NUM_THREADS=N /tmp/sam3_random_run VOCAB.txt.gz [fast|ref] [H W] [CONFIG.json]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/api/api_internal.h"
#include "core/models/sam3/sam3_model.h"
#include "samc_sam3.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

/* One timed step: wall and process CPU time (all threads). */
struct step {
    const char *name;
    double wall, cpu;
};

static void step_begin(struct step *s, const char *name)
{
    s->name = name;
    s->wall = now();
    s->cpu = cpu_s();
}

static void step_end(struct step *s)
{
    s->wall = now() - s->wall;
    s->cpu = cpu_s() - s->cpu;
}

static int die(const char *what, const samc_error *e)
{
    fprintf(stderr, "sam3_random_run: %s: %s\n", what, e->msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s VOCAB.txt.gz [fast|ref] [H W] [CONFIG.json]\n", argv[0]);
        return 2;
    }
    const char *impl = argc > 2 ? argv[2] : "fast";
    const int H = argc > 4 ? atoi(argv[3]) : 768, W = argc > 4 ? atoi(argv[4]) : 1024;
    samc_error e = {0};
    samc_sam3_config cfg;
    samc_key_list keys;
    samc_weights *w = NULL;
    samc_sam3_model *m = NULL;
    double t0 = now();
    if (argc > 5 ? samc_sam3_config_from_file(argv[5], &cfg, &e) : samc_sam3_config_released(false, &cfg, &e))
        return die("config", &e);
    if (samc_sam3_expected_keys(&cfg, "", &keys, &e) || samc_sam3_random_weights(&cfg, 1234, &w, &e) ||
        samc_sam3_model_init(&m, w, &cfg, "", "random", &e) ||
        samc_sam3_model_set_vocab(m, NULL, 0, argv[1], &e))
        return die("model", &e);
    printf("model: %d keys, resolution %d, %d ViT blocks, built in %.2f s\n", keys.count, m->cfg.resolution, m->vision.n_blocks,
           now() - t0);
    samc_key_list_free(&keys);
    samc_model *model = NULL;
    if (samc__model_wrap_sam3(m, "sam3 (built-in release), random weights", &model, &e))
        return die("model", &e);
    samc_sam3_processor_params pp = samc_sam3_processor_default_params();
    pp.impl = impl;
    samc_sam3_processor *p = NULL;
    if (samc_sam3_processor_new(model, &pp, &p, &e))
        return die("processor", &e);
    uint8_t *img = malloc((size_t)H * W * 3);
    for (int64_t i = 0; img && i < (int64_t)H * W * 3; i++) /* a smooth gradient with a bright square */
        img[i] = (uint8_t)((i / 3 % W) * 255 / W);
    for (int y = H / 3; img && y < H / 2; y++)
        for (int x = W / 3; x < W / 2; x++)
            img[((int64_t)y * W + x) * 3] = 255;
    if (!img)
        return fprintf(stderr, "sam3_random_run: out of memory\n"), 1;
    /* The session of tools/bench_sam3.py, step for step on both sides. A
     * threshold change re-grounds the current prompt (as the official
     * set_confidence_threshold), which times the detector and masks alone. */
    struct step t[6];
    int n = 0;
    samc_status st = SAMC_OK;
    step_begin(&t[n], "set_image");
    st = samc_sam3_processor_set_image(p, img, H, W, &e);
    step_end(&t[n++]);
    if (!st) {
        step_begin(&t[n], "set_text");
        st = samc_sam3_processor_set_text(p, "a red car", &e);
        step_end(&t[n++]);
    }
    if (!st) {
        step_begin(&t[n], "ground_text");
        st = samc_sam3_processor_set_threshold(p, 0.5f, &e);
        step_end(&t[n++]);
    }
    samc_sam3_results r = {0};
    if (!st)
        st = samc_sam3_processor_results(p, &r, &e);
    const int kept_text = r.n;
    if (!st) {
        samc_sam3_processor_reset(p);
        step_begin(&t[n], "add_box");
        st = samc_sam3_processor_add_box(p, (const float[]){0.45f, 0.55f, 0.3f, 0.4f}, true, &e);
        step_end(&t[n++]);
    }
    if (!st) {
        step_begin(&t[n], "ground_box");
        st = samc_sam3_processor_set_threshold(p, 0.5f, &e);
        step_end(&t[n++]);
    }
    if (!st)
        st = samc_sam3_processor_results(p, &r, &e);
    if (st)
        return die(t[n - 1].name, &e);
    for (int i = 0; i < n; i++)
        printf("RESULT impl=samc-%s step=%s wall_s=%.3f cpu_s=%.3f\n", impl, t[i].name, t[i].wall, t[i].cpu);
    printf("%s, %dx%d image: set_image %.2f s (preprocess, ViT, neck), set_text %.2f s (text + detector + masks), "
           "re-ground %.2f s; add_box %.2f s (box-only: text \"visual\" + detector + masks), re-ground %.2f s; "
           "%d / %d instances kept; peak RSS %.0f MiB\n",
           impl, W, H, t[0].wall, t[1].wall, t[2].wall, t[3].wall, t[4].wall, kept_text, r.n, peak_rss_mib());
    printf("RESULT impl=samc-%s peak_rss_mib=%.0f\n", impl, peak_rss_mib());
    samc_sam3_processor_free(p);
    samc_model_free(model);
    free(img);
    return 0;
}
