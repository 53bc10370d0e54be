/* SPDX-License-Identifier: Apache-2.0 */
/* box_geom.h - box arithmetic of the SAM 3 detector in torch's float32 order:
 * box_cxcywh_to_xyxy (sam3/model/box_ops.py), inverse_sigmoid
 * (sam3/model/model_misc.py), and the box-relative position bias inputs of
 * TransformerDecoder._get_rpb_matrix (sam3/model/decoder.py). */
#ifndef SAMC_CORE_NN_BOX_GEOM_H
#define SAMC_CORE_NN_BOX_GEOM_H

/* (cx - 0.5*w, cy - 0.5*h, cx + 0.5*w, cy + 0.5*h), each product rounded. */
void samc_box_cxcywh_to_xyxy(const float in[4], float out[4]);

/* torch.sigmoid in float32 (computed in double, rounded once). */
float samc_sigmoidf(float x);

/* inverse_sigmoid(x, eps): x clamped to [0,1]; log(max(x,eps) / max(1-x,eps)). */
float samc_inverse_sigmoidf(float x, float eps);

/* Inputs of boxRPB_embed_{x,y} along one axis of n cells for the box edges lo,
 * hi (x0, x1 or y0, y1): coordinate c / n (c = 0..n-1, float division), d0 =
 * c/n - lo, d1 = c/n - hi, then per mode
 *   SAMC_SAM3_RPB_LINEAR: (d0, d1)
 *   SAMC_SAM3_RPB_LOG:    f(d) = sign(8d) * log2(|8d| + 1) / log2(8)
 *   SAMC_SAM3_RPB_BOTH:   (d0, d1, f(d0), f(d1))
 * into out (n, n_in) with n_in = 2 or 4. Returns n_in (0 for an unknown mode). */
int samc_boxrpb_axis(float lo, float hi, int n, int mode, float *out);

#endif
