/* SPDX-License-Identifier: Apache-2.0 */
/* resident.cu - the pinned pool and the registry of device-resident
 * features (resident.h). */
#include <map>

#include "cuda/resident.h"

namespace {

std::mutex mu;
std::multimap<size_t, void *> pinned_free;         /* by size */
std::map<const void *, const void *> registry;     /* host data -> device copy */
std::map<const void *, const void *> extras;       /* host data -> another device form */

void release(void *p)
{
    cu_features *cf = (cu_features *)p;
    if (!cf)
        return;
    {
        std::lock_guard<std::mutex> g(mu);
        for (auto &e : cf->m) {
            registry.erase(e.host);
            extras.erase(e.host);
        }
    }
    /* every body synchronises before it returns: nothing still reads these
     * (stream-ordered memory of the device's pool, any stream may free it) */
    for (auto &e : cf->m)
        cudaFreeAsync(e.dev, nullptr);
    for (void *p2 : cf->dev_only)
        cudaFreeAsync(p2, nullptr);
    for (auto &b : cf->pinned)
        cu_pinned_give(b.first, b.second);
    delete cf;
}

} // namespace

void *cu_pinned_take(size_t bytes)
{
    {
        std::lock_guard<std::mutex> g(mu);
        auto it = pinned_free.find(bytes);
        if (it != pinned_free.end()) {
            void *p = it->second;
            pinned_free.erase(it);
            return p;
        }
    }
    void *p = nullptr;
    CU(cudaMallocHost(&p, bytes));
    return p;
}

void cu_pinned_give(void *p, size_t bytes)
{
    if (!p)
        return;
    std::lock_guard<std::mutex> g(mu);
    if (pinned_free.size() < 64)
        pinned_free.emplace(bytes, p);
    else
        cudaFreeHost(p);
}

void cu_features_attach(samc_frame_features *f, cu_features *cf)
{
    {
        std::lock_guard<std::mutex> g(mu);
        for (auto &e : cf->m)
            registry[e.host] = e.dev;
    }
    f->dev = cf;
    f->dev_release = release;
}

const void *cu_resident(const samc_tensor *t)
{
    std::lock_guard<std::mutex> g(mu);
    auto it = registry.find(t->data);
    return it == registry.end() ? nullptr : it->second;
}

const void *cu_resident_extra(const samc_tensor *t)
{
    std::lock_guard<std::mutex> g(mu);
    auto it = extras.find(t->data);
    return it == extras.end() ? nullptr : it->second;
}

void cu_resident_extra_add(cu_features *cf, const void *host_key, void *dev)
{
    cf->dev_only.push_back(dev);
    std::lock_guard<std::mutex> g(mu);
    extras[host_key] = dev;
}
