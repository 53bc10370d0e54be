/* SPDX-License-Identifier: Apache-2.0 */
/* axial_rope.c - see axial_rope.h. */
#include "core/nn/axial_rope.h"

#include <math.h>
#include <stddef.h>

#include "core/base/error.h"

samc_status samc_axial_rope_cis(int dim, int end_x, int end_y, float theta, float scale_pos,
                                int offset, float *cis)
{
    if (dim <= 0 || dim % 4 || end_x <= 0 || end_y <= 0)
        return samc_fail(NULL, SAMC_ERR_ARG, "axial rope: dim %d (multiple of 4) over %dx%d",
                         dim, end_x, end_y);
    const int q = dim / 4, half = dim / 2;
    for (int64_t t = 0; t < (int64_t)end_x * end_y; t++) {
        /* init_t_xy: float32 t % end_x and t // end_x, then * scale + offset
         * (a float32 tensor times a Python float: the scalar is rounded to
         * float first) */
        const float tx = (float)(t % end_x) * scale_pos + (float)offset;
        const float ty = (float)(t / end_x) * scale_pos + (float)offset;
        float *row = cis + t * half * 2;
        for (int j = 0; j < q; j++) {
            /* 1 / theta ** (arange(0, dim, 4)[j].float() / dim) */
            const float f = 1.0f / powf(theta, (float)(4 * j) / (float)dim);
            const float ax = tx * f, ay = ty * f; /* torch.outer */
            /* torch.polar(1, a) = (1 * cos a, 1 * sin a) */
            row[2 * j] = cosf(ax), row[2 * j + 1] = sinf(ax);
            row[2 * (q + j)] = cosf(ay), row[2 * (q + j) + 1] = sinf(ay);
        }
    }
    return SAMC_OK;
}

void samc_axial_rope_apply(float *x, int64_t n, int dim, int64_t ld, const float *cis)
{
    const int half = dim / 2;
    for (int64_t t = 0; t < n; t++) {
        float *r = x + t * ld;
        const float *c = cis + t * half * 2;
        for (int j = 0; j < half; j++) {
            const float a = r[2 * j], b = r[2 * j + 1], cr = c[2 * j], ci = c[2 * j + 1];
            const float ac = a * cr, bd = b * ci, ad = a * ci, bc = b * cr;
            r[2 * j] = ac - bd;
            r[2 * j + 1] = ad + bc;
        }
    }
}
