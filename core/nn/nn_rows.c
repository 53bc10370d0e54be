/* SPDX-License-Identifier: Apache-2.0 */
/* nn_rows.c - isolated runners and op-test inputs of the glue kinds
 * (nn_rows.h). */
#include "core/nn/nn_rows.h"

#include "core/base/error.h"

static samc_status run_end(samc_status st, samc_tensor *a, samc_tensor *b)
{
    samc_tensor_release(a), samc_tensor_release(b);
    return st;
}

samc_status samc_nn_run_add(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                            samc_error *err)
{
    const samc_nn_ops *nn = L->ops;
    samc_tensor a = {0}, b = {0};
    samc_status st = samc_io_tensor(in, "a", NULL, &a, err);
    if (!st)
        st = samc_io_tensor(in, "b", NULL, &b, err);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && !(st = samc_tensor_alloc(y, a.ndim, a.shape, err)))
        st = samc_layer_done(x, L, NULL,
                             nn->add(samc_layer_ctx(x, L), &a, &b, (float)samc_io_scalar_or(in, "scale", NULL, 1), y),
                             err, 0, NULL, NULL);
    return run_end(st, &a, &b);
}

/* A layout kind on in/x: out's shape from `shape_of`. */
static samc_status run_layout(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                              samc_error *err, int kind)
{
    const samc_nn_ops *nn = L->ops;
    samc_tensor a = {0}, add = {0};
    samc_status st = samc_io_tensor(in, "x", NULL, &a, err);
    if (!st && kind == 2 && samc_io_has(in, "add", NULL))
        st = samc_io_tensor(in, "add", NULL, &add, err);
    if (!st && (a.ndim != (kind == 0 ? 3 : 4)))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: in/x has %d dimensions", L->name, a.ndim);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (st)
        return run_end(st, &a, &add);
    const int64_t *s = a.shape, B = add.data ? add.shape[0] : s[0];
    samc_ctx *ctx = samc_layer_ctx(x, L);
    if (kind == 0 && !(st = samc_tensor_allocv(y, err, 3, s[1], s[0], s[2])))
        st = nn->transpose01(ctx, &a, y);
    else if (kind == 1 && !(st = samc_tensor_allocv(y, err, 4, s[0], s[3], s[1], s[2])))
        st = nn->tokens_to_planes(ctx, &a, y);
    else if (kind == 2 && !(st = samc_tensor_allocv(y, err, 3, B, s[2] * s[3], s[1])))
        st = nn->planes_to_tokens(ctx, &a, add.data ? &add : NULL, y);
    return run_end(samc_layer_done(x, L, NULL, st, err, 0, NULL, NULL), &a, &add);
}

samc_status samc_nn_run_transpose01(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                    samc_error *err)
{
    return run_layout(x, L, in, out, err, 0);
}

samc_status samc_nn_run_tokens_to_planes(samc_exec *x, const samc_layer *L, const samc_layer_io *in,
                                         samc_layer_out *out, samc_error *err)
{
    return run_layout(x, L, in, out, err, 1);
}

samc_status samc_nn_run_planes_to_tokens(samc_exec *x, const samc_layer *L, const samc_layer_io *in,
                                         samc_layer_out *out, samc_error *err)
{
    return run_layout(x, L, in, out, err, 2);
}

samc_status samc_nn_example_add(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                samc_error *err)
{
    (void)self, (void)index, (void)full;
    SAMC_INPUT_RANDOM("a", -2, 2, 3, (int64_t)2, (int64_t)37, (int64_t)100);
    SAMC_INPUT_RANDOM("b", -2, 2, 3, (int64_t)2, (int64_t)37, (int64_t)100);
    return samc_inputs_scalar(in, "scale", 0.1, err);
}

samc_status samc_nn_example_transpose01(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                        samc_error *err)
{
    (void)self, (void)index, (void)full;
    SAMC_INPUT_RANDOM("x", -2, 2, 3, (int64_t)300, (int64_t)3, (int64_t)37);
    return SAMC_OK;
}

samc_status samc_nn_example_tokens_to_planes(const void *self, int index, uint64_t seed, bool full,
                                             samc_layer_inputs *in, samc_error *err)
{
    (void)self, (void)index, (void)full;
    SAMC_INPUT_RANDOM("x", -2, 2, 4, (int64_t)2, (int64_t)19, (int64_t)23, (int64_t)40);
    return SAMC_OK;
}

samc_status samc_nn_example_planes_to_tokens(const void *self, int index, uint64_t seed, bool full,
                                             samc_layer_inputs *in, samc_error *err)
{
    (void)self, (void)index, (void)full;
    SAMC_INPUT_RANDOM("x", -2, 2, 4, (int64_t)1, (int64_t)40, (int64_t)19, (int64_t)23);
    SAMC_INPUT_RANDOM("add", -2, 2, 4, (int64_t)3, (int64_t)40, (int64_t)19, (int64_t)23);
    return SAMC_OK;
}

samc_status samc_nn_run_add_channel(samc_exec *x, const samc_layer *L, const samc_layer_io *in, samc_layer_out *out,
                                    samc_error *err)
{
    const samc_nn_ops *nn = L->ops;
    samc_tensor a = {0}, v = {0};
    samc_status st = samc_io_tensor(in, "x", NULL, &a, err);
    if (!st)
        st = samc_io_tensor(in, "v", NULL, &v, err);
    if (!st && (a.ndim < 2 || samc_numel(&v) != a.shape[1]))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: in/v must hold one value per channel of in/x", L->name);
    samc_tensor *y = samc_layer_out_slot(out, "0");
    if (!st && !(st = samc_tensor_alloc(y, a.ndim, a.shape, err)))
        st = samc_layer_done(x, L, NULL,
                             nn->add_channel(samc_layer_ctx(x, L), &a, v.data,
                                             (float)samc_io_scalar_or(in, "scale", NULL, 1), y),
                             err, 0, NULL, NULL);
    return run_end(st, &a, &v);
}

samc_status samc_nn_example_add_channel(const void *self, int index, uint64_t seed, bool full, samc_layer_inputs *in,
                                        samc_error *err)
{
    (void)self, (void)index, (void)full;
    SAMC_INPUT_RANDOM("x", -2, 2, 4, (int64_t)2, (int64_t)24, (int64_t)17, (int64_t)19);
    SAMC_INPUT_RANDOM("v", -2, 2, 1, (int64_t)24);
    return samc_inputs_scalar(in, "scale", 1, err);
}
