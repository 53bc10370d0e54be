/* SPDX-License-Identifier: Apache-2.0 */
/* test_abort.c - the abort callback of every long call (samc_abort_fn):
 * set_image, predict, predict_batch, the automatic mask generator, SAM 3's
 * set_image and set_text, and the tracker's propagate stop at the next
 * layer or frame boundary with SAMC_ERR_ABORTED, hand out nothing
 * half-made, and leave the object usable (the same call without the abort
 * then succeeds). Public API only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "samc.h"
#include "samc_amg.h"
#include "samc_sam3.h"
#include "util/testutil.h"

/* Aborts once it has been asked more than `after` times. */
typedef struct counter {
    int asked, after;
} counter;

static bool abort_after(void *user)
{
    counter *c = user;
    return ++c->asked > c->after;
}

typedef struct image {
    uint8_t *rgb;
    int h, w;
} image;

static samc_model *load_sam2(void)
{
    char *ck = tu_src_path("fixtures/ckpt/tiny_c_f32.pt"), *cfg = tu_src_path("fixtures/ckpt/tiny_c_f32.config.json");
    samc_model_params mp = samc_model_default_params();
    mp.config = cfg;
    samc_model *m = NULL;
    samc_error e;
    assert_int_equal(samc_model_load(ck, &mp, &m, &e), SAMC_OK);
    free(ck), free(cfg);
    return m;
}

static image demo_image(void)
{
    char *path = tu_src_path("fixtures/demo/demo.png");
    image im = {0};
    samc_error e;
    assert_int_equal(samc_read_image(path, &im.rgb, &im.h, &im.w, &e), SAMC_OK);
    free(path);
    return im;
}

static void test_predictor(void **state)
{
    (void)state;
    samc_model *m = load_sam2();
    image im = demo_image();
    counter c = {0, 3};
    samc_predictor_params pp = samc_predictor_default_params();
    pp.abort_callback = abort_after, pp.abort_user = &c;
    pp.n_threads = 2;
    samc_predictor *p = NULL;
    samc_error e;
    assert_int_equal(samc_predictor_new(m, &pp, &p, &e), SAMC_OK);

    /* set_image: stops after the 4th layer; no image is left set */
    assert_int_equal(samc_predictor_set_image(p, im.rgb, im.h, im.w, &e), SAMC_ERR_ABORTED);
    assert_int_equal(c.asked, 4);
    assert_non_null(strstr(e.msg, "aborted"));
    const float pt[2] = {100, 90};
    const int32_t lab[1] = {1};
    samc_predict_request rq = {.point_coords = pt, .point_labels = lab, .n_points = 1, .multimask_output = 1};
    samc_masks mk;
    assert_int_equal(samc_predictor_predict(p, &rq, &mk, &e), SAMC_ERR_ARG);

    /* the same predictor without stopping: the image is set */
    c = (counter){0, 1 << 30};
    assert_int_equal(samc_predictor_set_image(p, im.rgb, im.h, im.w, &e), SAMC_OK);
    const int layers = c.asked;
    assert_true(layers > 4);

    /* predict: stops inside the decoder, hands out no masks */
    c = (counter){0, 1};
    assert_int_equal(samc_predictor_predict(p, &rq, &mk, &e), SAMC_ERR_ABORTED);
    assert_null(mk.masks);
    assert_int_equal(mk.num_masks, 0);
    samc_predictor_set_abort_callback(p, NULL, NULL);
    assert_int_equal(samc_predictor_predict(p, &rq, &mk, &e), SAMC_OK);
    assert_int_equal(mk.num_masks, 3);
    samc_masks_free(&mk);

    /* predict_batch */
    samc_predictor_set_abort_callback(p, abort_after, &c);
    c = (counter){0, 0};
    const float pts[4] = {100, 90, 40, 40};
    const int32_t labs[2] = {1, 1};
    samc_batch_request brq = {.batch = 2, .n_points = 1, .point_coords = pts, .point_labels = labs,
                              .multimask_output = 1};
    samc_batch_masks bm;
    assert_int_equal(samc_predictor_predict_batch(p, &brq, &bm, &e), SAMC_ERR_ABORTED);
    assert_null(bm.masks);

    /* the automatic mask generator: stops mid-run, no records */
    c = (counter){0, layers + 6};
    samc_amg_params ap = samc_amg_default_params();
    ap.points_per_side = 4;
    ap.points_per_batch = 4;
    samc_amg_result r;
    assert_int_equal(samc_amg_generate_masks(p, im.rgb, im.h, im.w, &ap, NULL, NULL, &r, &e), SAMC_ERR_ABORTED);
    assert_int_equal(r.n, 0);
    assert_null(r.masks);

    samc_predictor_free(p);
    samc_free(im.rgb);
    samc_model_free(m);
}

