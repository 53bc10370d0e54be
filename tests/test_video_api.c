/* SPDX-License-Identifier: Apache-2.0 */
/* test_video_api.c - the tracker API (include/samc.h) on the committed video
 * fixture: official outputs reproduced through the public calls, every
 * predictor operation, and the bad uses the video issue lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/io/video_frames.h"
#include "parity/dump.h"
#include "parity/parity.h"
#include "samc.h"
#include "util/testutil.h"

typedef struct cmp_ctx {
    samc_dump *d;
    int frames, objs_seen;
    double worst;
} cmp_ctx;

static samc_status compare_frame(void *user, const samc_frame_masks *m)
{
    cmp_ctx *c = user;
    const int64_t hw = (int64_t)m->height * m->width;
    for (int k = 0; k < m->n_obj; k++) {
        char path[96];
        snprintf(path, sizeof path, "/outputs/frames/%d/%d/mask_logits", m->frame_idx, m->obj_ids[k]);
        samc_tensor ref = {0};
        if (samc_dump_read(c->d, path, &ref, NULL))
            continue;
        double max_abs, rel, nmse;
        samc_parity_metrics(m->logits + k * hw, ref.data, hw, &max_abs, &rel, &nmse);
        c->worst = rel > c->worst ? rel : c->worst;
        c->objs_seen++;
        samc_tensor_release(&ref);
    }
    c->frames++;
    return SAMC_OK;
}

static samc_tracker *open_v1(samc_dump **d)
{
    char *path = tu_src_path("fixtures/video/tiny_v1_sam21_s128.h5");
    samc_tracker *t = NULL;
    samc_error e = {0};
    assert_int_equal(samc_tracker_load(path, path, &t, &e), SAMC_OK);
    assert_int_equal(samc_dump_open(path, d, &e), SAMC_OK);
    uint8_t *frames = NULL;
    int nd;
    int64_t dims[4];
    assert_int_equal(samc_dump_read_u8(*d, "/inputs/frames_u8", &frames, &nd, dims, &e), SAMC_OK);
    assert_int_equal(samc_tracker_open_frames(t, frames, (int)dims[0], (int)dims[1], (int)dims[2], &e), SAMC_OK);
    free(frames);
    free(path);
    return t;
}

/* One frame's logits for two objects prompted at the same point, with the
 * tracker's non_overlap_masks given as `non_overlap` (< 0: the config's). */
static float *overlapping_pair(const samc_model *m, const uint8_t *frames, const int64_t *dims, int non_overlap,
                               int64_t *n)
{
    samc_error e = {0};
    samc_tracker_params tp = samc_tracker_default_params();
    tp.non_overlap_masks = non_overlap;
    samc_tracker *t = NULL;
    assert_int_equal(samc_tracker_new(m, &tp, &t, &e), SAMC_OK);
    assert_int_equal(samc_tracker_open_frames(t, frames, (int)dims[0], (int)dims[1], (int)dims[2], &e), SAMC_OK);
    float pt[2] = {50, 40};
    int32_t pos[1] = {1};
    samc_frame_masks out;
    assert_int_equal(samc_tracker_add_points(t, 0, 1, pt, pos, 1, NULL, 1, NULL, &e), SAMC_OK);
    assert_int_equal(samc_tracker_add_points(t, 0, 2, pt, pos, 1, NULL, 1, &out, &e), SAMC_OK);
    assert_int_equal(out.n_obj, 2);
    *n = 2 * (int64_t)out.height * out.width;
    float *copy = malloc((size_t)*n * sizeof *copy);
    memcpy(copy, out.logits, (size_t)*n * sizeof *copy);
    samc_tracker_free(t);
    return copy;
}

/* samc_tracker_default_params' non_overlap_masks (-1) is the config's, as
 * the official builder passes it: tiny_v2's config says true. */
