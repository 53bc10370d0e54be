/* SPDX-License-Identifier: Apache-2.0 */
/* hiera.h - the Hiera trunk on the device (hiera.cu): the patch embedding
 * and one MultiScaleBlock on device buffers, shared by the per-kind bodies
 * (host tensors in and out) and the whole encoder (encoder.cu). */
#ifndef SAMC_CUDA_HIERA_H
#define SAMC_CUDA_HIERA_H

#include "cuda/kernels.h"

/* The scratch one block needs, in bytes per buffer (0: not used). */
struct cu_block_need {
    size_t xn_win, xn, qkv, qp, o, a, p, scp, S, P, xn2, h;
};
struct cu_block_bufs {
    void *xn_win, *xn, *qkv, *qp, *o;
    float *a, *p, *scp, *S;
    void *P, *xn2, *h;
};

/* The largest score block (fp32) a block's batched attention keeps at a
 * time: queries are taken in chunks below it. */
constexpr size_t kScoreCap = (size_t)64 << 20;

cu_block_need cu_hiera_block_need(const samc_hiera_block *blk, const samc_hiera_geom &g, cu_prec prec);
/* MultiScaleBlock.forward: x (B,H,W,dim) -> y (B,Ho,Wo,dim_out), fp32; y
 * may be x when the block keeps its dims. */
void cu_hiera_block(cu_dev *d, cu_prec prec, int slot, const samc_hiera_block *blk, const samc_hiera_geom &g,
                    const float *x, float *y, const cu_block_bufs &b);

/* PatchEmbed: img (B,3,H,W) NCHW -> out (B,Ho,Wo,C) tokens, + pos (Ho*Wo,
 * C, repeated over B) when pos is not NULL; cols: B*Ho*Wo*kpad elements of
 * the row's precision. */
void cu_patch_embed(cu_dev *d, const cu_lin *L, const samc_conv2d *c, const float *img, int B, int H, int W,
                    float *out, void *cols, const float *pos);

#endif
