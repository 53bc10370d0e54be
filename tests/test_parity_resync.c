/* SPDX-License-Identifier: Apache-2.0 */
/* test_parity_resync.c - chained parity re-synchronises at decision points:
 * a bf16 rounding flip planted within the tolerance of its midpoint is
 * reported as a FLIP (the run takes the recorded rounding and every point
 * still passes); one planted beyond the tolerance is a failure, and it is the
 * first one; --strict reports the flip within tolerance as a failure too.
 * The same for a decision of SAM 3's detector-tracker loop by a threshold
 * (the NMS candidate nearest the detection threshold, tiny_vm_multi). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "parity/parity.h"
#include "util/testutil.h"

/* A ref run of `dump` with a planted flip (bf16 or loop threshold). */
static void run_dump(const char *dump, const samc_parity_opts *o, samc_parity_report *rep)
{
    char *path = tu_src_path(dump);
    samc_error e = {0};
    samc_status st = samc_parity_run(path, o, rep, &e);
    if (st)
        print_error("%s\n", e.msg);
    assert_int_equal(st, SAMC_OK);
    free(path);
}

static void run(double plant, bool strict, samc_parity_report *rep)
{
    const samc_parity_opts o = {.impl = "ref", .strict = strict, .plant_bf16_flip = plant};
    run_dump("fixtures/video/tiny_v1_sam21_s128.h5", &o, rep);
}

static const samc_parity_row *first_flip(const samc_parity_report *rep)
{
    for (int i = 0; i < rep->n_rows; i++)
        if (rep->rows[i].state == SAMC_PARITY_FLIP)
            return &rep->rows[i];
    return NULL;
}

static void test_flip_within_tolerance(void **s)
{
    (void)s;
    samc_parity_report rep;
    run(1e-7, false, &rep); /* ref tolerance 1e-5 */
    assert_int_equal(rep.n_fail, 0);
    assert_true(rep.n_flips >= 1);
    const samc_parity_row *f = first_flip(&rep);
    assert_non_null(f);
    tu_assert_contains(f->note, "bf16 rounding of the stored memory");
    assert_true(f->rel > 0.5e-7 && f->rel < 2e-7); /* the planted margin is reported */
    samc_parity_report_free(&rep);
}

static void test_flip_beyond_tolerance(void **s)
{
    (void)s;
    samc_parity_report rep;
    run(1e-3, false, &rep);
    assert_true(rep.n_fail > 0);
    const samc_parity_row *first = &rep.rows[rep.first_fail];
    tu_assert_contains(first->note, "differ farther than the tolerance from the threshold");
    samc_parity_report_free(&rep);
}

static void test_strict(void **s)
{
    (void)s;
    samc_parity_report rep;
    run(1e-7, true, &rep);
    assert_int_equal(rep.n_flips, 0);
    assert_true(rep.n_fail > 0); /* the bank now differs by one bf16 step */
    samc_parity_report_free(&rep);
}

static void run_loop(double plant, bool strict, samc_parity_report *rep)
{
    const samc_parity_opts o = {.impl = "ref", .strict = strict, .plant_threshold_flip = plant};
    run_dump("fixtures/sam3_video/tiny_vm_multi.h5", &o, rep);
}

static void test_loop_threshold(void **s)
{
    (void)s;
    samc_parity_report rep;
    run_loop(1e-7, false, &rep); /* within tolerance: adopted, every point passes */
    assert_int_equal(rep.n_fail, 0);
    const samc_parity_row *f = NULL;
    for (int i = 0; i < rep.n_rows && !f; i++)
        f = rep.rows[i].state == SAMC_PARITY_FLIP && strstr(rep.rows[i].note, "in/pred_probs > 0.75") ? &rep.rows[i]
                                                                                                      : NULL;
    assert_non_null(f);
    assert_string_equal(f->module, "@nms");
    assert_true(f->rel > 0.5e-7 && f->rel < 2e-7);
    samc_parity_report_free(&rep);
    run_loop(1e-2, false, &rep); /* beyond it: the planted decision is the first failure */
    assert_true(rep.n_fail > 0);
    tu_assert_contains(rep.rows[rep.first_fail].note, "in/pred_probs > 0.75");
    tu_assert_contains(rep.rows[rep.first_fail].note, "differ farther than the tolerance");
    samc_parity_report_free(&rep);
    run_loop(1e-7, true, &rep); /* strict: not adopted, so the run departs from the official one */
    assert_int_equal(rep.n_flips, 0);
    assert_true(rep.n_fail > 0);
    samc_parity_report_free(&rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_flip_within_tolerance),
                                       cmocka_unit_test(test_flip_beyond_tolerance), cmocka_unit_test(test_strict),
                                       cmocka_unit_test(test_loop_threshold)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
