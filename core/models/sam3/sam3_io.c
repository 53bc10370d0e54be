/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_io.c - recorded inputs and output slots of the SAM 3 isolated
 * runners (sam3_io.h). */
#include "core/models/sam3/sam3_io.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/base/error.h"

samc_tensor *samc__sam3_in(samc_sam3_io *r, const char *name, const char *pos)
{
    if (r->st)
        return NULL;
    if (r->n_in == SAMC_SAM3_IO_MAX) {
        r->st = samc_fail(r->err, SAMC_ERR_INTERNAL, "runner: more than %d inputs", SAMC_SAM3_IO_MAX);
        return NULL;
    }
    samc_tensor *t = &r->in[r->n_in];
    if ((r->st = samc_io_tensor(r->io, name, pos, t, r->err)))
        return NULL;
    r->n_in++;
    return t;
}

samc_tensor *samc__sam3_in_opt(samc_sam3_io *r, const char *name)
{
    if (r->st || !r->io->has(r->io->user, name))
        return NULL;
    double v;
    bool none = false;
    if (r->io->scalar(r->io->user, name, NULL, &v, &none, NULL) == SAMC_OK)
        return NULL; /* a scalar (None): not a tensor */
    return samc__sam3_in(r, name, NULL);
}

double samc__sam3_in_num(samc_sam3_io *r, const char *name, const char *pos)
{
    double v = 0;
    bool none = false;
    if (r->st)
        return 0;
    r->st = r->io->scalar(r->io->user, name, pos, &v, &none, r->err);
    if (!r->st && none)
        r->st = samc_fail(r->err, SAMC_ERR_ARG, "runner: input '%s' is None", name);
    return v;
}

samc_tensor *samc__sam3_out(samc_sam3_io *r, const char *name, int ndim, const int64_t *shape)
{
    if (r->st)
        return NULL;
    samc_tensor *t = samc_layer_out_slot(r->out, name);
    if (!t) {
        r->st = samc_fail(r->err, SAMC_ERR_INTERNAL, "runner: too many output slots");
        return NULL;
    }
    if ((r->st = samc_tensor_alloc(t, ndim, shape, r->err))) {
        r->out->n--; /* give the slot back */
        return NULL;
    }
    return t;
}

void samc__sam3_io_shape(samc_sam3_io *r, const char *fmt, ...)
{
    if (r->st)
        return;
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->st = samc_fail(r->err, SAMC_ERR_SHAPE, "%s", msg);
}

samc_status samc__sam3_io_put(samc_sam3_io *r, const char *name, const samc_tensor *t)
{
    if (r->st)
        return r->st;
    samc_tensor *dst = samc_layer_out_slot(r->out, name);
    if (!dst)
        return r->st = samc_fail(r->err, SAMC_ERR_INTERNAL, "runner: too many output slots");
    if ((r->st = samc_tensor_copy(dst, t, r->err)))
        r->out->n--;
    return r->st;
}

samc_status samc__sam3_io_end(samc_sam3_io *r)
{
    for (int i = 0; i < r->n_in; i++)
        samc_tensor_release(&r->in[i]);
    r->n_in = 0;
    return r->st;
}

samc_status samc__sam3_example_prompt(samc_layer_inputs *in, const char *name, const char *mask, int64_t D,
                                      bool batch_first, uint64_t *seed, samc_error *err)
{
    const int64_t T = 36;
    if (!samc_inputs_random(in, name, (*seed)++, -2, 2, err, 3, batch_first ? (int64_t)1 : T,
                            batch_first ? T : (int64_t)1, D))
        return SAMC_ERR_NOMEM;
    samc_tensor *m = samc_inputs_tensor(in, mask, 2, (const int64_t[]){1, T}, err);
    if (!m)
        return SAMC_ERR_NOMEM;
    for (int i = 8; i < 32; i++)
        m->data[i] = 1.0f;
    return SAMC_OK;
}
