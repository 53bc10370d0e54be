/* SPDX-License-Identifier: Apache-2.0 */
/* test_fault_bisect.c - the bisection story works end to end, and the pass
 * criterion (docs/parity.md, "The criterion") hides no fault: a fault of
 * relative size 1e-4 (element 0 of an output moved by 1e-4 x its max|value|,
 * ten times ref's tolerance 1e-5, which these runs are held to) is caught
 * and named.
 *
 * - In a body: the test-only "fault" implementation (tests/util/fault_impl.c,
 *   registered here) serves one layer through --impl-override LAYER=fault;
 *   the harness names that layer as the first failure, isolated and
 *   chained, and the same run without the override passes. Covered: Hiera
 *   block, FPN neck, two-way layer, the mask decoder (every output, and the
 *   object-score logit alone: a small output), the mask downsampler, a fuser
 *   CXBlock, a memory-attention layer.
 * - At every parity point of every task (image, video, amg, sam3_image):
 *   the harness's own planted fault (samc_parity_opts.plant_fault_*) in
 *   every output of every point at once, run isolated: every point fails,
 *   and a row that does not is a small output judged against its slot's
 *   scale (the only rows the criterion may judge more loosely than rel).
 * Also: an implementation is one registry row (registering it is all the
 * harness needs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity/parity.h"
#include "util/fault_impl.h"
#include "util/testutil.h"

#define TOL 1e-5 /* ref's tolerance: the 1e-4 faults are 10 x over it */

static void run_opts(const char *fixture, samc_parity_opts *o, samc_parity_report *rep)
{
    char *path = tu_src_path(fixture);
    if (!o->impl)
        o->impl = "fast";
    o->tol = TOL;
    samc_error e = {0};
    samc_status st = samc_parity_run(path, o, rep, &e);
    if (st)
        print_error("%s: %s\n", fixture, e.msg);
    assert_int_equal(st, SAMC_OK);
    free(path);
}

static void run(const char *fixture, bool isolated, const char *override, samc_parity_report *rep)
{
    const char *ovr[1] = {override};
    samc_parity_opts o = {.isolated = isolated, .overrides = ovr, .n_overrides = override ? 1 : 0};
    run_opts(fixture, &o, rep);
}

static void expect_first(const samc_parity_report *rep, const char *module, const char *slot)
{
    assert_true(rep->n_fail > 0);
    assert_true(rep->first_fail >= 0);
    const samc_parity_row *first = &rep->rows[rep->first_fail];
    if (strcmp(first->module, module) || (slot && strcmp(first->slot, slot)))
        print_error("planted %s (slot %s), first failure %s slot %s: %s\n", module, slot ? slot : "*", first->module,
                    first->slot, first->note);
    assert_string_equal(first->module, module);
    if (slot)
        assert_string_equal(first->slot, slot);
}