static void test_non_overlap_from_config(void **s)
{
    (void)s;
    char *path = tu_src_path("fixtures/video/tiny_v2_sam20_s128.h5");
    samc_error e = {0};
    samc_model *m = NULL;
    assert_int_equal(samc_model_load(path, NULL, &m, &e), SAMC_OK);
    samc_dump *d;
    assert_int_equal(samc_dump_open(path, &d, &e), SAMC_OK);
    uint8_t *frames = NULL;
    int nd;
    int64_t dims[4], n0, n1, nd_;
    assert_int_equal(samc_dump_read_u8(d, "/inputs/frames_u8", &frames, &nd, dims, &e), SAMC_OK);
    float *off = overlapping_pair(m, frames, dims, 0, &n0);
    float *on = overlapping_pair(m, frames, dims, 1, &n1);
    float *dflt = overlapping_pair(m, frames, dims, -1, &nd_);
    assert_true(n0 == n1 && n1 == nd_);
    assert_memory_equal(dflt, on, (size_t)n1 * sizeof *on);
    assert_memory_not_equal(off, on, (size_t)n1 * sizeof *on); /* the constraint changed the second object */
    free(off), free(on), free(dflt), free(frames), free(path);
    samc_dump_close(d);
    samc_model_free(m);
}

/* The fixture's prompts (tools/make_fixtures.sh, V1) through the API. */
static void test_reproduces_official(void **s)
{
    (void)s;
    samc_dump *d;
    samc_tracker *t = open_v1(&d);
    samc_error e = {0};
    float p1[2] = {50, 40}, p2[2] = {90, 60}, p3[2] = {60, 45}, box[4] = {70, 20, 130, 80};
    int32_t pos[1] = {1}, neg[1] = {0};
    samc_frame_masks out;
    assert_int_equal(samc_tracker_add_points(t, 0, 1, p1, pos, 1, NULL, 1, &out, &e), SAMC_OK);
    assert_int_equal(out.n_obj, 1);
    assert_int_equal(samc_tracker_add_points(t, 0, 1, p2, neg, 1, NULL, 0, NULL, &e), SAMC_OK);
    assert_int_equal(samc_tracker_add_points(t, 2, 2, NULL, NULL, 0, box, 1, &out, &e), SAMC_OK);
    assert_int_equal(out.n_obj, 2);
    assert_int_equal(samc_tracker_add_points(t, 3, 1, p3, pos, 1, NULL, 1, NULL, &e), SAMC_OK);
    cmp_ctx c = {.d = d};
    assert_int_equal(samc_tracker_propagate(t, 2, -1, 0, compare_frame, &c, &e), SAMC_OK);
    assert_int_equal(c.frames, 3);       /* frames 2, 3, 4 */
    assert_int_equal(c.objs_seen, 6);
    assert_true(c.worst <= 1e-5);
    /* A new object after tracking started, then reverse propagation. */
    float p4[2] = {20, 20};
    assert_int_equal(samc_tracker_add_points(t, 4, 7, p4, pos, 1, NULL, 1, &out, &e), SAMC_OK);
    assert_int_equal(out.n_obj, 3);
    c = (cmp_ctx){.d = NULL};
    assert_int_equal(samc_tracker_propagate(t, 4, 2, 1, NULL, NULL, &e), SAMC_OK);
    samc_tracker_free(t);
    samc_dump_close(d);
}

