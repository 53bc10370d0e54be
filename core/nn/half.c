/* SPDX-License-Identifier: Apache-2.0 */
/* half.c - float16 rounding. */
#include "core/nn/half.h"

#include <math.h>

float samc_round_f16(float x)
{
    if (!isfinite(x) || x == 0.0f)
        return x;
    int e;
    frexpf(x, &e); /* |x| in [2^(e-1), 2^e) */
    const int exp = e - 1 < -14 ? -14 : e - 1; /* float16's smallest normal exponent; below it a fixed step */
    const double ulp = ldexp(1.0, exp - 10);   /* 10 fraction bits */
    const double r = nearbyint((double)x / ulp) * ulp; /* exact scalings; the rounding is ties-to-even */
    return fabs(r) > 65504.0 ? copysignf(INFINITY, x) : (float)r;
}
