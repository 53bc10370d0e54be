/* SPDX-License-Identifier: Apache-2.0 */
/* sine_embed.c - see sine_embed.h. */
#include "core/nn/sine_embed.h"

#include <math.h>

/* dim_t[k] = temperature ** (2 * (arange(F) // 2) / F), float32 throughout */
static float dim_t(float temperature, int k, int F)
{
    return powf(temperature, (2.0f * (float)(k / 2)) / (float)F);
}

void samc_sine_encode_coord(float v, float scale, float temperature, int F, float *out)
{
    const float e = v * scale; /* x * self.scale: Python float rounded to float32 */
    for (int k = 0; k < F; k++) {
        const float a = e / dim_t(temperature, k, F);
        out[k] = (k % 2 == 0) ? sinf(a) : cosf(a);
    }
}

void samc_sine_encode_box(const float cxcywh[4], float scale, float temperature, int F, float *out)
{
    samc_sine_encode_coord(cxcywh[1], scale, temperature, F, out);     /* pos_y */
    samc_sine_encode_coord(cxcywh[0], scale, temperature, F, out + F); /* pos_x */
    out[2 * F] = cxcywh[3];                                            /* h */
    out[2 * F + 1] = cxcywh[2];                                        /* w */
}

void samc_sine_embed_box4(const float xywh[4], int F, float *out)
{
    const float scale = (float)(2.0 * M_PI), T = 10000.0f;
    samc_sine_encode_coord(xywh[1], scale, T, F, out);         /* pos_y */
    samc_sine_encode_coord(xywh[0], scale, T, F, out + F);     /* pos_x */
    samc_sine_encode_coord(xywh[2], scale, T, F, out + 2 * F); /* pos_w */
    samc_sine_encode_coord(xywh[3], scale, T, F, out + 3 * F); /* pos_h */
}
