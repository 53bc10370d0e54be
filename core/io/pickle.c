/* SPDX-License-Identifier: Apache-2.0 */
/* pickle.c - see pickle.h. A bounded, non-recursive, allow-list-only
 * interpreter for the opcodes torch.save uses (protocols 2 to 4). */
#include "core/io/pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

struct samc_pickle {
    samc_pkl_obj *arena; /* all objects, linked through arena_next */
    size_t nobjects;
    const samc_pkl_obj *root;
};

typedef struct pkl_vm {
    samc_pickle *p;
    const uint8_t *data;
    size_t n, pos, op_pos;
    const char *source;
    samc_error *err;
    samc_pkl_obj **stack;
    size_t sp, stack_cap;
    size_t *marks;
    size_t nmarks, marks_cap;
    samc_pkl_obj **memo;
    size_t memo_cap, memo_count;
    size_t charged, budget; /* bytes allocated for objects and containers */
    samc_status failed;     /* first failure recorded by vm_fail */
} pkl_vm;

static const char *const dtype_names[SAMC_PKL_DT_COUNT] = {
    [SAMC_PKL_DT_FLOAT] = "FloatStorage",
    [SAMC_PKL_DT_HALF] = "HalfStorage",
    [SAMC_PKL_DT_BFLOAT16] = "BFloat16Storage",
    [SAMC_PKL_DT_DOUBLE] = "DoubleStorage",
    [SAMC_PKL_DT_LONG] = "LongStorage",
    [SAMC_PKL_DT_INT] = "IntStorage",
    [SAMC_PKL_DT_SHORT] = "ShortStorage",
    [SAMC_PKL_DT_CHAR] = "CharStorage",
    [SAMC_PKL_DT_BYTE] = "ByteStorage",
    [SAMC_PKL_DT_BOOL] = "BoolStorage",
    [SAMC_PKL_DT_COMPLEX_FLOAT] = "ComplexFloatStorage",
    [SAMC_PKL_DT_COMPLEX_DOUBLE] = "ComplexDoubleStorage",
    [SAMC_PKL_DT_QINT8] = "QInt8Storage",
    [SAMC_PKL_DT_QUINT8] = "QUInt8Storage",
    [SAMC_PKL_DT_QINT32] = "QInt32Storage",
    [SAMC_PKL_DT_QUINT4X2] = "QUInt4x2Storage",
    [SAMC_PKL_DT_QUINT2X4] = "QUInt2x4Storage",
};

const char *samc_pkl_dtype_name(samc_pkl_dtype d)
{
    return (unsigned)d < SAMC_PKL_DT_COUNT ? dtype_names[d] : "?";
}

const char *samc_pkl_type_name(samc_pkl_type t)
{
    switch (t) {
    case SAMC_PKL_NONE: return "None";
    case SAMC_PKL_BOOL: return "bool";
    case SAMC_PKL_INT: return "int";
    case SAMC_PKL_FLOAT: return "float";
    case SAMC_PKL_STR: return "str";
    case SAMC_PKL_TUPLE: return "tuple";
    case SAMC_PKL_LIST: return "list";
    case SAMC_PKL_DICT: return "dict";
    case SAMC_PKL_GLOBAL: return "global";
    case SAMC_PKL_STORAGE: return "storage";
    case SAMC_PKL_TENSOR: return "tensor";
    }
    return "?";
}

const samc_pkl_obj *samc_pickle_root(const samc_pickle *p) { return p ? p->root : NULL; }

void samc_pickle_free(samc_pickle *p)
{
    if (!p)
        return;
    samc_pkl_obj *o = p->arena;
    while (o) {
        samc_pkl_obj *next = o->arena_next;
        switch (o->type) {
        case SAMC_PKL_STR: free(o->u.str.s); break;
        case SAMC_PKL_TUPLE:
        case SAMC_PKL_LIST: free(o->u.seq.items); break;
        case SAMC_PKL_DICT: free(o->u.dict.kv); break;
        default: break;
        }
        free(o);
        o = next;
    }
    free(p);
}

