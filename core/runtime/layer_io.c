/* SPDX-License-Identifier: Apache-2.0 */
/* layer_io.c - output slots of isolated runners, and inputs held in memory. */
#include "core/runtime/layer_io.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/rng.h"

samc_tensor *samc_layer_out_slot(samc_layer_out *o, const char *name)
{
    if (o->n == SAMC_LAYER_OUT_MAX)
        return NULL;
    snprintf(o->names[o->n], sizeof o->names[0], "%s", name);
    memset(&o->t[o->n], 0, sizeof o->t[0]);
    return &o->t[o->n++];
}

void samc_layer_out_free(samc_layer_out *o)
{
    for (int i = 0; i < o->n; i++)
        samc_tensor_release(&o->t[i]);
    o->n = 0;
}

static samc_layer_input *find(samc_layer_inputs *in, const char *name)
{
    for (int i = 0; name && i < in->n; i++)
        if (!strcmp(in->items[i].name, name))
            return &in->items[i];
    return NULL;
}

static samc_layer_input *add(samc_layer_inputs *in, const char *name, samc_error *err)
{
    if (in->n == SAMC_LAYER_OUT_MAX) {
        samc_fail(err, SAMC_ERR_INTERNAL, "more than %d inputs", SAMC_LAYER_OUT_MAX);
        return NULL;
    }
    samc_layer_input *it = &in->items[in->n++];
    memset(it, 0, sizeof *it);
    snprintf(it->name, sizeof it->name, "%s", name);
    return it;
}

samc_tensor *samc_inputs_tensor(samc_layer_inputs *in, const char *name, int ndim, const int64_t *shape,
                                samc_error *err)
{
    samc_layer_input *it = add(in, name, err);
    if (!it)
        return NULL;
    if (samc_tensor_alloc(&it->t, ndim, shape, err)) {
        in->n--;
        return NULL;
    }
    return &it->t;
}

samc_status samc_inputs_scalar(samc_layer_inputs *in, const char *name, double v, samc_error *err)
{
    samc_layer_input *it = add(in, name, err);
    if (!it)
        return SAMC_ERR_INTERNAL;
    it->is_scalar = true, it->v = v;
    return SAMC_OK;
}

samc_tensor *samc_inputs_random(samc_layer_inputs *in, const char *name, uint64_t seed, float lo, float hi,
                                samc_error *err, int ndim, ...)
{
    int64_t shape[SAMC_MAX_DIMS];
    va_list ap;
    va_start(ap, ndim);
    for (int i = 0; i < ndim && i < SAMC_MAX_DIMS; i++)
        shape[i] = va_arg(ap, int64_t);
    va_end(ap);
    samc_tensor *t = samc_inputs_tensor(in, name, ndim, shape, err);
    for (int64_t i = 0; t && i < samc_numel(t); i++)
        t->data[i] = lo + (hi - lo) * 0.5f * (samc_rng_uniform(&seed) + 1.0f);
    return t;
}

void samc_inputs_free(samc_layer_inputs *in)
{
    for (int i = 0; i < in->n; i++)
        samc_tensor_release(&in->items[i].t);
    in->n = 0;
}

static samc_status io_tensor(void *user, const char *name, const char *pos, samc_tensor *out, samc_error *err)
{
    (void)pos;
    samc_layer_input *it = find(user, name);
    if (!it || it->is_scalar)
        return samc_fail(err, SAMC_ERR_KEY, "no tensor input '%s'", name);
    return samc_tensor_copy(out, &it->t, err);
}

void samc_layer_io_free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static samc_status io_names(void *user, char ***names, int *n, samc_error *err)
{
    samc_layer_inputs *in = user;
    *names = calloc((size_t)(in->n ? in->n : 1), sizeof **names);
    *n = 0;
    if (!*names)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < in->n; i++)
        if (!in->items[i].is_scalar && !((*names)[(*n)++] = strdup(in->items[i].name))) {
            samc_layer_io_free_names(*names, *n - 1);
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        }
    return SAMC_OK;
}

static bool io_has(void *user, const char *name) { return find(user, name) != NULL; }

static samc_status io_scalar(void *user, const char *name, const char *pos, double *v, bool *is_none,
                             samc_error *err)
{
    (void)pos;
    samc_layer_input *it = find(user, name);
    if (!it || !it->is_scalar)
        return samc_fail(err, SAMC_ERR_KEY, "no scalar input '%s'", name);
    *v = it->v;
    if (is_none)
        *is_none = false;
    return SAMC_OK;
}

static samc_status io_string(void *user, const char *name, const char *pos, char **out, samc_error *err)
{
    (void)user, (void)pos, (void)out;
    return samc_fail(err, SAMC_ERR_KEY, "no string input '%s'", name);
}

samc_layer_io samc_inputs_io(samc_layer_inputs *in)
{
    return (samc_layer_io){.user = in, .tensor = io_tensor, .has = io_has, .scalar = io_scalar, .string = io_string,
                           .names = io_names, .video = in->video, .video_h = in->video_h, .video_w = in->video_w};
}
