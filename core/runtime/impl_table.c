/* SPDX-License-Identifier: Apache-2.0 */
/* impl_table.c - the built-in implementations, one row each. The only place
 * that names them; everything else finds them here by name. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "core/runtime/impl.h"

#include "core/runtime/plugin.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"
#include "fast/isa.h"
#include "ref/ref_ops.h"

static const samc_impl ref_impl = {
    .name = "ref",
    .about = "scalar reference: plain loops, one thread, double accumulation (the yardstick)",
    .tol = 1e-5,
    .single_threaded = true,
    .ops = {[SAMC_OPS_NN] = &samc_ref_nn_ops, [SAMC_OPS_TRACKER] = &samc_ref_tracker_ops,
            [SAMC_OPS_SAM2] = &samc_ref_sam2_ops, [SAMC_OPS_SAM3] = &samc_ref_sam3_ops},
};

static const samc_impl fast_impl = {
    .name = "fast",
    .about = "OpenMP threads, SIMD kernels of the CPU's level (x86-64 v2/v3/v4, NEON; run time), fp32, weights "
             "packed at load",
    .tol = 1e-4,
    .fallback = "ref", /* none used today: fast has every SAM 2 and SAM 3 body (tests/test_sam3_geo_prompt.c) */
    .ops = {[SAMC_OPS_NN] = &samc_fast_nn_ops, [SAMC_OPS_TRACKER] = &samc_fast_tracker_ops,
            [SAMC_OPS_SAM2] = &samc_fast_sam2_ops, [SAMC_OPS_SAM3] = &samc_fast_sam3_ops},
    .prepare = samc__fast_prepare_f32,
    .release = samc__fast_prepare_release,
};

/* fast's bodies on bfloat16 weights and activations with fp32 accumulation
 * (AVX512_BF16 or AMX-BF16 kernels chosen by CPUID, an fp32 emulation
 * elsewhere): the prepared weights are bf16, so every GEMM runs in bf16.
 * Its tolerance is documented in docs/fast.md ("bf16"). */
static const samc_impl bf16_impl = {
    .name = "bf16",
    .about = "fast's bodies with bf16 weights and activations, fp32 accumulation (AVX512_BF16 / AMX by CPUID, "
             "else fp32 products of the bf16 values)",
    .tol = 3e-2,
    .ops = {[SAMC_OPS_NN] = &samc_fast_nn_ops, [SAMC_OPS_TRACKER] = &samc_fast_tracker_ops,
            [SAMC_OPS_SAM2] = &samc_fast_sam2_ops, [SAMC_OPS_SAM3] = &samc_fast_sam3_ops},
    .prepare = samc__fast_prepare_bf16,
    .release = samc__fast_prepare_release,
};

const samc_impl *const samc__builtin_impls[] = {&ref_impl, &fast_impl, &bf16_impl};
const int samc__n_builtin_impls = (int)(sizeof samc__builtin_impls / sizeof samc__builtin_impls[0]);
const samc_impl *const samc__default_impl = &fast_impl;

#ifndef SAMC_BUILD_TARGET
#define SAMC_BUILD_TARGET "?"
#endif

void samc__impl_system_info(char *buf, size_t n)
{
    const fast_isa *isa = samc__fast_isa(), *best = samc__fast_isa_table(samc__fast_isa_cpu_level());
    snprintf(buf, n, "kernels %s%s%s%s, bf16 %s, OpenMP %d (%d threads), compiled for %s", isa->name,
             isa != best ? " (SAMC_ISA; the CPU runs " : "", isa != best ? best->name : "", isa != best ? ")" : "",
             samc__fast_bf16_kernel_name(samc__fast_bf16_kernel()), _OPENMP, omp_get_max_threads(),
             SAMC_BUILD_TARGET);
}

/* Implementations that live in plugins (core/runtime/plugin.h), loaded on
 * the first use of their name: name, plugin library (lib<name>.so). */
static const struct {
    const char *name, *lib;
} plugin_impls[] = {
    {"cuda", "samc_cuda"},      /* cuda/: fp32 on NVIDIA GPUs (docs/gpu.md) */
    {"cuda-bf16", "samc_cuda"}, /* the same bodies on bf16 tensor cores */
};

const char *samc__plugin_of(const char *name)
{
    for (size_t i = 0; name && i < sizeof plugin_impls / sizeof plugin_impls[0]; i++)
        if (!strcmp(plugin_impls[i].name, name))
            return plugin_impls[i].lib;
    return NULL;
}

const char *samc__plugin_impl_name(int i)
{
    return i >= 0 && (size_t)i < sizeof plugin_impls / sizeof plugin_impls[0] ? plugin_impls[i].name : NULL;
}