const samc_pkl_obj *samc_pkl_dict_get(const samc_pkl_obj *dict, const char *key)
{
    if (!dict || dict->type != SAMC_PKL_DICT)
        return NULL;
    size_t klen = strlen(key);
    for (size_t i = 0; i < dict->u.dict.n; i++) {
        const samc_pkl_obj *k = dict->u.dict.kv[2 * i];
        if (k->type == SAMC_PKL_STR && k->u.str.len == klen && memcmp(k->u.str.s, key, klen) == 0)
            return dict->u.dict.kv[2 * i + 1];
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */

#define VM_FAIL(vm, st, ...) vm_fail((vm), (st), __VA_ARGS__)

static samc_status vm_fail(pkl_vm *vm, samc_status st, const char *fmt, ...) SAMC_PRINTF(3, 4);
static samc_status vm_fail(pkl_vm *vm, samc_status st, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!vm->failed)
        vm->failed = st;
    return samc_fail(vm->err, st, "%s: %s (at byte %zu)", vm->source, msg, vm->op_pos);
}

/* Every allocation the pickle causes is charged against a budget of a
 * small multiple of its size (SAMC_PKL_BYTES_PER_BYTE per byte plus a
 * floor): memo references and empty objects cost a byte or two of input
 * and tens of bytes of memory each, so without it a 16 KB deflated .pt
 * reached 1.76 GB before failing. */
static samc_status charge(pkl_vm *vm, size_t bytes)
{
    bytes += 16; /* the allocator's own header and rounding */
    if (bytes > vm->budget - vm->charged)
        return VM_FAIL(vm, SAMC_ERR_NOMEM,
                       "pickle of %zu bytes needs more than %zu bytes of memory (samc's budget: %d per byte + %d MiB;"
                       " a decompression bomb?)", vm->n, vm->budget, SAMC_PKL_BYTES_PER_BYTE,
                       SAMC_PKL_BUDGET_FLOOR_MIB);
    vm->charged += bytes;
    return SAMC_OK;
}

/* Copy `s` (len n) into out for messages: printable ASCII only, truncated. */
static void printable(const char *s, size_t n, char *out, size_t cap)
{
    size_t j = 0;
    for (size_t i = 0; i < n && j + 4 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        out[j++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    if (n > 0 && j + 4 >= cap && j < n) {
        out[j++] = '.';
        out[j++] = '.';
        out[j++] = '.';
    }
    out[j] = '\0';
}

static samc_pkl_obj *vm_new(pkl_vm *vm, samc_pkl_type t)
{
    if (vm->p->nobjects >= SAMC_PKL_MAX_OBJECTS) {
        VM_FAIL(vm, SAMC_ERR_NOMEM, "pickle creates more than %u objects", SAMC_PKL_MAX_OBJECTS);
        return NULL;
    }
    if (charge(vm, sizeof(samc_pkl_obj)))
        return NULL;
    samc_pkl_obj *o = calloc(1, sizeof *o);
    if (!o) {
        VM_FAIL(vm, SAMC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    o->type = t;
    o->arena_next = vm->p->arena;
    vm->p->arena = o;
    vm->p->nobjects++;
    return o;
}

static samc_status vm_push(pkl_vm *vm, samc_pkl_obj *o)
{
    if (!o)
        return vm->failed ? vm->failed : SAMC_ERR_NOMEM;
    if (vm->sp == vm->stack_cap) {
        if (vm->stack_cap >= SAMC_PKL_MAX_STACK)
            return VM_FAIL(vm, SAMC_ERR_NOMEM, "pickle stack exceeds %u entries", SAMC_PKL_MAX_STACK);
        size_t ncap = vm->stack_cap ? vm->stack_cap * 2 : 64;
        samc_status st = charge(vm, (ncap - vm->stack_cap) * sizeof *vm->stack);
        if (st)
            return st;
        samc_pkl_obj **ns = realloc(vm->stack, ncap * sizeof *ns);
        if (!ns)
            return VM_FAIL(vm, SAMC_ERR_NOMEM, "out of memory");
        vm->stack = ns;
        vm->stack_cap = ncap;
    }
    vm->stack[vm->sp++] = o;
    return SAMC_OK;
}

/* Items above the innermost mark: [*base, sp). */
static size_t vm_mark_base(const pkl_vm *vm) { return vm->nmarks ? vm->marks[vm->nmarks - 1] : 0; }

static samc_status vm_pop(pkl_vm *vm, samc_pkl_obj **o, const char *what)
{
    if (vm->sp <= vm_mark_base(vm))
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "pickle stack underflow in %s", what);
    *o = vm->stack[--vm->sp];
    return SAMC_OK;
}

static samc_status vm_top(pkl_vm *vm, samc_pkl_obj **o, const char *what)
{
    if (vm->sp <= vm_mark_base(vm))
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "pickle stack underflow in %s", what);
    *o = vm->stack[vm->sp - 1];
    return SAMC_OK;
}

/* The object just below a popped mark at `base` (the dict/list of SETITEMS/APPENDS). */
static samc_status vm_below_mark(pkl_vm *vm, size_t base, samc_pkl_obj **o, const char *what)
{
    if (base <= vm_mark_base(vm))
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "pickle stack underflow in %s", what);
    *o = vm->stack[base - 1];
    return SAMC_OK;
}

static samc_status vm_pop_mark(pkl_vm *vm, size_t *base, const char *what)
{
    if (!vm->nmarks)
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "%s without a MARK", what);
    *base = vm->marks[--vm->nmarks];
    return SAMC_OK;
}

static samc_status need(pkl_vm *vm, size_t k)
{
    if (vm->n - vm->pos < k)
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "pickle truncated: needs %zu more bytes, has %zu", k,
                       vm->n - vm->pos);
    return SAMC_OK;
}

