/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_outputs.c - the `samc` command line as a user meets it: help and
 * version, exit codes, what segment and track write (COCO RLE that decodes
 * to the mask PNGs, bbox, best mask, impl and threads, prompts echoed),
 * per-frame track outputs named after the frame files, plain progress lines
 * when stderr is not a terminal, and bad arguments refused before the model
 * loads. */
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
    a = tu_strdupf("segment --box 1,1,5,5 --box 2,2,6,6 --out '%s'", out);
    r = samc(a);
    assert_int_equal(r.rc, 2);
    tu_assert_contains(r.err, "--box given twice");
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

/* One mask record: RLE counts decode to the PNG, the COCO string to the
 * same counts, area and bbox agree with the pixels. */
static void check_mask_record(const cJSON *o, const char *png)
{
    int h, w;
    uint8_t *mask = load_mask(png, &h, &w);
    const cJSON *rle = cJSON_GetObjectItem(o, "rle"), *counts = cJSON_GetObjectItem(rle, "counts");
    samc_amg_rle r = {.h = h, .w = w, .n = cJSON_GetArraySize(counts)};
    r.counts = malloc((size_t)r.n * sizeof *r.counts);
    for (int64_t i = 0; i < r.n; i++)
        r.counts[i] = (int64_t)cJSON_GetArrayItem(counts, (int)i)->valuedouble;
    uint8_t *dec = malloc((size_t)h * w);
    samc_error e;
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
    const char *coco = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "coco_rle"), "counts")->valuestring;
    samc_amg_rle c = {0};
    assert_int_equal(samc_amg_rle_from_coco_string(coco, h, w, &c, &e), SAMC_OK);
    assert_int_equal(c.n, r.n);
    assert_memory_equal(c.counts, r.counts, (size_t)r.n * sizeof *r.counts);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(o, "stability_score")));
    samc_amg_rle_free(&c), samc_amg_rle_free(&r);
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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
