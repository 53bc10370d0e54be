/* SPDX-License-Identifier: Apache-2.0 */
/* amg_sort.h - torch 1.13's CPU `tensor.sort(descending=True)`, in both its
 * flavours, because the order of EQUAL scores decides which of two tied boxes
 * suppresses the other in NMS and the order of the generator's records.
 *
 *  - stable=False (the Python default; torchvision's _batched_nms_vanilla
 *    re-sorts with it): torch 1.13 sorts (value, index) pairs with
 *    libstdc++'s std::sort under the comparator
 *    `(isnan(a) && !isnan(b)) || a > b` (NaN first). std::sort is introsort:
 *    median-of-three quicksort down to runs of 16, heapsort when the recursion
 *    gets too deep, then one insertion sort. It is NOT stable beyond 16
 *    elements, so ties come out in an order only a faithful copy of the
 *    algorithm reproduces; that copy is samc_amg_argsort_desc (checked against
 *    torch on tie-heavy inputs, NaN included; the heapsort fallback is copied
 *    line by line too, but only adversarial orders reach it and no test input
 *    does). Newer torch builds with x86-simd-sort order ties differently.
 *  - stable=True (torchvision 0.14's CPU nms kernel): std::stable_sort with the
 *    same comparator, i.e. ties in index order: samc_amg_argsort_desc_stable.
 */
#ifndef SAMC_CORE_AMG_SORT_H
#define SAMC_CORE_AMG_SORT_H

#include <stdint.h>

#include "samc_status.h"

/* order[k] = index of the k-th element of `keys` sorted as torch 1.13's
 * keys.sort(descending=True) orders it. n >= 0. */
samc_status samc_amg_argsort_desc(const float *keys, int64_t n, int64_t *order, samc_error *err);

/* The same order with ties (and NaNs among themselves) in index order. */
samc_status samc_amg_argsort_desc_stable(const float *keys, int64_t n, int64_t *order,
                                         samc_error *err);

#endif
