/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_sam3.c - `samc segment` on SAM 3 as a user runs it: the first
 * prompt session of fixtures/sam3/tiny_s2_text_boxes.h5 (its image, text,
 * positive and negative boxes, threshold) given on the command line with the
 * checkpoint made from that dump's weights (and once with the dump itself as
 * the model), and result.json's instance count, boxes and scores against the
 * official outputs the dump recorded (/outputs/0, and /outputs/1: a
 * 30-token text); a text over the 32-token context (a warning, and the
 * results of the text cut as the official tokenizer cuts it: start, the
 * first 30 tokens, end);
 * then the bad inputs, each with its message, a non-zero exit and nothing
 * written: empty text, boxes outside / inverted / empty, a missing, corrupt
 * or absent vocabulary, a SAM 2 model (checkpoint, dumps of the image, video
 * and amg tasks) with --text, SAM 2 options on a SAM 3 model, predict_inst's
 * (--point, --inst) refusals; predict_inst on fixtures/sam3_video's dump
 * against its official outputs (test_predict_inst); `samc bench`
 * (SAM 2 only) given a SAM 3 checkpoint or dump names the family. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "parity/dump.h"
#include "samc.h"
#include "util/cli_run.h"
#include "util/testutil.h"

#define CKPT "fixtures/sam3/tiny_s2_sam3"
#define DUMP "fixtures/sam3/tiny_s2_text_boxes.h5"
#define VOCAB "tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz"

static char *g_tmp, *g_img, *g_ck, *g_cfg, *g_voc, *g_dump;

/* One prompt session of the dump: the command line's prompt words and the
 * official outputs. */
typedef struct session {
    char *args;        /* --text '...' --box ... [--box ...,neg] --threshold T */
    samc_tensor scores, boxes, masks;
    int h, w;
} session;

static void session_free(session *s)
{
    free(s->args);
    samc_tensor_release(&s->scores), samc_tensor_release(&s->boxes), samc_tensor_release(&s->masks);
}

/* Prompt k of the dump, its boxes turned from normalised cx, cy, w, h into
 * the pixels X0,Y0,X1,Y1 the command line takes. */
static session read_session(samc_dump *d, int k, double thr)
{
    session s = {0};
    samc_error e = {0};
    char g[64], p[96];
    snprintf(g, sizeof g, "/inputs/prompts/%d", k);
    char *text = NULL;
    samc_tensor bx = {0};
    int32_t *labels = NULL;
    int64_t nl = 0;
    assert_int_equal(samc_dump_attr_str(d, g, "text", &text, &e), SAMC_OK);
    snprintf(p, sizeof p, "%s/box_cxcywh", g);
    assert_int_equal(samc_dump_read(d, p, &bx, &e), SAMC_OK);
    snprintf(p, sizeof p, "%s/box_labels", g);
    assert_int_equal(samc_dump_read_i32(d, p, &labels, &nl, &e), SAMC_OK);
    snprintf(p, sizeof p, "/outputs/%d/scores", k);
    assert_int_equal(samc_dump_read(d, p, &s.scores, &e), SAMC_OK);
    snprintf(p, sizeof p, "/outputs/%d/boxes", k);
    assert_int_equal(samc_dump_read(d, p, &s.boxes, &e), SAMC_OK);
    snprintf(p, sizeof p, "/outputs/%d/masks", k);
    assert_int_equal(samc_dump_read(d, p, &s.masks, &e), SAMC_OK);
    s.h = (int)s.masks.shape[s.masks.ndim - 2], s.w = (int)s.masks.shape[s.masks.ndim - 1];
    s.args = tu_strdupf("--text '%s' --threshold %.9g", text, thr);
    for (int64_t i = 0; i < nl; i++) {
        const float *b = bx.data + 4 * i;
        char *more = tu_strdupf("%s --box %.9g,%.9g,%.9g,%.9g%s", s.args, (b[0] - b[2] / 2) * s.w,
                                (b[1] - b[3] / 2) * s.h, (b[0] + b[2] / 2) * s.w, (b[1] + b[3] / 2) * s.h,
                                labels[i] ? "" : ",neg");
        free(s.args);
        s.args = more;
    }
    free(text), free(labels);
    samc_tensor_release(&bx);
    return s;
}

