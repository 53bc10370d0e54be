/* SPDX-License-Identifier: Apache-2.0 */
/* test_api_embedding.c - what a server builds on (include/samc.h,
 * samc_sam3.h, samc_amg.h): an embedding kept apart from the predictor gives
 * the very masks set_image + predict gives (SAM 2) and the very instances
 * set_image + set_text give (SAM 3); it is refused by another model's
 * predictor; images decode from memory as from a file, their size is read
 * from the header alone, PNGs encode in memory; one mask's RLE records. */
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

static samc_model *load(const char *ckpt, const char *config, const char *vocab)
{
    char *c = tu_src_path(ckpt), *g = config ? tu_src_path(config) : NULL, *v = vocab ? tu_src_path(vocab) : NULL;
    samc_model_params mp = samc_model_default_params();
    mp.config = g, mp.vocab = v;
    samc_model *m = NULL;
    samc_error e = {0};
    if (samc_model_load(c, &mp, &m, &e))
        fail_msg("%s", e.msg);
    free(c), free(g), free(v);
    return m;
}

static uint8_t *demo_image(int *h, int *w)
{
    char *path = tu_src_path("fixtures/demo/demo.png");
    uint8_t *rgb = NULL;
    samc_error e = {0};
    assert_int_equal(samc_read_image(path, &rgb, h, w, &e), SAMC_OK);
    free(path);
    return rgb;
}

static void same_masks(const samc_masks *a, const samc_masks *b)
{
    assert_int_equal(a->num_masks, b->num_masks);
    assert_int_equal(a->height, b->height);
    assert_int_equal(a->width, b->width);
    const size_t hw = (size_t)a->height * a->width, lr = (size_t)a->low_res_size * a->low_res_size;
    assert_memory_equal(a->masks, b->masks, a->num_masks * hw * sizeof(float));
    assert_memory_equal(a->iou, b->iou, a->num_masks * sizeof(float));
    assert_memory_equal(a->low_res, b->low_res, a->num_masks * lr * sizeof(float));
}

static void test_sam2_embedding(void **state)
{
    (void)state;
    samc_model *m = load("fixtures/demo/tiny_d_demo.pt", "fixtures/demo/tiny_d_demo.config.json", NULL);
    samc_predictor *p = NULL;
    samc_error e = {0};
    assert_int_equal(samc_predictor_new(m, NULL, &p, &e), SAMC_OK);
    int h = 0, w = 0;
    uint8_t *rgb = demo_image(&h, &w);
    const float pts[4] = {100, 90, 200, 60};
    const int32_t lab[2] = {1, 0};
    const float box[4] = {20, 30, 250, 200};
    const samc_predict_request rqs[2] = {{.point_coords = pts, .point_labels = lab, .n_points = 1, .multimask_output = 1,
                                          .return_logits = 1},
                                         {.point_coords = pts, .point_labels = lab, .n_points = 2, .box = box}};
    samc_embedding *emb = NULL;
    assert_int_equal(samc_predictor_embed(p, rgb, h, w, &emb, &e), SAMC_OK);
    assert_int_equal(samc_embedding_height(emb), h);
    assert_int_equal(samc_embedding_width(emb), w);
    assert_ptr_equal(samc_embedding_model(emb), m);
    assert_true(samc_embedding_bytes(emb) > 0);
    assert_int_equal(samc_predictor_set_image(p, rgb, h, w, &e), SAMC_OK);
    for (int i = 0; i < 2; i++) {
        samc_masks a, b;
        assert_int_equal(samc_predictor_predict(p, &rqs[i], &a, &e), SAMC_OK);
        assert_int_equal(samc_predictor_predict_on(p, emb, &rqs[i], &b, &e), SAMC_OK);
        same_masks(&a, &b);
        samc_masks_free(&a), samc_masks_free(&b);
    }
    /* another model (the same file loaded again) refuses it */
    samc_model *other = load("fixtures/demo/tiny_d_demo.pt", "fixtures/demo/tiny_d_demo.config.json", NULL);
    samc_predictor *q = NULL;
    assert_int_equal(samc_predictor_new(other, NULL, &q, &e), SAMC_OK);
    samc_masks c;
    assert_int_equal(samc_predictor_predict_on(q, emb, &rqs[0], &c, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "another model"));
    assert_int_equal(samc_predictor_predict_on(q, NULL, &rqs[0], &c, &e), SAMC_ERR_ARG);
    samc_predictor_free(q);
    samc_model_free(other);
    samc_embedding_free(emb);
    samc_embedding_free(NULL);
    samc_predictor_free(p);
    samc_model_free(m);
    free(rgb);
}

