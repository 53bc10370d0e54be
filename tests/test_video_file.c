/* SPDX-License-Identifier: Apache-2.0 */
/* test_video_file.c - video files in and out (core/io/video_file*.c,
 * include/samc_video.h): the frames of the committed clip equal OpenCV's
 * (what SAM 3's official loader reads) bit for bit, at the file's size and
 * after cv2.resize to the model's input, read in any order, from a path or
 * from memory; a truncated file keeps its readable frames and says where it
 * stops; the writer round-trips; palettised PNGs hold the DAVIS colours; the
 * tracker runs on a video file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/io/video_file.h"
#include "core/io/video_frames.h"
#include "samc.h"
#include "samc_video.h"
#include "util/testutil.h"

/* tests/data/video/clip_v1_cv2.json (tools/make_video_clip.py). */
static cJSON *opencv_reference(void)
{
    char *path = tu_src_path("tests/data/video/clip_v1_cv2.json");
    uint8_t *text = NULL;
    size_t n = 0;
    assert_int_equal(tu_read_file(path, &text, &n), 0);
    cJSON *doc = cJSON_ParseWithLength((const char *)text, n);
    assert_non_null(doc);
    free(text);
    free(path);
    return doc;
}

static unsigned long crc(const uint8_t *p, size_t n) { return crc32(crc32(0L, Z_NULL, 0), p, (uInt)n); }

static unsigned long ref_crc(const cJSON *doc, int t, const char *key)
{
    const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "frames"), t);
    return (unsigned long)cJSON_GetObjectItem(f, key)->valuedouble;
}

/* Every frame of v, in `order`, against OpenCV's frames and resizes. */
static void check_frames(samc_video_file *v, const cJSON *doc, const int *order, int n)
{
    const int h = samc_video_file_height(v), w = samc_video_file_width(v);
    for (int k = 0; k < n; k++) {
        const int t = order[k];
        const uint8_t *rgb = NULL;
        samc_error e = {0};
        assert_int_equal(samc_video_file_frame(v, t, &rgb, &e), SAMC_OK);
        assert_int_equal(crc(rgb, (size_t)h * w * 3), ref_crc(doc, t, "crc32"));
        static const int sizes[] = {128, 1024};
        for (int s = 0; s < 2; s++) {
            const int S = sizes[s];
            char key[32];
            snprintf(key, sizeof key, "crc32_%d", S);
            assert_int_equal(samc_video_file_resized(v, t, S, &rgb, &e), SAMC_OK);
            assert_int_equal(crc(rgb, (size_t)S * S * 3), ref_crc(doc, t, key));
        }
    }
}

static void test_clip_is_opencvs(void **state)
{
    (void)state;
    cJSON *doc = opencv_reference();
    char *clip = tu_src_path("fixtures/video/clip_v1.mp4");
    samc_video_file *v = NULL;
    samc_error e = {0};
    assert_int_equal(samc_video_file_open(clip, &v, &e), SAMC_OK);
    assert_int_equal(samc_video_file_count(v), cJSON_GetArraySize(cJSON_GetObjectItem(doc, "frames")));
    assert_int_equal(samc_video_file_height(v), cJSON_GetObjectItem(doc, "height")->valueint);
    assert_int_equal(samc_video_file_width(v), cJSON_GetObjectItem(doc, "width")->valueint);
    assert_true(samc_video_file_fps(v) == cJSON_GetObjectItem(doc, "fps")->valuedouble);
    assert_null(samc_video_file_damage(v));
    static const int forward[] = {0, 1, 2, 3, 4}, backward[] = {4, 3, 2, 1, 0}, jumps[] = {3, 0, 4, 1, 2};
    check_frames(v, doc, forward, 5);
    check_frames(v, doc, backward, 5);
    samc_video_file_free(v);
    /* a fresh reader for each order: no frame comes from a cache filled in another order */
    assert_int_equal(samc_video_file_open(clip, &v, &e), SAMC_OK);
    check_frames(v, doc, backward, 5);
    samc_video_file_free(v);
    assert_int_equal(samc_video_file_open(clip, &v, &e), SAMC_OK);
    check_frames(v, doc, jumps, 5);
    samc_video_file_free(v);
    /* the same bytes from memory */
    uint8_t *bytes = NULL;
    size_t n = 0;
    assert_int_equal(tu_read_file(clip, &bytes, &n), 0);
    assert_int_equal(samc_video_file_open_memory(bytes, n, "clip", &v, &e), SAMC_OK);
    check_frames(v, doc, jumps, 5);
    samc_video_file_free(v);
    free(bytes);
    free(clip);
    cJSON_Delete(doc);
}

/* The frame the tracker's preprocessing gets from a video file is the
 * loader's resize; from a frames directory, the frame itself. */
