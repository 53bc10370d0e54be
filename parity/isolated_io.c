/* isolated_io.c - reading a record's inputs and collecting a runner's outputs. */
#include <stdio.h>
#include <string.h>

#include "isolated_internal.h"

void outputs_free(outputs *o)
{
    for (int i = 0; i < o->n; i++)
        samc_tensor_release(&o->t[i]);
    o->n = 0;
}

samc_tensor *out_slot(outputs *o, const char *name)
{
    if (o->n == MAX_OUT)
        return NULL;
    snprintf(o->names[o->n], sizeof o->names[0], "%s", name);
    return &o->t[o->n++];
}

void capture(void *user, const char *module, int n, const char *const *slots, const samc_tensor *const *t)
{
    outputs *o = user;
    if (strcmp(module, o->target) || o->n)
        return;
    for (int i = 0; i < n; i++) {
        samc_tensor *dst = out_slot(o, slots[i]);
        if (dst && samc_tensor_copy(dst, t[i], NULL))
            o->n--;
    }
}

/* in/<name> if recorded by keyword, else in/<pos> (positional). */
samc_status read_in(parity_run *r, int rec, const char *name, const char *pos, samc_tensor *t, samc_error *err)
{
    char path[256];
    snprintf(path, sizeof path, "/trace/%06d/in/%s", r->recs[rec].index, name);
    if (!samc_dump_exists(r->dump, path) && pos)
        snprintf(path, sizeof path, "/trace/%06d/in/%s", r->recs[rec].index, pos);
    return samc_dump_read(r->dump, path, t, err);
}

bool has_in(parity_run *r, int rec, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "/trace/%06d/in/%s", r->recs[rec].index, name);
    return samc_dump_exists(r->dump, path);
}

samc_status in_attr(parity_run *r, int rec, const char *name, const char *pos, double *v, bool *none,
                           samc_error *err)
{
    char g[64];
    snprintf(g, sizeof g, "/trace/%06d/in", r->recs[rec].index);
    return samc_dump_attr_num(r->dump, g, samc_dump_has_attr(r->dump, g, name) || !pos ? name : pos, v, none, err);
}

