/* SPDX-License-Identifier: Apache-2.0 */
/* sam2_transforms.c - the video loader's frame preprocessing
 * (sam2/utils/misc.py). */
#include "core/models/sam2/sam2_transforms.h"

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