static uint64_t rd_le(const uint8_t *p, size_t k)
{
    uint64_t v = 0;
    for (size_t i = 0; i < k; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static samc_status seq_reserve(pkl_vm *vm, samc_pkl_obj ***items, size_t *cap, size_t want)
{
    if (want <= *cap)
        return SAMC_OK;
    size_t ncap = *cap ? *cap : 2;
    while (ncap < want) {
        if (ncap > SIZE_MAX / 4 / sizeof(**items))
            return VM_FAIL(vm, SAMC_ERR_NOMEM, "container too large");
        ncap *= 2;
    }
    samc_status st = charge(vm, (ncap - *cap) * sizeof(**items));
    if (st)
        return st;
    samc_pkl_obj **ni = realloc(*items, ncap * sizeof *ni);
    if (!ni)
        return VM_FAIL(vm, SAMC_ERR_NOMEM, "out of memory");
    *items = ni;
    *cap = ncap;
    return SAMC_OK;
}

static samc_pkl_obj *make_tuple(pkl_vm *vm, samc_pkl_obj *const *items, size_t n)
{
    samc_pkl_obj *t = vm_new(vm, SAMC_PKL_TUPLE);
    if (!t)
        return NULL;
    if (n) {
        if (charge(vm, n * sizeof *t->u.seq.items))
            return NULL;
        t->u.seq.items = malloc(n * sizeof *t->u.seq.items);
        if (!t->u.seq.items) {
            VM_FAIL(vm, SAMC_ERR_NOMEM, "out of memory");
            return NULL;
        }
        memcpy(t->u.seq.items, items, n * sizeof *items);
        t->u.seq.n = t->u.seq.cap = n;
    }
    return t;
}

static samc_pkl_obj *make_str(pkl_vm *vm, const uint8_t *s, size_t n)
{
    samc_pkl_obj *o = vm_new(vm, SAMC_PKL_STR);
    if (!o || charge(vm, n + 1))
        return NULL;
    o->u.str.s = malloc(n + 1);
    if (!o->u.str.s) {
        VM_FAIL(vm, SAMC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    memcpy(o->u.str.s, s, n);
    o->u.str.s[n] = '\0';
    o->u.str.len = n;
    return o;
}

/* The allow-list. Everything not named here is refused. */
static samc_status resolve_global(pkl_vm *vm, const char *mod, size_t mlen, const char *name,
                                  size_t nlen)
{
    samc_pkl_global id;
    samc_pkl_dtype dt = SAMC_PKL_DT_FLOAT;
#define IS(s, l, lit) ((l) == sizeof(lit) - 1 && memcmp((s), (lit), (l)) == 0)
    if (IS(mod, mlen, "collections") && IS(name, nlen, "OrderedDict")) {
        id = SAMC_PKL_G_ORDERED_DICT;
    } else if (IS(mod, mlen, "torch._utils") && IS(name, nlen, "_rebuild_tensor_v2")) {
        id = SAMC_PKL_G_REBUILD_TENSOR_V2;
    } else if (IS(mod, mlen, "torch._utils") && IS(name, nlen, "_rebuild_parameter")) {
        id = SAMC_PKL_G_REBUILD_PARAMETER;
    } else {
        int found = -1;
        if (IS(mod, mlen, "torch")) {
            for (int d = 0; d < SAMC_PKL_DT_COUNT; d++) {
                if (strlen(dtype_names[d]) == nlen && memcmp(dtype_names[d], name, nlen) == 0) {
                    found = d;
                    break;
                }
            }
        }
        if (found < 0) {
            char pm[128], pn[128];
            printable(mod, mlen, pm, sizeof pm);
            printable(name, nlen, pn, sizeof pn);
            return VM_FAIL(vm, SAMC_ERR_SECURITY,
                           "pickle global '%s.%s' is not allowed (only torch state-dict "
                           "globals are accepted; nothing is ever executed)",
                           pm, pn);
        }
        id = SAMC_PKL_G_STORAGE;
        dt = (samc_pkl_dtype)found;
    }
#undef IS
    samc_pkl_obj *g = vm_new(vm, SAMC_PKL_GLOBAL);
    if (!g)
        return vm->failed ? vm->failed : SAMC_ERR_NOMEM;
    g->u.global.id = id;
    g->u.global.dtype = dt;
    return vm_push(vm, g);
}

/* GLOBAL: "module\nname\n" */
static samc_status op_global(pkl_vm *vm)
{
    const char *parts[2];
    size_t lens[2];
    for (int k = 0; k < 2; k++) {
        const uint8_t *start = vm->data + vm->pos;
        size_t avail = vm->n - vm->pos;
        size_t lim = avail < 256 ? avail : 256;
        const uint8_t *nl = memchr(start, '\n', lim);
        if (!nl)
            return VM_FAIL(vm, SAMC_ERR_FORMAT, "GLOBAL name is not terminated within 256 bytes");
        parts[k] = (const char *)start;
        lens[k] = (size_t)(nl - start);
        vm->pos += lens[k] + 1;
    }
    return resolve_global(vm, parts[0], lens[0], parts[1], lens[1]);
}

static samc_status op_stack_global(pkl_vm *vm)
{
    samc_pkl_obj *name = NULL, *mod = NULL;
    samc_status st;
    if ((st = vm_pop(vm, &name, "STACK_GLOBAL")) || (st = vm_pop(vm, &mod, "STACK_GLOBAL")))
        return st;
    if (name->type != SAMC_PKL_STR || mod->type != SAMC_PKL_STR)
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "STACK_GLOBAL needs two strings");
    return resolve_global(vm, mod->u.str.s, mod->u.str.len, name->u.str.s, name->u.str.len);
}

static samc_status int_tuple(pkl_vm *vm, const samc_pkl_obj *t, const char *what, int64_t *out,
                             int *n)
{
    if (t->type != SAMC_PKL_TUPLE)
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "_rebuild_tensor_v2: %s is a %s, not a tuple", what,
                       samc_pkl_type_name(t->type));
    if (t->u.seq.n > SAMC_MAX_DIMS)
        return VM_FAIL(vm, SAMC_ERR_UNSUPPORTED, "_rebuild_tensor_v2: tensor rank %zu exceeds %d",
                       t->u.seq.n, SAMC_MAX_DIMS);
    for (size_t i = 0; i < t->u.seq.n; i++) {
        const samc_pkl_obj *v = t->u.seq.items[i];
        if (v->type != SAMC_PKL_INT)
            return VM_FAIL(vm, SAMC_ERR_FORMAT, "_rebuild_tensor_v2: %s[%zu] is a %s, not an int",
                           what, i, samc_pkl_type_name(v->type));
        out[i] = v->u.i;
    }
    *n = (int)t->u.seq.n;
    return SAMC_OK;
}

static samc_status op_reduce(pkl_vm *vm)
{
    samc_pkl_obj *args = NULL, *fn = NULL;
    samc_status st;
    if ((st = vm_pop(vm, &args, "REDUCE")) || (st = vm_pop(vm, &fn, "REDUCE")))
        return st;
    if (fn->type != SAMC_PKL_GLOBAL)
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "REDUCE on a %s, not an allowed global",
                       samc_pkl_type_name(fn->type));
    if (args->type != SAMC_PKL_TUPLE)
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "REDUCE arguments are a %s, not a tuple",
                       samc_pkl_type_name(args->type));
    samc_pkl_obj *const *a = args->u.seq.items;
    size_t na = args->u.seq.n;
    switch (fn->u.global.id) {
    case SAMC_PKL_G_ORDERED_DICT:
        if (na != 0)
            return VM_FAIL(vm, SAMC_ERR_UNSUPPORTED, "collections.OrderedDict called with %zu arguments",
                           na);
        return vm_push(vm, vm_new(vm, SAMC_PKL_DICT));
    case SAMC_PKL_G_REBUILD_PARAMETER:
        if (na != 3 || a[0]->type != SAMC_PKL_TENSOR)
            return VM_FAIL(vm, SAMC_ERR_FORMAT, "_rebuild_parameter needs (tensor, requires_grad, hooks)");
        return vm_push(vm, a[0]);
    case SAMC_PKL_G_REBUILD_TENSOR_V2: {
        if (na != 6 && na != 7)
            return VM_FAIL(vm, SAMC_ERR_FORMAT, "_rebuild_tensor_v2 called with %zu arguments, expected 6 or 7",
                           na);
        if (a[0]->type != SAMC_PKL_STORAGE)
            return VM_FAIL(vm, SAMC_ERR_FORMAT, "_rebuild_tensor_v2: first argument is a %s, not a storage",
                           samc_pkl_type_name(a[0]->type));
        if (a[1]->type != SAMC_PKL_INT)
            return VM_FAIL(vm, SAMC_ERR_FORMAT, "_rebuild_tensor_v2: storage offset is a %s, not an int",
                           samc_pkl_type_name(a[1]->type));
        samc_pkl_obj *t = vm_new(vm, SAMC_PKL_TENSOR);
        if (!t)
            return vm->failed ? vm->failed : SAMC_ERR_NOMEM;
        int nd_size = 0, nd_stride = 0;
        if ((st = int_tuple(vm, a[2], "size", t->u.tensor.shape, &nd_size)) ||
            (st = int_tuple(vm, a[3], "stride", t->u.tensor.stride, &nd_stride)))
            return st;
        if (nd_size != nd_stride)
            return VM_FAIL(vm, SAMC_ERR_FORMAT, "_rebuild_tensor_v2: size has %d entries but stride has %d",
                           nd_size, nd_stride);
        t->u.tensor.storage = a[0];
        t->u.tensor.offset = a[1]->u.i;
        t->u.tensor.ndim = nd_size;
        return vm_push(vm, t);
    }
    case SAMC_PKL_G_STORAGE:
        break;
    }
    return VM_FAIL(vm, SAMC_ERR_FORMAT, "REDUCE on torch.%s is not supported",
                   samc_pkl_dtype_name(fn->u.global.dtype));
}