typedef struct frames_seen {
    int n, stop_after;
} frames_seen;

static samc_status on_frame(void *user, const samc_frame_masks *fm)
{
    (void)fm;
    ((frames_seen *)user)->n++;
    return SAMC_OK;
}

static bool abort_after_frames(void *user)
{
    const frames_seen *f = user;
    return f->n >= f->stop_after;
}

static void test_tracker(void **state)
{
    (void)state;
    samc_model *m = load_sam2();
    frames_seen seen = {0, 2};
    samc_tracker_params tp = samc_tracker_default_params();
    tp.abort_callback = abort_after_frames, tp.abort_user = &seen;
    tp.n_threads = 2;
    samc_tracker *t = NULL;
    samc_error e;
    assert_int_equal(samc_tracker_new(m, &tp, &t, &e), SAMC_OK);
    char *dir = tu_src_path("fixtures/video/tiny_v1_sam21_s128_frames");
    assert_int_equal(samc_tracker_open_frames_dir(t, dir, &e), SAMC_OK);
    const int n = samc_tracker_num_frames(t);
    assert_true(n > 3);
    const float pt[2] = {50, 40};
    const int32_t lab[1] = {1};
    assert_int_equal(samc_tracker_add_points(t, 0, 1, pt, lab, 1, NULL, 1, NULL, &e), SAMC_OK);
    /* whole frames only: the two delivered, then the frame boundary stops it */
    assert_int_equal(samc_tracker_propagate(t, -1, -1, 0, on_frame, &seen, &e), SAMC_ERR_ABORTED);
    assert_int_equal(seen.n, 2);
    assert_non_null(strstr(e.msg, "frame 1"));
    /* and it runs again, to the end */
    seen = (frames_seen){0, 1 << 30};
    assert_int_equal(samc_tracker_propagate(t, -1, -1, 0, on_frame, &seen, &e), SAMC_OK);
    assert_int_equal(seen.n, n);
    /* a layer boundary inside a frame stops it too */
    counter c = {0, 5};
    samc_tracker_set_abort_callback(t, abort_after, &c);
    seen = (frames_seen){0, 0};
    assert_int_equal(samc_tracker_propagate(t, 1, -1, 0, on_frame, &seen, &e), SAMC_ERR_ABORTED);
    assert_int_equal(seen.n, 0);
    free(dir);
    samc_tracker_free(t);
    samc_model_free(m);
}

static void test_sam3(void **state)
{
    (void)state;
    char *ck = tu_src_path("fixtures/sam3/tiny_s2_sam3.pt"), *cfg = tu_src_path("fixtures/sam3/tiny_s2_sam3.config.json");
    char *vocab = tu_src_path("tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz");
    samc_model_params mp = samc_model_default_params();
    mp.config = cfg, mp.vocab = vocab;
    samc_model *m = NULL;
    samc_error e;
    assert_int_equal(samc_model_load(ck, &mp, &m, &e), SAMC_OK);
    image im = demo_image();
    counter c = {0, 2};
    samc_sam3_processor_params pp = samc_sam3_processor_default_params();
    pp.abort_callback = abort_after, pp.abort_user = &c;
    pp.n_threads = 2;
    samc_sam3_processor *p = NULL;
    assert_int_equal(samc_sam3_processor_new(m, &pp, &p, &e), SAMC_OK);
    assert_int_equal(samc_sam3_processor_set_image(p, im.rgb, im.h, im.w, &e), SAMC_ERR_ABORTED);
    assert_int_equal(c.asked, 3);
    assert_int_equal(samc_sam3_processor_set_text(p, "a square", &e), SAMC_ERR_ARG); /* no image */
    c = (counter){0, 1 << 30};
    assert_int_equal(samc_sam3_processor_set_image(p, im.rgb, im.h, im.w, &e), SAMC_OK);
    c = (counter){0, 2};
    assert_int_equal(samc_sam3_processor_set_text(p, "a square", &e), SAMC_ERR_ABORTED);
    samc_sam3_results r;
    assert_int_not_equal(samc_sam3_processor_results(p, &r, &e), SAMC_OK); /* no half result */
    samc_sam3_processor_set_abort_callback(p, NULL, NULL);
    assert_int_equal(samc_sam3_processor_set_text(p, "a square", &e), SAMC_OK);
    assert_int_equal(samc_sam3_processor_results(p, &r, &e), SAMC_OK);
    samc_sam3_processor_free(p);
    samc_free(im.rgb);
    samc_model_free(m);
    free(ck), free(cfg), free(vocab);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_predictor), cmocka_unit_test(test_tracker),
                                       cmocka_unit_test(test_sam3)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
