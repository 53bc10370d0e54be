/* SPDX-License-Identifier: Apache-2.0 */
/* exec.c - layer instances, their implementation (resolved once), the call
 * helpers and the trace. */
#include "core/runtime/exec.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/runtime/threads.h"

const samc_scope samc_no_scope = {-1, -1};

/* ---- the model's prepared weights ---------------------------------------- */

void samc_model_base_init(samc_model_base *b)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->lock, NULL);
}

void samc_model_base_free(samc_model_base *b)
{
    for (int s = 0; s < SAMC_PREP_SLOTS; s++) {
        if (!b->prepared[s])
            continue;
        for (int i = 0; i < samc_impl_count(); i++) {
            const samc_impl *impl = samc_impl_get(i);
            if (samc_impl_prep_slot(impl) == s && impl->release)
                impl->release(b->prep_arena[s]);
        }
    }
    samc_param_list_free(&b->params);
    samc_weights_free(b->weights);
    pthread_mutex_destroy(&b->lock);
}

samc_status samc_model_prepare(samc_model_base *b, const samc_impl *impl, samc_error *err)
{
    const int slot = samc_impl_prep_slot(impl);
    if (!impl->prepare || slot < 0)
        return SAMC_OK;
    pthread_mutex_lock(&b->lock);
    samc_status st = SAMC_OK;
    if (!b->prepared[slot]) {
        st = impl->prepare(&b->params, slot, &b->prep_arena[slot], err);
        if (st)
            samc_error_prefix(err, "preparing the weights for implementation '%s'", impl->name);
        b->prepared[slot] = st == SAMC_OK;
    }
    pthread_mutex_unlock(&b->lock);
    return st;
}

int samc_exec_wire_threads(const samc_exec *x, int64_t n)
{
    const int nt = samc__threads_resolve(x->ctx.num_threads);
    const int64_t pieces = n / 65536;
    return pieces < nt ? (int)(pieces > 1 ? pieces : 1) : nt;
}

samc_status samc_exec_wire(samc_exec *x, int slot, int ndim, const int64_t *shape, samc_tensor *t, samc_error *err)
{
    memset(t, 0, sizeof *t);
    if (slot < 0 || slot >= SAMC_EXEC_WIRE_SLOTS || ndim < 1 || ndim > SAMC_MAX_DIMS)
        return samc_fail(err, SAMC_ERR_ARG, "wire slot %d / rank %d out of range", slot, ndim);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] && n > INT64_MAX / 4 / shape[i]))
            return samc_fail(err, SAMC_ERR_NOMEM, "wire tensor size overflows");
        n *= shape[i];
    }
    const size_t bytes = (size_t)(n ? n : 1) * sizeof(float);
    /* grown on demand; a slot grown past the cap by a large batch shrinks
     * back on the next request within the cap (a single prompt after an
     * automatic mask generator run does not keep its batch maps) */
    const bool shrink = bytes <= SAMC_EXEC_WIRE_KEEP_BYTES && x->wire_cap[slot] > SAMC_EXEC_WIRE_KEEP_BYTES;
    if (x->wire_cap[slot] < bytes || shrink) {
        free(x->wire[slot]);
        x->wire_cap[slot] = 0;
        if (!(x->wire[slot] = malloc(bytes)))
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory allocating %lld floats", (long long)n);
        x->wire_cap[slot] = bytes;
    }
    *t = samc_tensor_view(x->wire[slot], ndim, shape);
    return SAMC_OK;
}

static samc_status check_available(const samc_impl *impl, samc_error *err);

/* ---- instances ------------------------------------------------------------- */

static const void *mount_self(const samc_exec *x, int m)
{
    return (const char *)x->model + x->fam->mounts[m].offset;
}

/* A '#' row has count(self) instances; any other row one, or none when it
 * has a count that says 0 (a module this config does not build). */
static int def_count(const samc_layer_def *d, const void *self)
{
    if (strchr(d->pattern, '#'))
        return d->count ? d->count(self) : 0;
    return !d->count || d->count(self) > 0;
}

