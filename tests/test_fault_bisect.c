/* test_fault_bisect.c - the bisection story works end to end: a fault planted
 * in exactly one layer (the test-only "fault" implementation, registered
 * here, serving that layer through --impl-override LAYER=fault) is named by
 * the parity harness as the first failure, chained and isolated, and the
 * same run without the override passes. Also: an implementation is one
 * registry row (registering it is all the harness needs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "parity/parity.h"
#include "util/fault_impl.h"
#include "util/testutil.h"

static void run(const char *fixture, bool isolated, const char *override, samc_parity_report *rep)
{
    char *path = tu_src_path(fixture);
    const char *ovr[1] = {override};
    samc_parity_opts o = {.impl = "fast", .isolated = isolated, .overrides = ovr, .n_overrides = override ? 1 : 0};
    samc_error e = {0};
    samc_status st = samc_parity_run(path, &o, rep, &e);
    if (st)
        print_error("%s: %s\n", fixture, e.msg);
    assert_int_equal(st, SAMC_OK);
    free(path);
}

/* LAYER=fault: the isolated run names LAYER first; without it all pass. */
static void check_bisects(const char *fixture, const char *layer)
{
    samc_parity_report rep;
    char *spec = tu_strdupf("%s=fault", layer);
    run(fixture, true, spec, &rep);
    assert_true(rep.n_fail > 0);
    assert_true(rep.first_fail >= 0);
    const samc_parity_row *first = &rep.rows[rep.first_fail];
    if (strcmp(first->module, layer))
        print_error("planted %s, first failure %s\n", layer, first->module);
    assert_string_equal(first->module, layer);
    samc_parity_report_free(&rep);
    free(spec);

    run(fixture, true, NULL, &rep);
    assert_int_equal(rep.n_fail, 0);
    assert_int_equal(rep.first_fail, -1);
    samc_parity_report_free(&rep);
}

static void test_hiera_block(void **s)
{
    (void)s;
    check_bisects("fixtures/tiny_a_sam21_s128.h5", "image_encoder.trunk.blocks.3");
}

static void test_twoway_layer(void **s)
{
    (void)s;
    check_bisects("fixtures/tiny_b_sam20_s128.h5", "sam_mask_decoder.transformer.layers.1");
}

static void test_neck(void **s)
{
    (void)s;
    check_bisects("fixtures/tiny_c_sam21_s160.h5", "image_encoder.neck");
}

/* Chained: the planted layer is still the first failure (later ones inherit it). */
static void test_chained(void **s)
{
    (void)s;
    samc_parity_report rep;
    run("fixtures/tiny_a_sam21_s128.h5", false, "image_encoder.trunk.blocks.1=fault", &rep);
    assert_true(rep.first_fail >= 0);
    assert_string_equal(rep.rows[rep.first_fail].module, "image_encoder.trunk.blocks.1");
    samc_parity_report_free(&rep);
}

/* A name that is no implementation, or an unregistered one, is an error. */
static void test_unknown_impl(void **s)
{
    (void)s;
    samc_impl_unregister(&tu_fault_impl);
    char *path = tu_src_path("fixtures/tiny_a_sam21_s128.h5");
    const char *ovr[1] = {"image_encoder.trunk.blocks.1=fault"};
    samc_parity_opts o = {.impl = "fast", .overrides = ovr, .n_overrides = 1};
    samc_parity_report rep;
    samc_error e = {0};
    assert_int_equal(samc_parity_run(path, &o, &rep, &e), SAMC_ERR_ARG);
    assert_non_null(strstr(e.msg, "unknown implementation 'fault'"));
    samc_parity_report_free(&rep);
    free(path);
    assert_int_equal(samc_impl_register(&tu_fault_impl, NULL), SAMC_OK);
}

static int setup(void **s)
{
    (void)s;
    return samc_impl_register(&tu_fault_impl, NULL) == SAMC_OK ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hiera_block), cmocka_unit_test(test_twoway_layer), cmocka_unit_test(test_neck),
        cmocka_unit_test(test_chained),     cmocka_unit_test(test_unknown_impl),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