static samc_status op_persid(pkl_vm *vm)
{
    samc_pkl_obj *pid = NULL;
    samc_status st = vm_pop(vm, &pid, "BINPERSID");
    if (st)
        return st;
    if (pid->type != SAMC_PKL_TUPLE || pid->u.seq.n != 5)
        return VM_FAIL(vm, SAMC_ERR_FORMAT,
                       "persistent id is not a ('storage', type, key, location, numel) tuple");
    samc_pkl_obj *const *a = pid->u.seq.items;
    if (a[0]->type != SAMC_PKL_STR || strcmp(a[0]->u.str.s, "storage") != 0 || a[0]->u.str.len != 7)
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "persistent id does not start with 'storage'");
    if (a[1]->type != SAMC_PKL_GLOBAL || a[1]->u.global.id != SAMC_PKL_G_STORAGE)
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "persistent id: storage type is not a torch storage class");
    if (a[2]->type != SAMC_PKL_STR || a[3]->type != SAMC_PKL_STR)
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "persistent id: key and location must be strings");
    if (a[4]->type != SAMC_PKL_INT || a[4]->u.i < 0)
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "persistent id: numel must be a non-negative int");
    samc_pkl_obj *s = vm_new(vm, SAMC_PKL_STORAGE);
    if (!s)
        return vm->failed ? vm->failed : SAMC_ERR_NOMEM;
    s->u.storage.dtype = a[1]->u.global.dtype;
    s->u.storage.key = a[2];
    s->u.storage.location = a[3];
    s->u.storage.numel = a[4]->u.i;
    return vm_push(vm, s);
}