typedef struct instances {
    int n;
    float *scores, *boxes, *masks;
} instances;

static instances copy_results(const samc_sam3_processor *p)
{
    samc_sam3_results r;
    samc_error e = {0};
    assert_int_equal(samc_sam3_processor_results(p, &r, &e), SAMC_OK);
    instances c = {.n = r.n};
    const size_t hw = (size_t)r.h * r.w;
    c.scores = malloc((r.n + 1) * sizeof(float)), c.boxes = malloc((4 * r.n + 1) * sizeof(float));
    c.masks = malloc((r.n * hw + 1) * sizeof(float));
    memcpy(c.scores, r.scores, r.n * sizeof(float));
    memcpy(c.boxes, r.boxes, 4 * r.n * sizeof(float));
    memcpy(c.masks, r.masks, r.n * hw * sizeof(float));
    return c;
}

static void test_sam3_embedding(void **state)
{
    (void)state;
    samc_model *m = load("fixtures/sam3/tiny_s2_sam3.pt", "fixtures/sam3/tiny_s2_sam3.config.json",
                         "tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz");
    samc_sam3_processor_params pp = samc_sam3_processor_default_params();
    pp.threshold = 0.0f; /* random weights: keep every query so there is something to compare */
    samc_sam3_processor *p = NULL;
    samc_error e = {0};
    assert_int_equal(samc_sam3_processor_new(m, &pp, &p, &e), SAMC_OK);
    int h = 0, w = 0;
    uint8_t *rgb = demo_image(&h, &w);
    assert_int_equal(samc_sam3_processor_set_image(p, rgb, h, w, &e), SAMC_OK);
    assert_int_equal(samc_sam3_processor_set_text(p, "a dog", &e), SAMC_OK);
    instances a = copy_results(p);
    samc_embedding *emb = NULL;
    assert_int_equal(samc_sam3_processor_embed(p, rgb, h, w, &emb, &e), SAMC_OK);
    assert_true(samc_embedding_bytes(emb) > 0);
    assert_int_equal(samc_sam3_processor_use_embedding(p, emb, &e), SAMC_OK);
    samc_sam3_results r;
    assert_int_equal(samc_sam3_processor_results(p, &r, &e), SAMC_ERR_ARG); /* use_embedding clears the prompt */
    assert_int_equal(samc_sam3_processor_set_text(p, "a dog", &e), SAMC_OK);
    instances b = copy_results(p);
    assert_true(a.n > 0);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.scores, b.scores, a.n * sizeof(float));
    assert_memory_equal(a.boxes, b.boxes, 4 * a.n * sizeof(float));
    assert_memory_equal(a.masks, b.masks, (size_t)a.n * h * w * sizeof(float));
    /* the SAM 2 predictor refuses a SAM 3 embedding */
    samc_model *m2 = load("fixtures/demo/tiny_d_demo.pt", "fixtures/demo/tiny_d_demo.config.json", NULL);
    samc_predictor *q = NULL;
    assert_int_equal(samc_predictor_new(m2, NULL, &q, &e), SAMC_OK);
    samc_masks c;
    const float pt[2] = {10, 10};
    const int32_t lab[1] = {1};
    const samc_predict_request rq = {.point_coords = pt, .point_labels = lab, .n_points = 1};
    assert_int_equal(samc_predictor_predict_on(q, emb, &rq, &c, &e), SAMC_ERR_ARG);
    samc_predictor_free(q);
    samc_model_free(m2);
    free(a.scores), free(a.boxes), free(a.masks), free(b.scores), free(b.boxes), free(b.masks);
    samc_sam3_processor_free(p);
    samc_embedding_free(emb);
    samc_model_free(m);
    free(rgb);
}

