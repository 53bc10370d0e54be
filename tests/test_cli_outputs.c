/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_outputs.c - the `samc` command line as a user meets it: help and
 * version, exit codes, what segment and track write (COCO RLE that decodes
 * to the mask PNGs, bbox, best mask, impl and threads, prompts echoed),
 * per-frame track outputs named after the frame files, plain progress lines
 * when stderr is not a terminal, bad arguments refused before the model
 * loads, and the overlays of segment and amg pixel by pixel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "apps/cli.h"
#include "core/amg/amg_coco_rle.h"
#include "core/amg/amg_rle.h"
#include "core/io/image_io.h"
#include "util/cli_run.h"
#include "util/testutil.h"

static char *g_tmp;

typedef tu_run_result run_result;

static run_result samc(const char *args) { return tu_run_samc(g_tmp, args); }

static void run_free(run_result *r) { tu_run_free(r); }

static void test_help_and_version(void **s)
{
    (void)s;
    static const char *const cmds[] = {"segment", "track", "parity", "info", "bench"};
    run_result r = samc("--help");
    assert_int_equal(r.rc, 0);
    tu_assert_contains(r.out, "exit codes");
    run_free(&r);
    r = samc("--version");
    assert_int_equal(r.rc, 0);
    tu_assert_contains(r.out, "samc 0.");
    tu_assert_contains(r.out, "kernels "); /* the instruction-set level chosen */
    run_free(&r);
    r = samc("info");
    assert_int_equal(r.rc, 0);
    tu_assert_contains(r.out, "system: kernels ");
    tu_assert_contains(r.out, "implementations");
    run_free(&r);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        for (int form = 0; form < 2; form++) {
            char *a = tu_strdupf("%s %s", cmds[i], form ? "--help" : "-h");
            r = samc(a);
            assert_int_equal(r.rc, 0);
            tu_assert_contains(r.out, "usage: samc ");
            tu_assert_contains(r.out, cmds[i]);
            run_free(&r);
            free(a);
        }
    }
    r = samc("");
    assert_int_equal(r.rc, 2);
    run_free(&r);
    r = samc("frobnicate");
    assert_int_equal(r.rc, 2);
    tu_assert_contains(r.err, "unknown command 'frobnicate'");
    run_free(&r);
}

static void test_exit_codes(void **s)
{
    (void)s;
    char *out = tu_join(g_tmp, "codes");
    char *a = tu_strdupf("segment --frobnicate 1 --out '%s'", out);
    run_result r = samc(a); /* usage */
    assert_int_equal(r.rc, 2);
    tu_assert_contains(r.err, "unknown option");
    run_free(&r), free(a);
    a = tu_strdupf("segment --model '%s/no_such.pt' --image x.png --point 1,1 --out '%s'", g_tmp, out);
    r = samc(a); /* runtime: a missing file */
    assert_int_equal(r.rc, 1);
    tu_assert_contains(r.err, "x.png");
    run_free(&r), free(a);
    /* --out where a file is: found before anything loads, named, with the reason. */
    char *file = tu_join(g_tmp, "a_file");
    assert_int_equal(tu_write_file(file, "x", 1), 0);
    a = tu_strdupf("segment --out '%s'", file);
    r = samc(a);
    assert_int_equal(r.rc, 1);
    tu_assert_contains(r.err, file);
    tu_assert_contains(r.err, "Not a directory");
    run_free(&r), free(a);
    a = tu_strdupf("segment --box 1,1,5,5 --box 2,2,6,6 --point 3,3 --out '%s'", out);
    r = samc(a);
    assert_int_equal(r.rc, 2);
    tu_assert_contains(r.err, "batched boxes take no points");
    run_free(&r), free(a);
    a = tu_strdupf("segment --mask-input '%s' --out '%s'", file, out);
    r = samc(a);
    assert_int_equal(r.rc, 2);
    tu_assert_contains(r.err, "48x48"); /* the size the demo model needs */
    run_free(&r), free(a);
    a = tu_strdupf("segment --point 400,10 --out '%s'", out);
    r = samc(a);
    assert_int_equal(r.rc, 2);
    tu_assert_contains(r.err, "outside the 320x240 image");
    run_free(&r), free(a);
    assert_false(tu_file_exists(out)); /* checks before the out directory is made */
    free(out), free(file);
}

