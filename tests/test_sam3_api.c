/* SPDX-License-Identifier: Apache-2.0 */
/* test_sam3_api.c - include/samc_sam3.h end to end: the checkpoint of
 * tools/make_sam3_checkpoint.py (the weights of tiny_s2_text_boxes.h5) and
 * the official vocabulary loaded by samc_model_load (family detected),
 * prompt session 0 of that dump (a text, then a positive and a negative box)
 * through the processor, and its final scores, boxes and masks against the
 * dump's /outputs/0 (rel <= 1e-4, fast and ref); the dump itself as the
 * model (its config and vocabulary); then the refusals (no image, empty
 * text, bad boxes, bad threshold, no results, no vocabulary, the other
 * family's model and entry points, NULL handles). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samc_sam3.h"
#include "core/base/error.h"
#include "parity/dump.h"
#include "util/testutil.h"

#define CKPT "fixtures/sam3/tiny_s2_sam3"
#define DUMP "fixtures/sam3/tiny_s2_text_boxes.h5"
#define VOCAB "tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz"

/* samc_model_load with a config file and a vocabulary (NULL: none). */
static samc_status load(const char *ck, const char *cfg, const char *voc, samc_model **m, samc_error *e)
{
    samc_model_params mp = samc_model_default_params();
    mp.config = cfg, mp.vocab = voc;
    return samc_model_load(ck, &mp, m, e);
}

static samc_model *load_model(void)
{
    char *ck = tu_src_path(CKPT ".pt"), *cfg = tu_src_path(CKPT ".config.json"), *voc = tu_src_path(VOCAB);
    samc_model *m = NULL;
    samc_error e = {0};
    if (load(ck, cfg, voc, &m, &e))
        fail_msg("load: %s", e.msg);
    assert_int_equal(samc_model_family(m), SAMC_FAMILY_SAM3);
    assert_string_equal(samc_model_config_name(m), cfg);
    free(ck), free(cfg), free(voc);
    return m;
}

static double rel(const float *out, const float *ref, int64_t n)
{
    double ma = 0, sc = 0;
    for (int64_t i = 0; i < n; i++)
        ma = fmax(ma, fabs((double)out[i] - ref[i])), sc = fmax(sc, fabs((double)ref[i]));
    return ma / (sc > 1e-12 ? sc : 1e-12);
}

static void run_session(const samc_model *m, const char *impl)
{
    char *path = tu_src_path(DUMP);
    samc_dump *d = NULL;
    samc_error e = {0};
    assert_int_equal(samc_dump_open(path, &d, &e), SAMC_OK);
    uint8_t *rgb = NULL;
    int nd = 0;
    int64_t dims[4];
    double thr = 0;
    char *text = NULL;
    samc_tensor boxes = {0}, scores = {0}, xyxy = {0}, masks = {0};
    int32_t *labels = NULL;
    int64_t nl = 0;
    assert_int_equal(samc_dump_read_u8(d, "/inputs/image_u8", &rgb, &nd, dims, &e), SAMC_OK);
    assert_int_equal(samc_dump_attr_num(d, "/inputs", "confidence_threshold", &thr, NULL, &e), SAMC_OK);
    assert_int_equal(samc_dump_attr_str(d, "/inputs/prompts/0", "text", &text, &e), SAMC_OK);
    assert_int_equal(samc_dump_read(d, "/inputs/prompts/0/box_cxcywh", &boxes, &e), SAMC_OK);
    assert_int_equal(samc_dump_read_i32(d, "/inputs/prompts/0/box_labels", &labels, &nl, &e), SAMC_OK);
    assert_int_equal(samc_dump_read(d, "/outputs/0/scores", &scores, &e), SAMC_OK);
    assert_int_equal(samc_dump_read(d, "/outputs/0/boxes", &xyxy, &e), SAMC_OK);
    assert_int_equal(samc_dump_read(d, "/outputs/0/masks", &masks, &e), SAMC_OK);

    samc_sam3_processor *p = NULL;
    samc_sam3_processor_params pp = samc_sam3_processor_default_params();
    pp.impl = impl, pp.n_threads = 2, pp.threshold = (float)thr;
    assert_int_equal(samc_sam3_processor_new(m, &pp, &p, &e), SAMC_OK);
    assert_string_equal(samc_sam3_processor_impl(p), impl);
    assert_int_equal(samc_sam3_processor_set_image(p, rgb, (int)dims[0], (int)dims[1], &e), SAMC_OK);
    assert_int_equal(samc_sam3_processor_set_text(p, text, &e), SAMC_OK);
    for (int64_t i = 0; i < nl; i++)
        if (samc_sam3_processor_add_box(p, boxes.data + 4 * i, labels[i] != 0, &e))
            fail_msg("add_box: %s", e.msg);
    samc_sam3_results r;
    assert_int_equal(samc_sam3_processor_results(p, &r, &e), SAMC_OK);
    printf("%s: '%s' + %lld boxes: %d instances (dump %lld)\n", impl, text, (long long)nl, r.n,
           (long long)scores.shape[0]);
    assert_int_equal(r.n, (int)scores.shape[0]);
    assert_true(r.n > 0);
    assert_int_equal(r.h, (int)dims[0]);
    assert_int_equal(r.w, (int)dims[1]);
    const double rs = rel(r.scores, scores.data, r.n), rb = rel(r.boxes, xyxy.data, 4 * (int64_t)r.n);
    const double rm = rel(r.masks, masks.data, (int64_t)r.n * r.h * r.w);
    printf("%s: rel scores %.3g, boxes %.3g, masks %.3g\n", impl, rs, rb, rm);
    assert_true(rs <= 1e-4 && rb <= 1e-4 && rm <= 1e-4);
    /* a threshold above every score keeps nothing; reset drops the results */
    assert_int_equal(samc_sam3_processor_set_threshold(p, 1.0f, &e), SAMC_OK);
    assert_int_equal(samc_sam3_processor_results(p, &r, &e), SAMC_OK);
    assert_int_equal(r.n, 0);
    samc_sam3_processor_reset(p);
    assert_int_equal(samc_sam3_processor_results(p, &r, &e), SAMC_ERR_ARG);
    samc_sam3_processor_free(p);
    samc_tensor_release(&boxes), samc_tensor_release(&scores), samc_tensor_release(&xyxy);
    samc_tensor_release(&masks);
    free(rgb), free(text), free(labels), free(path);
    samc_dump_close(d);
}

