/* SPDX-License-Identifier: Apache-2.0 */
/* axial_rope.h - SAM 3's 2-D axial RoPE tables (sam3/model/vitdet.py:
 * compute_axial_cis, init_t_xy, apply_rotary_enc) in torch's float32
 * arithmetic, as complex64 (re, im) pairs the way the `attn.freqs_cis`
 * buffers are stored.
 *
 * Overlap: core/nn/rope.c (SAM 2's compute_axial_cis) computes the same table
 * for scale 1 as separate cos/sin arrays; this one adds the position scale
 * (global ViT blocks use 1/3 = rope_pt_size / input_size) and the offset, and
 * keeps the interleaved complex layout of the checkpoint buffer. */
#ifndef SAMC_CORE_NN_AXIAL_ROPE_H
#define SAMC_CORE_NN_AXIAL_ROPE_H

#include <stdint.h>

#include "samc_status.h"

/* compute_axial_cis(dim, end_x, end_y, theta, scale_pos, offset) into cis
 * (end_x*end_y, dim/2, 2): token t = y*end_x + x; pairs 0..dim/4-1 rotate
 * with x * scale_pos + offset, the rest with y. dim must be a positive
 * multiple of 4. */
samc_status samc_axial_rope_cis(int dim, int end_x, int end_y, float theta, float scale_pos,
                                int offset, float *cis);

/* apply_rotary_enc on n rows of `dim` channels (row stride ld floats): row t
 * is rotated by table row t: adjacent pairs (x[2j], x[2j+1]) times cis[t][j]
 * as a complex64 product (each of the four products rounded to float). */
void samc_axial_rope_apply(float *x, int64_t n, int dim, int64_t ld, const float *cis);

#endif