/* The mask PNG (0/255) as 0/1. */
static uint8_t *load_mask(const char *path, int *h, int *w)
{
    samc_image img;
    samc_error e;
    assert_int_equal(samc_image_load(path, &img, &e), SAMC_OK);
    uint8_t *m = malloc((size_t)img.w * img.h);
    for (int64_t i = 0; i < (int64_t)img.w * img.h; i++)
        m[i] = img.rgb[3 * i] > 127;
    *h = img.h, *w = img.w;
    samc_image_free(&img);
    return m;
}

/* One mask record: its one RLE (the COCO string by default, the counts with
 * --rle uncompressed) decodes to the PNG, area and bbox agree with the
 * pixels, the IoU is under one name. */
static void check_mask_record(const cJSON *o, const char *png)
{
    int h, w;
    uint8_t *mask = load_mask(png, &h, &w);
    const cJSON *rle = cJSON_GetObjectItem(o, "rle"), *counts = cJSON_GetObjectItem(rle, "counts");
    const cJSON *coco = cJSON_GetObjectItem(o, "coco_rle");
    assert_true((rle != NULL) != (coco != NULL)); /* one encoding */
    assert_null(cJSON_GetObjectItem(o, "iou_prediction"));
    samc_amg_rle r = {.h = h, .w = w, .n = cJSON_GetArraySize(counts)};
    samc_error e;
    if (coco) {
        const cJSON *size = cJSON_GetObjectItem(coco, "size");
        assert_int_equal((int)cJSON_GetArrayItem(size, 0)->valuedouble, h);
        assert_int_equal((int)cJSON_GetArrayItem(size, 1)->valuedouble, w);
        assert_int_equal(samc_amg_rle_from_coco_string(cJSON_GetObjectItem(coco, "counts")->valuestring, h, w, &r, &e),
                         SAMC_OK);
    } else {
        r.counts = malloc((size_t)r.n * sizeof *r.counts);
        for (int64_t i = 0; i < r.n; i++)
            r.counts[i] = (int64_t)cJSON_GetArrayItem(counts, (int)i)->valuedouble;
    }
    uint8_t *dec = malloc((size_t)h * w);
    assert_int_equal(samc_amg_rle_to_mask(&r, dec, &e), SAMC_OK);
    assert_memory_equal(dec, mask, (size_t)h * w);
    int64_t area = 0, x0 = w, y0 = h, x1 = -1, y1 = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (mask[(int64_t)y * w + x]) {
                area++;
                x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1, y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
            }
    assert_int_equal((int64_t)cJSON_GetObjectItem(o, "area")->valuedouble, area);
    const cJSON *bbox = cJSON_GetObjectItem(o, "bbox");
    if (area) { /* XYWH with the generator's inclusive max (w = x1 - x0) */
        assert_int_equal((int64_t)cJSON_GetArrayItem(bbox, 0)->valuedouble, x0);
        assert_int_equal((int64_t)cJSON_GetArrayItem(bbox, 1)->valuedouble, y0);
        assert_int_equal((int64_t)cJSON_GetArrayItem(bbox, 2)->valuedouble, x1 - x0);
        assert_int_equal((int64_t)cJSON_GetArrayItem(bbox, 3)->valuedouble, y1 - y0);
    }
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(o, "stability_score")));
    samc_amg_rle_free(&r);
    free(dec), free(mask);
}