static samc_status memo_put(pkl_vm *vm, uint64_t idx)
{
    samc_pkl_obj *o = NULL;
    samc_status st = vm_top(vm, &o, "memo put");
    if (st)
        return st;
    if (idx >= SAMC_PKL_MAX_MEMO)
        return VM_FAIL(vm, SAMC_ERR_NOMEM, "pickle memo index %llu exceeds the limit of %u",
                       (unsigned long long)idx, SAMC_PKL_MAX_MEMO);
    if (idx >= vm->memo_cap) {
        size_t ncap = vm->memo_cap ? vm->memo_cap : 64;
        while (ncap <= idx)
            ncap *= 2;
        if ((st = charge(vm, (ncap - vm->memo_cap) * sizeof *vm->memo)))
            return st;
        samc_pkl_obj **nm = realloc(vm->memo, ncap * sizeof *nm);
        if (!nm)
            return VM_FAIL(vm, SAMC_ERR_NOMEM, "out of memory");
        memset(nm + vm->memo_cap, 0, (ncap - vm->memo_cap) * sizeof *nm);
        vm->memo = nm;
        vm->memo_cap = ncap;
    }
    if (!vm->memo[idx])
        vm->memo_count++;
    vm->memo[idx] = o;
    return SAMC_OK;
}

static samc_status memo_get(pkl_vm *vm, uint64_t idx)
{
    if (idx >= vm->memo_cap || !vm->memo[idx])
        return VM_FAIL(vm, SAMC_ERR_FORMAT, "pickle memo index %llu is not set",
                       (unsigned long long)idx);
    return vm_push(vm, vm->memo[idx]);
}

static samc_status dict_set(pkl_vm *vm, samc_pkl_obj *d, samc_pkl_obj *k, samc_pkl_obj *v)
{
    samc_status st = seq_reserve(vm, &d->u.dict.kv, &d->u.dict.cap, 2 * (d->u.dict.n + 1));
    if (st)
        return st;
    d->u.dict.kv[2 * d->u.dict.n] = k;
    d->u.dict.kv[2 * d->u.dict.n + 1] = v;
    d->u.dict.n++;
    return SAMC_OK;
}

/* Python's dict keeps one entry per key: the value of the last SETITEM, at
 * the position of the first. samc's dicts append, so every dict is
 * collapsed that way once the pickle has run (string and integer keys:
 * the only ones torch state dicts have). */
typedef struct kidx {
    const samc_pkl_obj *k;
    size_t i;
} kidx;

static int key_cmp(const samc_pkl_obj *a, const samc_pkl_obj *b)
{
    if (a->type != b->type)
        return (int)a->type - (int)b->type;
    if (a->type == SAMC_PKL_INT)
        return (a->u.i > b->u.i) - (a->u.i < b->u.i);
    const size_t n = a->u.str.len < b->u.str.len ? a->u.str.len : b->u.str.len;
    const int c = memcmp(a->u.str.s, b->u.str.s, n);
    return c ? c : (a->u.str.len > b->u.str.len) - (a->u.str.len < b->u.str.len);
}

