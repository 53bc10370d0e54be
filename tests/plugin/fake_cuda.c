/* SPDX-License-Identifier: Apache-2.0 */
/* fake_cuda.c - a plugin for tests/test_plugin.c: built as a module named
 * libsamc_cuda.so in its own directory (never next to samc), it registers
 * "cuda" and "cuda-bf16" rows that have no bodies of their own, so that
 * every layer falls back to fast. It exercises the loader without a GPU:
 * the search path, the entry point, the ABI and layout checks and the
 * registration through the api table. Like the real plugin it links no
 * libsamc symbol. */
#include <stdio.h>

#include "core/runtime/plugin.h"

/* The api table as the real plugin keeps it: registration stores the
 * pointer and the bodies call the shared numerics through it later, so
 * libsamc must keep the table alive (a stack copy crashed the first GPU
 * run). test_plugin.c calls this, long after registration, through dlsym. */
static const samc_plugin_api *kept;

__attribute__((visibility("default"))) int samc_fake_plugin_api_alive(void);
int samc_fake_plugin_api_alive(void)
{
    samc_lin_tap taps[4];
    if (!kept || kept->abi != SAMC_PLUGIN_ABI || kept->layout != samc_plugin_layout() || !kept->bilinear_taps ||
        !kept->hiera_geometry || !kept->impl_register)
        return 0;
    kept->bilinear_taps(2, 4, taps); /* a shared numeric, called through the kept table */
    return 1;
}

static const samc_impl rows[] = {
    {.name = "cuda", .about = "test plugin: no bodies, fast for everything", .tol = 1e-4, .fallback = "fast"},
    {.name = "cuda-bf16", .about = "test plugin: no bodies, fast for everything", .tol = 3e-2, .fallback = "fast"},
};

__attribute__((visibility("default"))) samc_status samc_plugin_register(const samc_plugin_api *api, samc_error *err)
{
    if (api->abi != SAMC_PLUGIN_ABI || api->layout != samc_plugin_layout()) {
        err->status = SAMC_ERR_UNSUPPORTED;
        snprintf(err->msg, sizeof err->msg, "was built against other samc headers");
        return err->status;
    }
    kept = api;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        samc_status st = api->impl_register(&rows[i], err);
        if (st)
            return st;
    }
    return SAMC_OK;
}
