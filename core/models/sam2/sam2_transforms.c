/* sam2_transforms.c - the video loader's frame preprocessing and the video
 * predictor's non-overlap constraint (sam2/utils/misc.py,
 * sam2/sam2_video_predictor.py). */
#include "core/models/sam2/sam2_transforms.h"

#include <math.h>
#include <stdlib.h>

#include "core/base/error.h"
#include "core/nn/resize_pil.h"

samc_status samc_sam2_frame_to_tensor(const uint8_t *rgb, int h, int w, int S, samc_tensor *x, samc_error *err)
{
    static const float mean[3] = {0.485f, 0.456f, 0.406f}, stdv[3] = {0.229f, 0.224f, 0.225f};
    uint8_t *small = malloc((size_t)S * S * 3);
    samc_status st = small ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st && (st = samc_resize_pil_bicubic_rgb(rgb, h, w, S, S, small)))
        st = samc_fail(err, st, "frame resize failed");
    if (!st && (x->ndim != 4 || x->shape[0] != 1 || x->shape[1] != 3 || x->shape[2] != S || x->shape[3] != S))
        st = samc_fail(err, SAMC_ERR_SHAPE, "frame preprocessing: output must be (1,3,%d,%d)", S, S);
    for (int c = 0; !st && c < 3; c++)
        for (int64_t i = 0; i < (int64_t)S * S; i++) {
            const float u = (float)(small[i * 3 + c] / 255.0); /* numpy float64, stored as float32 */
            x->data[(int64_t)c * S * S + i] = (u - mean[c]) / stdv[c];
        }
    free(small);
    return st;
}

/* _apply_non_overlapping_constraints: keep each pixel only for the object
 * with the highest score there; others are clamped to <= -10. */
void samc_sam2_non_overlap(float *m, int n, int64_t hw)
{
    if (n <= 1)
        return;
    for (int64_t i = 0; i < hw; i++) {
        int best = 0;
        for (int k = 1; k < n; k++)
            if (m[k * hw + i] > m[best * hw + i])
                best = k;
        for (int k = 0; k < n; k++)
            if (k != best)
                m[k * hw + i] = fminf(m[k * hw + i], -10.0f);
    }
}

