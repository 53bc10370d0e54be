/* SPDX-License-Identifier: Apache-2.0 */
/* box_geom.c - see box_geom.h. */
#include "core/nn/box_geom.h"

#include <math.h>

#include "core/models/sam3/sam3_layers.h"

void samc_box_cxcywh_to_xyxy(const float in[4], float out[4])
{
    const float hw = 0.5f * in[2], hh = 0.5f * in[3];
    out[0] = in[0] - hw;
    out[1] = in[1] - hh;
    out[2] = in[0] + hw;
    out[3] = in[1] + hh;
}

float samc_sigmoidf(float x)
{
    return (float)(1.0 / (1.0 + exp(-(double)x)));
}

float samc_inverse_sigmoidf(float x, float eps)
{
    x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); /* x.clamp(min=0, max=1) */
    const float x1 = x < eps ? eps : x;           /* x.clamp(min=eps) */
    float x2 = 1.0f - x;                          /* (1 - x).clamp(min=eps) */
    x2 = x2 < eps ? eps : x2;
    return (float)log((double)(x1 / x2));         /* torch.log(x1 / x2) */
}

/* sign(d) * log2(|d| + 1) / np.log2(8), d already scaled by 8 */
static float log_delta(float d)
{
    const float s = d > 0.0f ? 1.0f : (d < 0.0f ? -1.0f : 0.0f);
    const float l = (float)log2((double)(fabsf(d) + 1.0f));
    return (s * l) / 3.0f;
}

int samc_boxrpb_axis(float lo, float hi, int n, int mode, float *out)
{
    const int n_in = mode == SAMC_SAM3_RPB_BOTH ? 4 : 2;
    if (mode != SAMC_SAM3_RPB_LOG && mode != SAMC_SAM3_RPB_LINEAR && mode != SAMC_SAM3_RPB_BOTH)
        return 0;
    for (int c = 0; c < n; c++) {
        const float coord = (float)c / (float)n; /* torch.arange(0, n) / n */
        const float d0 = coord - lo, d1 = coord - hi;
        float *o = out + (int64_t)c * n_in;
        if (mode == SAMC_SAM3_RPB_LINEAR) {
            o[0] = d0, o[1] = d1;
        } else if (mode == SAMC_SAM3_RPB_LOG) {
            o[0] = log_delta(d0 * 8.0f), o[1] = log_delta(d1 * 8.0f);
        } else {
            o[0] = d0, o[1] = d1;
            o[2] = log_delta(d0 * 8.0f), o[3] = log_delta(d1 * 8.0f);
        }
    }
    return n_in;
}