/* root + "." + pattern with the '#' replaced by the index; the root alone
 * for the pattern "", the pattern alone at the top root "". */
static void instance_name(const char *root, const samc_layer_def *d, int index, char *buf, size_t n)
{
    const char *hash = strchr(d->pattern, '#');
    const char *sep = root[0] && d->pattern[0] ? "." : "";
    if (!hash)
        snprintf(buf, n, "%s%s%s", root, sep, d->pattern);
    else
        snprintf(buf, n, "%s%s%.*s%d%s", root, sep, (int)(hash - d->pattern), d->pattern, index, hash + 1);
}

static samc_status make_instances(samc_exec *x, samc_error *err)
{
    const samc_layer_family *f = x->fam;
    int n = 0, rows = 0;
    for (int m = 0; m < f->n_mounts; m++)
        for (int i = 0; i < f->mounts[m].part->n_rows; i++, rows++)
            n += def_count(&f->mounts[m].part->rows[i], mount_self(x, m));
    x->layers = calloc((size_t)(n ? n : 1), sizeof *x->layers);
    x->row_first = calloc((size_t)(rows ? rows : 1), sizeof *x->row_first);
    x->mount_row0 = calloc((size_t)(f->n_mounts ? f->n_mounts : 1), sizeof *x->mount_row0);
    if (!x->layers || !x->row_first || !x->mount_row0)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    rows = 0;
    for (int m = 0; m < f->n_mounts; m++) {
        const samc_part_def *p = f->mounts[m].part;
        x->mount_row0[m] = rows;
        for (int i = 0; i < p->n_rows; i++) {
            const samc_layer_def *d = &p->rows[i];
            x->row_first[rows++] = x->n_layers;
            for (int k = 0; k < def_count(d, mount_self(x, m)); k++) {
                samc_layer *L = &x->layers[x->n_layers++];
                L->def = d, L->index = k, L->prep_slot = -1, L->mount = m, L->self = mount_self(x, m);
                instance_name(f->mounts[m].root, d, k, L->name, sizeof L->name);
            }
        }
    }
    return SAMC_OK;
}

static bool prefix_match(const char *prefix, const char *name)
{
    size_t n = strlen(prefix);
    return !strncmp(prefix, name, n) && (name[n] == '\0' || name[n] == '.');
}

/* The implementation asked for L: the longest matching override, else the
 * default; *explicit_ set when an override chose it. */
static const samc_impl *wanted(const samc_exec *x, const samc_layer *L, const char **by)
{
    const samc_impl *best = x->impl;
    size_t best_len = 0;
    *by = NULL;
    for (int i = 0; i < x->n_overrides; i++) {
        size_t n = strlen(x->overrides[i].layer);
        if (n >= best_len && prefix_match(x->overrides[i].layer, L->name)) {
            best = x->overrides[i].impl, best_len = n;
            *by = x->overrides[i].layer;
        }
    }
    return best;
}

/* The table of L's whole-part body when one serves: L's implementation has
 * it and every row of the part resolved to that implementation. */
static const void *whole_ops(const samc_exec *x, const samc_layer *L)
{
    const samc_layer_def *d = L->def;
    const samc_impl *impl = L->asked;
    if (!d->whole || !impl || !samc_impl_has_body(impl, d->table, d->whole - 1))
        return NULL;
    for (int i = 0; i < x->n_layers; i++) /* no row of the part sent elsewhere by an override */
        if (x->layers[i].mount == L->mount && x->layers[i].asked != impl)
            return NULL;
    return impl->ops[d->table];
}

