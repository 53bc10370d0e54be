/* SPDX-License-Identifier: Apache-2.0 */
/* test_api.c - the public C API on official-format checkpoints.
 *
 * fixtures/ckpt/tiny_c_f32.{pt,safetensors} hold the weights of
 * fixtures/tiny_c_sam21_s160.h5; running the dump's image and prompts
 * through samc_predictor_* must reproduce the dump's /outputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parity/dump.h"
#include "parity/parity.h"
#include "samc.h"
#include "util/testutil.h"

typedef struct dump_case {
    samc_dump *d;
    uint8_t *img;
    int h, w;
} dump_case;

static void open_case(dump_case *c)
{
    char *path = tu_src_path("fixtures/tiny_c_sam21_s160.h5");
    samc_error e = {0};
    assert_int_equal(samc_dump_open(path, &c->d, &e), SAMC_OK);
    int nd;
    int64_t dims[4];
    assert_int_equal(samc_dump_read_u8(c->d, "/inputs/image_u8", &c->img, &nd, dims, &e), SAMC_OK);
    c->h = (int)dims[0], c->w = (int)dims[1];
    free(path);
}

static void close_case(dump_case *c)
{
    free(c->img);
    samc_dump_close(c->d);
}

/* normalized_coords: the request's pixels as x / w, y / h in float32 (what
 * the pixel path scales by the model size) give its logits bit for bit. */
static void check_normalized(samc_predictor *p, const samc_predict_request *px, const samc_masks *want)
{
    float pts[64], box[4];
    assert_true(px->n_points <= 32);
    const float w = (float)want->width, h = (float)want->height;
    for (int i = 0; i < px->n_points; i++)
        pts[2 * i] = px->point_coords[2 * i] / w, pts[2 * i + 1] = px->point_coords[2 * i + 1] / h;
    for (int i = 0; px->box && i < 4; i++)
        box[i] = px->box[i] / (i % 2 ? h : w);
    samc_predict_request rq = *px;
    rq.point_coords = px->n_points ? pts : NULL, rq.box = px->box ? box : NULL;
    rq.return_logits = 1, rq.normalized_coords = 1;
    samc_masks m;
    samc_error e = {0};
    assert_int_equal(samc_predictor_predict(p, &rq, &m, &e), SAMC_OK);
    const int64_t n = (int64_t)m.num_masks * m.height * m.width;
    assert_int_equal(m.num_masks, want->num_masks);
    assert_memory_equal(m.masks, want->masks, (size_t)n * sizeof(float));
    assert_memory_equal(m.iou, want->iou, (size_t)m.num_masks * sizeof(float));
    samc_masks_free(&m);
    if (px->n_points) { /* pixel values read as normalized ones: outside [0, 1] */
        pts[0] = px->point_coords[0] + 2.0f;
        assert_int_equal(samc_predictor_predict(p, &rq, &m, &e), SAMC_ERR_ARG);
        assert_non_null(strstr(e.msg, "outside [0, 1]"));
    }
}

/* Prompt k of the dump through the API, compared to /outputs/k. */
static void check_prompt(dump_case *c, samc_predictor *p, int k)
{
    char path[128];
    samc_error e = {0};
    samc_tensor coords = {0}, box = {0}, ref = {0};
    int32_t *labels = NULL;
    int64_t n = 0;
    snprintf(path, sizeof path, "/inputs/prompts/%d/point_coords", k);
    assert_int_equal(samc_dump_read(c->d, path, &coords, &e), SAMC_OK);
    snprintf(path, sizeof path, "/inputs/prompts/%d/point_labels", k);
    assert_int_equal(samc_dump_read_i32(c->d, path, &labels, &n, &e), SAMC_OK);
    snprintf(path, sizeof path, "/inputs/prompts/%d/box", k);
    bool has_box = samc_dump_exists(c->d, path);
    if (has_box)
        assert_int_equal(samc_dump_read(c->d, path, &box, &e), SAMC_OK);
    snprintf(path, sizeof path, "/inputs/prompts/%d/mask_input", k);
    if (samc_dump_exists(c->d, path)) { /* mask prompts are covered by the parity tests */
        samc_tensor_release(&coords), samc_tensor_release(&box), free(labels);
        return;
    }
    double mm = 1;
    snprintf(path, sizeof path, "/inputs/prompts/%d", k);
    samc_dump_attr_num(c->d, path, "multimask_output", &mm, NULL, NULL);
    samc_predict_request rq = {n ? coords.data : NULL, n ? labels : NULL, (int)n, has_box ? box.data : NULL, NULL,
                               mm != 0, 1, 0};
    samc_masks m;
    assert_int_equal(samc_predictor_predict(p, &rq, &m, &e), SAMC_OK);
    snprintf(path, sizeof path, "/outputs/%d/masks", k);
    assert_int_equal(samc_dump_read(c->d, path, &ref, &e), SAMC_OK);
    assert_int_equal(ref.shape[0], m.num_masks);
    assert_int_equal(ref.shape[1], m.height);
    assert_int_equal(ref.shape[2], m.width);
    double max_abs, rel, nmse;
    samc_parity_metrics(m.masks, ref.data, samc_numel(&ref), &max_abs, &rel, &nmse);
    assert_true(rel <= 1e-5);
    samc_tensor_release(&ref);
    snprintf(path, sizeof path, "/outputs/%d/iou_predictions", k);
    assert_int_equal(samc_dump_read(c->d, path, &ref, &e), SAMC_OK);
    samc_parity_metrics(m.iou, ref.data, m.num_masks, &max_abs, &rel, &nmse);
    assert_true(rel <= 1e-5);
    /* return_logits = 0 gives the thresholded masks. */
    rq.return_logits = 0;
    samc_masks b;
    assert_int_equal(samc_predictor_predict(p, &rq, &b, &e), SAMC_OK);
    for (int64_t i = 0; i < (int64_t)m.num_masks * m.height * m.width; i++)
        assert_true(b.masks[i] == (m.masks[i] > 0.0f ? 1.0f : 0.0f));
    samc_masks_free(&b);
    check_normalized(p, &rq, &m);
    samc_masks_free(&m);
    samc_tensor_release(&ref), samc_tensor_release(&coords), samc_tensor_release(&box);
    free(labels);
}

