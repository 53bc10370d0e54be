/* SPDX-License-Identifier: Apache-2.0 */
/* test_api_model.c - the model/context API of include/samc.h: one model
 * shared by predictors on several threads (same results as one thread),
 * params and their defaults, version, log and progress callbacks, NULL
 * handles refused with a status, and the error record cleared on entry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity/dump.h"
#include "samc.h"
#include "util/testutil.h"

#define N_THREADS 4

typedef struct fixture {
    samc_model *model;
    uint8_t *img;
    int h, w;
} fixture;

static void fixture_open(fixture *f)
{
    char *dump = tu_src_path("fixtures/tiny_c_sam21_s160.h5");
    char *ck = tu_src_path("fixtures/ckpt/tiny_c_f32.pt"), *cfg = tu_src_path("fixtures/ckpt/tiny_c_f32.config.json");
    samc_error e;
    samc_dump *d = NULL;
    assert_int_equal(samc_dump_open(dump, &d, &e), SAMC_OK);
    int nd;
    int64_t dims[4];
    assert_int_equal(samc_dump_read_u8(d, "/inputs/image_u8", &f->img, &nd, dims, &e), SAMC_OK);
    f->h = (int)dims[0], f->w = (int)dims[1];
    samc_dump_close(d);
    samc_model_params mp = samc_model_default_params();
    mp.config = cfg;
    assert_int_equal(samc_model_load(ck, &mp, &f->model, &e), SAMC_OK);
    free(dump), free(ck), free(cfg);
}

static void fixture_close(fixture *f)
{
    samc_model_free(f->model);
    free(f->img);
}

/* One predictor's whole job; the prompt differs per job so that threads do
 * not all compute the same thing. */
typedef struct job {
    const fixture *f;
    int k;
    samc_status st;
    samc_masks m;
    char msg[SAMC_ERROR_MSG_MAX];
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    samc_predictor_params pp = samc_predictor_default_params();
    pp.n_threads = 1;
    samc_predictor *p = NULL;
    samc_error e;
    float pt[4] = {20.0f + 15.0f * (float)j->k, 30.0f + 10.0f * (float)j->k, 80, 70};
    int32_t lab[2] = {1, 0};
    samc_predict_request rq = {.point_coords = pt, .point_labels = lab, .n_points = 2, .multimask_output = 1,
                               .return_logits = 1};
    j->st = samc_predictor_new(j->f->model, &pp, &p, &e);
    if (!j->st)
        j->st = samc_predictor_set_image(p, j->f->img, j->f->h, j->f->w, &e);
    if (!j->st)
        j->st = samc_predictor_predict(p, &rq, &j->m, &e);
    if (j->st)
        snprintf(j->msg, sizeof j->msg, "%s", e.msg);
    samc_predictor_free(p);
    return NULL;
}

static void test_threads_share_model(void **s)
{
    (void)s;
    fixture f;
    fixture_open(&f);
    job seq[N_THREADS], par[N_THREADS];
    for (int k = 0; k < N_THREADS; k++) { /* one after the other */
        seq[k] = (job){.f = &f, .k = k};
        run_job(&seq[k]);
        assert_int_equal(seq[k].st, SAMC_OK);
    }
    pthread_t th[N_THREADS];
    for (int k = 0; k < N_THREADS; k++) { /* all at once on the same model */
        par[k] = (job){.f = &f, .k = k};
        assert_int_equal(pthread_create(&th[k], NULL, run_job, &par[k]), 0);
    }
    for (int k = 0; k < N_THREADS; k++)
        assert_int_equal(pthread_join(th[k], NULL), 0);
    for (int k = 0; k < N_THREADS; k++) {
        if (par[k].st)
            fail_msg("thread %d: %s", k, par[k].msg);
        assert_int_equal(par[k].m.num_masks, seq[k].m.num_masks);
        const size_t n = (size_t)seq[k].m.num_masks * seq[k].m.height * seq[k].m.width;
        assert_memory_equal(par[k].m.masks, seq[k].m.masks, n * sizeof(float));
        assert_memory_equal(par[k].m.iou, seq[k].m.iou, (size_t)seq[k].m.num_masks * sizeof(float));
        samc_masks_free(&par[k].m), samc_masks_free(&seq[k].m);
    }
    /* A tracker on the same model, next to the predictors. */
    samc_tracker *t = NULL;
    samc_error e;
    assert_int_equal(samc_tracker_new(f.model, NULL, &t, &e), SAMC_OK);
    assert_string_equal(samc_tracker_impl(t), "fast");
    samc_tracker_free(t);
    fixture_close(&f);
}

