/* SPDX-License-Identifier: Apache-2.0 */
/* plugin.c - the plugin's entry point: checks that it was built for the
 * libsamc loading it, then registers the two implementation rows, `cuda`
 * (fp32, no TF32: held to fast's 1e-4) and `cuda-bf16` (bf16 operands on
 * the tensor cores, fp32 accumulation: held to the bf16 row's 3e-2,
 * docs/fast.md). Kinds they lack come from fast (docs/gpu.md lists them). */
#include <stdio.h>

#include "core/runtime/plugin.h"
#include "cuda/cuda_ops.h"

#define SAMC_X(kind) .kind = samc_cuda_##kind,
static const samc_nn_ops nn_ops = {SAMC_CUDA_NN_OPS(SAMC_X)};
static const samc_sam2_ops sam2_ops = {SAMC_CUDA_SAM2_OPS(SAMC_X)};
static const samc_tracker_ops tracker_ops = {SAMC_CUDA_TRACKER_OPS(SAMC_X)};
#undef SAMC_X

static const samc_impl rows[] = {
    {
        .name = "cuda",
        .about = "NVIDIA GPU: fp32 (no TF32) on cuBLASLt and fused kernels, the encoder as one CUDA graph (plugin)",
        .tol = 1e-4,
        .fallback = "fast",
        .ops = {[SAMC_OPS_NN] = &nn_ops, [SAMC_OPS_TRACKER] = &tracker_ops, [SAMC_OPS_SAM2] = &sam2_ops},
        .available = samc__cuda_available,
        .prepare = samc__cuda_prepare_f32,
        .release = samc__cuda_release,
    },
    {
        .name = "cuda-bf16",
        .about = "NVIDIA GPU: bf16 tensor cores with fp32 accumulation, the cuda bodies otherwise (plugin)",
        .tol = 3e-2,
        .fallback = "fast",
        .ops = {[SAMC_OPS_NN] = &nn_ops, [SAMC_OPS_TRACKER] = &tracker_ops, [SAMC_OPS_SAM2] = &sam2_ops},
        .available = samc__cuda_available,
        .prepare = samc__cuda_prepare_bf16,
        .release = samc__cuda_release,
    },
};

static samc_status fail(samc_error *err, samc_status st, const char *msg)
{
    if (err && err->status == SAMC_OK) {
        err->status = st;
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    }
    return st;
}

__attribute__((visibility("default"))) samc_status samc_plugin_register(const samc_plugin_api *api, samc_error *err)
{
    if (!api || api->abi != SAMC_PLUGIN_ABI)
        return fail(err, SAMC_ERR_UNSUPPORTED, "was built for another plugin ABI of samc (rebuild it with this samc)");
    if (api->layout != samc_plugin_layout())
        return fail(err, SAMC_ERR_UNSUPPORTED,
                    "was built against other samc headers (its records differ in size; rebuild it with this samc)");
    samc__cuda_set_api(api);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        samc_status st = api->impl_register(&rows[i], err);
        if (st) {
            while (i-- > 0)
                api->impl_unregister(&rows[i]);
            return st;
        }
    }
    return SAMC_OK;
}