static void test_bad_uses(void **s)
{
    (void)s;
    samc_dump *d;
    samc_tracker *t = open_v1(&d);
    samc_error e = {0};
    assert_int_equal(samc_tracker_propagate(t, -1, -1, 0, NULL, NULL, &e), SAMC_ERR_ARG); /* before any prompt */
    assert_non_null(strstr(e.msg, "no points"));
    float p[2] = {10, 10};
    int32_t l[1] = {1};
    e = (samc_error){0};
    assert_int_equal(samc_tracker_add_points(t, 5, 1, p, l, 1, NULL, 1, NULL, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "frame index 5"));
    e = (samc_error){0};
    int32_t bad[1] = {7};
    assert_int_equal(samc_tracker_add_points(t, 0, 1, p, bad, 1, NULL, 1, NULL, &e), SAMC_ERR_ARG);
    e = (samc_error){0};
    float box[4] = {50, 10, 20, 30};
    assert_int_equal(samc_tracker_add_points(t, 0, 1, NULL, NULL, 0, box, 1, NULL, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "box"));
    e = (samc_error){0};
    assert_int_equal(samc_tracker_remove_object(t, 42, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "42"));
    /* clearing the only prompt of an object leaves it without conditioning frames */
    assert_int_equal(samc_tracker_add_points(t, 0, 1, p, l, 1, NULL, 1, NULL, &e), SAMC_OK);
    assert_int_equal(samc_tracker_clear_frame(t, 0, 1, &e), SAMC_OK);
    e = (samc_error){0};
    assert_int_equal(samc_tracker_propagate(t, -1, -1, 0, NULL, NULL, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "object id 1"));
    /* remove the last object = reset; then a fresh prompt works again */
    assert_int_equal(samc_tracker_remove_object(t, 1, &e), SAMC_OK);
    e = (samc_error){0};
    assert_int_equal(samc_tracker_add_points(t, 1, 3, p, l, 1, NULL, 1, NULL, &e), SAMC_OK);
    assert_int_equal(samc_tracker_propagate(t, -1, 1, 0, NULL, NULL, &e), SAMC_OK);
    assert_int_equal(samc_tracker_reset(t, NULL), SAMC_OK);
    e = (samc_error){0};
    assert_int_equal(samc_tracker_propagate(t, -1, -1, 0, NULL, NULL, &e), SAMC_ERR_ARG);
    samc_tracker_free(t);
    samc_dump_close(d);
    /* no frames at all */
    samc_tracker *t2 = NULL;
    char *path = tu_src_path("fixtures/video/tiny_v1_sam21_s128.h5");
    assert_int_equal(samc_tracker_load(path, path, &t2, NULL), SAMC_OK);
    e = (samc_error){0};
    assert_int_equal(samc_tracker_add_points(t2, 0, 1, p, l, 1, NULL, 1, NULL, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "open frames"));
    samc_tracker_free(t2);
    free(path);
}

/* The fixture's JPEG frames decode to exactly the pixels Pillow gave the
 * official loader (the dump's /inputs/frames_u8). */
static void test_frames_dir_matches_pillow(void **s)
{
    (void)s;
    const char *names[2][2] = {{"fixtures/video/tiny_v1_sam21_s128.h5", "fixtures/video/tiny_v1_sam21_s128_frames"},
                               {"fixtures/video/tiny_v2_sam20_s128.h5", "fixtures/video/tiny_v2_sam20_s128_frames"}};
    for (int k = 0; k < 2; k++) {
        char *dump = tu_src_path(names[k][0]), *dir = tu_src_path(names[k][1]);
        samc_dump *d;
        samc_frames *f;
        uint8_t *ref = NULL;
        int nd;
        int64_t dims[4];
        assert_int_equal(samc_dump_open(dump, &d, NULL), SAMC_OK);
        assert_int_equal(samc_dump_read_u8(d, "/inputs/frames_u8", &ref, &nd, dims, NULL), SAMC_OK);
        assert_int_equal(samc_frames_open_dir(dir, &f, NULL), SAMC_OK);
        assert_int_equal(samc_frames_count(f), dims[0]);
        const size_t n = (size_t)(dims[1] * dims[2] * 3);
        for (int t = 0; t < dims[0]; t++) {
            const uint8_t *rgb;
            assert_int_equal(samc_frames_get(f, t, &rgb, NULL), SAMC_OK);
            assert_memory_equal(rgb, ref + t * n, n);
        }
        samc_frames_free(f);
        free(ref);
        samc_dump_close(d);
        free(dump), free(dir);
    }
}

/* Streaming: a moving disc, one prompt on frame 0, frames pushed one by one;
 * the memory bank never holds more than it can read. */
static samc_status count_cb(void *user, const samc_frame_masks *m)
{
    (void)m;
    ++*(int *)user;
    return SAMC_OK;
}

