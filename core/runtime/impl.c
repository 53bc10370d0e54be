/* SPDX-License-Identifier: Apache-2.0 */
/* impl.c - the implementation registry: the built-in rows
 * (core/runtime/impl_table.c) and rows registered at run time. */
#include "core/runtime/impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/runtime/plugin.h"

/* impl_table.c */
extern const samc_impl *const samc__builtin_impls[];
extern const int samc__n_builtin_impls;
extern const samc_impl *const samc__default_impl;

#define MAX_REGISTERED 8
static const samc_impl *registered[MAX_REGISTERED];
static int n_registered;

int samc_impl_count(void) { return samc__n_builtin_impls + n_registered; }

const samc_impl *samc_impl_get(int i)
{
    if (i < 0 || i >= samc_impl_count())
        return NULL;
    return i < samc__n_builtin_impls ? samc__builtin_impls[i] : registered[i - samc__n_builtin_impls];
}

const samc_impl *samc_impl_find(const char *name)
{
    for (int i = 0; name && i < samc_impl_count(); i++)
        if (!strcmp(samc_impl_get(i)->name, name))
            return samc_impl_get(i);
    return NULL;
}

const samc_impl *samc_impl_default(void) { return samc__default_impl; }

const char *samc_impl_names(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < samc_impl_count() && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", samc_impl_get(i)->name);
    for (int i = 0; used < n && samc__plugin_impl_name(i); i++) /* those of plugins not loaded */
        if (!samc_impl_find(samc__plugin_impl_name(i)))
            used += (size_t)snprintf(buf + used, n - used, "%s%s (plugin)", used ? ", " : "", samc__plugin_impl_name(i));
    return buf;
}

int samc_impl_prep_slot(const samc_impl *impl)
{
    int slot = 0;
    for (int i = 0; i < samc_impl_count(); i++) {
        const samc_impl *r = samc_impl_get(i);
        if (!r->prepare)
            continue;
        if (r == impl)
            return slot < SAMC_PREP_SLOTS ? slot : -1;
        slot++;
    }
    return -1;
}

samc_status samc_impl_register(const samc_impl *impl, samc_error *err)
{
    if (!impl || !impl->name || !impl->name[0])
        return samc_fail(err, SAMC_ERR_ARG, "an implementation needs a name");
    if (samc_impl_find(impl->name))
        return samc_fail(err, SAMC_ERR_ARG, "implementation '%s' is already registered", impl->name);
    if (n_registered == MAX_REGISTERED)
        return samc_fail(err, SAMC_ERR_ARG, "more than %d registered implementations", MAX_REGISTERED);
    registered[n_registered++] = impl;
    return SAMC_OK;
}

void samc_impl_unregister(const samc_impl *impl)
{
    for (int i = 0; i < n_registered; i++)
        if (registered[i] == impl) {
            memmove(registered + i, registered + i + 1, (size_t)(n_registered - i - 1) * sizeof *registered);
            n_registered--;
            return;
        }
}

bool samc_impl_has_body(const samc_impl *impl, int table, size_t offset)
{
    const void *ops = impl->ops[table];
    void (*fn)(void) = NULL;
    if (ops)
        memcpy(&fn, (const char *)ops + offset, sizeof fn);
    return fn != NULL;
}

const samc_impl *samc_impl_provider(const samc_impl *impl, int table, size_t offset)
{
    for (int hops = 0; impl && hops < 8; hops++) { /* a fallback chain is short; 8 stops a cycle */
        if (samc_impl_has_body(impl, table, offset))
            return impl;
        impl = impl->fallback ? samc_impl_find(impl->fallback) : NULL;
    }
    return NULL;
}

samc_status samc_param_list_add_linear(samc_param_list *p, samc_linear *l)
{
    if (p->n_linears == p->cap_linears) {
        int cap = p->cap_linears ? 2 * p->cap_linears : 64;
        samc_linear **n = realloc(p->linears, (size_t)cap * sizeof *n);
        if (!n)
            return SAMC_ERR_NOMEM;
        p->linears = n, p->cap_linears = cap;
    }
    p->linears[p->n_linears++] = l;
    return SAMC_OK;
}

samc_status samc_param_list_add_conv(samc_param_list *p, samc_conv2d *c)
{
    if (p->n_convs == p->cap_convs) {
        int cap = p->cap_convs ? 2 * p->cap_convs : 32;
        samc_conv2d **n = realloc(p->convs, (size_t)cap * sizeof *n);
        if (!n)
            return SAMC_ERR_NOMEM;
        p->convs = n, p->cap_convs = cap;
    }
    p->convs[p->n_convs++] = c;
    return SAMC_OK;
}

void samc_param_list_free(samc_param_list *p)
{
    free(p->linears);
    free(p->convs);
    memset(p, 0, sizeof *p);
}
