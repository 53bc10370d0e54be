/* SPDX-License-Identifier: Apache-2.0 */
/* prepare.c - weights packed once per model, at load (core/runtime/impl.h
 * `prepare`): every linear record, and the convolutions the bodies run as
 * one GEMM over their flattened kernel (patch embedding), get a packed copy
 * in the implementation's prep slot; fast and bf16 differ only in the
 * element type of that copy. Bodies find it with samc__fast_prepared. */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "fast/fast.h"

typedef struct prep_arena {
    int n;
    fast_wpack *packs;
} prep_arena;

void samc__fast_prepare_release(void *arena)
{
    prep_arena *a = arena;
    if (!a)
        return;
    for (int i = 0; i < a->n; i++)
        samc__fast_wpack_free(&a->packs[i]);
    free(a->packs);
    free(a);
}

/* A conv the bodies compute as x_col W^T with W (cout, cin*kh*kw): the
 * non-overlapping strided ones (patch embedding) and the unpadded stride-1
 * ones applied to kernel-sized patches (SAM 3's ROI-pooled box features). */
static bool conv_as_linear(const samc_conv2d *c)
{
    if (c->groups != 1 || c->kh < 2 || c->kh != c->kw || c->pad != 0)
        return false;
    return c->stride == c->kh || c->stride == 1;
}

static samc_status prepare(const samc_param_list *params, int slot, void **arena, fast_dtype dtype, samc_error *err)
{
    prep_arena *a = calloc(1, sizeof *a);
    const int cap = params->n_linears + params->n_convs;
    if (a)
        a->packs = calloc((size_t)(cap ? cap : 1), sizeof *a->packs);
    if (!a || !a->packs) {
        samc__fast_prepare_release(a);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory packing the weights");
    }
    samc_status st = SAMC_OK;
    for (int i = 0; !st && i < params->n_linears; i++) {
        samc_linear *l = params->linears[i];
        fast_wpack *p = &a->packs[a->n];
        if (!l->w || (st = samc__fast_wpack_init(p, l->w, l->in, l->out, l->in, dtype)))
            continue;
        l->prep[slot] = p, a->n++;
    }
    for (int i = 0; !st && i < params->n_convs; i++) {
        samc_conv2d *c = params->convs[i];
        const int K = c->cin * c->kh * c->kw;
        fast_wpack *p = &a->packs[a->n];
        if (!c->w || !conv_as_linear(c) || (st = samc__fast_wpack_init(p, c->w, K, c->cout, K, dtype)))
            continue;
        c->prep[slot] = p, a->n++;
    }
    if (st) {
        samc__fast_prepare_release(a);
        return samc_fail(err, st, "out of memory packing the weights");
    }
    *arena = a;
    return SAMC_OK;
}

samc_status samc__fast_prepare_f32(const samc_param_list *params, int slot, void **arena, samc_error *err)
{
    return prepare(params, slot, arena, FAST_F32, err);
}

samc_status samc__fast_prepare_bf16(const samc_param_list *params, int slot, void **arena, samc_error *err)
{
    return prepare(params, slot, arena, FAST_BF16, err);
}

void samc__fast_linear_x(const samc_ctx *ctx, int nt, const float *x, int64_t ldx, int64_t rows, const samc_linear *l,
                         float *y, int64_t ldy, int flags)
{
    const fast_wpack *p = samc__fast_prepared(ctx, l->prep);
    if (p) {
        samc__fast_gemm(nt, rows, x, ldx, p, l->b, y, ldy, flags);
        return;
    }
    samc__fast_linear(nt, x, ldx, rows, l, y, ldy, flags & FAST_GEMM_ACC);
    if (flags & (FAST_GEMM_GELU | FAST_GEMM_RELU))
        for (int64_t r = 0; r < rows; r++)
            (flags & FAST_GEMM_GELU ? samc__fast_gelu : samc__fast_relu)(y + r * ldy, l->out);
}

void samc__fast_linear_res(const samc_ctx *ctx, int nt, const float *x, int64_t ldx, int64_t rows,
                           const samc_linear *l, const float *R, int64_t ldr, float *y, int64_t ldy)
{
    const fast_wpack *p = samc__fast_prepared(ctx, l->prep);
    if (p) {
        samc__fast_gemm_res(nt, rows, x, ldx, p, l->b, R, ldr, y, ldy, 0);
        return;
    }
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < rows; r++)
        memcpy(y + r * ldy, R + r * ldr, (size_t)l->out * sizeof *y);
    samc__fast_linear(nt, x, ldx, rows, l, y, ldy, 1);
}

void samc__fast_linear_x_1t(const samc_ctx *ctx, const float *x, int64_t ldx, int64_t rows, const samc_linear *l,
                            const float *Wp, float *y, int64_t ldy, int flags)
{
    const fast_wpack *p = samc__fast_prepared(ctx, l->prep);
    if (p) {
        samc__fast_gemm_1t(rows, x, ldx, p, l->b, y, ldy, flags);
        return;
    }
    samc__fast_linear_1t(x, ldx, rows, l, Wp, y, ldy, flags & FAST_GEMM_ACC);
    if (flags & (FAST_GEMM_GELU | FAST_GEMM_RELU))
        for (int64_t r = 0; r < rows; r++)
            (flags & FAST_GEMM_GELU ? samc__fast_gelu : samc__fast_relu)(y + r * ldy, l->out);
}