/* Every instance's implementation, then the preparation of each one used. */
static samc_status resolve(samc_exec *x, samc_error *err)
{
    for (int i = 0; i < x->n_layers; i++) {
        samc_layer *L = &x->layers[i];
        const samc_layer_def *d = L->def;
        const char *by;
        const samc_impl *want = wanted(x, L, &by);
        L->asked = want;
        if (!d->body) { /* a composite: its children resolve themselves */
            L->impl = want, L->ops = NULL, L->prep_slot = -1;
            if (d->whole && samc_impl_has_body(want, d->table, d->whole - 1))
                L->prep_slot = samc_impl_prep_slot(want), L->ops = NULL;
            continue;
        }
        const samc_impl *from = samc_impl_provider(want, d->table, d->body - 1);
        if (from && d->body2 && !samc_impl_has_body(from, d->table, d->body2 - 1))
            from = NULL;
        if (!from)
            return samc_fail(err, SAMC_ERR_ARG, "%s%s%s: implementation '%s' has no body for layer %s", by ? "override " : "",
                             by ? by : "--impl", by ? "" : "", want->name, L->name);
        L->impl = from, L->ops = from->ops[d->table], L->prep_slot = samc_impl_prep_slot(from);
    }
    for (int i = 0; i < x->n_layers; i++)
        x->layers[i].whole_ops = whole_ops(x, &x->layers[i]);
    for (int i = 0; i < x->n_layers; i++) {
        const samc_impl *impl = x->layers[i].impl;
        samc_status st = x->layers[i].ops ? samc_model_prepare(x->base, impl, err) : SAMC_OK;
        if (st)
            return st;
    }
    return SAMC_OK;
}

samc_status samc_exec_init(samc_exec *x, const samc_layer_family *fam, const void *model, samc_model_base *base,
                           samc_error *err)
{
    return samc_exec_init_impl(x, fam, model, base, NULL, err);
}

samc_status samc_exec_init_impl(samc_exec *x, const samc_layer_family *fam, const void *model,
                                samc_model_base *base, const char *impl, samc_error *err)
{
    memset(x, 0, sizeof *x);
    x->fam = fam, x->model = model, x->base = base;
    samc_status st = SAMC_OK;
    x->impl = impl ? samc_impl_lookup(impl, "--impl", &st, err) : samc_impl_default();
    if (!x->impl)
        return st;
    st = check_available(x->impl, err);
    if (!st)
        st = make_instances(x, err);
    if (!st)
        st = resolve(x, err);
    if (st)
        samc_exec_free(x);
    return st;
}

void samc_exec_free(samc_exec *x)
{
    if (x->ctx.scratch_free)
        x->ctx.scratch_free(x->ctx.scratch);
    if (x->ctx.device_free)
        x->ctx.device_free(x->ctx.device);
    for (int i = 0; i < SAMC_EXEC_WIRE_SLOTS; i++)
        free(x->wire[i]);
    free(x->layers), free(x->row_first), free(x->mount_row0);
    memset(x, 0, sizeof *x);
}

static samc_status check_available(const samc_impl *impl, samc_error *err)
{
    const char *why = NULL;
    if (impl->available && !impl->available(&why))
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "implementation '%s' cannot run on this machine (%s)", impl->name,
                         why ? why : "unsupported");
    return SAMC_OK;
}

samc_status samc_exec_set_impl(samc_exec *x, const char *name, samc_error *err)
{
    samc_status st = SAMC_OK;
    const samc_impl *impl = samc_impl_lookup(name ? name : "", "--impl", &st, err);
    if (!impl)
        return st;
    if ((st = check_available(impl, err)))
        return st;
    const samc_impl *old = x->impl;
    x->impl = impl;
    if ((st = resolve(x, err))) {
        x->impl = old;
        resolve(x, NULL);
    }
    return st;
}

bool samc_exec_is_layer_name(const samc_exec *x, const char *name)
{
    for (int i = 0; i < x->n_layers; i++)
        if (prefix_match(name, x->layers[i].name))
            return true;
    return false;
}

