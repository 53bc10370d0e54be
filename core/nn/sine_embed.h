/* SPDX-License-Identifier: Apache-2.0 */
/* sine_embed.h - the coordinate sine embeddings of SAM 3, in torch's float32
 * order of operations:
 *   PositionEmbeddingSine._encode_xy / encode_boxes (sam3/model/position_encoding.py),
 *   gen_sineembed_for_position (sam3/model/model_misc.py).
 * Both compute, for a normalised coordinate v and F features,
 *   e = v * scale                          (scale = 2*pi rounded to float)
 *   dim_t[k] = T ** (2 * floor(k/2) / F)   (float pow)
 *   out[k] = sin(e / dim_t[k]) (k even), cos(e / dim_t[k]) (k odd)
 * i.e. without the +1 offset and the normalisation by the map size of the
 * image PE (core/nn/position_encoding.c, which the ViT neck uses unchanged). */
#ifndef SAMC_CORE_NN_SINE_EMBED_H
#define SAMC_CORE_NN_SINE_EMBED_H

/* The F interleaved sin/cos features of one coordinate. F even. */
void samc_sine_encode_coord(float v, float scale, float temperature, int F, float *out);

/* encode_boxes(cx, cy, w, h): [sine(cy) F, sine(cx) F, h, w] (2F + 2 values;
 * note the y, x, h, w order). */
void samc_sine_encode_box(const float cxcywh[4], float scale, float temperature, int F, float *out);

/* gen_sineembed_for_position on one (x, y, w, h) box with num_feats = 2F:
 * [sine(y), sine(x), sine(w), sine(h)] (4F values), scale 2*pi, T = 10000. */
void samc_sine_embed_box4(const float xywh[4], int F, float *out);

#endif