static void test_defaults_and_version(void **s)
{
    (void)s;
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", SAMC_VERSION_MAJOR, SAMC_VERSION_MINOR, SAMC_VERSION_PATCH);
    assert_string_equal(v, SAMC_VERSION_STRING);
    assert_string_equal(samc_version(), SAMC_VERSION_STRING);
    assert_string_equal(samc_default_impl(), "fast");
    const samc_predictor_params pp = samc_predictor_default_params();
    assert_null(pp.impl);
    assert_int_equal(pp.n_threads, 0);
    assert_null(pp.progress);
    const samc_tracker_params tp = samc_tracker_default_params();
    assert_true(tp.fill_hole_area < 0);
    fixture f;
    fixture_open(&f);
    assert_string_equal(samc_model_config_name(f.model), "tiny_c_f32.config.json");
    assert_int_equal(samc_model_image_size(f.model), 160);
    samc_predictor *p = NULL;
    samc_error e;
    assert_int_equal(samc_predictor_new(f.model, NULL, &p, &e), SAMC_OK);
    assert_string_equal(samc_predictor_impl(p), "fast");
    assert_true(samc_predictor_threads(p) >= 1);
    assert_ptr_equal(samc_predictor_model(p), f.model);
    samc_predictor_free(p);
    samc_predictor_params ref = samc_predictor_default_params();
    ref.impl = "ref";
    assert_int_equal(samc_predictor_new(f.model, &ref, &p, &e), SAMC_OK);
    assert_string_equal(samc_predictor_impl(p), "ref");
    assert_int_equal(samc_predictor_threads(p), 1);
    samc_predictor_free(p);
    ref.impl = "gpu";
    assert_int_equal(samc_predictor_new(f.model, &ref, &p, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "gpu");
    assert_null(p);
    ref.impl = NULL, ref.n_threads = -3;
    assert_int_equal(samc_predictor_new(f.model, &ref, &p, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "n_threads");
    fixture_close(&f);
}

/* samc_model_params.family: a family the caller tells is used as told (the
 * file is not examined for it again); a value that is no family is refused. */
static void test_told_family(void **s)
{
    (void)s;
    char *ck = tu_src_path("fixtures/ckpt/tiny_c_f32.pt"), *cfg = tu_src_path("fixtures/ckpt/tiny_c_f32.config.json");
    samc_model_params mp = samc_model_default_params();
    assert_int_equal(mp.family, 0);
    mp.config = cfg, mp.family = SAMC_FAMILY_SAM2;
    samc_model *m = NULL;
    samc_error e = {0};
    assert_int_equal(samc_model_load(ck, &mp, &m, &e), SAMC_OK);
    assert_int_equal(samc_model_family(m), SAMC_FAMILY_SAM2);
    samc_model_free(m);
    mp.family = (samc_family)7;
    assert_int_equal(samc_model_load(ck, &mp, &m, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "samc_model_params.family");
    assert_null(m);
    free(ck), free(cfg);
}

/* Every entry point takes NULL handles and pointers without crashing. */
static void test_null_safety(void **s)
{
    (void)s;
    samc_error e;
    samc_masks m;
    samc_predict_request rq = {0};
    float pt[2] = {1, 1};
    int32_t lab[1] = {1};
    uint8_t rgb[3] = {0};
    assert_int_equal(samc_predictor_predict(NULL, &rq, &m, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "NULL");
    assert_int_equal(samc_predictor_predict(NULL, NULL, NULL, NULL), SAMC_ERR_ARG);
    assert_int_equal(samc_predictor_set_image(NULL, rgb, 1, 1, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_predictor_set_impl(NULL, "fast", &e), SAMC_ERR_ARG);
    assert_int_equal(samc_predictor_override(NULL, "x=ref", &e), SAMC_ERR_ARG);
    assert_int_equal(samc_predictor_set_postprocess(NULL, 0, 0, &e), SAMC_ERR_ARG);
    const float *data;
    int c, h, w;
    assert_int_equal(samc_predictor_get_embedding(NULL, &data, &c, &h, &w, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_predictor_new(NULL, NULL, NULL, &e), SAMC_ERR_ARG);
    samc_predictor *p = (samc_predictor *)1;
    assert_int_equal(samc_predictor_new(NULL, NULL, &p, &e), SAMC_ERR_ARG);
    assert_null(p);
    samc_model *mdl = (samc_model *)1;
    assert_int_equal(samc_model_load(NULL, NULL, &mdl, &e), SAMC_ERR_ARG);
    assert_null(mdl);
    assert_int_equal(samc_model_load("x.pt", NULL, NULL, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_predictor_load(NULL, NULL, &p, &e), SAMC_ERR_ARG);
    samc_predictor_set_threads(NULL, 2);
    samc_predictor_free(NULL);
    samc_model_free(NULL);
    samc_masks_free(NULL);
    assert_int_equal(samc_predictor_low_res_size(NULL), 0);
    assert_string_equal(samc_predictor_config_name(NULL), "");
    assert_string_equal(samc_predictor_impl(NULL), "");
    assert_int_equal(samc_predictor_threads(NULL), 0);
    assert_string_equal(samc_model_config_name(NULL), "");
    assert_int_equal(samc_model_image_size(NULL), 0);
    samc_tracker *t = (samc_tracker *)1;
    assert_int_equal(samc_tracker_new(NULL, NULL, &t, &e), SAMC_ERR_ARG);
    assert_null(t);
    assert_int_equal(samc_tracker_open_frames_dir(NULL, "d", &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_open_frames(NULL, rgb, 1, 1, 1, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_open_stream(NULL, rgb, 1, 1, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_push_frame(NULL, rgb, 1, 1, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_add_points(NULL, 0, 1, pt, lab, 1, NULL, 1, NULL, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_add_mask(NULL, 0, 1, pt, 1, 1, NULL, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_propagate(NULL, -1, -1, 0, NULL, NULL, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_clear_frame(NULL, 0, 1, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_remove_object(NULL, 1, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_reset(NULL, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_set_impl(NULL, "ref", &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_override(NULL, "x=ref", &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_set_options(NULL, 0, 0, &e), SAMC_ERR_ARG);
    assert_int_equal(samc_tracker_load(NULL, NULL, &t, &e), SAMC_ERR_ARG);
    samc_tracker_set_threads(NULL, 1);
    samc_tracker_free(NULL);
    assert_int_equal(samc_tracker_num_frames(NULL), 0);
    assert_int_equal(samc_tracker_stored_outputs(NULL), 0);
    assert_null(samc_tracker_frame_path(NULL, 0));
    assert_string_equal(samc_tracker_impl(NULL), "");
}

/* A record reused across calls shows only the last call's outcome. */
static void test_error_cleared_on_entry(void **s)
{
    (void)s;
    fixture f;
    fixture_open(&f);
    samc_predictor *p = NULL;
    samc_error e;
    assert_int_equal(samc_predictor_new(f.model, NULL, &p, &e), SAMC_OK);
    samc_masks m;
    float pt[2] = {10, 10};
    int32_t lab[1] = {1};
    samc_predict_request rq = {pt, lab, 1, NULL, NULL, 0, 0, 0};
    assert_int_equal(samc_predictor_predict(p, &rq, &m, &e), SAMC_ERR_ARG); /* no image yet */
    tu_assert_contains(e.msg, "samc_predictor_set_image");
    assert_int_equal(samc_predictor_set_image(p, f.img, f.h, f.w, &e), SAMC_OK);
    assert_int_equal(e.status, SAMC_OK);
    assert_string_equal(e.msg, "");
    assert_int_equal(samc_predictor_set_impl(p, "gpu", &e), SAMC_ERR_ARG);
    assert_int_equal(samc_predictor_predict(p, &rq, &m, &e), SAMC_OK);
    assert_int_equal(e.status, SAMC_OK);
    assert_string_equal(e.msg, "");
    samc_masks_free(&m);
    pt[0] = -50;
    assert_int_equal(samc_predictor_predict(p, &rq, &m, &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "outside");
    samc_predictor_free(p);
    fixture_close(&f);
}

typedef struct captured {
    int n_info;
    char first[256];
} captured;

static void capture_log(samc_log_level level, const char *msg, void *user)
{
    captured *c = user;
    if (level == SAMC_LOG_INFO && c->n_info++ == 0)
        snprintf(c->first, sizeof c->first, "%s", msg);
}

typedef struct progress_seen {
    int calls, last_done, total, monotonic;
    char what[32];
} progress_seen;

static void on_progress(void *user, const char *what, int done, int total)
{
    progress_seen *ps = user;
    ps->monotonic &= done == ps->last_done + 1;
    ps->calls++, ps->last_done = done, ps->total = total;
    snprintf(ps->what, sizeof ps->what, "%s", what);
}

static void test_log_and_progress(void **s)
{
    (void)s;
    captured cap = {0};
    samc_log_set(capture_log, &cap);
    samc_log_set_level(SAMC_LOG_INFO);
    assert_int_equal(samc_log_get_level(), SAMC_LOG_INFO);
    fixture f;
    fixture_open(&f);
    samc_log_set_level(SAMC_LOG_WARN);
    samc_log_set(NULL, NULL);
    assert_true(cap.n_info >= 1);
    tu_assert_contains(cap.first, "tiny_c_f32.pt");
    tu_assert_contains(cap.first, "loaded");
    progress_seen ps = {.monotonic = 1};
    samc_predictor_params pp = samc_predictor_default_params();
    pp.progress = on_progress, pp.progress_user = &ps;
    samc_predictor *p = NULL;
    samc_error e;
    assert_int_equal(samc_predictor_new(f.model, &pp, &p, &e), SAMC_OK);
    assert_int_equal(samc_predictor_set_image(p, f.img, f.h, f.w, &e), SAMC_OK);
    assert_string_equal(ps.what, "encode");
    assert_true(ps.total > 0);
    assert_int_equal(ps.calls, ps.total);      /* one step per encoder block */
    assert_int_equal(ps.last_done, ps.total);
    assert_true(ps.monotonic);
    samc_predictor_free(p);
    fixture_close(&f);
}

static samc_status count_frame(void *user, const samc_frame_masks *m)
{
    (*(int *)user)++;
    return m->n_obj == 1 ? SAMC_OK : SAMC_ERR_INTERNAL;
}

/* The tracker's progress: one step per frame propagate visits, with the
 * total of the range asked for (start and max_frames respected, the
 * default start taken from the prompts as they stand). */
static void test_tracker_progress(void **s)
{
    (void)s;
    char *dump = tu_src_path("fixtures/video/tiny_v1_sam21_s128.h5");
    char *frames = tu_src_path("fixtures/video/tiny_v1_sam21_s128_frames");
    samc_model *m = NULL;
    samc_error e;
    assert_int_equal(samc_model_load(dump, NULL, &m, &e), SAMC_OK); /* the dump's own config */
    progress_seen ps = {.monotonic = 1};
    samc_tracker_params tp = samc_tracker_default_params();
    tp.progress = on_progress, tp.progress_user = &ps;
    samc_tracker *t = NULL;
    assert_int_equal(samc_tracker_new(m, &tp, &t, &e), SAMC_OK);
    assert_int_equal(samc_tracker_open_frames_dir(t, frames, &e), SAMC_OK);
    assert_int_equal(samc_tracker_num_frames(t), 5);
    tu_assert_contains(samc_tracker_frame_path(t, 3), "00003.jpg");
    const float pt[2] = {50, 40};
    const int32_t lab[1] = {1};
    assert_int_equal(samc_tracker_add_points(t, 1, 7, pt, lab, 1, NULL, 1, NULL, &e), SAMC_OK);
    int seen = 0;
    assert_int_equal(samc_tracker_propagate(t, -1, 2, 0, count_frame, &seen, &e), SAMC_OK); /* frames 1..3 */
    assert_int_equal(seen, 3);
    assert_string_equal(ps.what, "propagate");
    assert_int_equal(ps.calls, 3);
    assert_int_equal(ps.total, 3);
    assert_true(ps.monotonic);
    ps = (progress_seen){.monotonic = 1}, seen = 0;
    assert_int_equal(samc_tracker_propagate(t, 2, -1, 0, count_frame, &seen, &e), SAMC_OK); /* frames 2..4 */
    assert_int_equal(seen, 3);
    assert_int_equal(ps.total, 3);
    ps = (progress_seen){.monotonic = 1}, seen = 0;
    assert_int_equal(samc_tracker_propagate(t, 1, -1, 1, count_frame, &seen, &e), SAMC_OK); /* 1, 0 reversed */
    assert_int_equal(seen, 2);
    assert_int_equal(ps.total, 2);
    /* the default start follows the prompts as they stand: an object
     * prompted on frame 0 and removed again leaves the start at frame 1 */
    assert_int_equal(samc_tracker_add_points(t, 0, 8, pt, lab, 1, NULL, 1, NULL, &e), SAMC_OK);
    assert_int_equal(samc_tracker_remove_object(t, 8, &e), SAMC_OK);
    ps = (progress_seen){.monotonic = 1}, seen = 0;
    assert_int_equal(samc_tracker_propagate(t, -1, -1, 0, count_frame, &seen, &e), SAMC_OK); /* frames 1..4 */
    assert_int_equal(seen, 4);
    assert_int_equal(ps.calls, 4);
    assert_int_equal(ps.total, 4);
    assert_true(ps.monotonic);
    samc_tracker_free(t);
    samc_model_free(m);
    free(dump), free(frames);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_version),
        cmocka_unit_test(test_null_safety),
        cmocka_unit_test(test_told_family),
        cmocka_unit_test(test_error_cleared_on_entry),
        cmocka_unit_test(test_log_and_progress),
        cmocka_unit_test(test_threads_share_model),
        cmocka_unit_test(test_tracker_progress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
