/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_sam3_track.c - `samc track --text` on SAM 3 as a user runs it:
 * the model and frames of fixtures/sam3_video/tiny_vt_loop.h5 (the dump as
 * the model, its JPEG frames beside it), the text of its first request on
 * frame 2, tracked forward: track.jsonl's frames, object ids, scores and
 * mask areas, and the mask PNGs, equal the official forward half of its
 * propagation (/outputs/requests/1, yields 0-5); backward from frame 2
 * with --max-frames 1 writes frames 2 and 1 (the prompt's frame from the
 * prompt). Then the refusals, each with its message, a non-zero exit and
 * no frame written: --text on a SAM 2 model, a SAM 3 model without its
 * tracker half, a SAM 3 model without --text or with --prompt, frames of
 * two sizes, a frame outside the video, an empty text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "parity/dump.h"
#include "samc.h"
#include "util/cli_run.h"
#include "util/testutil.h"

#define LOOP "fixtures/sam3_video/tiny_vt_loop"

static char *g_tmp, *g_dump, *g_frames;

/* The lines of DIR/track.jsonl as JSON objects (n of them). */
static cJSON **read_jsonl(const char *dir, int *n)
{
    char *path = tu_join(dir, "track.jsonl"), *text = tu_slurp(path);
    cJSON **lines = calloc(64, sizeof *lines);
    *n = 0;
    for (char *s = text, *nl; s && *s && *n < 64; s = nl + 1) {
        nl = strchr(s, '\n');
        assert_non_null(nl);
        *nl = 0;
        assert_non_null(lines[*n] = cJSON_Parse(s));
        (*n)++;
    }
    free(path), free(text);
    return lines;
}

static void free_lines(cJSON **l, int n)
{
    for (int i = 0; i < n; i++)
        cJSON_Delete(l[i]);
    free(l);
}

/* One track.jsonl frame against /outputs/requests/1/yields/<y>. */
static void check_frame(samc_dump *d, const cJSON *line, int y, const char *out)
{
    char g[96], path[160];
    samc_error e = {0};
    snprintf(g, sizeof g, "/outputs/requests/1/yields/%d", y);
    double fi = -1;
    assert_int_equal(samc_dump_attr_num(d, g, "frame_index", &fi, NULL, &e), SAMC_OK);
    assert_int_equal(cJSON_GetObjectItem(line, "frame")->valueint, (int)fi);
    samc_tensor ids = {0}, probs = {0}, masks = {0};
    snprintf(path, sizeof path, "%s/out_obj_ids", g);
    assert_int_equal(samc_dump_read(d, path, &ids, &e), SAMC_OK);
    snprintf(path, sizeof path, "%s/out_probs", g);
    assert_int_equal(samc_dump_read(d, path, &probs, &e), SAMC_OK);
    snprintf(path, sizeof path, "%s/out_binary_masks", g);
    assert_int_equal(samc_dump_read(d, path, &masks, &e), SAMC_OK);
    const cJSON *objs = cJSON_GetObjectItem(line, "objects");
    assert_int_equal(cJSON_GetArraySize(objs), (int)ids.shape[0]);
    const int64_t hw = masks.shape[1] * masks.shape[2];
    for (int k = 0; k < (int)ids.shape[0]; k++) {
        const cJSON *o = cJSON_GetArrayItem(objs, k);
        double area = 0;
        for (int64_t p = 0; p < hw; p++)
            area += masks.data[k * hw + p] != 0.0f;
        assert_int_equal(cJSON_GetObjectItem(o, "obj_id")->valueint, (int)ids.data[k]);
        assert_true(fabs(cJSON_GetObjectItem(o, "score")->valuedouble - probs.data[k]) <= 1e-4);
        assert_int_equal((int)cJSON_GetObjectItem(o, "area")->valuedouble, (int)area);
        char *png = tu_strdupf("%s/masks/%s", out, cJSON_GetObjectItem(o, "file")->valuestring);
        assert_true(tu_file_size(png) > 0);
        free(png);
    }
    printf("frame %d: %d object(s) as the official run\n", (int)fi, (int)ids.shape[0]);
    samc_tensor_release(&ids), samc_tensor_release(&probs), samc_tensor_release(&masks);
}

