/* SPDX-License-Identifier: Apache-2.0 */
/* rope.c - compute_axial_cis / apply_rotary_enc. */
#include "core/nn/rope.h"

#include <math.h>
#include <stdlib.h>

#include "core/base/error.h"

samc_status samc_rope_table(int dim, int end_x, int end_y, float theta, float **cos_out, float **sin_out)
{
    *cos_out = *sin_out = NULL;
    if (dim % 4 || dim <= 0 || end_x <= 0 || end_y <= 0)
        return samc_fail(NULL, SAMC_ERR_ARG, "rope: dim %d must be a positive multiple of 4", dim);
    const int q = dim / 4, half = dim / 2, n = end_x * end_y;
    float *c = malloc((size_t)n * half * sizeof *c), *s = malloc((size_t)n * half * sizeof *s);
    float *freqs = malloc((size_t)q * sizeof *freqs);
    if (!c || !s || !freqs) {
        free(c), free(s), free(freqs);
        return SAMC_ERR_NOMEM;
    }
    /* 1 / theta ** (arange(0, dim, 4)[:dim/4].float() / dim), all float32 */
    for (int j = 0; j < q; j++) {
        const float e = (float)(4 * j) / (float)dim;
        freqs[j] = 1.0f / powf(theta, e);
    }
    for (int t = 0; t < n; t++) {
        const float tx = (float)(t % end_x), ty = (float)(t / end_x); /* init_t_xy */
        for (int j = 0; j < q; j++) {
            const float ax = tx * freqs[j], ay = ty * freqs[j]; /* torch.outer, float32 */
            c[(size_t)t * half + j] = cosf(ax), s[(size_t)t * half + j] = sinf(ax);
            c[(size_t)t * half + q + j] = cosf(ay), s[(size_t)t * half + q + j] = sinf(ay);
        }
    }
    free(freqs);
    *cos_out = c, *sin_out = s;
    return SAMC_OK;
}

void samc_rope_apply(float *x, int n, int dim, int ld, const float *cosv, const float *sinv, int table_rows)
{
    const int half = dim / 2;
    for (int t = 0; t < n; t++) {
        float *row = x + (size_t)t * ld;
        const float *c = cosv + (size_t)(t % table_rows) * half, *s = sinv + (size_t)(t % table_rows) * half;
        for (int j = 0; j < half; j++) {
            const float a = row[2 * j], b = row[2 * j + 1];
            /* complex64 multiply (a + ib)(c + is), each product rounded */
            const float ac = a * c[j], bs = b * s[j], as = a * s[j], bc = b * c[j];
            row[2 * j] = ac - bs;
            row[2 * j + 1] = as + bc;
        }
    }
}

samc_status samc_rope_grid(samc_error *err, int feat_w, int feat_h, int L, int *gx, int *gy)
{
    if (feat_w * feat_h == L) {
        *gx = feat_w, *gy = feat_h;
        return SAMC_OK;
    }
    const int s = (int)lround(sqrt((double)L));
    if (s * s != L)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "RoPE attention: %d query tokens are not a square grid", L);
    *gx = *gy = s;
    return SAMC_OK;
}
