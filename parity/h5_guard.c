/* SPDX-License-Identifier: Apache-2.0 */
/* h5_guard.c - see h5_guard.h. */
#include "parity/h5_guard.h"

const char *samc_h5_dataset_problem(hid_t ds, int64_t numel, size_t elem_size)
{
    if (numel < 0 || numel > SAMC_H5_MAX_NUMEL)
        return "it has more than 2^31 elements (absurd size)";
    hid_t dcpl = H5Dget_create_plist(ds);
    if (dcpl < 0)
        return "its creation properties cannot be read (corrupt file?)";
    const H5D_layout_t layout = H5Pget_layout(dcpl);
    const int n_external = H5Pget_external_count(dcpl);
    const int n_filters = layout == H5D_CHUNKED ? H5Pget_nfilters(dcpl) : 0;
    H5Pclose(dcpl);
    if (layout != H5D_COMPACT && layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED)
        return "it is a virtual dataset (data in other files); samc only reads data stored in the file";
    if (n_external != 0)
        return "its data lives in external files; samc only reads data stored in the file";
    if (n_filters < 0)
        return "its filter pipeline cannot be read (corrupt file?)";
    const uint64_t need = (uint64_t)numel * elem_size;
    const uint64_t stored = H5Dget_storage_size(ds);
    const uint64_t allow = n_filters ? stored * 1100 + 4096 : stored;
    if (need > 4096 && need > allow)
        return "the file stores fewer bytes than its shape needs (never written, truncated or corrupt?)";
    return NULL;
}
