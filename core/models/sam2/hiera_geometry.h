/* SPDX-License-Identifier: Apache-2.0 */
/* hiera_geometry.h - MultiScaleBlock.forward's shapes (windows, q-pooling,
 * padding) and the cases the official code cannot run, shared by the ref and
 * fast bodies so they refuse and tile exactly alike. */
#ifndef SAMC_MODELS_SAM2_HIERA_GEOMETRY_H
#define SAMC_MODELS_SAM2_HIERA_GEOMETRY_H

#include "core/models/sam2/sam2_layers.h"

/* Where each attention window sits and where its (q-pooled) output lands.
 * Global attention is one window covering the whole unpadded map. */
typedef struct samc_hiera_geom {
    int B, H, W, dim;  /* input (B,H,W,dim) */
    int D, heads, hd;  /* dim_out, heads, head_dim */
    int s;             /* q / shortcut pool stride, 1 = no pooling */
    int Ho, Wo;        /* output map: MaxPool2d(s, s) floors, so H / s */
    int wh, ww;        /* window (ws x ws, or H x W when global) */
    int nwh, nww;      /* windows down / across the padded map */
    int qh, qw;        /* q-pooled window: floor(wh / s) x floor(ww / s) */
} samc_hiera_geom;

/* The geometry of `blk` on input x (B,H,W,dim), or an error naming why the
 * official forward would fail (or why the weights do not fit the dims). */
samc_status samc_hiera_block_geometry(samc_error *err, const samc_hiera_block *blk, const samc_tensor *x,
                                      samc_hiera_geom *g);

#endif
