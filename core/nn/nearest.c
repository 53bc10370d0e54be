/* SPDX-License-Identifier: Apache-2.0 */
/* nearest.c - see nearest.h. */
#include "core/nn/nearest.h"

#include <math.h>

int samc_nearest_src(int o, int in, int out)
{
    if (out == in)
        return o;
    if (out == 2 * in)
        return o >> 1;
    const float scale = (float)in / (float)out;
    const int i = (int)floorf((float)o * scale);
    return i < in - 1 ? i : in - 1;
}