static void test_session_fast_and_ref(void **state)
{
    (void)state;
    samc_model *m = load_model();
    run_session(m, "fast");
    run_session(m, "ref");
    samc_model_free(m);
}

/* The dump as the model: its own config and vocabulary. */
static void test_dump_as_model(void **state)
{
    (void)state;
    char *path = tu_src_path(DUMP);
    samc_model *m = NULL;
    samc_error e = {0};
    if (load(path, NULL, NULL, &m, &e))
        fail_msg("load: %s", e.msg);
    assert_int_equal(samc_model_family(m), SAMC_FAMILY_SAM3);
    run_session(m, "fast");
    samc_model_free(m);
    free(path);
}

/* A refusal with its message; the record is cleared for the next call (the
 * first error written to a record stays). */
static void expect(samc_status st, samc_status want, samc_error *e, const char *part)
{
    printf("refused: %s\n", e->msg);
    assert_int_equal(st, want);
    assert_non_null(strstr(e->msg, part));
    samc_error_clear(e);
}

static void test_refusals(void **state)
{
    (void)state;
    samc_model *m = load_model();
    samc_sam3_processor *p = NULL;
    samc_error e = {0};
    assert_int_equal(samc_sam3_processor_new(m, NULL, &p, &e), SAMC_OK);
    assert_string_equal(samc_sam3_processor_impl(p), samc_default_impl());
    expect(samc_sam3_processor_set_text(p, "a dog", &e), SAMC_ERR_ARG, &e, "set an image first");
    uint8_t img[20 * 30 * 3];
    for (size_t i = 0; i < sizeof img; i++)
        img[i] = (uint8_t)(i * 7);
    assert_int_equal(samc_sam3_processor_set_image(p, img, 20, 30, &e), SAMC_OK);
    expect(samc_sam3_processor_set_text(p, "", &e), SAMC_ERR_ARG, &e, "empty text");
    expect(samc_sam3_processor_add_box(p, (const float[]){0.5f, 0.5f, 0.0f, 0.2f}, true, &e), SAMC_ERR_ARG, &e,
           "positive size");
    expect(samc_sam3_processor_add_box(p, (const float[]){1.5f, 0.5f, 0.1f, 0.2f}, true, &e), SAMC_ERR_ARG, &e,
           "centre in the image");
    expect(samc_sam3_processor_add_box(p, (const float[]){0.5f, NAN, 0.1f, 0.2f}, true, &e), SAMC_ERR_ARG, &e,
           "normalised");
    expect(samc_sam3_processor_set_threshold(p, 2.0f, &e), SAMC_ERR_ARG, &e, "not in [0, 1]");
    samc_sam3_results r;
    expect(samc_sam3_processor_results(p, &r, &e), SAMC_ERR_ARG, &e, "no prompt");
    expect(samc_sam3_processor_set_image(p, img, 0, 30, &e), SAMC_ERR_ARG, &e, "bad image");
    samc_sam3_processor_params pp = samc_sam3_processor_default_params();
    pp.impl = "nope";
    expect(samc_sam3_processor_new(m, &pp, &(samc_sam3_processor *){NULL}, &e), SAMC_ERR_ARG, &e, "nope");
    pp = samc_sam3_processor_default_params();
    pp.threshold = -0.5f;
    expect(samc_sam3_processor_new(m, &pp, &(samc_sam3_processor *){NULL}, &e), SAMC_ERR_ARG, &e, "threshold");
    /* the other family's entry points name both families */
    expect(samc_predictor_new(m, NULL, &(samc_predictor *){NULL}, &e), SAMC_ERR_ARG, &e, "a SAM 3 model; it needs a SAM 2");
    expect(samc_tracker_new(m, NULL, &(samc_tracker *){NULL}, &e), SAMC_ERR_ARG, &e, "a SAM 3 model; it needs a SAM 2");
    /* NULL handles: a status, never a crash */
    expect(samc_sam3_processor_set_text(NULL, "a", &e), SAMC_ERR_ARG, &e, "'p' is NULL");
    expect(samc_sam3_processor_add_box(p, NULL, true, &e), SAMC_ERR_ARG, &e, "'box' is NULL");
    expect(samc_sam3_processor_results(NULL, &r, &e), SAMC_ERR_ARG, &e, "'p' is NULL");
    expect(samc_sam3_processor_new(NULL, NULL, &(samc_sam3_processor *){NULL}, &e), SAMC_ERR_ARG, &e, "'model'");
    samc_sam3_processor_reset(NULL);
    samc_sam3_processor_free(p);
    samc_model_free(m);
    char *ck = tu_src_path(CKPT ".pt"), *sam2 = tu_src_path("fixtures/demo/tiny_d_demo.pt");
    char *voc = tu_src_path(VOCAB), *cfg = tu_src_path(CKPT ".config.json");
    char *sam2_dump = tu_src_path("fixtures/tiny_a_sam21_s128.h5"), *amg = tu_src_path("fixtures/amg/amg_a_nocrop.h5");
    m = NULL;
    expect(load(ck, cfg, NULL, &m, &e), SAMC_ERR_ARG, &e, "--vocab");
    /* a SAM 2 model (checkpoint or dump of any SAM 2 task) given to the SAM 3 processor */
    char *sam2_cfg = tu_src_path("fixtures/demo/tiny_d_demo.config.json");
    const char *sam2_models[] = {sam2, sam2_dump, amg}, *sam2_cfgs[] = {sam2_cfg, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        if (load(sam2_models[i], sam2_cfgs[i], NULL, &m, &e))
            fail_msg("load %s: %s", sam2_models[i], e.msg);
        assert_int_equal(samc_model_family(m), SAMC_FAMILY_SAM2);
        expect(samc_sam3_processor_new(m, NULL, &(samc_sam3_processor *){NULL}, &e), SAMC_ERR_ARG, &e,
               "a SAM 2 model; it needs a SAM 3");
        samc_model_free(m);
        m = NULL;
    }
    /* the tiny checkpoint (both halves: the video model) against the built-in released config: the first
     * mis-shaped key, both shapes */
    expect(load(ck, NULL, voc, &m, &e), SAMC_ERR_SHAPE, &e,
           "'detector.backbone.vision_backbone.trunk.patch_embed.proj.weight': expected shape (1024,3,14,14) for "
           "config 'sam3 video (built-in release)', got (24,3,14,14)");
    expect(load(ck, cfg, "/nonexistent/vocab.gz", &m, &e), SAMC_ERR_IO, &e, "/nonexistent/vocab.gz");
    assert_null(m);
    free(ck), free(sam2), free(voc), free(cfg), free(sam2_dump), free(amg), free(sam2_cfg);
}