static int kidx_cmp(const void *x, const void *y)
{
    const kidx *a = x, *b = y;
    const int c = key_cmp(a->k, b->k);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

static samc_status dict_collapse(pkl_vm *vm, samc_pkl_obj *d)
{
    const size_t n = d->u.dict.n;
    size_t m = 0;
    samc_status st = charge(vm, n * sizeof(kidx));
    kidx *v = st ? NULL : malloc(n * sizeof *v);
    if (!v)
        return st ? st : VM_FAIL(vm, SAMC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const samc_pkl_obj *k = d->u.dict.kv[2 * i];
        if (k->type == SAMC_PKL_STR || k->type == SAMC_PKL_INT)
            v[m++] = (kidx){k, i};
    }
    qsort(v, m, sizeof *v, kidx_cmp);
    int dup = 0;
    for (size_t a = 0, b; a < m; a = b) {
        for (b = a + 1; b < m && !key_cmp(v[a].k, v[b].k); b++) {
            d->u.dict.kv[2 * v[b].i] = NULL; /* a later duplicate: its value moves to the first */
            dup = 1;
        }
        if (b - a > 1)
            d->u.dict.kv[2 * v[a].i + 1] = d->u.dict.kv[2 * v[b - 1].i + 1];
    }
    free(v);
    if (!dup)
        return SAMC_OK;
    size_t out = 0;
    for (size_t i = 0; i < n; i++)
        if (d->u.dict.kv[2 * i]) {
            d->u.dict.kv[2 * out] = d->u.dict.kv[2 * i];
            d->u.dict.kv[2 * out + 1] = d->u.dict.kv[2 * i + 1];
            out++;
        }
    d->u.dict.n = out;
    return SAMC_OK;
}

static samc_status collapse_dicts(pkl_vm *vm)
{
    for (samc_pkl_obj *o = vm->p->arena; o; o = o->arena_next)
        if (o->type == SAMC_PKL_DICT && o->u.dict.n > 1) {
            samc_status st = dict_collapse(vm, o);
            if (st)
                return st;
        }
    return SAMC_OK;
}

static samc_status run(pkl_vm *vm)
{
    samc_status st = SAMC_OK;
    while (!st) {
        vm->op_pos = vm->pos;
        if (vm->pos >= vm->n)
            return VM_FAIL(vm, SAMC_ERR_FORMAT, "pickle ends without STOP");
        uint8_t op = vm->data[vm->pos++];
        switch (op) {
        case 0x80: /* PROTO */
            if ((st = need(vm, 1)))
                break;
            if (vm->data[vm->pos] < 2 || vm->data[vm->pos] > 5)
                return VM_FAIL(vm, SAMC_ERR_UNSUPPORTED, "pickle protocol %u is not supported",
                               vm->data[vm->pos]);
            vm->pos++;
            break;
        case 0x95: /* FRAME: a length hint, ignored */
            if ((st = need(vm, 8)))
                break;
            vm->pos += 8;
            break;
        case '}': st = vm_push(vm, vm_new(vm, SAMC_PKL_DICT)); break;
        case ']': st = vm_push(vm, vm_new(vm, SAMC_PKL_LIST)); break;
        case ')': st = vm_push(vm, vm_new(vm, SAMC_PKL_TUPLE)); break;
        case 'N': st = vm_push(vm, vm_new(vm, SAMC_PKL_NONE)); break;
        case 0x88:
        case 0x89: {
            samc_pkl_obj *o = vm_new(vm, SAMC_PKL_BOOL);
            if (o)
                o->u.b = op == 0x88;
            st = vm_push(vm, o);
            break;
        }
        case '(': /* MARK */
            if (vm->nmarks >= SAMC_PKL_MAX_DEPTH)
                return VM_FAIL(vm, SAMC_ERR_NOMEM, "pickle nesting is deeper than %d",
                               SAMC_PKL_MAX_DEPTH);
            if (vm->nmarks == vm->marks_cap) {
                size_t ncap = vm->marks_cap ? vm->marks_cap * 2 : 16;
                size_t *nm = realloc(vm->marks, ncap * sizeof *nm);
                if (!nm)
                    return VM_FAIL(vm, SAMC_ERR_NOMEM, "out of memory");
                vm->marks = nm;
                vm->marks_cap = ncap;
            }
            vm->marks[vm->nmarks++] = vm->sp;
            break;
        case 't': { /* TUPLE */
            size_t base = 0;
            if ((st = vm_pop_mark(vm, &base, "TUPLE")))
                break;
            samc_pkl_obj *t = make_tuple(vm, vm->stack + base, vm->sp - base);
            vm->sp = base;
            st = vm_push(vm, t);
            break;
        }
        case 0x85:
        case 0x86:
        case 0x87: { /* TUPLE1..3 */
            size_t k = (size_t)(op - 0x84);
            if (vm->sp < vm_mark_base(vm) + k)
                return VM_FAIL(vm, SAMC_ERR_FORMAT, "pickle stack underflow in TUPLE%zu", k);
            samc_pkl_obj *t = make_tuple(vm, vm->stack + vm->sp - k, k);
            vm->sp -= k;
            st = vm_push(vm, t);
            break;
        }
        case 's': { /* SETITEM */
            samc_pkl_obj *k = NULL, *v = NULL, *d = NULL;
            if ((st = vm_pop(vm, &v, "SETITEM")) || (st = vm_pop(vm, &k, "SETITEM")) ||
                (st = vm_top(vm, &d, "SETITEM")))
                break;
            if (d->type != SAMC_PKL_DICT)
                return VM_FAIL(vm, SAMC_ERR_FORMAT, "SETITEM on a %s", samc_pkl_type_name(d->type));
            st = dict_set(vm, d, k, v);
            break;
        }
        case 'u': { /* SETITEMS */
            size_t base = 0;
            if ((st = vm_pop_mark(vm, &base, "SETITEMS")))
                break;
            samc_pkl_obj *d = NULL;
            if ((st = vm_below_mark(vm, base, &d, "SETITEMS")))
                break;
            if (d->type != SAMC_PKL_DICT)
                return VM_FAIL(vm, SAMC_ERR_FORMAT, "SETITEMS on a %s", samc_pkl_type_name(d->type));
            if ((vm->sp - base) % 2)
                return VM_FAIL(vm, SAMC_ERR_FORMAT, "SETITEMS with an odd number of items");
            for (size_t i = base; i < vm->sp && !st; i += 2)
                st = dict_set(vm, d, vm->stack[i], vm->stack[i + 1]);
            vm->sp = base;
            break;
        }
        case 'a': { /* APPEND */
            samc_pkl_obj *v = NULL, *l = NULL;
            if ((st = vm_pop(vm, &v, "APPEND")) || (st = vm_top(vm, &l, "APPEND")))
                break;
            if (l->type != SAMC_PKL_LIST)
                return VM_FAIL(vm, SAMC_ERR_FORMAT, "APPEND on a %s", samc_pkl_type_name(l->type));
            if ((st = seq_reserve(vm, &l->u.seq.items, &l->u.seq.cap, l->u.seq.n + 1)))
                break;
            l->u.seq.items[l->u.seq.n++] = v;
            break;
        }
        case 'e': { /* APPENDS */
            size_t base = 0;
            samc_pkl_obj *l = NULL;
            if ((st = vm_pop_mark(vm, &base, "APPENDS")) || (st = vm_below_mark(vm, base, &l, "APPENDS")))
                break;
            if (l->type != SAMC_PKL_LIST)
                return VM_FAIL(vm, SAMC_ERR_FORMAT, "APPENDS on a %s", samc_pkl_type_name(l->type));
            size_t k = vm->sp - base;
            if (k == 0) /* an empty APPENDS: items may still be NULL */
                break;
            if ((st = seq_reserve(vm, &l->u.seq.items, &l->u.seq.cap, l->u.seq.n + k)))
                break;
            memcpy(l->u.seq.items + l->u.seq.n, vm->stack + base, k * sizeof *l->u.seq.items);
            l->u.seq.n += k;
            vm->sp = base;
            break;
        }
        case 'J':
        case 'K':
        case 'M': { /* BININT, BININT1, BININT2 */
            size_t k = op == 'J' ? 4 : op == 'K' ? 1 : 2;
            if ((st = need(vm, k)))
                break;
            uint64_t u = rd_le(vm->data + vm->pos, k);
            vm->pos += k;
            samc_pkl_obj *o = vm_new(vm, SAMC_PKL_INT);
            if (o)
                o->u.i = op == 'J' ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
            st = vm_push(vm, o);
            break;
        }
        case 0x8a: { /* LONG1 */
            if ((st = need(vm, 1)))
                break;
            size_t k = vm->data[vm->pos++];
            if ((st = need(vm, k)))
                break;
            if (k > 8)
                return VM_FAIL(vm, SAMC_ERR_UNSUPPORTED, "pickle integer of %zu bytes is too large", k);
            uint64_t u = rd_le(vm->data + vm->pos, k);
            if (k > 0 && k < 8 && (vm->data[vm->pos + k - 1] & 0x80))
                u |= ~(uint64_t)0 << (8 * k); /* sign-extend */
            vm->pos += k;
            samc_pkl_obj *o = vm_new(vm, SAMC_PKL_INT);
            if (o)
                o->u.i = (int64_t)u;
            st = vm_push(vm, o);
            break;
        }
        case 'G': { /* BINFLOAT: big-endian double */
            if ((st = need(vm, 8)))
                break;
            uint64_t u = 0;
            for (int i = 0; i < 8; i++)
                u = (u << 8) | vm->data[vm->pos + (size_t)i];
            vm->pos += 8;
            samc_pkl_obj *o = vm_new(vm, SAMC_PKL_FLOAT);
            if (o)
                memcpy(&o->u.f, &u, sizeof u);
            st = vm_push(vm, o);
            break;
        }
        case 'X':
        case 0x8c:
        case 0x8d: { /* BINUNICODE, SHORT_BINUNICODE, BINUNICODE8 */
            size_t k = op == 'X' ? 4 : op == 0x8c ? 1 : 8;
            if ((st = need(vm, k)))
                break;
            uint64_t len = rd_le(vm->data + vm->pos, k);
            vm->pos += k;
            if (len > vm->n - vm->pos)
                return VM_FAIL(vm, SAMC_ERR_FORMAT, "pickle string of %llu bytes runs past the end",
                               (unsigned long long)len);
            samc_pkl_obj *o = make_str(vm, vm->data + vm->pos, (size_t)len);
            vm->pos += (size_t)len;
            st = vm_push(vm, o);
            break;
        }
        case 'q':
        case 'r': { /* BINPUT, LONG_BINPUT */
            size_t k = op == 'q' ? 1 : 4;
            if ((st = need(vm, k)))
                break;
            uint64_t idx = rd_le(vm->data + vm->pos, k);
            vm->pos += k;
            st = memo_put(vm, idx);
            break;
        }
        case 0x94: /* MEMOIZE */ st = memo_put(vm, vm->memo_count); break;
        case 'h':
        case 'j': { /* BINGET, LONG_BINGET */
            size_t k = op == 'h' ? 1 : 4;
            if ((st = need(vm, k)))
                break;
            uint64_t idx = rd_le(vm->data + vm->pos, k);
            vm->pos += k;
            st = memo_get(vm, idx);
            break;
        }
        case 'c': st = op_global(vm); break;
        case 0x93: st = op_stack_global(vm); break;
        case 'R': st = op_reduce(vm); break;
        case 'Q': st = op_persid(vm); break;
        case 'b': { /* BUILD: only dict state on a dict (OrderedDict._metadata); ignored */
            samc_pkl_obj *state = NULL, *o = NULL;
            if ((st = vm_pop(vm, &state, "BUILD")) || (st = vm_top(vm, &o, "BUILD")))
                break;
            if (o->type != SAMC_PKL_DICT)
                return VM_FAIL(vm, SAMC_ERR_UNSUPPORTED, "BUILD on a %s is not supported",
                               samc_pkl_type_name(o->type));
            if (state->type != SAMC_PKL_DICT && state->type != SAMC_PKL_NONE &&
                state->type != SAMC_PKL_TUPLE)
                return VM_FAIL(vm, SAMC_ERR_UNSUPPORTED, "BUILD with a %s state is not supported",
                               samc_pkl_type_name(state->type));
            break;
        }
        case '.': /* STOP */
            if (vm->nmarks)
                return VM_FAIL(vm, SAMC_ERR_FORMAT, "pickle STOP with %zu unclosed MARKs", vm->nmarks);
            if (vm->sp != 1)
                return VM_FAIL(vm, SAMC_ERR_FORMAT, "pickle STOP with %zu values on the stack, expected 1",
                               vm->sp);
            vm->p->root = vm->stack[0];
            return SAMC_OK;
        default:
            return VM_FAIL(vm, SAMC_ERR_UNSUPPORTED,
                           "pickle opcode 0x%02x is not supported (not used by torch.save state dicts)",
                           op);
        }
    }
    return st;
}

samc_status samc_pickle_load(const uint8_t *data, size_t n, const char *source, samc_pickle **out,
                             samc_error *err)
{
    *out = NULL;
    if (!source)
        source = "pickle";
    if (n > SAMC_PKL_MAX_BYTES)
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: pickle of %zu bytes exceeds the limit of %u bytes",
                         source, n, SAMC_PKL_MAX_BYTES);
    pkl_vm vm;
    memset(&vm, 0, sizeof vm);
    vm.p = calloc(1, sizeof *vm.p);
    if (!vm.p)
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory", source);
    vm.data = data;
    vm.n = n;
    vm.source = source;
    vm.err = err;
    /* The value stack exists from the start, so `stack + base` is never
     * arithmetic on NULL (a MARK then TUPLE on an empty stack). */
    vm.stack_cap = 64;
    vm.stack = malloc(vm.stack_cap * sizeof *vm.stack);
    if (!vm.stack) {
        free(vm.p);
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory", source);
    }
    vm.budget = (size_t)SAMC_PKL_BYTES_PER_BYTE * n + ((size_t)SAMC_PKL_BUDGET_FLOOR_MIB << 20);
    samc_status st = run(&vm);
    if (!st)
        st = collapse_dicts(&vm);
    free(vm.stack);
    free(vm.marks);
    free(vm.memo);
    if (st) {
        samc_pickle_free(vm.p);
        return st;
    }
    *out = vm.p;
    return SAMC_OK;
}
