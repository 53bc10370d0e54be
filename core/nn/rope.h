/* SPDX-License-Identifier: Apache-2.0 */
/* rope.h - axial 2-D rotary position encoding (position_encoding.py:
 * compute_axial_cis, apply_rotary_enc), in torch's float32 arithmetic. */
#ifndef SAMC_CORE_ROPE_H
#define SAMC_CORE_ROPE_H

#include "samc_status.h"

/* The table for `dim` channels (dim/2 complex pairs) over an end_x x end_y
 * grid, row-major tokens: cos and sin arrays of (end_x*end_y, dim/2). Pairs
 * 0..dim/4-1 rotate with the column (x), the rest with the row (y). */
samc_status samc_rope_table(int dim, int end_x, int end_y, float theta, float **cos_out, float **sin_out);

/* Rotate `n` tokens of `dim` channels in place (row stride ld floats) with
 * table rows (t mod table_rows): the table is tiled along the sequence as
 * apply_rotary_enc(repeat_freqs_k=True) does. */
void samc_rope_apply(float *x, int n, int dim, int ld, const float *cosv, const float *sinv, int table_rows);

/* The grid of a query of L tokens: feat_w x feat_h when that is L, else a
 * sqrt(L) square (RoPEAttention.forward recomputes it); an error when L is
 * no square. */
samc_status samc_rope_grid(samc_error *err, int feat_w, int feat_h, int L, int *gx, int *gy);

#endif