samc_status samc_exec_add_override(samc_exec *x, const char *spec, samc_error *err)
{
    const char *eq = spec ? strrchr(spec, '=') : NULL;
    if (!eq || eq == spec || !eq[1])
        return samc_fail(err, SAMC_ERR_ARG,
                         "--impl-override '%s': expected LAYER=IMPL (e.g. image_encoder.trunk.blocks.3=ref)",
                         spec ? spec : "");
    const size_t n = (size_t)(eq - spec);
    char layer[SAMC_LAYER_NAME_MAX], what[SAMC_LAYER_NAME_MAX + 24];
    if (n >= sizeof layer)
        return samc_fail(err, SAMC_ERR_ARG, "--impl-override: layer name too long");
    memcpy(layer, spec, n);
    layer[n] = '\0';
    if (!samc_exec_is_layer_name(x, layer))
        return samc_fail(err, SAMC_ERR_ARG,
                         "--impl-override: unknown layer '%s' (layers are official module names such as %s, %s; "
                         "`samc info --layers MODEL` lists them)",
                         layer, x->n_layers > 1 ? x->layers[1].name : "", x->n_layers ? x->layers[0].name : "");
    samc_status st = SAMC_OK;
    snprintf(what, sizeof what, "--impl-override '%s'", spec);
    const samc_impl *impl = samc_impl_lookup(eq + 1, what, &st, err);
    if (!impl)
        return st;
    st = check_available(impl, err);
    if (st)
        return st;
    if (x->n_overrides == SAMC_MAX_OVERRIDES)
        return samc_fail(err, SAMC_ERR_ARG, "--impl-override: more than %d overrides", SAMC_MAX_OVERRIDES);
    snprintf(x->overrides[x->n_overrides].layer, SAMC_LAYER_NAME_MAX, "%s", layer);
    x->overrides[x->n_overrides++].impl = impl;
    if ((st = resolve(x, err))) {
        x->n_overrides--;
        resolve(x, NULL);
    }
    return st;
}

void samc_exec_set_threads(samc_exec *x, int n) { x->ctx.num_threads = n > 0 ? samc__threads_resolve(n) : 0; }

void samc_exec_set_trace(samc_exec *x, samc_trace_fn fn, void *user)
{
    x->trace = fn;
    x->trace_user = user;
}

void samc_exec_set_abort(samc_exec *x, samc_exec_abort_fn fn, void *user)
{
    x->abort = fn;
    x->abort_user = user;
}

samc_status samc_exec_check_abort(samc_exec *x, const char *where, samc_error *err)
{
    if (!x->abort || !x->abort(x->abort_user))
        return SAMC_OK;
    return samc_fail(err, SAMC_ERR_ABORTED, "aborted by the caller (after %s)", where);
}

const samc_layer *samc_exec_find(const samc_exec *x, const char *name)
{
    for (int i = 0; i < x->n_layers; i++)
        if (!strcmp(x->layers[i].name, name))
            return &x->layers[i];
    return NULL;
}

const samc_layer *samc_part_layer(const samc_exec *x, const void *self, const samc_layer_def *def, int index)
{
    const samc_layer_family *f = x->fam;
    for (int m = 0; m < f->n_mounts; m++) {
        const samc_part_def *p = f->mounts[m].part;
        if (mount_self(x, m) != self || def < p->rows || def >= p->rows + p->n_rows)
            continue;
        const int r = x->mount_row0[m] + (int)(def - p->rows), first = x->row_first[r];
        if (index < 0 || index >= def_count(def, self))
            break;
        return &x->layers[first + index];
    }
    fprintf(stderr, "samc: internal error: layer %s index %d is not an instance of this model\n", def->pattern, index);
    abort();
}

const void *samc_exec_part(const samc_exec *x, const char *root)
{
    for (int m = 0; m < x->fam->n_mounts; m++)
        if (!strcmp(x->fam->mounts[m].root, root))
            return mount_self(x, m);
    return NULL;
}

/* ---- calls and the trace ------------------------------------------------- */

samc_ctx *samc_layer_ctx(samc_exec *x, const samc_layer *L)
{
    samc_error_clear(&x->body_err);
    x->ctx.err = &x->body_err;
    x->ctx.prep_slot = L->prep_slot;
    x->ctx.emit = NULL, x->ctx.emit_at = NULL, x->ctx.emit_user = NULL, x->ctx.tracing = false;
    return &x->ctx;
}

/* ctx->emit of a whole-part body: the row named `pattern` of the part being
 * run (a pattern the part does not have is a bug of the body: abort). */