static void test_images_in_memory(void **state)
{
    (void)state;
    int h = 0, w = 0, h2 = 0, w2 = 0;
    uint8_t *rgb = demo_image(&h, &w), *file = NULL, *again = NULL, *png = NULL;
    size_t n = 0, pn = 0;
    char *path = tu_src_path("fixtures/demo/demo.png");
    assert_int_equal(tu_read_file(path, &file, &n), 0);
    samc_error e = {0};
    assert_int_equal(samc_probe_image(file, n, "demo", &h2, &w2, &e), SAMC_OK);
    assert_int_equal(h2, h);
    assert_int_equal(w2, w);
    assert_int_equal(samc_decode_image(file, n, "demo", &again, &h2, &w2, &e), SAMC_OK);
    assert_memory_equal(again, rgb, (size_t)h * w * 3);
    samc_free(again);
    assert_int_equal(samc_encode_png(rgb, h, w, 3, &png, &pn, &e), SAMC_OK);
    assert_int_equal(samc_decode_image(png, pn, NULL, &again, &h2, &w2, &e), SAMC_OK);
    assert_memory_equal(again, rgb, (size_t)h * w * 3);
    samc_free(again);
    samc_free(png);
    assert_int_equal(samc_probe_image(file, 10, "the first 10 bytes", &h2, &w2, &e), SAMC_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "the first 10 bytes"));
    assert_int_equal(samc_decode_image("not an image", 12, "text", &again, &h2, &w2, &e), SAMC_ERR_FORMAT);
    assert_int_equal(samc_encode_png(rgb, h, w, 2, &png, &pn, &e), SAMC_ERR_ARG);
    free(path);
    free(file);
    free(rgb);
}

static void test_mask_rle(void **state)
{
    (void)state;
    /* 3 x 4, column-major runs: column 0 = 0,1,1; column 1 = 0,0,0; column 2 = 1,1,1; column 3 = 0,0,0 */
    const uint8_t m[12] = {0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
    samc_mask_rle r;
    samc_error e = {0};
    assert_int_equal(samc_mask_rle_encode(m, 3, 4, &r, &e), SAMC_OK);
    const int64_t want[] = {1, 2, 3, 3, 3};
    assert_int_equal(r.n_counts, 5);
    assert_memory_equal(r.counts, want, sizeof want);
    assert_int_equal(r.area, 5);
    const float bbox[4] = {0, 0, 2, 2}; /* the box x0,y0,x1,y1 = 0,0,2,2 as x, y, x1 - x0, y1 - y0 */
    assert_memory_equal(r.bbox, bbox, sizeof bbox);
    assert_string_equal(r.coco_counts, "12310"); /* pycocotools: from the fourth count on, the difference to the count two before */
    samc_mask_rle_free(&r);
    assert_int_equal(samc_mask_rle_encode(m, 0, 4, &r, &e), SAMC_ERR_ARG);
    const float logits[4] = {3, 0.5f, -0.5f, -3};
    assert_true(samc_stability_score(logits, 2, 2, 0.0, 1.0) == 1.0f / 3.0f); /* above 1: one; above -1: three */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sam2_embedding), cmocka_unit_test(test_sam3_embedding),
        cmocka_unit_test(test_images_in_memory), cmocka_unit_test(test_mask_rle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
