/* SPDX-License-Identifier: Apache-2.0 */
/* neck.c - one branch of sam3/model/necks.py Sam3DualViTDetNeck.convs:
 *   scale 4:   ConvTranspose(k2 s2) -> GELU -> ConvTranspose(k2 s2)
 *   scale 2:   ConvTranspose(k2 s2)
 *   scale 1:   identity
 *   scale 0.5: MaxPool2d(2, 2)
 * then conv_1x1 and conv_3x3 (pad 1), all with bias, NCHW. The sine position
 * encoding of each level is core/nn/position_encoding.c (the same
 * PositionEmbeddingSine numerics as SAM 2's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/nn/max_pool.h"
#include "ref/prims.h"
#include "ref/sam3/ref_sam3.h"

samc_status samc_ref_sam3_neck_level(samc_ctx *ctx, const samc_sam3_neck_level *lvl,
                                     const samc_tensor *x, samc_tensor *out)
{
    samc_error *err = ctx ? ctx->err : NULL;
    if (x->ndim != 4)
        return samc_fail(err, SAMC_ERR_SHAPE, "neck level: input is not (B,C,H,W)");
    const int B = (int)x->shape[0];
    int C = (int)x->shape[1], H = (int)x->shape[2], W = (int)x->shape[3];
    const float s = lvl->scale;
    if (s != 4.0f && s != 2.0f && s != 1.0f && s != 0.5f)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "neck level: scale factor %g", (double)s);
    if ((s >= 2.0f && lvl->dconv0.cin != C) || (s == 4.0f && lvl->dconv1.cin != lvl->dconv0.cout))
        return samc_fail(err, SAMC_ERR_SHAPE, "neck level: %d input channels do not fit the "
                                              "transposed convolutions", C);
    float *a = NULL, *b = NULL;
    const float *cur = x->data;
    samc_status st = SAMC_OK;
    if (s >= 2.0f) {
        a = malloc((size_t)B * lvl->dconv0.cout * (2 * H) * (2 * W) * sizeof *a);
        if (!a)
            goto nomem;
        samc_ref_conv_t2d(cur, B, H, W, &lvl->dconv0, a);
        C = lvl->dconv0.cout, H *= 2, W *= 2, cur = a;
        if (s == 4.0f) {
            samc_ref_gelu(a, (int64_t)B * C * H * W);
            b = malloc((size_t)B * lvl->dconv1.cout * (2 * H) * (2 * W) * sizeof *b);
            if (!b)
                goto nomem;
            samc_ref_conv_t2d(cur, B, H, W, &lvl->dconv1, b);
            C = lvl->dconv1.cout, H *= 2, W *= 2, cur = b;
        }
    } else if (s == 0.5f) {
        a = malloc((size_t)B * C * (H / 2) * (W / 2) * sizeof *a + 1);
        if (!a)
            goto nomem;
        samc_max_pool_planes(1, cur, (int64_t)B * C, H, W, 2, a);
        H /= 2, W /= 2, cur = a;
    }
    const samc_conv2d *c1 = &lvl->conv_1x1, *c3 = &lvl->conv_3x3;
    const int Ho = samc_conv2d_out_dim(H, c3->kh, c3->stride, c3->pad);
    const int Wo = samc_conv2d_out_dim(W, c3->kw, c3->stride, c3->pad);
    const int64_t want[4] = {B, c3->cout, Ho, Wo};
    if (c1->cin != C || c3->cin != c1->cout || c1->kh != 1 || c1->kw != 1 || c1->stride != 1 ||
        H < 1 || W < 1 || !samc_ref_sam3_shape_is(out, 4, want)) {
        st = samc_fail(err, SAMC_ERR_SHAPE, "neck level: output is not (%d,%d,%d,%d) or conv "
                                            "shapes do not chain", B, c3->cout, Ho, Wo);
        goto done;
    }
    float *t = malloc((size_t)B * c1->cout * H * W * sizeof *t);
    if (!t)
        goto nomem;
    samc_ref_conv2d_nchw(cur, B, H, W, c1, t);
    samc_ref_conv2d_nchw(t, B, H, W, c3, out->data);
    free(t);
    goto done;
nomem:
    st = samc_fail(err, SAMC_ERR_NOMEM, "neck level: buffers");
done:
    free(a), free(b);
    return st;
}
