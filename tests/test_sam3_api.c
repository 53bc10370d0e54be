/* test_sam3_api.c - include/samc_sam3.h end to end: the checkpoint of
 * tools/make_sam3_checkpoint.py (the weights of tiny_s2_text_boxes.h5) and
 * the official vocabulary, prompt session 0 of that dump (a text, then a
 * positive and a negative box) through the processor, and its final scores,
 * boxes and masks against the dump's /outputs/0 (rel <= 1e-4, fast and ref);
 * then the processor's refusals (no image, empty text, bad boxes, bad
 * threshold, no results, no vocabulary). */
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

static samc_sam3_model *load_model(void)
{
    char *ck = tu_src_path(CKPT ".pt"), *cfg = tu_src_path(CKPT ".config.json"), *voc = tu_src_path(VOCAB);
    samc_sam3_model *m = NULL;
    samc_error e = {0};
    if (samc_sam3_load(ck, cfg, voc, &m, &e))
        fail_msg("load: %s", e.msg);
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

static void run_session(samc_sam3_model *m, const char *impl)
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
    assert_int_equal(samc_sam3_processor_new(m, impl, &p, &e), SAMC_OK);
    samc_sam3_processor_set_threads(p, 2);
    assert_int_equal(samc_sam3_processor_set_threshold(p, (float)thr, &e), SAMC_OK);
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
    samc_sam3_model *m = load_model();
    run_session(m, "fast");
    run_session(m, "ref");
    samc_sam3_free(m);
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
    samc_sam3_model *m = load_model();
    samc_sam3_processor *p = NULL;
    samc_error e = {0};
    assert_int_equal(samc_sam3_processor_new(m, NULL, &p, &e), SAMC_OK);
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
    expect(samc_sam3_processor_new(m, "nope", &(samc_sam3_processor *){NULL}, &e), SAMC_ERR_ARG, &e, "nope");
    samc_sam3_processor_free(p);
    samc_sam3_free(m);
    char *ck = tu_src_path(CKPT ".pt"), *sam2 = tu_src_path("fixtures/demo/tiny_d_demo.pt");
    char *voc = tu_src_path(VOCAB), *cfg = tu_src_path(CKPT ".config.json");
    expect(samc_sam3_load(ck, NULL, NULL, &m, &e), SAMC_ERR_ARG, &e, "vocabulary");
    expect(samc_sam3_load(sam2, NULL, voc, &m, &e), SAMC_ERR_FORMAT, &e, "SAM 2 checkpoint");
    /* the tiny checkpoint against the built-in released config: the first mis-shaped key, both shapes */
    expect(samc_sam3_load(ck, NULL, voc, &m, &e), SAMC_ERR_SHAPE, &e,
           "'detector.backbone.vision_backbone.trunk.patch_embed.proj.weight': expected shape (1024,3,14,14) for "
           "config 'sam3 (built-in release)', got (24,3,14,14)");
    expect(samc_sam3_load(ck, cfg, "/nonexistent/vocab.gz", &m, &e), SAMC_ERR_IO, &e, "/nonexistent/vocab.gz");
    assert_null(m);
    free(ck), free(sam2), free(voc), free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_session_fast_and_ref), cmocka_unit_test(test_refusals)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