static void part_emit(samc_ctx *ctx, const char *pattern, int index, int nslots, const char *const *slots,
                      const samc_tensor *const *t)
{
    samc_exec *x = ctx->emit_user;
    const samc_layer *P = x->emit_part;
    const samc_part_def *part = x->fam->mounts[P->mount].part;
    for (int r = 0; r < part->n_rows; r++)
        if (!strcmp(part->rows[r].pattern, pattern)) {
            samc_layer_emit(x, samc_part_layer(x, P->self, &part->rows[r], index), x->emit_scope, nslots, slots, t);
            return;
        }
    fprintf(stderr, "samc: internal error: part %s has no row '%s'\n", part->name, pattern);
    abort();
}

/* ctx->emit_at: the row `pattern` of the part mounted on instance `self`
 * (several parts may share one instance: the first that has the row). */
static void part_emit_at(samc_ctx *ctx, const void *self, const char *pattern, int index, int nslots,
                         const char *const *slots, const samc_tensor *const *t)
{
    samc_exec *x = ctx->emit_user;
    for (int m = 0; m < x->fam->n_mounts; m++) {
        const samc_part_def *part = x->fam->mounts[m].part;
        if (mount_self(x, m) != self)
            continue;
        for (int r = 0; r < part->n_rows; r++)
            if (!strcmp(part->rows[r].pattern, pattern)) {
                samc_layer_emit(x, samc_part_layer(x, self, &part->rows[r], index), x->emit_scope, nslots, slots, t);
                return;
            }
    }
    fprintf(stderr, "samc: internal error: no part of this model has a row '%s' on that instance\n", pattern);
    abort();
}

samc_ctx *samc_part_ctx(samc_exec *x, const samc_layer *L, const samc_scope *sc)
{
    samc_ctx *ctx = samc_layer_ctx(x, L);
    x->emit_part = L, x->emit_scope = sc;
    ctx->emit = part_emit, ctx->emit_at = part_emit_at, ctx->emit_user = x, ctx->tracing = x->trace != NULL;
    return ctx;
}

bool samc_layer_is_parity(const samc_layer *L)
{
    return L->def->parity_if ? L->def->parity_if(L->self) != 0 : L->def->parity;
}

void samc_layer_emit(samc_exec *x, const samc_layer *L, const samc_scope *sc, int nslots, const char *const *slots,
                     const samc_tensor *const *t)
{
    if (x->trace && nslots > 0 && samc_layer_is_parity(L))
        x->trace(x->trace_user, L->name, sc ? sc : x->scope ? x->scope : &samc_no_scope, nslots, slots, t);
}

samc_status samc_layer_done(samc_exec *x, const samc_layer *L, const samc_scope *sc, samc_status st,
                            samc_error *err, int nslots, const char *const *slots, const samc_tensor *const *t)
{
    if (st)
        return samc_fail(err, st, "%s (%s): %s", L->name, L->impl ? L->impl->name : "?",
                         x->body_err.msg[0] ? x->body_err.msg : samc_status_name(st));
    samc_layer_emit(x, L, sc, nslots, slots, t);
    return samc_exec_check_abort(x, L->name, err);
}

static void capture_fn(void *user, const char *module, const samc_scope *sc, int n, const char *const *slots,
                       const samc_tensor *const *t)
{
    (void)sc;
    samc_capture *c = user;
    if (strcmp(module, c->module) || c->out->n)
        return;
    for (int i = 0; i < n; i++) {
        samc_tensor *dst = samc_layer_out_slot(c->out, slots[i]);
        if (dst && samc_tensor_copy(dst, t[i], NULL))
            c->out->n--;
    }
}

void samc_capture_begin(samc_exec *x, samc_capture *c, const char *module, samc_layer_out *out)
{
    *c = (samc_capture){module, out, x->trace, x->trace_user};
    samc_exec_set_trace(x, capture_fn, c);
}

void samc_capture_end(samc_exec *x, samc_capture *c) { samc_exec_set_trace(x, c->saved, c->saved_user); }
