/* SPDX-License-Identifier: Apache-2.0 */
/* compare.c - the metrics of PARITY_DUMP_FORMAT.md "Comparison". */
#include <math.h>

#include "parity.h"

void samc_parity_metrics_ref(const float *out, const float *ref, int64_t n, double *max_abs, double *ref_max,
                             double *nmse)
{
    double mx = 0, scale = 0, se = 0, sr = 0;
    bool nan = false;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)out[i] - (double)ref[i];
        if (isnan(d))
            nan = true;
        mx = fabs(d) > mx ? fabs(d) : mx;
        scale = fabs((double)ref[i]) > scale ? fabs((double)ref[i]) : scale;
        se += d * d;
        sr += (double)ref[i] * ref[i];
    }
    if (nan) /* a NaN must never pass */
        mx = se = INFINITY;
    *max_abs = mx;
    *ref_max = scale;
    *nmse = se / (sr > 1e-30 ? sr : 1e-30);
}

void samc_parity_metrics(const float *out, const float *ref, int64_t n, double *max_abs, double *rel,
                         double *nmse)
{
    double scale;
    samc_parity_metrics_ref(out, ref, n, max_abs, &scale, nmse);
    *rel = *max_abs / (scale > 1e-12 ? scale : 1e-12);
}

double samc_parity_max_abs(const float *a, const float *b, int64_t n)
{
    double mx, scale, nmse;
    samc_parity_metrics_ref(a, b, n, &mx, &scale, &nmse);
    return mx;
}
