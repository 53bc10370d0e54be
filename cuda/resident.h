/* SPDX-License-Identifier: Apache-2.0 */
/* resident.h - features that stay on the device between parts.
 *
 * The whole encoder (encoder.cu) makes an image's features on the device;
 * their host tensors are views of pinned memory (taken from a pool, so a
 * new image costs no cudaMallocHost) that the copies out fill, and the
 * device copies stay as the features' `dev`. While the features live their
 * host tensors are never written (tracker.h), so a body that is handed one
 * of them may read the device copy instead (cu_resident). Both go back when
 * the features are released (samc_frame_features.dev_release). */
#ifndef SAMC_CUDA_RESIDENT_H
#define SAMC_CUDA_RESIDENT_H

#include "cuda/cu_common.h"

/* Pinned host memory of `bytes`, from the pool. */
void *cu_pinned_take(size_t bytes);
void cu_pinned_give(void *p, size_t bytes);

/* The features' device side: device buffers (registered against the host
 * tensors they mirror) and the pinned blocks the host views use. */
struct cu_features {
    struct mirror {
        const void *host;
        void *dev;
        size_t bytes;
    };
    std::vector<mirror> m;
    std::vector<std::pair<void *, size_t>> pinned;
    std::vector<void *> dev_only; /* device buffers no host tensor mirrors (tokens layout) */
};
/* Attach `cf` to f (f->dev, f->dev_release) and register its mirrors. */
void cu_features_attach(samc_frame_features *f, cu_features *cf);
/* The device copy of a host tensor some whole body made, or NULL. */
const void *cu_resident(const samc_tensor *t);
/* Extra device data filed under a host tensor of the features (the image
 * embedding in token layout under f->image_embed), or NULL. */
const void *cu_resident_extra(const samc_tensor *t);
void cu_resident_extra_add(cu_features *cf, const void *host_key, void *dev);

#endif
