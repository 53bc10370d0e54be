/* SPDX-License-Identifier: Apache-2.0 */
/* mean_pool_text.h - DotProductScoring.mean_pool_text, the one numeric the
 * ref and fast scoring bodies (ref/sam3/scoring.c, fast/sam3/scoring.c)
 * share: the mean over a prompt's valid tokens (mask 0), its count clamped
 * to at least 1, accumulated in double as the reference does. */
#ifndef SAMC_CORE_MODELS_SAM3_MEAN_POOL_TEXT_H
#define SAMC_CORE_MODELS_SAM3_MEAN_POOL_TEXT_H

#include <stdint.h>

/* p: (T, B, D) sequence-first prompt; mask: (B, T), 0 = valid token;
 * out: the D pooled features of batch b. */
static inline void samc_sam3_mean_pool_text(const float *p, const float *mask, int T, int B, int D, int b,
                                            float *out)
{
    double nvalid = 0;
    for (int t = 0; t < T; t++)
        nvalid += mask[(int64_t)b * T + t] == 0.0f;
    const float nv = (float)(nvalid < 1.0 ? 1.0 : nvalid);
    for (int c = 0; c < D; c++) {
        double acc = 0;
        for (int t = 0; t < T; t++)
            if (mask[(int64_t)b * T + t] == 0.0f)
                acc += p[((int64_t)t * B + b) * D + c];
        out[c] = (float)acc / nv;
    }
}

#endif
