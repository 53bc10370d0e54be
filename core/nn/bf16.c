/* SPDX-License-Identifier: Apache-2.0 */
/* bf16.c - bfloat16 rounding. */
#include "core/nn/bf16.h"

#include <string.h>

void samc_round_bf16(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) {
            u |= 0x400000u; /* quiet NaN */
        } else {
            u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
            u &= 0xffff0000u;
        }
        memcpy(&x[i], &u, 4);
    }
}

void samc_bf16_neighbours(float x, float *lo, float *hi, float *mid)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    const uint32_t l = u & 0xffff0000u, h = l + 0x10000u, m = l | 0x8000u;
    memcpy(lo, &l, 4);
    memcpy(hi, &h, 4);
    memcpy(mid, &m, 4);
}

double samc_bf16_distance_to_rounding(float x, float b)
{
    uint32_t u;
    memcpy(&u, &b, 4);
    const uint32_t sign = u & 0x80000000u, mag = u & 0x7fffffffu;
    const uint32_t lo_bits = sign | (mag ? mag - 0x8000u : 0u), hi_bits = sign | (mag + 0x8000u);
    float e0, e1; /* the half-way points to b's two neighbours */
    memcpy(&e0, &lo_bits, 4);
    memcpy(&e1, &hi_bits, 4);
    const double a = e0 < e1 ? e0 : e1, z = e0 < e1 ? e1 : e0;
    return x < a ? a - x : x > z ? x - z : 0.0;
}
