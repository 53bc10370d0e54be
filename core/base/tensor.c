/* SPDX-License-Identifier: Apache-2.0 */
#include "core/base/tensor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

int64_t samc_shape_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

int64_t samc_numel(const samc_tensor *t) { return samc_shape_numel(t->ndim, t->shape); }

static samc_status tensor_alloc(samc_tensor *t, int ndim, const int64_t *shape, bool zero, samc_error *err)
{
    memset(t, 0, sizeof *t);
    if (ndim < 0 || ndim > SAMC_MAX_DIMS)
        return samc_fail(err, SAMC_ERR_ARG, "tensor rank %d is outside 0..%d", ndim, SAMC_MAX_DIMS);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return samc_fail(err, SAMC_ERR_ARG, "negative tensor dimension %lld", (long long)shape[i]);
        if (shape[i] && n > INT64_MAX / 4 / shape[i])
            return samc_fail(err, SAMC_ERR_NOMEM, "tensor size overflows");
        n *= shape[i];
        t->shape[i] = shape[i];
    }
    t->ndim = ndim;
    t->data = zero ? calloc((size_t)(n ? n : 1), sizeof(float)) : malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!t->data)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory allocating %lld floats", (long long)n);
    t->owns = true;
    return SAMC_OK;
}

samc_status samc_tensor_alloc(samc_tensor *t, int ndim, const int64_t *shape, samc_error *err)
{
    return tensor_alloc(t, ndim, shape, true, err);
}

samc_status samc_tensor_alloc_uninit(samc_tensor *t, int ndim, const int64_t *shape, samc_error *err)
{
    return tensor_alloc(t, ndim, shape, false, err);
}

samc_status samc_tensor_allocv(samc_tensor *t, samc_error *err, int ndim, ...)
{
    int64_t shape[SAMC_MAX_DIMS] = {0};
    if (ndim < 0 || ndim > SAMC_MAX_DIMS)
        return samc_fail(err, SAMC_ERR_ARG, "tensor rank %d is outside 0..%d", ndim, SAMC_MAX_DIMS);
    va_list ap;
    va_start(ap, ndim);
    for (int i = 0; i < ndim; i++)
        shape[i] = va_arg(ap, int64_t);
    va_end(ap);
    return samc_tensor_alloc(t, ndim, shape, err);
}

void samc_tensor_release(samc_tensor *t)
{
    if (!t)
        return;
    if (t->owns)
        free(t->data);
    memset(t, 0, sizeof *t);
}

samc_status samc_tensor_advance(samc_tensor *t, samc_tensor *y, samc_status st)
{
    if (st) {
        samc_tensor_release(y);
        return st;
    }
    samc_tensor_release(t);
    *t = *y;
    memset(y, 0, sizeof *y);
    return SAMC_OK;
}

samc_status samc_tensor_copy(samc_tensor *dst, const samc_tensor *src, samc_error *err)
{
    samc_status st = samc_tensor_alloc_uninit(dst, src->ndim, src->shape, err);
    if (st)
        return st;
    memcpy(dst->data, src->data, (size_t)samc_numel(src) * sizeof(float));
    return SAMC_OK;
}

samc_tensor samc_tensor_view(float *data, int ndim, const int64_t *shape)
{
    samc_tensor t;
    memset(&t, 0, sizeof t);
    t.ndim = ndim;
    for (int i = 0; i < ndim && i < SAMC_MAX_DIMS; i++)
        t.shape[i] = shape[i];
    t.data = data;
    return t;
}

bool samc_shape_equal(int nd_a, const int64_t *a, int nd_b, const int64_t *b)
{
    if (nd_a != nd_b)
        return false;
    for (int i = 0; i < nd_a; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

bool samc_tensor_same_shape(const samc_tensor *a, const samc_tensor *b)
{
    return samc_shape_equal(a->ndim, a->shape, b->ndim, b->shape);
}

char *samc_shape_str(int ndim, const int64_t *shape, char *buf, size_t n)
{
    size_t used = 0;
    if (n == 0)
        return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf + used, n - used, "(");
    for (int i = 0; i < ndim && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (used < n)
        snprintf(buf + used, n - used, ")");
    return buf;
}
