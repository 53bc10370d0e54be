/* SPDX-License-Identifier: Apache-2.0 */
/* hiera_pos_embed.c - Hiera._get_pos_embed (sam2/modeling/backbones/hieradet.py). */
#include "core/models/sam2/hiera_pos_embed.h"

#include <stdint.h>
#include <stdlib.h>

#include "core/base/error.h"
#include "core/nn/resize_bicubic.h"

samc_status samc_hiera_pos_embed(const float *pos_embed, int C, int bh, int bw,
                                 const float *pos_embed_window, int wh, int ww, int H, int W,
                                 float *out_bhwc)
{
    if (C < 1 || bh < 1 || bw < 1 || wh < 1 || ww < 1 || H < 1 || W < 1)
        return samc_fail(NULL, SAMC_ERR_ARG, "hiera pos embed: bad sizes");
    if (H % wh != 0 || W % ww != 0)
        return samc_fail(NULL, SAMC_ERR_UNSUPPORTED,
                         "hiera pos embed: %dx%d is not a multiple of the %dx%d window "
                         "(the official tile + add fails to broadcast)", H, W, wh, ww);
    const int64_t hw = (int64_t)H * W;
    float *interp = malloc((size_t)(C * hw) * sizeof *interp);
    if (!interp)
        return samc_fail(NULL, SAMC_ERR_NOMEM, "hiera pos embed: %d x %dx%d floats", C, H, W);
    /* F.interpolate(self.pos_embed, size=(h, w), mode="bicubic") */
    samc_status st = samc_resize_bicubic(pos_embed, C, bh, bw, H, W, interp);
    if (st != SAMC_OK) {
        free(interp);
        return st;
    }
    /* + window_embed.tile(...), in float, then permute(0, 2, 3, 1) */
    for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++)
            for (int c = 0; c < C; c++) {
                const float win = pos_embed_window[((int64_t)c * wh + i % wh) * ww + j % ww];
                out_bhwc[((int64_t)i * W + j) * C + c] = interp[c * hw + (int64_t)i * W + j] + win;
            }
    free(interp);
    return SAMC_OK;
}
