/* SPDX-License-Identifier: Apache-2.0 */
/* tensor.h - the one tensor type: contiguous float32 in C order plus a shape.
 *
 * No strides, no views, no dtype zoo: layouts are whatever the official
 * PyTorch code has at that point (NCHW stays NCHW, Hiera's BHWC stays BHWC)
 * and conversions between them are named functions elsewhere.
 */
#ifndef SAMC_CORE_TENSOR_H
#define SAMC_CORE_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "samc_status.h"

#define SAMC_MAX_DIMS 8

typedef struct samc_tensor {
    int ndim;
    int64_t shape[SAMC_MAX_DIMS];
    float *data;   /* ndim==0 is a scalar with one element */
    bool owns;     /* data is freed by samc_tensor_release */
} samc_tensor;

/* Number of elements (1 for ndim 0). */
int64_t samc_numel(const samc_tensor *t);
int64_t samc_shape_numel(int ndim, const int64_t *shape);

/* Allocate zeroed data for the given shape; t->owns = true.
 * Fails with SAMC_ERR_NOMEM on overflow or allocation failure. */
samc_status samc_tensor_alloc(samc_tensor *t, int ndim, const int64_t *shape, samc_error *err);
/* The same without zeroing, for a tensor its producer writes in full (a
 * 4-13 MB activation's memset is a visible share of a predict). */
samc_status samc_tensor_alloc_uninit(samc_tensor *t, int ndim, const int64_t *shape, samc_error *err);
/* Convenience: samc_tensor_alloc with the shape given as arguments. */
samc_status samc_tensor_allocv(samc_tensor *t, samc_error *err, int ndim, ...);
/* Free owned data and zero the struct. Safe on a zeroed struct. */
void samc_tensor_release(samc_tensor *t);
/* One step of a chain of layers that each read *t and write *y: on success
 * (st == SAMC_OK) *t is released and takes y's storage, on failure y is
 * released; *y is zeroed either way. Returns st. */
samc_status samc_tensor_advance(samc_tensor *t, samc_tensor *y, samc_status st);
/* Deep copy of src into dst (dst is overwritten, not released). */
samc_status samc_tensor_copy(samc_tensor *dst, const samc_tensor *src, samc_error *err);
/* A non-owning tensor over existing memory. */
samc_tensor samc_tensor_view(float *data, int ndim, const int64_t *shape);

bool samc_shape_equal(int nd_a, const int64_t *a, int nd_b, const int64_t *b);
bool samc_tensor_same_shape(const samc_tensor *a, const samc_tensor *b);
/* Writes "(1,96,7,7)" (or "()" for a scalar) into buf. Returns buf. */
char *samc_shape_str(int ndim, const int64_t *shape, char *buf, size_t n);

#endif
