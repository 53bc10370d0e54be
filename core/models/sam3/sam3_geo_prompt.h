/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_geo_prompt.h - what the ref and fast bodies of the geometry prompt
 * encoding (`geo_prompt`, sam3_layers.h; SequenceGeometryEncoder in
 * sam3/model/geometry_encoders.py) share: the shape contract, the label
 * rows, where each point and box samples the image features and what it
 * sine-encodes, and the packing of the point and box sequences with the CLS
 * token (concat_padded_sequences). The bodies differ only in how they
 * compute the projections and sum the sampled features. */
#ifndef SAMC_CORE_MODELS_SAM3_GEO_PROMPT_H
#define SAMC_CORE_MODELS_SAM3_GEO_PROMPT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/models/sam3/sam3_layers.h"
#include "core/nn/roi_sample.h"

/* The sizes of one call. */
typedef struct samc_sam3_geo_dims {
    int B, Np, Nb; /* batch, points, boxes (a NULL or empty prompt tensor: 0) */
    int N;         /* tokens out: Np + Nb (+ 1 with the CLS token) */
    bool pool;     /* the image features are sampled (point or box pooling with prompts of that kind) */
} samc_sam3_geo_dims;

/* Every shape of the geo_prompt contract (sam3_layers.h); fills *d. */
samc_status samc_sam3_geo_check(const samc_sam3_geometry_encoder *g, const samc_tensor *points,
                                const samc_tensor *point_mask, const samc_tensor *point_labels,
                                const samc_tensor *boxes, const samc_tensor *box_mask,
                                const samc_tensor *box_labels, const samc_tensor *img, int H, int W,
                                const samc_tensor *embeds, const samc_tensor *mask, samc_sam3_geo_dims *d,
                                samc_error *err);

/* label_embed(labels.long()) row of element (i, b) of an (n, B) label
 * tensor (NULL: label 1). A label other than 0 or 1 is an error. */
samc_status samc_sam3_geo_label_row(const samc_sam3_geometry_encoder *g, const samc_tensor *labels, int i, int B,
                                    int b, const float **row, samc_error *err);

/* The (B, n) padding mask of a prompt part as 0 / 1 (NULL mask: none padded). */
void samc_sam3_geo_pad_mask(const samc_tensor *mask, int B, int n, float *out);

/* _encode_points' grid_sample of point p (normalised x, y; grid = p * 2 - 1)
 * on the H x W map. */
void samc_sam3_geo_point_tap(const float p[2], int H, int W, samc_bilinear_tap *t);
/* cat([_encode_xy(x), _encode_xy(y)]): pe.num_pos_feats values. */
void samc_sam3_geo_point_pos(const samc_sam3_geometry_encoder *g, const float p[2], float *out);
/* pos_enc.encode_boxes(cx, cy, w, h): pe.num_pos_feats + 2 values. */
void samc_sam3_geo_box_pos(const samc_sam3_geometry_encoder *g, const float cxcywh[4], float *out);
/* _encode_boxes' roi_align taps of one box: box_cxcywh_to_xyxy(box) * [W, H,
 * W, H] on the H x W map, output roi_size x roi_size, spatial_scale 1,
 * sampling_ratio -1, aligned False (samc_roi_align_taps: *taps malloc'd). */
samc_status samc_sam3_geo_box_taps(const samc_sam3_geometry_encoder *g, const float cxcywh[4], int H, int W,
                                   samc_bilinear_tap **taps, int *grid_h, int *grid_w, int *count,
                                   samc_error *err);

/* final_embeds, final_mask = concat_padded_sequences(points, boxes), then
 * the CLS token (mask 0) the same way: pe (Np, B, C) and be (Nb, B, C)
 * token rows with their (B, n) 0/1 masks -> embeds (N, B, C), mask (B, N).
 * scratch: samc_sam3_geo_pack_scratch floats. */
size_t samc_sam3_geo_pack_scratch(const samc_sam3_geo_dims *d, int C);
void samc_sam3_geo_pack(const samc_sam3_geometry_encoder *g, const samc_sam3_geo_dims *d, const float *pe,
                        const float *pmask, const float *be, const float *bmask, float *embeds, float *mask,
                        float *scratch);

#endif
