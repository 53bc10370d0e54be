/* SPDX-License-Identifier: Apache-2.0 */
/* table.c - this level's samc__fast_isa (fast/isa.h): the kernels its
 * compilation of fast/isa/ holds, as samc__fast_isa_<level>. */
#include "fast/isa/isa_kernels.h"

#if defined(__AVX512F__)
#define LEVEL SAMC_ISA_V4
#define LEVEL_NAME "v4 (avx512)"
#elif defined(__AVX2__)
#define LEVEL SAMC_ISA_V3
#define LEVEL_NAME "v3 (avx2+fma)"
#elif defined(__SSE4_1__)
#define LEVEL SAMC_ISA_V2
#define LEVEL_NAME "v2 (sse4.2)"
#elif defined(__ARM_NEON)
#define LEVEL SAMC_ISA_NEON
#define LEVEL_NAME "neon"
#else
#define LEVEL SAMC_ISA_SCALAR
#define LEVEL_NAME "scalar"
#endif

#define TABLE_CAT2(a, b) a##b
#define TABLE_CAT(a, b) TABLE_CAT2(a, b)

const fast_isa TABLE_CAT(samc__fast_isa_, SAMC_ISA_SUFFIX) = {
    .name = LEVEL_NAME,
    .level = LEVEL,
    .lanes = VL,
    .pack = ISA_FN(pack),
    .gemm = ISA_FN(gemm),
    .layer_norm_row = ISA_FN(layer_norm_row),
    .layer_norm2d = ISA_FN(layer_norm2d),
    .gelu = ISA_FN(gelu),
    .add_gelu = ISA_FN(add_gelu),
    .relu = ISA_FN(relu),
    .sigmoid = ISA_FN(sigmoid),
    .add = ISA_FN(add),
    .scale = ISA_FN(scale),
    .softmax_scaled = ISA_FN(softmax_scaled),
    .online_row = ISA_FN(online_row),
    .transpose = ISA_FN(transpose),
    .dot = ISA_FN(dot),
    .aa_column_dot = ISA_FN(aa_column_dot),
    .lerp_rows = ISA_FN(lerp_rows),
    .standardize = ISA_FN(standardize),
    .mask_product = ISA_FN(mask_product),
    .max_rows = ISA_FN(max_rows),
    .aa_row = ISA_FN(aa_row),
    .lerp_taps = ISA_FN(lerp_taps),
    .fma_loop = ISA_FN(fma_loop),
};