static void test_segment_outputs(void **s)
{
    (void)s;
    char *out = tu_join(g_tmp, "seg");
    char *a = tu_strdupf("segment --out '%s'", out);
    run_result r = samc(a);
    assert_int_equal(r.rc, 0);
    tu_assert_contains(r.out, "impl fast");
    tu_assert_contains(r.out, "time: load");
    run_free(&r), free(a);
    a = tu_strdupf("-v segment --out '%s'", out); /* -v: the library's log */
    r = samc(a);
    assert_int_equal(r.rc, 0);
    tu_assert_contains(r.err, "loaded (config");
    run_free(&r), free(a);
    a = tu_strdupf("segment --quiet --out '%s'", out);
    r = samc(a);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, "");
    run_free(&r), free(a);
    char *jp = tu_join(out, "result.json"), *text = tu_slurp(jp);
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "impl")->valuestring, "fast");
    assert_true(cJSON_GetObjectItem(j, "threads")->valuedouble >= 1);
    const cJSON *pts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "prompt"), "points");
    assert_int_equal(cJSON_GetArraySize(pts), 1);
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(pts, 0), 0)->valuedouble, 160);
    const cJSON *masks = cJSON_GetObjectItem(j, "masks");
    assert_int_equal(cJSON_GetArraySize(masks), 3);
    int best = 0;
    for (int k = 0; k < 3; k++) {
        const cJSON *o = cJSON_GetArrayItem(masks, k);
        if (cJSON_GetObjectItem(o, "predicted_iou")->valuedouble >
            cJSON_GetObjectItem(cJSON_GetArrayItem(masks, best), "predicted_iou")->valuedouble)
            best = k;
        char *png = tu_strdupf("%s/mask_%d.png", out, k);
        check_mask_record(o, png);
        free(png);
    }
    assert_int_equal((int)cJSON_GetObjectItem(j, "best_mask")->valuedouble, best);
    const cJSON *lr = cJSON_GetObjectItem(j, "low_res_masks"), *shape = cJSON_GetObjectItem(lr, "shape");
    assert_string_equal(cJSON_GetObjectItem(lr, "file")->valuestring, "low_res_masks.f32");
    assert_int_equal(cJSON_GetArraySize(shape), 3);
    static const int want[3] = {3, 48, 48};
    for (int i = 0; i < 3; i++)
        assert_int_equal((int)cJSON_GetArrayItem(shape, i)->valuedouble, want[i]);
    cJSON_Delete(j);
    free(text);
    /* --rle uncompressed: the counts instead of the string, of the same masks */
    a = tu_strdupf("segment --quiet --rle uncompressed --out '%s'", out);
    r = samc(a);
    assert_int_equal(r.rc, 0);
    run_free(&r), free(a);
    text = tu_slurp(jp);
    j = cJSON_Parse(text);
    masks = cJSON_GetObjectItem(j, "masks");
    for (int k = 0; k < 3; k++) {
        const cJSON *o = cJSON_GetArrayItem(masks, k);
        assert_non_null(cJSON_GetObjectItem(o, "rle"));
        char *png = tu_strdupf("%s/mask_%d.png", out, k);
        check_mask_record(o, png);
        free(png);
    }
    a = tu_strdupf("segment --rle rle --out '%s'", out);
    r = samc(a);
    assert_int_equal(r.rc, 2);
    tu_assert_contains(r.err, "--rle 'rle'");
    run_free(&r), free(a);
    char *ov = tu_join(out, "overlay.png");
    assert_true(tu_file_exists(ov));
    cJSON_Delete(j);
    free(ov), free(text), free(jp), free(out);
}

static int count_with(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, needle) != NULL;
    if (d)
        closedir(d);
    return n;
}

/* A parity dump as --model: its own config, named as the dump names its model. */
static void test_segment_dump_model(void **s)
{
    (void)s;
    char *dump = tu_src_path("fixtures/tiny_a_sam21_s128.h5"), *img = tu_src_path("fixtures/demo/demo.png");
    char *out = tu_join(g_tmp, "segdump");
    char *a = tu_strdupf("segment --model '%s' --image '%s' --point 50,40 --out '%s'", dump, img, out);
    run_result r = samc(a);
    if (r.rc)
        fail_msg("samc segment: %s", r.err);
    run_free(&r), free(a);
    char *jp = tu_join(out, "result.json"), *text = tu_slurp(jp);
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "config")->valuestring, "tiny_a_sam2.1_s128");
    cJSON_Delete(j);
    free(text), free(jp), free(out), free(img), free(dump);
}

