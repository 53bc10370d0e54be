/* SPDX-License-Identifier: Apache-2.0 */
/* amg_grid.h - the prompt point grids and the crop boxes of the automatic mask
 * generator, bit for bit as sam2/utils/amg.py computes them:
 * build_point_grid, build_all_layer_point_grids, generate_crop_boxes.
 *
 * Grids are in [0, 1]^2 and float64 (numpy); the generator scales them to a
 * crop's pixels (samc_amg_grid_to_crop_points) and only then rounds to the
 * float32 the model sees.
 */
#ifndef SAMC_CORE_AMG_GRID_H
#define SAMC_CORE_AMG_GRID_H

#include <stdint.h>

#include "samc_status.h"

/* Limits that turn "huge" parameters into a clear message instead of a run
 * that never ends (the official code has none). */
#define SAMC_AMG_MAX_POINTS_PER_SIDE 1024
#define SAMC_AMG_MAX_CROP_LAYERS 8

/* build_point_grid(n): n*n points (x, y), row by row (y outer, x inner), on
 * the coordinates np.linspace(1/(2n), 1 - 1/(2n), n). out holds 2*n*n
 * doubles. n in [1, SAMC_AMG_MAX_POINTS_PER_SIDE]. */
samc_status samc_amg_build_point_grid(int n, double *out, samc_error *err);

/* build_all_layer_point_grids: layer i (0..n_layers) has
 * int(n_per_side / scale^i) points per side; out holds n_layers + 1 ints.
 * A layer left with 0 points per side is an error (the official code divides
 * by zero there). */
samc_status samc_amg_layer_points_per_side(int n_per_side, int n_layers, int scale, int *out,
                                           samc_error *err);

/* points_for_image = grid * [crop_w, crop_h] (float64), then the float32 cast
 * of _process_batch: out[2k] = x, out[2k+1] = y in crop pixels. */
void samc_amg_grid_to_crop_points(const double *grid, int64_t n_points, int crop_w, int crop_h,
                                  float *out);

/* One crop box (x0, y0, x1, y1), x1/y1 exclusive, and its layer (0 = the
 * whole image). */
typedef struct samc_amg_crop {
    int x0, y0, x1, y1;
    int layer;
} samc_amg_crop;

/* Number of boxes generate_crop_boxes returns for n_layers: sum of 4^i. */
int64_t samc_amg_crop_count(int n_layers);

/* generate_crop_boxes((im_h, im_w), n_layers, overlap_ratio), in its order
 * (layer by layer; within a layer x0 outer, y0 inner). out holds
 * samc_amg_crop_count(n_layers) boxes. Refuses (SAMC_ERR_ARG, with the
 * largest n_layers that works) layers whose crops would be empty, where the
 * official code would slice an empty image; overlap_ratio must be in [0, 1). */
samc_status samc_amg_crop_boxes(int im_h, int im_w, int n_layers, double overlap_ratio,
                                samc_amg_crop *out, samc_error *err);

/* The checks of samc_amg_crop_boxes without the boxes. */
samc_status samc_amg_crop_layers_check(int im_h, int im_w, int n_layers, double overlap_ratio,
                                      samc_error *err);

/* The largest n_layers (<= SAMC_AMG_MAX_CROP_LAYERS) whose crops are all
 * non-empty for this image and overlap_ratio. */
int samc_amg_max_crop_layers(int im_h, int im_w, double overlap_ratio);

#endif
