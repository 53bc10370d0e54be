/* SPDX-License-Identifier: Apache-2.0 */
/* test_half.c - float16 rounding (SAM 3's frames) against numpy's float16
 * casts (the table was printed by numpy 1.24, which rounds as torch does):
 * ties to even, the step of each binade, subnormals, the largest finite
 * value and the overflow to infinity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "core/nn/half.h"

static void test_round_f16(void **s)
{
    (void)s;
    static const float cases[][2] = {
        {0.100000001, 0.0999755859},
        {0.333333343, 0.333251953},
        {0.00784313772, 0.00784301758},
        {0.996078432, 0.99609375},
        {1.00048828, 1},
        {1.00146484, 1.00195312},
        {65504, 65504},
        {65519.8984, 65504},
        {65520, INFINITY},
        {5.99999979e-08, 5.96046448e-08},
        {2.90000006e-08, 0},
        {2.99999989e-08, 5.96046448e-08},
        {9.99999975e-06, 1.00135803e-05},
        {-0.400000006, -0.399902344},
        {0.499267578, 0.499267578},
        {0.0236432496, 0.0236358643},
        {0.900927365, 0.900878906},
        {-0.71168077, -0.711914062},
        {0.897298872, 0.897460938},
        {-0.376337081, -0.376220703},
        {-0.153347105, -0.153320312},
        {0.655405164, 0.655273438},
        {-0.181601733, -0.181640625},
        {0.0991873741, 0.0991821289},
        {-0.944881797, -0.944824219},
        {0.507026196, 0.506835938},
        {0.0762866288, 0.0762939453},
        {0.819607854, 0.819824219},
        {0.329411775, 0.329345703},
        {0.450980395, 0.450927734},
        {0.788235307, 0.788085938},
        {0.121568628, 0.121582031},
        {0.301960796, 0.302001953},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const float got = samc_round_f16(cases[i][0]);
        if (got != cases[i][1])
            print_error("case %zu: %.9g -> %.9g, expected %.9g\n", i, cases[i][0], got, cases[i][1]);
        assert_true(got == cases[i][1]);
    }
    assert_true(isnan(samc_round_f16(NAN)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_round_f16)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
