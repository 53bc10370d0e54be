/* impl_table.c - the built-in implementations, one row each. The only place
 * that names them; everything else finds them here by name. */
#include "core/runtime/impl.h"
#include "fast/fast.h"
#include "fast/fast_ops.h"
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
    .about = "OpenMP threads, AVX2/AVX-512 kernels, fp32, weights packed at load",
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
    .about = "fast's bodies with bf16 weights and activations, fp32 accumulation (AVX512_BF16 / AMX by CPUID)",
    .tol = 3e-2,
    .ops = {[SAMC_OPS_NN] = &samc_fast_nn_ops, [SAMC_OPS_TRACKER] = &samc_fast_tracker_ops,
            [SAMC_OPS_SAM2] = &samc_fast_sam2_ops},
    .prepare = samc__fast_prepare_bf16,
    .release = samc__fast_prepare_release,
};

const samc_impl *const samc__builtin_impls[] = {&ref_impl, &fast_impl, &bf16_impl};
const int samc__n_builtin_impls = (int)(sizeof samc__builtin_impls / sizeof samc__builtin_impls[0]);
const samc_impl *const samc__default_impl = &fast_impl;
