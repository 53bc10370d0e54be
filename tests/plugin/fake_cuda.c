/* fake_cuda.c - a plugin for tests/test_plugin.c: built as a module named
 * libsamc_cuda.so in its own directory (never next to samc), it registers
 * "cuda" and "cuda-bf16" rows that have no bodies of their own, so that
 * every layer falls back to fast. It exercises the loader without a GPU:
 * the search path, the entry point, the ABI and layout checks and the
 * registration through the api table. Like the real plugin it links no
 * libsamc symbol. */
#include <stdio.h>

#include "core/runtime/plugin.h"

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
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        samc_status st = api->impl_register(&rows[i], err);
        if (st)
            return st;
    }
    return SAMC_OK;
}
