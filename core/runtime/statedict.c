/* SPDX-License-Identifier: Apache-2.0 */
/* statedict.c - the one walk that lists, checks and binds a state_dict. */
#include "core/runtime/statedict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void samc_key_list_free(samc_key_list *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}

void samc_sd_begin(samc_sd *sd, const samc_weights *w, const char *base, samc_param_list *params)
{
    memset(sd, 0, sizeof *sd);
    sd->w = w, sd->base = base ? base : "", sd->params = params;
    sd->first_missing = sd->first_bad_shape = -1;
}

void samc_sd_free(samc_sd *sd) { samc_key_list_free(&sd->keys); }

void samc_sd_mount(samc_sd *sd, const char *root)
{
    snprintf(sd->root, sizeof sd->root, "%s%s", root, root[0] ? "." : "");
    sd->prefix[0] = '\0';
}

samc_status samc_sd_family(samc_sd *sd, const samc_layer_family *fam, void *model, samc_error *err)
{
    for (int m = 0; m < fam->n_mounts; m++) {
        const samc_mount *mt = &fam->mounts[m];
        if (!mt->part->describe)
            continue;
        samc_sd_mount(sd, mt->keys ? mt->keys : mt->root);
        samc_status st = mt->part->describe(sd, (char *)model + mt->offset, (const char *)model + mt->cfg_offset, err);
        if (st)
            return st;
    }
    return SAMC_OK;
}

void samc_sd_prefix(samc_sd *sd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sd->prefix, sizeof sd->prefix, fmt, ap);
    va_end(ap);
}

static samc_key_spec *add_key(samc_sd *sd)
{
    samc_key_list *l = &sd->keys;
    if (l->count == l->cap) {
        int cap = l->cap ? 2 * l->cap : 256;
        samc_key_spec *n = realloc(l->items, (size_t)cap * sizeof *n);
        if (!n) {
            sd->st = SAMC_ERR_NOMEM;
            return NULL;
        }
        l->items = n, l->cap = cap;
    }
    return &l->items[l->count++];
}

const float *samc_sd_tensor(samc_sd *sd, int ndim, const int64_t *shape, const char *fmt, ...)
{
    samc_key_spec *k = add_key(sd);
    if (!k)
        return NULL;
    char name[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    snprintf(k->key, sizeof k->key, "%s%s%s%s", sd->base, sd->root, sd->prefix, name);
    k->ndim = ndim;
    memcpy(k->shape, shape, (size_t)ndim * sizeof *shape);
    if (!sd->w)
        return NULL;
    const samc_tensor *t = samc_weights_find(sd->w, k->key);
    const int idx = sd->keys.count - 1;
    if (!t) {
        if (sd->first_missing < 0)
            sd->first_missing = idx;
        sd->missing++;
        return NULL;
    }
    if (!samc_shape_equal(t->ndim, t->shape, ndim, shape)) {
        if (sd->first_bad_shape < 0)
            sd->first_bad_shape = idx;
        return NULL;
    }
    return t->data;
}

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

void samc_sd_linear(samc_sd *sd, samc_linear *l, const char *name, int in, int out, bool bias)
{
    *l = (samc_linear){.in = in, .out = out};
    l->w = samc_sd_tensor(sd, 2, SHAPE(out, in), "%s.weight", name);
    l->b = bias ? samc_sd_tensor(sd, 1, SHAPE(out), "%s.bias", name) : NULL;
    if (sd->params && samc_param_list_add_linear(sd->params, l))
        sd->st = SAMC_ERR_NOMEM;
}

void samc_sd_norm(samc_sd *sd, samc_norm *n, const char *name, int dim, float eps)
{
    *n = (samc_norm){.dim = dim, .eps = eps};
    n->w = samc_sd_tensor(sd, 1, SHAPE(dim), "%s.weight", name);
    n->b = samc_sd_tensor(sd, 1, SHAPE(dim), "%s.bias", name);
}

void samc_sd_conv(samc_sd *sd, samc_conv2d *c, const char *name, int cin, int cout, int k, int stride, int pad,
                  int groups, bool bias)
{
    *c = (samc_conv2d){.cin = cin, .cout = cout, .kh = k, .kw = k, .stride = stride, .pad = pad, .groups = groups};
    c->w = samc_sd_tensor(sd, 4, SHAPE(cout, cin / (groups > 0 ? groups : 1), k, k), "%s.weight", name);
    c->b = bias ? samc_sd_tensor(sd, 1, SHAPE(cout), "%s.bias", name) : NULL;
    if (sd->params && samc_param_list_add_conv(sd->params, c))
        sd->st = SAMC_ERR_NOMEM;
}

void samc_sd_conv_t(samc_sd *sd, samc_conv_t2d *c, const char *name, int cin, int cout, int k)
{
    *c = (samc_conv_t2d){.cin = cin, .cout = cout, .k = k};
    c->w = samc_sd_tensor(sd, 4, SHAPE(cin, cout, k, k), "%s.weight", name);
    c->b = samc_sd_tensor(sd, 1, SHAPE(cout), "%s.bias", name);
}

void samc_sd_mlp(samc_sd *sd, samc_mlp *m, const char *name, int in, int hidden, int out, int n, bool sigmoid)
{
    memset(m, 0, sizeof *m);
    m->num_layers = n, m->sigmoid_output = sigmoid;
    char k[192];
    for (int i = 0; i < n && i < SAMC_MLP_MAX_LAYERS; i++) {
        snprintf(k, sizeof k, "%s.layers.%d", name, i);
        samc_sd_linear(sd, &m->layers[i], k, i == 0 ? in : hidden, i == n - 1 ? out : hidden, true);
    }
}

void samc_sd_attention(samc_sd *sd, samc_attention *a, const char *name, int dim, int internal, int kv_in,
                       int heads)
{
    char k[192];
    memset(a, 0, sizeof *a);
    a->heads = heads, a->internal_dim = internal;
    snprintf(k, sizeof k, "%s.q_proj", name), samc_sd_linear(sd, &a->q, k, dim, internal, true);
    snprintf(k, sizeof k, "%s.k_proj", name), samc_sd_linear(sd, &a->k, k, kv_in, internal, true);
    snprintf(k, sizeof k, "%s.v_proj", name), samc_sd_linear(sd, &a->v, k, kv_in, internal, true);
    snprintf(k, sizeof k, "%s.out_proj", name), samc_sd_linear(sd, &a->out, k, internal, dim, true);
}

/* ---- the verdict ------------------------------------------------------------ */

static int cmp_key(const void *a, const void *b)
{
    return strcmp(((const samc_key_spec *)a)->key, ((const samc_key_spec *)b)->key);
}

/* Up to 5 unexpected keys, then a count, into `buf`. Returns the count. */
static int list_unexpected(const samc_sd *sd, const samc_key_spec *sorted, char *buf, size_t n)
{
    const size_t blen = strlen(sd->base);
    int count = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < samc_weights_count(sd->w); i++) {
        const char *key = samc_weights_key(sd->w, i);
        if (blen && strncmp(key, sd->base, blen))
            continue; /* another part of a combined checkpoint */
        samc_key_spec probe;
        snprintf(probe.key, sizeof probe.key, "%s", key);
        if (bsearch(&probe, sorted, (size_t)sd->keys.count, sizeof *sorted, cmp_key))
            continue;
        if (count++ < 5 && used < n)
            used += (size_t)snprintf(buf + used, n - used, "%s'%s'", count > 1 ? ", " : "", key);
    }
    if (count > 5 && used < n)
        snprintf(buf + used, n - used, " and %d more", count - 5);
    return count;
}