static double rel(const float *out, const float *ref, int64_t n, double floor)
{
    double ma = 0, sc = floor;
    for (int64_t i = 0; i < n; i++)
        ma = fmax(ma, fabs((double)out[i] - ref[i])), sc = fmax(sc, fabs((double)ref[i]));
    return ma / sc;
}

/* result.json against the session's official outputs; each mask PNG against
 * the official mask (> 0.5) and its record's area. */
static void check_result(const char *out, const session *s)
{
    char *jp = tu_join(out, "result.json"), *text = tu_slurp(jp);
    cJSON *r = cJSON_Parse(text);
    assert_non_null(r);
    assert_string_equal(cJSON_GetObjectItem(r, "family")->valuestring, "SAM 3");
    assert_string_equal(cJSON_GetObjectItem(r, "impl")->valuestring, "fast");
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "seconds"), "prompt"));
    const cJSON *inst = cJSON_GetObjectItem(r, "instances");
    const int n = cJSON_GetArraySize(inst);
    printf("%d instances (official %lld)\n", n, (long long)s->scores.shape[0]);
    assert_int_equal(n, (int)s->scores.shape[0]);
    const int64_t hw = (int64_t)s->h * s->w;
    for (int k = 0; k < n; k++) {
        const cJSON *o = cJSON_GetArrayItem(inst, k), *b = cJSON_GetObjectItem(o, "box");
        const float score = (float)cJSON_GetObjectItem(o, "score")->valuedouble;
        float box[4];
        for (int i = 0; i < 4; i++)
            box[i] = (float)cJSON_GetArrayItem(b, i)->valuedouble;
        const double rs = rel(&score, s->scores.data + k, 1, 1e-6), rb = rel(box, s->boxes.data + 4 * k, 4, 1.0);
        printf("instance %d: score %.6f (official %.6f, rel %.2g), box rel %.2g\n", k, score, s->scores.data[k], rs, rb);
        assert_true(rs <= 1e-4 && rb <= 1e-4);
        assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "coco_rle"), "counts"));
        char name[32];
        snprintf(name, sizeof name, "mask_%d.png", k);
        char *mp = tu_join(out, name);
        uint8_t *px = NULL;
        int h = 0, w = 0;
        samc_error e = {0};
        assert_int_equal(samc_read_image(mp, &px, &h, &w, &e), SAMC_OK);
        assert_int_equal(h, s->h);
        assert_int_equal(w, s->w);
        int64_t area = 0, differ = 0;
        for (int64_t i = 0; i < hw; i++)
            area += px[3 * i] > 127, differ += (px[3 * i] > 127) != (s->masks.data[k * hw + i] > 0.5f);
        assert_int_equal(area, (int64_t)cJSON_GetObjectItem(o, "area")->valuedouble);
        printf("instance %d: area %lld, %lld pixel(s) differ from the official mask\n", k, (long long)area,
               (long long)differ);
        assert_true(differ <= 2); /* only probabilities within float noise of 0.5 may flip */
        samc_free(px);
        free(mp);
    }
    char *ov = tu_join(out, "overlay.png");
    assert_true(tu_file_size(ov) > 0);
    free(ov);
    cJSON_Delete(r);
    free(jp), free(text);
}

static void run_ok(const char *model_args, const char *out, const session *s, const char *want_err)
{
    char *a = tu_strdupf("segment %s --image '%s' %s --threads 2 --out '%s'", model_args, g_img, s->args, out);
    tu_run_result r = tu_run_samc(g_tmp, a);
    printf("$ samc %s\n%s%s", a, r.out, r.err);
    assert_int_equal(r.rc, 0);
    if (want_err)
        tu_assert_contains(r.err, want_err);
    check_result(out, s);
    tu_run_free(&r);
    free(a);
}