/* A NaN in the weights (the last float of the .safetensors data set to
 * all-ones bits) is refused, naming it, unless allow_nonfinite. */
static void test_nonfinite(void **state)
{
    (void)state;
    char *sf = tu_src_path(CKPT ".safetensors"), *cfg = tu_src_path(CKPT ".config.json"), *voc = tu_src_path(VOCAB);
    char *dir = tu_mkdtemp("sam3_api"), *bad = tu_join(dir, "nan.safetensors");
    uint8_t *data = NULL;
    size_t n = 0;
    assert_int_equal(tu_read_file(sf, &data, &n), 0);
    memset(data + n - 4, 0xff, 4);
    assert_int_equal(tu_write_file(bad, data, n), 0);
    samc_model_params mp = samc_model_default_params();
    mp.config = cfg, mp.vocab = voc;
    samc_model *m = NULL;
    samc_error e = {0};
    expect(samc_model_load(bad, &mp, &m, &e), SAMC_ERR_FORMAT, &e, "allow_nonfinite");
    assert_null(m);
    mp.allow_nonfinite = 1;
    assert_int_equal(samc_model_load(bad, &mp, &m, &e), SAMC_OK);
    samc_model_free(m);
    tu_rmtree(dir);
    free(data), free(sf), free(cfg), free(voc), free(dir), free(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_session_fast_and_ref), cmocka_unit_test(test_dump_as_model),
                                       cmocka_unit_test(test_refusals), cmocka_unit_test(test_nonfinite)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