static void test_streaming_bounded(void **s)
{
    (void)s;
    char *path = tu_src_path("fixtures/video/tiny_v1_sam21_s128.h5");
    samc_tracker *t = NULL;
    samc_error e = {0};
    assert_int_equal(samc_tracker_load(path, path, &t, &e), SAMC_OK);
    const int H = 48, W = 64, N = 40;
    uint8_t *img = malloc((size_t)H * W * 3);
    int calls = 0;
    for (int f = 0; f < N; f++) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                const int cx = 16 + f % 30, in = (x - cx) * (x - cx) + (y - 20) * (y - 20) < 100;
                uint8_t *p = img + (y * W + x) * 3;
                p[0] = in ? 220 : 30, p[1] = in ? 40 : (uint8_t)(x + f), p[2] = in ? 40 : (uint8_t)y;
            }
        if (f == 0) {
            assert_int_equal(samc_tracker_open_stream(t, img, H, W, &e), SAMC_OK);
            float pt[2] = {16, 20};
            int32_t l[1] = {1};
            assert_int_equal(samc_tracker_add_points(t, 0, 1, pt, l, 1, NULL, 1, NULL, &e), SAMC_OK);
        } else {
            assert_int_equal(samc_tracker_push_frame(t, img, H, W, &e), SAMC_OK);
        }
        assert_int_equal(samc_tracker_propagate(t, f, 0, 0, count_cb, &calls, &e), SAMC_OK);
        assert_true(samc_tracker_stored_outputs(t) <= 1 + 16); /* the cond frame + the readable window */
    }
    assert_int_equal(calls, N);
    e = (samc_error){0}; /* released frames cannot be prompted any more */
    float pt[2] = {16, 20};
    int32_t l[1] = {1};
    assert_int_not_equal(samc_tracker_add_points(t, 2, 2, pt, l, 1, NULL, 1, NULL, &e), SAMC_OK);
    assert_non_null(strstr(e.msg, "released"));
    samc_tracker_free(t);
    free(img);
    free(path);
}

/* A propagate callback that calls back into its tracker (issue 23: opening
 * other frames freed the video under the loop): every changing call is
 * refused with a status, free is ignored, reads work. */
typedef struct reenter {
    samc_tracker *t;
    int calls, refused;
} reenter;

static samc_status reenter_cb(void *user, const samc_frame_masks *m)
{
    (void)m;
    reenter *r = user;
    samc_error e = {0};
    const uint8_t px[3 * 16] = {0};
    r->refused += samc_tracker_open_frames(r->t, px, 1, 4, 4, &e) == SAMC_ERR_ARG && strstr(e.msg, "callback");
    r->refused += samc_tracker_reset(r->t, &e) == SAMC_ERR_ARG;
    r->refused += samc_tracker_propagate(r->t, 0, 1, 0, NULL, NULL, &e) == SAMC_ERR_ARG;
    samc_tracker_free(r->t); /* ignored while propagate runs */
    r->refused += samc_tracker_num_frames(r->t) > 0;
    r->calls++;
    return SAMC_OK;
}

static void test_callback_reentry_refused(void **s)
{
    (void)s;
    samc_dump *d = NULL;
    samc_tracker *t = open_v1(&d);
    samc_error e = {0};
    float pt[2] = {40, 40};
    int32_t l[1] = {1};
    assert_int_equal(samc_tracker_add_points(t, 0, 1, pt, l, 1, NULL, 1, NULL, &e), SAMC_OK);
    reenter r = {t, 0, 0};
    assert_int_equal(samc_tracker_propagate(t, 0, 3, 0, reenter_cb, &r, &e), SAMC_OK);
    assert_true(r.calls > 0);
    assert_int_equal(r.refused, 4 * r.calls);
    /* after propagate returns, the tracker works again */
    assert_int_equal(samc_tracker_reset(t, &e), SAMC_OK);
    samc_tracker_free(t);
    samc_dump_close(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_reproduces_official), cmocka_unit_test(test_bad_uses),
                                       cmocka_unit_test(test_callback_reentry_refused),
                                       cmocka_unit_test(test_streaming_bounded),
                                       cmocka_unit_test(test_frames_dir_matches_pillow),
                                       cmocka_unit_test(test_non_overlap_from_config)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