static void test_track_outputs(void **s)
{
    (void)s;
    char *dump = tu_src_path("fixtures/video/tiny_v1_sam21_s128.h5");
    char *frames = tu_src_path("fixtures/video/tiny_v1_sam21_s128_frames");
    char *out = tu_join(g_tmp, "trk");
    /* --start 1 with prompts on frames 0 and 1: frames 1..4 are tracked. */
    char *a = tu_strdupf("track --model '%s' --frames '%s' --prompt 0:1:point=50,40 --prompt 1:2:box=10,10,60,60 "
                         "--start 1 --out '%s'", dump, frames, out);
    run_result r = samc(a);
    if (r.rc)
        fail_msg("samc track: %s", r.err);
    tu_assert_contains(r.err, "tracking 1/4 (00001)"); /* plain lines: stderr is a file */
    tu_assert_contains(r.err, "tracking 4/4 (00004)");
    assert_null(strchr(r.err, '\r'));
    run_free(&r), free(a);
    char *m = tu_join(out, "masks/00001_obj2.png"), *ov = tu_join(out, "overlay/00004.png");
    assert_true(tu_file_exists(m));
    assert_true(tu_file_exists(ov));
    char *md = tu_join(out, "masks");
    assert_int_equal(count_with(md, ".png"), 8);
    assert_int_equal(count_with(md, ".tmp"), 0);
    char *jl = tu_join(out, "track.jsonl"), *text = tu_slurp(jl);
    int lines = 0;
    for (const char *p = text; (p = strchr(p, '\n')); p++)
        lines++;
    assert_int_equal(lines, 4);
    tu_assert_contains(text, "\"seconds\":");
    char *js = tu_join(out, "track.json"), *sum = tu_slurp(js);
    cJSON *j = cJSON_Parse(sum);
    assert_string_equal(cJSON_GetObjectItem(j, "impl")->valuestring, "fast");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "prompts")), 2);
    const cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "per_frame"), 0);
    const cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(f0, "objects"), 0);
    char *m1 = tu_join(out, "masks/00001_obj1.png");
    check_mask_record(o, m1); /* frame 1, object 1 */
    free(m1);
    cJSON_Delete(j);
    /* A run that fails on frame 3 keeps frames 1 and 2, files and JSON lines. */
    char *out3 = tu_join(g_tmp, "trk3"), *in_way = tu_join(out3, "overlay/00003.png");
    char *mk = tu_strdupf("mkdir -p '%s'", in_way);
    assert_int_equal(system(mk), 0);
    a = tu_strdupf("track --model '%s' --frames '%s' --prompt 1:1:point=50,40 --out '%s'", dump, frames, out3);
    r = samc(a);
    assert_int_equal(r.rc, 1);
    tu_assert_contains(r.err, in_way);
    run_free(&r), free(a);
    char *kept = tu_join(out3, "overlay/00002.png"), *jl3 = tu_join(out3, "track.jsonl"), *t3 = tu_slurp(jl3);
    assert_true(tu_file_exists(kept));
    tu_assert_contains(t3, "\"frame\":2");
    free(t3), free(jl3), free(kept), free(mk), free(in_way), free(out3);
    /* A point off the frame is refused as segment refuses it, before loading. */
    a = tu_strdupf("track --model '%s' --frames '%s' --prompt 0:1:point=1000,80 --out '%s/t2'", dump, frames, g_tmp);
    r = samc(a);
    assert_int_equal(r.rc, 2);
    tu_assert_contains(r.err, "outside the 144x96 image");
    run_free(&r), free(a);
    free(sum), free(js), free(text), free(jl), free(md), free(m), free(ov), free(out), free(frames), free(dump);
}

/* ---- overlays, pixel by pixel: a mask blended 3/5 in its colour, its
 * contour in the colour itself, the image elsewhere; every AMG record in a
 * colour of its own (cli_mask_color of its index, apps/cli_render.c, linked
 * in). */

/* samc ARGS (malloc'd, freed here) must succeed. */
static void run_ok(char *args)
{
    run_result r = samc(args);
    if (r.rc)
        fail_msg("samc %s: %s", args, r.err);
    run_free(&r), free(args);
}

static void load(const char *path, samc_image *img)
{
    samc_error e = {0};
    if (samc_image_load(path, img, &e))
        fail_msg("%s", e.msg);
}

static bool in(const samc_image *m, int x, int y) { return m->rgb[3 * ((int64_t)y * m->w + x)] > 127; }

/* A mask pixel with a 4-neighbour outside the mask or the image (1 px: the
 * contour width of images under 300 px). */
static bool edge(const samc_image *m, int x, int y)
{
    return x == 0 || y == 0 || x == m->w - 1 || y == m->h - 1 || !in(m, x - 1, y) || !in(m, x + 1, y) ||
           !in(m, x, y - 1) || !in(m, x, y + 1);
}

static bool same(const uint8_t *px, const uint8_t c[3]) { return px[0] == c[0] && px[1] == c[1] && px[2] == c[2]; }

static void test_colors_distinct(void **s)
{
    (void)s;
    enum { N = 1000 };
    static uint8_t c[N][3];
    for (int k = 0; k < N; k++)
        cli_mask_color(k, c[k]);
    for (int a = 0; a < N; a++)
        for (int b = a + 1; b < N; b++)
            if (!memcmp(c[a], c[b], 3))
                fail_msg("masks %d and %d share the colour %d,%d,%d", a, b, c[a][0], c[a][1], c[a][2]);
}

/* The demo's best mask on overlay.png: contour pixels in its colour,
 * inside blended, outside the image itself (away from the point marker). */