static void test_official_session(void **state)
{
    (void)state;
    samc_dump *d = NULL;
    samc_error e = {0};
    double thr = 0;
    assert_int_equal(samc_dump_open(g_dump, &d, &e), SAMC_OK);
    assert_int_equal(samc_dump_attr_num(d, "/inputs", "confidence_threshold", &thr, NULL, &e), SAMC_OK);
    session s0 = read_session(d, 0, thr), s1 = read_session(d, 1, thr);
    samc_dump_close(d);
    char *ck = tu_strdupf("--model '%s' --config '%s' --vocab '%s'", g_ck, g_cfg, g_voc);
    char *dm = tu_strdupf("--model '%s'", g_dump); /* the dump: its own config and vocabulary */
    char *o1 = tu_join(g_tmp, "s0_ckpt"), *o2 = tu_join(g_tmp, "s0_dump"), *o3 = tu_join(g_tmp, "s1_long");
    run_ok(ck, o1, &s0, NULL);
    run_ok(dm, o2, &s0, NULL);
    run_ok(ck, o3, &s1, NULL);
    session_free(&s0), session_free(&s1);
    free(ck), free(dm), free(o1), free(o2), free(o3);
}

/* The instances of result.json in `dir` (scores and boxes), as one string. */
static char *instances_of(const char *dir)
{
    char *jp = tu_join(dir, "result.json"), *text = tu_slurp(jp);
    cJSON *r = cJSON_Parse(text);
    assert_non_null(r);
    char *out = strdup("");
    const cJSON *inst = cJSON_GetObjectItem(r, "instances"), *o;
    cJSON_ArrayForEach(o, inst) {
        char *box = cJSON_PrintUnformatted(cJSON_GetObjectItem(o, "box"));
        char *more = tu_strdupf("%s%.9g:%s;", out, cJSON_GetObjectItem(o, "score")->valuedouble, box);
        cJSON_free(box);
        free(out);
        out = more;
    }
    cJSON_Delete(r);
    free(jp), free(text);
    return out;
}

/* 40 words: a warning, and the same results as the 30 words the context keeps. */
static void test_long_text(void **state)
{
    (void)state;
    char w40[256] = "", w30[256] = "";
    for (int i = 0; i < 40; i++) {
        strcat(w40, "dog ");
        if (i < 30)
            strcat(w30, "dog ");
    }
    char *dl = tu_join(g_tmp, "long"), *ds = tu_join(g_tmp, "cut");
    const char *dirs[2] = {dl, ds}, *texts[2] = {w40, w30};
    for (int k = 0; k < 2; k++) {
        char *a = tu_strdupf("segment --model '%s' --config '%s' --vocab '%s' --image '%s' --text '%s' "
                             "--threshold 0 --out '%s'", g_ck, g_cfg, g_voc, g_img, texts[k], dirs[k]);
        tu_run_result r = tu_run_samc(g_tmp, a);
        printf("$ samc %s\n%s", a, r.err);
        assert_int_equal(r.rc, 0);
        assert_true((strstr(r.err, "truncated as the official tokenizer does") != NULL) == (k == 0));
        tu_run_free(&r);
        free(a);
    }
    char *il = instances_of(dl), *is = instances_of(ds);
    assert_true(strlen(il) > 0);
    assert_string_equal(il, is);
    free(il), free(is), free(dl), free(ds);
}

/* An .h5 whose /inputs names the task `task` (a dump of a task samc has no
 * model for), with one weight. */
