/* SPDX-License-Identifier: Apache-2.0 */
/* test_plugin.c - implementations from a plugin (core/runtime/plugin.h).
 *
 * SAMC_PLUGIN_PATH points at a directory holding tests/plugin/fake_cuda.c
 * built as libsamc_cuda.so. Asking for "cuda" loads it once; its rows have
 * no bodies, so every layer is served by fast (the fallback) and a predict
 * gives fast's masks bit for bit. Without the plugin (a path that does not
 * have it) the message names the library, where it was looked for and how
 * to build it: the real plugin's absence on a machine without CUDA. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/sam2_model.h"
#include "util/testutil.h"

#define FIXTURE "fixtures/tiny_a_sam21_s128.h5"

static void predict(samc_sam2_model *m, const char *impl, samc_sam_prediction *out)
{
    samc_error err = {0};
    samc_exec x;
    assert_int_equal(samc_exec_init_impl(&x, &samc_sam2_family, m, &m->base, impl, &err), SAMC_OK);
    for (int i = 0; i < x.n_layers; i++) { /* no body of its own: each layer is fast's, no whole part */
        if (x.layers[i].def->body)
            assert_string_equal(x.layers[i].impl->name, "fast");
        assert_null(x.layers[i].whole_ops);
    }
    uint8_t rgb[96 * 120 * 3];
    for (size_t i = 0; i < sizeof rgb; i++)
        rgb[i] = (uint8_t)(i * 7 % 251);
    samc_frame_features f;
    assert_int_equal(samc_sam2_encode_image(&x, m, rgb, 96, 120, &f, &err), SAMC_OK);
    const float pt[2] = {60, 40};
    const int32_t lab[1] = {1};
    const samc_sam_prompt p = {.n_points = 1, .points = pt, .labels = lab, .multimask = true};
    assert_int_equal(samc_sam_predict(&x, &m->tracker, &f, &p, NULL, out, &err), SAMC_OK);
    samc_frame_features_release(&f);
    samc_exec_free(&x);
}

static void test_plugin_rows(void **s)
{
    (void)s;
    samc_error err = {0};
    samc_status st = SAMC_OK;
    assert_null(samc_impl_find("cuda")); /* not loaded until asked for */
    const samc_impl *cuda = samc_impl_lookup("cuda", "--impl", &st, &err);
    if (!cuda)
        print_error("%s\n", err.msg);
    assert_non_null(cuda);
    assert_string_equal(cuda->fallback, "fast");
    assert_non_null(samc_impl_find("cuda-bf16")); /* the same plugin's second row */
    assert_ptr_equal(samc_impl_lookup("cuda", "--impl", &st, &err), cuda); /* loaded once */
    char *dump = tu_src_path(FIXTURE);
    samc_sam2_model *m = NULL;
    assert_int_equal(samc_sam2_model_load(dump, NULL, false, &m, &err), SAMC_OK);
    samc_sam_prediction a = {0}, b = {0};
    predict(m, "cuda", &a);
    predict(m, "fast", &b);
    assert_int_equal(samc_numel(&a.masks), samc_numel(&b.masks));
    assert_memory_equal(a.masks.data, b.masks.data, (size_t)samc_numel(&a.masks) * sizeof(float));
    samc_sam_prediction_release(&a), samc_sam_prediction_release(&b);
    samc_sam2_model_free(m);
    free(dump);
    /* the api table the plugin kept at registration is still libsamc's,
     * intact, after all that (tests/plugin/fake_cuda.c) */
    char path[4096];
    snprintf(path, sizeof path, "%s/libsamc_cuda.so", getenv("SAMC_PLUGIN_PATH"));
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    int (*alive)(void) = (int (*)(void))dlsym(h, "samc_fake_plugin_api_alive");
    assert_non_null(alive);
    assert_int_equal(alive(), 1);
    dlclose(h);
}

/* A name no implementation or plugin has: the message lists the known
 * ones, the plugins' included. */
static void test_missing_plugin(void **s)
{
    (void)s;
    samc_error e1 = {0};
    samc_status st = SAMC_OK;
    assert_null(samc_impl_find("no-such-plugin-impl"));
    assert_null(samc_impl_lookup("no-such-plugin-impl", "--impl", &st, &e1));
    assert_int_equal(st, SAMC_ERR_ARG);
    assert_non_null(strstr(e1.msg, "unknown implementation 'no-such-plugin-impl'"));
    assert_non_null(strstr(e1.msg, "cuda")); /* the known list names the plugins' rows */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_plugin_rows), cmocka_unit_test(test_missing_plugin)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