static void test_segment_overlay(void **s)
{
    (void)s;
    char *out = tu_join(g_tmp, "seg");
    run_ok(tu_strdupf("segment --quiet --out '%s'", out));
    char *jp = tu_join(out, "result.json"), *text = tu_slurp(jp);
    cJSON *j = cJSON_Parse(text);
    const int best = (int)cJSON_GetObjectItem(j, "best_mask")->valuedouble;
    char *mp = tu_strdupf("%s/mask_%d.png", out, best), *op = tu_join(out, "overlay.png");
    char *ip = tu_src_path("fixtures/demo/demo.png");
    samc_image m, ov, img;
    load(mp, &m), load(op, &ov), load(ip, &img);
    uint8_t col[3];
    cli_mask_color(best, col);
    int64_t n_edge = 0, n_in = 0;
    for (int y = 0; y < m.h; y++)
        for (int x = 0; x < m.w; x++) {
            if ((x - 160) * (x - 160) + (y - 120) * (y - 120) <= 8 * 8) /* the point marker */
                continue;
            const int64_t i = 3 * ((int64_t)y * m.w + x);
            if (!in(&m, x, y)) {
                assert_memory_equal(ov.rgb + i, img.rgb + i, 3);
            } else if (edge(&m, x, y)) {
                assert_true(same(ov.rgb + i, col));
                n_edge++;
            } else {
                for (int c = 0; c < 3; c++)
                    assert_int_equal(ov.rgb[i + c], (2 * img.rgb[i + c] + 3 * col[c]) / 5);
                n_in++;
            }
        }
    assert_true(n_edge > 0 && n_in > 0);
    samc_image_free(&m), samc_image_free(&ov), samc_image_free(&img);
    cJSON_Delete(j);
    free(ip), free(op), free(mp), free(text), free(jp), free(out);
}

/* AMG: records drawn largest first; every record's contour pixels that no
 * later (smaller) record covers are in its own colour, and there are more
 * records than the eight colours of the old palette. */
static void test_amg_overlay(void **s)
{
    (void)s;
    char *out = tu_join(g_tmp, "amg");
    run_ok(tu_strdupf("amg --quiet --points-per-side 4 --pred-iou-thresh 0 --stability-score-thresh 0 "
                      "--box-nms-thresh 1 --output-mode binary_mask --out '%s'", out));
    char *jp = tu_join(out, "masks.json"), *text = tu_slurp(jp);
    cJSON *j = cJSON_Parse(text);
    const int n = cJSON_GetArraySize(j);
    assert_true(n > 8);
    samc_image *m = calloc((size_t)n, sizeof *m), ov;
    int64_t *area = calloc((size_t)n, sizeof *area);
    for (int k = 0; k < n; k++) {
        char *p = tu_strdupf("%s/mask_%04d.png", out, k);
        load(p, &m[k]);
        free(p);
        area[k] = (int64_t)cJSON_GetObjectItem(cJSON_GetArrayItem(j, k), "area")->valuedouble;
    }
    char *op = tu_join(out, "overlay.png");
    load(op, &ov);
    int checked = 0;
    for (int k = 0; k < n; k++) {
        uint8_t col[3];
        cli_mask_color(k, col);
        int64_t seen = 0;
        for (int y = 0; y < ov.h; y++)
            for (int x = 0; x < ov.w; x++) {
                if (!in(&m[k], x, y) || !edge(&m[k], x, y))
                    continue;
                bool covered = false; /* by a record drawn after k (smaller, or as large and later) */
                for (int q = 0; q < n && !covered; q++)
                    covered = q != k && (area[q] < area[k] || (area[q] == area[k] && q > k)) && in(&m[q], x, y);
                if (covered)
                    continue;
                assert_true(same(ov.rgb + 3 * ((int64_t)y * ov.w + x), col));
                seen++;
            }
        checked += seen > 0;
    }
    assert_true(checked > 8); /* more records shown in their own colour than the old palette had */
    for (int k = 0; k < n; k++)
        samc_image_free(&m[k]);
    samc_image_free(&ov);
    cJSON_Delete(j);
    free(m), free(area), free(op), free(text), free(jp), free(out);
}

static int setup(void **s)
{
    (void)s;
    g_tmp = tu_mkdtemp("cli_outputs");
    return g_tmp ? 0 : -1;
}

static int teardown(void **s)
{
    (void)s;
    tu_rmtree(g_tmp);
    free(g_tmp);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_segment_outputs),
        cmocka_unit_test(test_segment_dump_model),
        cmocka_unit_test(test_track_outputs),
        cmocka_unit_test(test_colors_distinct),
        cmocka_unit_test(test_segment_overlay),
        cmocka_unit_test(test_amg_overlay),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