static char *task_dump(const char *task)
{
    char *path = tu_join(g_tmp, "other_task.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gcreate2(f, "/inputs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, "task", t, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(H5Awrite(a, t, &task) >= 0);
    H5Aclose(a), H5Gclose(g);
    g = H5Gcreate2(f, "/weights", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const float one = 1.0f;
    hid_t ds = H5Dcreate2(g, "w", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &one) >= 0);
    H5Dclose(ds), H5Gclose(g), H5Sclose(sp), H5Tclose(t), H5Fclose(f);
    return path;
}

/* A refusal: exit code `rc`, stderr naming the problem, nothing in --out. */
static void refused(const char *args, int rc, const char *want)
{
    char *out = tu_join(g_tmp, "refused");
    char *a = tu_strdupf("segment %s --out '%s'", args, out);
    tu_run_result r = tu_run_samc(g_tmp, a);
    printf("$ samc %s\n  -> %d: %s", a, r.rc, r.err);
    assert_int_equal(r.rc, rc);
    tu_assert_contains(r.err, want);
    char *res = tu_join(out, "result.json"), *m0 = tu_join(out, "mask_0.png"), *ov = tu_join(out, "overlay.png");
    assert_false(tu_file_exists(res) || tu_file_exists(m0) || tu_file_exists(ov));
    tu_run_free(&r);
    free(a), free(out), free(res), free(m0), free(ov);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    char *s3 = tu_strdupf("--model '%s' --config '%s' --image '%s'", g_ck, g_cfg, g_img);
    char *v = tu_strdupf("%s --vocab '%s'", s3, g_voc);
    char *garbage = tu_join(g_tmp, "garbage.gz"), *trunc = tu_join(g_tmp, "trunc.gz");
    assert_int_equal(tu_write_file(garbage, "not a gzip file at all", 22), 0);
    assert_int_equal(tu_write_file(trunc, "\x1f\x8b\x08\x00", 4), 0);
    char *a[40];
    int n = 0;
    refused(a[n++] = tu_strdupf("%s --text ''", v), 2, "empty text");
    refused(a[n++] = tu_strdupf("%s --text dog --box 10,10,200,50", v), 2, "outside the 75x90 image");
    refused(a[n++] = tu_strdupf("%s --text dog --box -5,10,20,50", v), 2, "outside the 75x90 image");
    refused(a[n++] = tu_strdupf("%s --text dog --box 50,10,20,40", v), 2, "x1 < x0 or y1 < y0");
    refused(a[n++] = tu_strdupf("%s --text dog --box 10,10,10,40", v), 2, "zero width or height");
    refused(a[n++] = tu_strdupf("%s --box 10,20,30,20,neg", v), 2, "zero width or height");
    refused(a[n++] = tu_strdupf("%s --text dog --threshold 1.5", v), 2, "--threshold '1.5'");
    refused(a[n++] = tu_strdupf("%s", v), 2, "no prompt");
    refused(a[n++] = tu_strdupf("%s --text dog --point 10,10", v), 2, "--point with --text");
    refused(a[n++] = tu_strdupf("%s --text dog --multimask", v), 2, "--multimask with --text");
    refused(a[n++] = tu_strdupf("%s --text dog --mask-input '%s'", v, garbage), 2, "--mask-input with --text");
    refused(a[n++] = tu_strdupf("%s --point 10,10 --threshold 0.3", v), 2, "--point with --threshold");
    refused(a[n++] = tu_strdupf("%s --text dog --inst", v), 2, "--inst with --text");
    refused(a[n++] = tu_strdupf("%s --point 10,10 --max-hole-area 5", v), 2, "are SAM 2's image predictor options");
    refused(a[n++] = tu_strdupf("%s --point 100,10", v), 2, "outside");
    refused(a[n++] = tu_strdupf("%s --point 10,10 --box 5,5,20,20,neg", v), 2, "SAM 1 task (predict_inst)");
    /* predict_inst needs the tracker half: the image dump has none */
    refused(a[n++] = tu_strdupf("--model '%s' --image '%s' --point 10,10", g_dump, g_img), 1, "no tracker half");
    refused(a[n++] = tu_strdupf("%s --text dog --vocab /nonexistent/vocab.gz", s3), 1, "/nonexistent/vocab.gz");
    refused(a[n++] = tu_strdupf("%s --text dog --vocab '%s'", s3, garbage), 1, "not a gzip file");
    refused(a[n++] = tu_strdupf("%s --text dog --vocab '%s'", s3, trunc), 1, "truncated");
    refused(a[n++] = tu_strdupf("%s --text dog", s3), 2, "give it with --vocab FILE");
    /* SAM 2 models: a checkpoint and dumps of the other tasks */
    char *sam2 = tu_src_path("fixtures/demo/tiny_d_demo.pt"), *sam2_cfg = tu_src_path("fixtures/demo/tiny_d_demo.config.json");
    char *dumps[3] = {tu_src_path("fixtures/tiny_a_sam21_s128.h5"), tu_src_path("fixtures/video/tiny_v1_sam21_s128.h5"),
                      tu_src_path("fixtures/amg/amg_a_nocrop.h5")};
    refused(a[n++] = tu_strdupf("--model '%s' --config '%s' --image '%s' --text dog", sam2, sam2_cfg, g_img), 2,
            "--text is a SAM 3 option");
    for (int i = 0; i < 3; i++)
        refused(a[n++] = tu_strdupf("--model '%s' --image '%s' --text dog", dumps[i], g_img), 2,
                "is a SAM 2 model, which takes --point");
    refused(a[n++] = tu_strdupf("--model '%s' --image '%s' --point 5,5 --vocab '%s'", dumps[0], g_img, g_voc), 2,
            "--vocab is a SAM 3 option");
    refused(a[n++] = tu_strdupf("--model '%s' --image '%s' --point 5,5 --inst", dumps[0], g_img), 2,
            "--inst is a SAM 3 option");
    refused(a[n++] = tu_strdupf("--image '%s' --text dog", g_img), 2, "needs --model");
    char *other = task_dump("depth_estimation");
    refused(a[n++] = tu_strdupf("--model '%s' --image '%s' --text dog", other, g_img), 1,
            "a dump of task 'depth_estimation', which holds no SAM 2 or SAM 3 model");
    free(other);
    /* not a model at all */
    refused(a[n++] = tu_strdupf("--model '%s' --image '%s' --text dog", g_img, g_img), 1, g_img);
    for (int i = 0; i < n; i++)
        free(a[i]);
    for (int i = 0; i < 3; i++)
        free(dumps[i]);
    free(s3), free(v), free(garbage), free(trunc), free(sam2), free(sam2_cfg);
}

/* `samc info` on SAM 3: the family, the config, the strict key check (the
 * tiny checkpoint against the released config fails it, naming the key). */
static void test_info(void **state)
{
    (void)state;
    char *a = tu_strdupf("info '%s' --config '%s' --layers", g_ck, g_cfg);
    tu_run_result r = tu_run_samc(g_tmp, a);
    assert_int_equal(r.rc, 0);
    tu_assert_contains(r.out, "family: SAM 3");
    tu_assert_contains(r.out, "check: every key and shape matches the config");
    tu_assert_contains(r.out, "not included: segment needs --vocab FILE");
    tu_assert_contains(r.out, "backbone.vision_backbone.trunk.blocks.0");
    /* sam3.pt's layout: both halves, and the video family's layers */
    tu_assert_contains(r.out, "halves: detector and tracker (231 tracker.* tensors)");
    tu_assert_contains(r.out, "video (track --text)");
    tu_assert_contains(r.out, "tracker.transformer.encoder.layers.0");
    tu_run_free(&r), free(a);
    a = tu_strdupf("info '%s'", g_dump);
    r = tu_run_samc(g_tmp, a);
    assert_int_equal(r.rc, 0);
    tu_assert_contains(r.out, "config: the dump's /model/config_json");
    tu_assert_contains(r.out, "vocabulary: in the dump");
    tu_assert_contains(r.out, "halves: detector only (no tracker.* weights)");
    tu_run_free(&r), free(a);
    a = tu_strdupf("info '%s'", g_ck);
    r = tu_run_samc(g_tmp, a);
    assert_int_equal(r.rc, 1);
    tu_assert_contains(r.out, "check: FAILED");
    tu_assert_contains(r.out, "expected shape (1024,3,14,14) for config 'sam3 video (built-in release)'");
    tu_run_free(&r), free(a);
}

/* `samc bench` runs the SAM 2 image predictor: a SAM 3 checkpoint or dump is
 * refused with exit 2, naming its family, not with the SAM 2 key check's
 * list of missing keys. */
static void test_bench_refuses_sam3(void **state)
{
    (void)state;
    char *a[2] = {tu_strdupf("bench --model '%s' --config sam2.1_hiera_t --runs 1 --warmup 0", g_ck),
                  tu_strdupf("bench --model '%s' --runs 1 --warmup 0", g_dump)};
    const char *model[2] = {g_ck, g_dump};
    for (int i = 0; i < 2; i++) {
        tu_run_result r = tu_run_samc(g_tmp, a[i]);
        printf("$ samc %s\n  -> %d: %s", a[i], r.rc, r.err);
        assert_int_equal(r.rc, 2);
        char *want = tu_strdupf("samc bench: %s is a SAM 3 model; bench runs SAM 2 models only", model[i]);
        tu_assert_contains(r.err, want);
        assert_null(strstr(r.err, "missing"));
        assert_null(strstr(r.out, "model sam2"));
        tu_run_free(&r), free(want), free(a[i]);
    }
}

/* `samc segment --point/--box/--mask-input` on a SAM 3 model runs
 * predict_inst: fixtures/sam3_video/tiny_vi_inst.h5's three prompts (its
 * image written as a PNG, the previous prompt's low-res logits as the
 * mask input file) give its masks (mask_K.png = official logits > 0,
 * every pixel) and IoUs (result.json, rel 1e-4). */
static void test_predict_inst(void **state)
{
    (void)state;
    char *inst = tu_src_path("fixtures/sam3_video/tiny_vi_inst.h5"), *png = tu_join(g_tmp, "inst.png");
    char *mi = tu_join(g_tmp, "inst_mask.f32");
    samc_dump *d = NULL;
    samc_error e = {0};
    uint8_t *rgb = NULL;
    int nd = 0;
    int64_t dims[4];
    assert_int_equal(samc_dump_open(inst, &d, &e), SAMC_OK);
    assert_int_equal(samc_dump_read_u8(d, "/inputs/image_u8", &rgb, &nd, dims, &e), SAMC_OK);
    assert_int_equal(samc_write_png(png, rgb, (int)dims[0], (int)dims[1], 3, &e), SAMC_OK);
    for (int k = 0; k < 3; k++) {
        char g[64], path[96];
        snprintf(g, sizeof g, "/inputs/prompts/%d", k);
        samc_tensor pc = {0}, box = {0}, mask_in = {0}, masks = {0}, iou = {0};
        int32_t *labels = NULL;
        int64_t np = 0;
        double mm = 0;
        snprintf(path, sizeof path, "%s/point_coords", g);
        assert_int_equal(samc_dump_read(d, path, &pc, &e), SAMC_OK);
        snprintf(path, sizeof path, "%s/point_labels", g);
        assert_int_equal(samc_dump_read_i32(d, path, &labels, &np, &e), SAMC_OK);
        assert_int_equal(samc_dump_attr_num(d, g, "multimask_output", &mm, NULL, &e), SAMC_OK);
        char *args = tu_strdupf("segment --model '%s' --vocab '%s' --image '%s' --inst%s", inst, g_voc, png,
                                mm != 0 ? " --multimask" : "");
        for (int64_t i = 0; i < np; i++) {
            char *more = tu_strdupf("%s --point %.9g,%.9g,%d", args, pc.data[2 * i], pc.data[2 * i + 1], labels[i]);
            free(args), args = more;
        }
        snprintf(path, sizeof path, "%s/box", g);
        if (samc_dump_exists(d, path)) {
            assert_int_equal(samc_dump_read(d, path, &box, &e), SAMC_OK);
            char *more = tu_strdupf("%s --box %.9g,%.9g,%.9g,%.9g", args, box.data[0], box.data[1], box.data[2],
                                    box.data[3]);
            free(args), args = more;
        }
        snprintf(path, sizeof path, "%s/mask_input", g);
        if (samc_dump_exists(d, path)) {
            assert_int_equal(samc_dump_read(d, path, &mask_in, &e), SAMC_OK);
            assert_int_equal(tu_write_file(mi, mask_in.data, (size_t)samc_numel(&mask_in) * sizeof(float)), 0);
            char *more = tu_strdupf("%s --mask-input '%s'", args, mi);
            free(args), args = more;
        }
        char *out = tu_strdupf("%s/inst_%d", g_tmp, k), *full = tu_strdupf("%s --out '%s'", args, out);
        tu_run_result r = tu_run_samc(g_tmp, full);
        printf("$ samc %s\n  -> %d: %s%s", full, r.rc, r.out, r.err);
        assert_int_equal(r.rc, 0);
        snprintf(path, sizeof path, "/outputs/%d/masks", k);
        assert_int_equal(samc_dump_read(d, path, &masks, &e), SAMC_OK);
        snprintf(path, sizeof path, "/outputs/%d/iou_predictions", k);
        assert_int_equal(samc_dump_read(d, path, &iou, &e), SAMC_OK);
        char *jp = tu_join(out, "result.json"), *text = tu_slurp(jp);
        cJSON *res = cJSON_Parse(text);
        assert_non_null(res);
        assert_string_equal(cJSON_GetObjectItem(res, "task")->valuestring, "predict_inst");
        const cJSON *arr = cJSON_GetObjectItem(res, "masks");
        assert_int_equal(cJSON_GetArraySize(arr), (int)iou.shape[0]);
        const int64_t hw = dims[0] * dims[1];
        for (int m = 0; m < (int)iou.shape[0]; m++) {
            const double pi = cJSON_GetObjectItem(cJSON_GetArrayItem(arr, m), "predicted_iou")->valuedouble;
            assert_true(fabs(pi - iou.data[m]) <= 1e-4 * fmax(1.0, fabs(iou.data[m])));
            char *mp = tu_strdupf("%s/mask_%d.png", out, m);
            uint8_t *px = NULL;
            int h = 0, w = 0;
            assert_int_equal(samc_read_image(mp, &px, &h, &w, &e), SAMC_OK);
            assert_int_equal(h * w, (int)hw);
            int64_t diff = 0;
            for (int64_t p = 0; p < hw; p++)
                diff += (px[3 * p] > 127) != (masks.data[m * hw + p] > 0.0f);
            assert_int_equal(diff, 0);
            samc_free(px), free(mp);
        }
        cJSON_Delete(res);
        tu_run_free(&r);
        free(jp), free(text), free(out), free(full), free(args), free(labels);
        samc_tensor_release(&pc), samc_tensor_release(&box), samc_tensor_release(&mask_in);
        samc_tensor_release(&masks), samc_tensor_release(&iou);
    }
    samc_dump_close(d);
    free(rgb), free(inst), free(png), free(mi);
}

/* The dump's image as a PNG (lossless: the same pixels the official run saw). */
static int setup(void **state)
{
    (void)state;
    g_tmp = tu_mkdtemp("cli_sam3");
    g_ck = tu_src_path(CKPT ".pt"), g_cfg = tu_src_path(CKPT ".config.json"), g_voc = tu_src_path(VOCAB);
    g_dump = tu_src_path(DUMP), g_img = tu_join(g_tmp, "image.png");
    samc_dump *d = NULL;
    samc_error e = {0};
    uint8_t *rgb = NULL;
    int nd = 0;
    int64_t dims[4];
    if (samc_dump_open(g_dump, &d, &e) || samc_dump_read_u8(d, "/inputs/image_u8", &rgb, &nd, dims, &e) ||
        samc_write_png(g_img, rgb, (int)dims[0], (int)dims[1], 3, &e))
        fprintf(stderr, "setup: %s\n", e.msg);
    samc_dump_close(d);
    free(rgb);
    return e.status != SAMC_OK;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(g_tmp);
    free(g_tmp), free(g_img), free(g_ck), free(g_cfg), free(g_voc), free(g_dump);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_official_session), cmocka_unit_test(test_long_text),
                                       cmocka_unit_test(test_info), cmocka_unit_test(test_predict_inst),
                                       cmocka_unit_test(test_bad_inputs), cmocka_unit_test(test_bench_refuses_sam3)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
