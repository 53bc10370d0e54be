/* SPDX-License-Identifier: Apache-2.0 */
/* layout.h - the wiring's layout changes between channel planes (B,C,H,W)
 * and token rows (B,HW,C): blocked so that both sides stream whole cache
 * lines, threaded when asked. Exact copies (and sums): any thread count
 * gives the same bytes. */
#ifndef SAMC_CORE_NN_LAYOUT_H
#define SAMC_CORE_NN_LAYOUT_H

#include <stdint.h>

/* y (B,C,HW) = x (B,HW,C) transposed per batch element: Hiera.forward's
 * permute(0,3,1,2) of a (B,H,W,C) map. nt threads (1: serial). */
void samc_layout_tokens_to_planes(int nt, const float *x, int64_t B, int64_t HW, int64_t C, float *y);

/* y (b_out,HW,C) = x (B,C,HW) [+ add (b_out,C,HW)] transposed: the
 * flatten(2).permute(0,2,1) of a feature map, with an optional element-wise
 * sum fused into the read. A source of batch 1 serves every output batch
 * element (expand semantics). */
void samc_layout_planes_to_tokens(int nt, const float *x, int64_t B, const float *add, int64_t b_out, int64_t HW,
                                  int64_t C, float *y);

/* y (B,A,C) = x (A,B,C): transpose(0, 1) (sequence-first <-> batch-first),
 * one C-float row at a time. */
void samc_layout_transpose01(int nt, const float *x, int64_t A, int64_t B, int64_t C, float *y);

/* y[i] += x[i] for n floats, nt threads. */
void samc_layout_add(int nt, float *y, const float *x, int64_t n);

#endif