/* LAYER=fault: the isolated run names LAYER first; without it all pass. */
static void check_bisects(const char *fixture, const char *layer)
{
    samc_parity_report rep;
    char *spec = tu_strdupf("%s=fault", layer);
    run(fixture, true, spec, &rep);
    expect_first(&rep, layer, NULL);
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

/* The memory path's kinds, on the video fixture of the chained drift. */
static void test_memory_layers(void **s)
{
    (void)s;
    static const char *const layers[] = {"memory_encoder.mask_downsampler", "memory_encoder.fuser.layers.1",
                                         "memory_attention.layers.0", "sam_mask_decoder.transformer.layers.0"};
    for (int i = 0; i < 4; i++)
        check_bisects("fixtures/video/tiny_v6_sam20_s64.h5", layers[i]);
}

/* A small output: only the object-score logit of the heads is off by 1e-4 of
 * itself (its values are 0.07 to 0.26 in this dump, its slot's scale over
 * the calls 0.71): the harness still names sam_mask_decoder slot 3. */
static void test_object_score(void **s)
{
    (void)s;
    tu_fault_heads_only = 2;
    samc_parity_report rep;
    run("fixtures/video/tiny_v3_sam20_s128.h5", true, "sam_mask_decoder=fault", &rep);
    expect_first(&rep, "sam_mask_decoder", "3");
    samc_parity_report_free(&rep);
    run("fixtures/video/tiny_v3_sam20_s128.h5", false, "sam_mask_decoder=fault", &rep);
    expect_first(&rep, "sam_mask_decoder", "3");
    samc_parity_report_free(&rep);
    tu_fault_heads_only = -1;
}

/* Chained: the planted layer is still the first failure (later ones inherit
 * it), also where the criterion's propagation rule judges the chain: the
 * mask downsampler amplifies its inputs' error about tenfold, but a fault in
 * it shows when it runs alone. */
static void test_chained(void **s)
{
    (void)s;
    samc_parity_report rep;
    run("fixtures/tiny_a_sam21_s128.h5", false, "image_encoder.trunk.blocks.1=fault", &rep);
    expect_first(&rep, "image_encoder.trunk.blocks.1", NULL);
    samc_parity_report_free(&rep);
    run("fixtures/video/tiny_v6_sam20_s64.h5", false, "memory_encoder.mask_downsampler=fault", &rep);
    expect_first(&rep, "memory_encoder.mask_downsampler", NULL);
    samc_parity_report_free(&rep);
}

/* Every parity point of a dump with a 1e-4 fault in every output: each
 * point fails; a row that passes is a small output judged against its
 * slot's scale. */
static void check_every_point(const char *fixture)
{
    samc_parity_opts o = {.isolated = true, .plant_fault_module = "*", .plant_fault_size = 1e-4};
    samc_parity_report rep;
    run_opts(fixture, &o, &rep);
    int points = 0, escaped = 0;
    for (int i = 0; i < rep.n_rows; i++) {
        const samc_parity_row *r = &rep.rows[i];
        bool caught = false, judged = false;
        for (int j = 0; j < rep.n_rows; j++)
            if (!strcmp(rep.rows[j].module, r->module) && rep.rows[j].judged && rep.rows[j].ref_max > 0) {
                judged = true;
                caught = caught || rep.rows[j].state == SAMC_PARITY_FAIL;
            }
        bool first = true; /* each module once */
        for (int j = 0; j < i; j++)
            first = first && strcmp(rep.rows[j].module, r->module);
        if (first && judged) {
            points++;
            if (!caught)
                print_error("%s: the fault in %s went unnoticed\n", fixture, r->module);
            assert_true(caught);
        }
        if (r->judged && r->ref_max > 0 && r->state == SAMC_PARITY_PASS) {
            escaped++;
            if (!(r->scale > r->ref_max))
                print_error("%s: %s#%d slot %s passes with the fault (rel %.3g)\n", fixture, r->module, r->call,
                            r->slot, r->rel);
            assert_true(r->scale > r->ref_max);
        }
    }
    printf("%s: %d points, every one caught; %d of %d rows passed with the fault, all small outputs\n", fixture,
           points, escaped, rep.n_rows);
    assert_true(points > 0);
    samc_parity_report_free(&rep);
}

static void test_every_point(void **s)
{
    (void)s;
    check_every_point("fixtures/tiny_a_sam21_s128.h5");
    check_every_point("fixtures/video/tiny_v6_sam20_s64.h5");
    check_every_point("fixtures/amg/amg_a_nocrop.h5");
    check_every_point("fixtures/sam3/tiny_s2_text_boxes.h5");
}

/* The harness's planted fault in the object-score slot alone, chained: the
 * first failure names it (later layers consume the faulty logit). */
static void test_planted_object_score_chained(void **s)
{
    (void)s;
    samc_parity_opts o = {.plant_fault_module = "sam_mask_decoder", .plant_fault_slot = "3", .plant_fault_size = 1e-4};
    samc_parity_report rep;
    run_opts("fixtures/video/tiny_v3_sam20_s128.h5", &o, &rep);
    expect_first(&rep, "sam_mask_decoder", "3");
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
        cmocka_unit_test(test_hiera_block),     cmocka_unit_test(test_twoway_layer),
        cmocka_unit_test(test_neck),            cmocka_unit_test(test_memory_layers),
        cmocka_unit_test(test_object_score),    cmocka_unit_test(test_chained),
        cmocka_unit_test(test_every_point),     cmocka_unit_test(test_planted_object_score_chained),
        cmocka_unit_test(test_unknown_impl),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