samc_status samc_sd_finish(samc_sd *sd, const char *what, samc_error *err)
{
    if (sd->st)
        return samc_fail(err, sd->st, "out of memory while describing the weights of '%s'", what);
    if (!sd->w)
        return SAMC_OK;
    /* Keys are named as the file names them (a transformers-format file: its
     * own names, samc_weights_file_key), the file with its naming. */
    char src[600], fk[256];
    const char *naming = samc_weights_naming(sd->w);
    snprintf(src, sizeof src, "%s%s%s%s", samc_weights_source(sd->w), naming ? " (" : "", naming ? naming : "",
             naming ? " names)" : "");
    if (sd->first_bad_shape >= 0) {
        const samc_key_spec *k = &sd->keys.items[sd->first_bad_shape];
        const samc_tensor *t = samc_weights_find(sd->w, k->key);
        char e[96], a[96];
        return samc_fail(err, SAMC_ERR_SHAPE, "%s: key '%s': expected shape %s for config '%s', got %s", src,
                         samc_weights_file_key(sd->w, k->key, fk, sizeof fk),
                         samc_shape_str(k->ndim, k->shape, e, sizeof e), what,
                         samc_shape_str(t->ndim, t->shape, a, sizeof a));
    }
    samc_key_spec *sorted = malloc((size_t)(sd->keys.count ? sd->keys.count : 1) * sizeof *sorted);
    if (!sorted)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    memcpy(sorted, sd->keys.items, (size_t)sd->keys.count * sizeof *sorted);
    for (int i = 0; naming && i < sd->keys.count; i++) /* compared with the file's keys */
        snprintf(sorted[i].key, sizeof sorted[i].key, "%s",
                 samc_weights_file_key(sd->w, sd->keys.items[i].key, fk, sizeof fk));
    qsort(sorted, (size_t)sd->keys.count, sizeof *sorted, cmp_key);
    char extra[700];
    const int n_extra = list_unexpected(sd, sorted, extra, sizeof extra);
    free(sorted);
    if (sd->missing)
        return samc_fail(err, SAMC_ERR_KEY, "%s: missing key '%s' (%d of %d expected keys missing for config '%s')%s%s",
                         src, samc_weights_file_key(sd->w, sd->keys.items[sd->first_missing].key, fk, sizeof fk),
                         sd->missing, sd->keys.count, what,
                         n_extra ? "; unexpected keys: " : "", n_extra ? extra : "");
    if (n_extra)
        return samc_fail(err, SAMC_ERR_KEY, "%s: %d unexpected key(s) for config '%s': %s", src, n_extra, what, extra);
    return SAMC_OK;
}
