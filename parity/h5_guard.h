/* SPDX-License-Identifier: Apache-2.0 */
/* h5_guard.h - checks samc applies to every HDF5 dataset before reading it
 * (parity/dump.c, dump_weights.c, dump_meta.c). The HDF5 library follows whatever a
 * file describes; these keep a hostile or corrupt file from making samc read
 * other files or allocate far more than the file could hold. */
#ifndef SAMC_PARITY_H5_GUARD_H
#define SAMC_PARITY_H5_GUARD_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/* Largest element count samc reads from one dataset (as the other loaders). */
#define SAMC_H5_MAX_NUMEL ((int64_t)1 << 31)

/* NULL when dataset `ds` of `numel` elements of `elem_size` bytes may be
 * read; else a short reason ("its data lives in external files", ...):
 *   - virtual datasets and external storage (data in other files) refused;
 *   - the bytes the read produces must be plausible for the bytes the file
 *     stores: equal for unfiltered layouts, at most ~1100x (the deflate
 *     limit) for filtered chunks, so a few-KiB file cannot declare a
 *     never-written multi-GiB dataset that reads as fill values. */
const char *samc_h5_dataset_problem(hid_t ds, int64_t numel, size_t elem_size);

#endif
