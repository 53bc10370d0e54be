/* test_fast_fault.c - the bisection story of fast/ works end to end: a fault
 * planted in exactly one fast layer (fast/fast_testing.h) is named by
 * `samc parity --impl fast --isolated` as the first failure, and an
 * override of that layer to ref makes the run pass again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fast/fast_testing.h"
#include "parity/parity.h"
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

/* Plant a fault in `layer`; isolated fast parity names it first; LAYER=ref passes. */
static void check_bisects(const char *fixture, const char *layer)
{
    samc_parity_report rep;
    samc_fast_plant_fault(layer);
    run(fixture, true, NULL, &rep);
    assert_true(rep.n_fail > 0);
    assert_true(rep.first_fail >= 0);
    const samc_parity_row *first = &rep.rows[rep.first_fail];
    if (strcmp(first->module, layer))
        print_error("planted %s, first failure %s\n", layer, first->module);
    assert_string_equal(first->module, layer);
    samc_parity_report_free(&rep);

    char *spec = tu_strdupf("%s=ref", layer);
    run(fixture, true, spec, &rep);
    assert_int_equal(rep.n_fail, 0);
    assert_int_equal(rep.first_fail, -1);
    samc_parity_report_free(&rep);
    free(spec);
    samc_fast_plant_fault(NULL);
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

/* The fault is in one layer only: its neighbours and the unfaulted run pass. */
static void test_no_fault_passes_chained(void **s)
{
    (void)s;
    samc_parity_report rep;
    samc_fast_plant_fault(NULL);
    run("fixtures/tiny_a_sam21_s128.h5", false, NULL, &rep);
    assert_int_equal(rep.n_fail, 0);
    samc_parity_report_free(&rep);
    /* chained: the planted layer is still the first failure (later ones inherit it) */
    samc_fast_plant_fault("image_encoder.trunk.blocks.1");
    run("fixtures/tiny_a_sam21_s128.h5", false, NULL, &rep);
    assert_true(rep.first_fail >= 0);
    assert_string_equal(rep.rows[rep.first_fail].module, "image_encoder.trunk.blocks.1");
    samc_parity_report_free(&rep);
    samc_fast_plant_fault(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hiera_block),
        cmocka_unit_test(test_twoway_layer),
        cmocka_unit_test(test_neck),
        cmocka_unit_test(test_no_fault_passes_chained),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