static void test_forward_as_official(void **state)
{
    (void)state;
    samc_error e = {0};
    samc_dump *d = NULL;
    assert_int_equal(samc_dump_open(g_dump, &d, &e), SAMC_OK);
    char *text = NULL;
    assert_int_equal(samc_dump_attr_str(d, "/inputs/requests/0", "text", &text, &e), SAMC_OK);
    char *out = tu_join(g_tmp, "fwd");
    char *args = tu_strdupf("track --model '%s' --frames '%s' --text '%s' --start 2 --out '%s' --threads 2 --palette-png",
                            g_dump, g_frames, text, out);
    tu_run_result r = tu_run_samc(g_tmp, args);
    printf("$ samc %s\n  -> %d: %s", args, r.rc, r.err);
    assert_int_equal(r.rc, 0);
    int n = 0;
    cJSON **lines = read_jsonl(out, &n);
    assert_int_equal(n, 6); /* frames 2..7 */
    for (int i = 0; i < n; i++)
        check_frame(d, lines[i], i, out);
    /* the palette PNG of frame 7 (object 2): index id + 1 where its mask is */
    char *pal = tu_join(out, "palette/00007.png"), *m7 = tu_join(out, "masks/00007_obj2.png");
    uint8_t *pp = NULL, *mp = NULL;
    int ph = 0, pw = 0, mh = 0, mw = 0;
    assert_int_equal(samc_read_image(pal, &pp, &ph, &pw, &e), SAMC_OK);
    assert_int_equal(samc_read_image(m7, &mp, &mh, &mw, &e), SAMC_OK);
    assert_int_equal(ph * pw, mh * mw);
    int64_t wrong = 0;
    for (int64_t p = 0; p < (int64_t)ph * pw; p++) /* read as RGB: palette index 3 is a colour, 0 black */
        wrong += (mp[3 * p] > 127) != (pp[3 * p] || pp[3 * p + 1] || pp[3 * p + 2]);
    assert_int_equal(wrong, 0);
    samc_free(pp), samc_free(mp);
    free(pal), free(m7);
    char *sum = tu_join(out, "track.json"), *js = tu_slurp(sum);
    cJSON *root = cJSON_Parse(js);
    assert_non_null(root);
    assert_string_equal(cJSON_GetObjectItem(root, "text")->valuestring, text);
    assert_int_equal(cJSON_GetObjectItem(root, "frames_tracked")->valueint, 6);
    cJSON_Delete(root);
    free_lines(lines, n);
    tu_run_free(&r);
    free(sum), free(js), free(args), free(out), free(text);

    /* backward from the prompt's frame, one frame: 2 (the prompt's), then 1 */
    out = tu_join(g_tmp, "bwd");
    args = tu_strdupf("track --model '%s' --frames '%s' --text car --start 2 --reverse --max-frames 1 --out '%s'",
                      g_dump, g_frames, out);
    r = tu_run_samc(g_tmp, args);
    printf("$ samc %s\n  -> %d: %s", args, r.rc, r.err);
    assert_int_equal(r.rc, 0);
    lines = read_jsonl(out, &n);
    assert_int_equal(n, 2);
    assert_int_equal(cJSON_GetObjectItem(lines[0], "frame")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(lines[1], "frame")->valueint, 1);
    free_lines(lines, n);
    tu_run_free(&r);
    free(args), free(out);
    samc_dump_close(d);
}

static void refused(const char *args, int rc, const char *want)
{
    char *out = tu_join(g_tmp, "refused");
    char *a = tu_strdupf("track %s --out '%s'", args, out);
    tu_run_result r = tu_run_samc(g_tmp, a);
    printf("$ samc %s\n  -> %d: %s", a, r.rc, r.err);
    assert_int_equal(r.rc, rc);
    tu_assert_contains(r.err, want);
    char *jl = tu_join(out, "track.jsonl"), *js = tu_join(out, "track.json");
    assert_false(tu_file_exists(jl) || tu_file_exists(js));
    tu_run_free(&r);
    free(a), free(out), free(jl), free(js);
}

static void test_refusals(void **state)
{
    (void)state;
    char *sam2 = tu_src_path("fixtures/video/tiny_v1_sam21_s128.h5");
    char *img3 = tu_src_path("fixtures/sam3/tiny_s2_text_boxes.h5");
    char *other = tu_src_path("fixtures/video/tiny_v1_sam21_s128_frames/00000.jpg");
    char *first = tu_strdupf("%s/00000.jpg", g_frames);
    /* frames of two sizes: the fixture's first frame and another clip's */
    char *mixed = tu_join(g_tmp, "mixed"), *m0 = tu_join(mixed, "00000.jpg"), *m1 = tu_join(mixed, "00001.jpg");
    char *cmd = tu_strdupf("mkdir -p '%s' && cp '%s' '%s' && cp '%s' '%s'", mixed, first, m0, other, m1);
    assert_int_equal(system(cmd), 0);
    char *a[16];
    int n = 0;
    refused(a[n++] = tu_strdupf("--model '%s' --frames '%s' --text car", sam2, g_frames), 2,
            "is a SAM 2 model, which takes no text");
    refused(a[n++] = tu_strdupf("--model '%s' --frames '%s' --text car", img3, g_frames), 1, "no tracker half");
    refused(a[n++] = tu_strdupf("--model '%s' --frames '%s' --prompt 0:1:point=5,5", g_dump, g_frames), 2,
            "give the concept to track with --text");
    refused(a[n++] = tu_strdupf("--model '%s' --frames '%s' --text car --prompt 0:1:point=5,5", g_dump, g_frames), 2,
            "SAM 3 tracking takes a --text concept");
    refused(a[n++] = tu_strdupf("--model '%s' --frames '%s' --text car", g_dump, mixed), 1, "but the first frame is");
    refused(a[n++] = tu_strdupf("--model '%s' --frames '%s' --text car --start 8", g_dump, g_frames), 2,
            "outside the video");
    refused(a[n++] = tu_strdupf("--model '%s' --frames '%s' --text ''", g_dump, g_frames), 2, "the text is empty");
    for (int i = 0; i < n; i++)
        free(a[i]);
    free(sam2), free(img3), free(other), free(first), free(mixed), free(m0), free(m1), free(cmd);
}

static int setup(void **state)
{
    (void)state;
    g_tmp = tu_mkdtemp("cli_sam3_track");
    g_dump = tu_src_path(LOOP ".h5"), g_frames = tu_src_path(LOOP "_frames");
    return g_tmp ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(g_tmp);
    free(g_tmp), free(g_dump), free(g_frames);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_forward_as_official), cmocka_unit_test(test_refusals)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