static void run_checkpoint(const char *rel)
{
    dump_case c;
    open_case(&c);
    char *ckpt = tu_src_path(rel), *cfg = tu_src_path("fixtures/ckpt/tiny_c_f32.config.json");
    samc_predictor *p = NULL;
    samc_error e = {0};
    assert_int_equal(samc_predictor_load(ckpt, cfg, &p, &e), SAMC_OK);
    assert_int_equal(samc_predictor_set_image(p, c.img, c.h, c.w, &e), SAMC_OK);
    const float *emb;
    int ec, eh, ew;
    assert_int_equal(samc_predictor_get_embedding(p, &emb, &ec, &eh, &ew, &e), SAMC_OK);
    assert_int_equal(eh * 16, 160);
    for (int k = 0; k < 3; k++)
        check_prompt(&c, p, k);
    samc_predictor_free(p);
    free(ckpt), free(cfg);
    close_case(&c);
}

static void test_pt(void **s) { (void)s; run_checkpoint("fixtures/ckpt/tiny_c_f32.pt"); }
static void test_safetensors(void **s) { (void)s; run_checkpoint("fixtures/ckpt/tiny_c_f32.safetensors"); }

/* Bad use of the API: clear errors, no crash. */
static void test_bad_requests(void **s)
{
    (void)s;
    dump_case c;
    open_case(&c);
    char *ckpt = tu_src_path("fixtures/ckpt/tiny_c_f32.pt"), *cfg = tu_src_path("fixtures/ckpt/tiny_c_f32.config.json");
    samc_predictor *p = NULL;
    samc_error e = {0};
    assert_int_equal(samc_predictor_load(ckpt, cfg, &p, &e), SAMC_OK);
    samc_masks m;
    float pt[2] = {10, 10};
    int32_t lab[1] = {1};
    samc_predict_request rq = {pt, lab, 1, NULL, NULL, 1, 1, 0};
    assert_int_equal(samc_predictor_predict(p, &rq, &m, &e), SAMC_ERR_ARG); /* no image yet */
    assert_non_null(strstr(e.msg, "image"));
    assert_int_equal(samc_predictor_set_image(p, c.img, c.h, c.w, NULL), SAMC_OK);
    struct { float x, y; int32_t label; const char *msg; } bad[] = {
        {-5, 10, 1, "outside"}, {10, (float)c.h + 1, 1, "outside"}, {NAN, 3, 1, "not finite"},
        {10, 10, 4, "label 4"}, {10, 10, -2, "label -2"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pt[0] = bad[i].x, pt[1] = bad[i].y, lab[0] = bad[i].label;
        e = (samc_error){0};
        assert_int_equal(samc_predictor_predict(p, &rq, &m, &e), SAMC_ERR_ARG);
        assert_non_null(strstr(e.msg, bad[i].msg));
    }
    float box[4] = {50, 40, 20, 60};
    samc_predict_request rb = {NULL, NULL, 0, box, NULL, 0, 1, 0};
    e = (samc_error){0};
    assert_int_equal(samc_predictor_predict(p, &rb, &m, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "x1 < x0"));
    e = (samc_error){0};
    assert_int_equal(samc_predictor_set_impl(p, "gpu", &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "gpu"));
    e = (samc_error){0};
    assert_int_equal(samc_predictor_override(p, "image_encoder.trunk.blocks.99=ref", &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "blocks.99"));
    samc_predictor_free(p);
    /* A checkpoint that does not match the config names the first bad key. */
    char *other = tu_src_path("fixtures/demo/tiny_d_demo.pt");
    e = (samc_error){0};
    assert_int_not_equal(samc_predictor_load(other, cfg, &p, &e), SAMC_OK);
    assert_non_null(strstr(e.msg, "key '"));
    e = (samc_error){0};
    assert_int_equal(samc_predictor_load(ckpt, "sam2_hiera_q", &p, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "sam2_hiera_q"));
    free(other), free(ckpt), free(cfg);
    close_case(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pt),
        cmocka_unit_test(test_safetensors),
        cmocka_unit_test(test_bad_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