static void test_model_input(void **state)
{
    (void)state;
    cJSON *doc = opencv_reference();
    char *clip = tu_src_path("fixtures/video/clip_v1.mp4");
    samc_frames *f = NULL;
    samc_error e = {0};
    assert_int_equal(samc_frames_open_path(clip, &f, &e), SAMC_OK);
    assert_string_equal(samc_frames_kind(f), "video file");
    const uint8_t *rgb = NULL;
    int h = 0, w = 0;
    assert_int_equal(samc_frames_get_input(f, 2, 128, &rgb, &h, &w, &e), SAMC_OK);
    assert_int_equal(h, 128);
    assert_int_equal(w, 128);
    assert_int_equal(crc(rgb, 128 * 128 * 3), ref_crc(doc, 2, "crc32_128"));
    samc_frames_free(f);
    char *dir = tu_src_path("fixtures/video/tiny_v1_sam21_s128_frames");
    assert_int_equal(samc_frames_open_path(dir, &f, &e), SAMC_OK);
    assert_string_equal(samc_frames_kind(f), "frames directory");
    assert_int_equal(samc_frames_get_input(f, 2, 128, &rgb, &h, &w, &e), SAMC_OK);
    assert_int_equal(h, 96);
    assert_int_equal(w, 144);
    samc_frames_free(f);
    free(dir);
    free(clip);
    cJSON_Delete(doc);
}

/* A synthetic frame: a gradient with a moving square. */
static void synth(uint8_t *rgb, int h, int w, int t)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = rgb + ((size_t)y * w + x) * 3;
            const bool sq = x >= 4 * t + 10 && x < 4 * t + 40 && y >= 20 && y < 50;
            p[0] = sq ? 240 : (uint8_t)(x * 255 / w), p[1] = sq ? 30 : (uint8_t)(y * 255 / h), p[2] = 90;
        }
}

static char *write_synth(const char *dir, const char *name, int h, int w, int n)
{
    char *path = tu_join(dir, name);
    uint8_t *rgb = malloc((size_t)h * w * 3);
    samc_video_writer *vw = NULL;
    samc_error e = {0};
    assert_int_equal(samc_video_writer_open(path, h, w, 12.5, &vw, &e), SAMC_OK);
    for (int t = 0; t < n; t++) {
        synth(rgb, h, w, t);
        assert_int_equal(samc_video_writer_add(vw, rgb, &e), SAMC_OK);
    }
    assert_int_equal(samc_video_writer_close(vw, &e), SAMC_OK);
    free(rgb);
    return path;
}

static void test_writer_roundtrip(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("video_write");
    static const char *const names[] = {"a.mp4", "b.mkv", "c.webm", "d.avi", "e.mov"};
    static const int sizes[][2] = {{96, 144}, {99, 151}, {96, 144}, {64, 80}, {50, 71}};
    for (int i = 0; i < 5; i++) {
        const int h = sizes[i][0], w = sizes[i][1], n = 9;
        char *path = write_synth(dir, names[i], h, w, n);
        samc_video_reader *r = NULL;
        samc_video_info vi;
        samc_error e = {0};
        assert_int_equal(samc_video_reader_open(path, &r, &e), SAMC_OK);
        assert_int_equal(samc_video_reader_info(r, &vi, &e), SAMC_OK);
        assert_int_equal(vi.frames, n);
        assert_int_equal(vi.height, h + (h & 1)); /* 4:2:0: an odd side gets a replicated row or column */
        assert_int_equal(vi.width, w + (w & 1));
        assert_true(vi.fps > 12.4 && vi.fps < 12.6);
        assert_null(vi.damage);
        uint8_t *want = malloc((size_t)h * w * 3);
        for (int t = n - 1; t >= 0; t--) { /* lossy, but close */
            const uint8_t *got = NULL;
            assert_int_equal(samc_video_reader_frame(r, t, &got, &e), SAMC_OK);
            synth(want, h, w, t);
            double sum = 0;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    for (int c = 0; c < 3; c++)
                        sum += abs(got[((size_t)y * vi.width + x) * 3 + c] - want[((size_t)y * w + x) * 3 + c]);
            const double mean = sum / ((double)h * w * 3);
            if (mean > 6.0)
                fail_msg("%s frame %d: mean difference %.2f", names[i], t, mean);
        }
        free(want);
        samc_video_reader_free(r);
        free(path);
    }
    samc_error e = {0};
    samc_video_writer *vw = NULL;
    char *bad = tu_join(dir, "x.txt");
    assert_int_equal(samc_video_writer_open(bad, 10, 10, 25, &vw, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "not a video file name"));
    free(bad);
    tu_rmtree(dir);
    free(dir);
}

/* A file cut in half keeps the frames before the cut and says where it stops. */
static void test_truncated(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("video_cut");
    static const char *const names[] = {"long.mp4", "long.mkv", "long.webm"};
    for (int i = 0; i < 3; i++) {
        char *path = write_synth(dir, names[i], 96, 144, 24), *cut = tu_strdupf("%s.cut.%s", path, names[i] + 5);
        assert_int_equal(tu_copy_prefix(path, cut, (size_t)tu_file_size(path) * 6 / 10), 0);
        samc_video_reader *r = NULL;
        samc_video_info vi;
        samc_error e = {0};
        assert_int_equal(samc_video_reader_open(cut, &r, &e), SAMC_OK);
        assert_int_equal(samc_video_reader_info(r, &vi, &e), SAMC_OK);
        assert_non_null(vi.damage);
        assert_true(vi.frames > 0 && vi.frames < 24);
        int read = 0;
        for (int t = 0; t < vi.frames; t++) { /* every frame it reports is readable (the last maybe concealed) */
            const uint8_t *rgb = NULL;
            read += samc_video_reader_frame(r, t, &rgb, &e) == SAMC_OK;
        }
        assert_true(read >= vi.frames - 1);
        samc_video_reader_free(r);
        free(cut);
        free(path);
    }
    tu_rmtree(dir);
    free(dir);
}

static void test_not_a_video(void **state)
{
    (void)state;
    samc_video_reader *r = NULL;
    samc_error e = {0};
    char *text = tu_src_path("CMakeLists.txt");
    assert_int_equal(samc_video_reader_open(text, &r, &e), SAMC_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "CMakeLists.txt"));
    assert_int_equal(samc_video_reader_open("/nonexistent/x.mp4", &r, &e), SAMC_ERR_IO);
    /* a URL is a file name: samc reads files, never the network */
    assert_int_not_equal(samc_video_reader_open("http://127.0.0.1:9/x.mp4", &r, &e), SAMC_OK);
    assert_int_not_equal(samc_video_reader_open_memory("not a video at all", 18, "bytes", &r, &e), SAMC_OK);
    assert_non_null(strstr(e.msg, "bytes"));
    /* an HLS playlist naming a local file opens nothing (no protocol but the file itself) */
    static const char m3u8[] = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n";
    assert_int_not_equal(samc_video_reader_open_memory(m3u8, sizeof m3u8 - 1, "playlist", &r, &e), SAMC_OK);
    assert_null(r);
    free(text);
}

static void test_palette_png(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("palette"), *path = tu_join(dir, "p.png");
    uint8_t idx[4 * 3] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255};
    samc_error e = {0};
    assert_int_equal(samc_write_palette_png(path, idx, 3, 4, NULL, 0, &e), SAMC_OK);
    uint8_t *rgb = NULL;
    int h = 0, w = 0;
    assert_int_equal(samc_read_image(path, &rgb, &h, &w, &e), SAMC_OK);
    assert_int_equal(h, 3);
    assert_int_equal(w, 4);
    /* the official DAVIS_PALETTE: 1 (128,0,0), 2 (0,128,0), 8 (64,0,0), 255 (224,224,192) */
    assert_memory_equal(rgb + 3 * 1, ((uint8_t[]){128, 0, 0}), 3);
    assert_memory_equal(rgb + 3 * 2, ((uint8_t[]){0, 128, 0}), 3);
    assert_memory_equal(rgb + 3 * 8, ((uint8_t[]){64, 0, 0}), 3);
    assert_memory_equal(rgb + 3 * 11, ((uint8_t[]){224, 224, 192}), 3);
    samc_free(rgb);
    const uint8_t two[6] = {0, 0, 0, 255, 255, 255};
    assert_int_equal(samc_write_palette_png(path, idx, 3, 4, two, 2, &e), SAMC_ERR_ARG); /* index 2+ of 2 colours */
    assert_non_null(strstr(e.msg, "past the 2 palette colours"));
    free(path);
    tu_rmtree(dir);
    free(dir);
}

static samc_status count_frame(void *user, const samc_frame_masks *m)
{
    int *n = user;
    assert_int_equal(m->height, 96);
    assert_int_equal(m->width, 144);
    (*n)++;
    return SAMC_OK;
}

static void test_tracker_on_file(void **state)
{
    (void)state;
    char *model = tu_src_path("fixtures/video/tiny_v1_sam21_s128.h5"), *clip = tu_src_path("fixtures/video/clip_v1.mp4");
    samc_tracker *t = NULL;
    samc_error e = {0};
    assert_int_equal(samc_tracker_load(model, model, &t, &e), SAMC_OK);
    assert_int_equal(samc_tracker_open_video(t, clip, &e), SAMC_OK);
    samc_video_info vi;
    assert_int_equal(samc_tracker_video_info(t, &vi, &e), SAMC_OK);
    assert_string_equal(vi.source, "video file");
    assert_string_equal(vi.codec, "h264");
    assert_int_equal(vi.frames, 5);
    const float pt[2] = {50, 40};
    const int32_t lab[1] = {1};
    assert_int_equal(samc_tracker_add_points(t, 0, 1, pt, lab, 1, NULL, 1, NULL, &e), SAMC_OK);
    int n = 0;
    assert_int_equal(samc_tracker_propagate(t, -1, -1, 0, count_frame, &n, &e), SAMC_OK);
    assert_int_equal(n, 5);
    samc_tracker_free(t);
    free(model);
    free(clip);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clip_is_opencvs), cmocka_unit_test(test_model_input),
        cmocka_unit_test(test_writer_roundtrip), cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_not_a_video), cmocka_unit_test(test_palette_png),
        cmocka_unit_test(test_tracker_on_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
